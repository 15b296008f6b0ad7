"""The zygote: one fresh interpreter per grading run, started with a minimal environment, that
imports torch and then forks a worker for each exercise the judge asks for (grading/worker/
serve.py), or first the judge itself when a run is handed over (grading/worker/handover.py).
It exists for speed only (docs/design.md): a worker forked from it starts in milliseconds.
"""
import gc
import json
import os
import select
import signal
import socket
import sys

from grading.worker.handover import _fork_judge
from grading.worker.serve import _worker_main


def zygote_main(root, control_fds, judge=None):
    """Serve fork requests on each control connection (one per judge) until all are closed.

    `judge`: a caller hands its grading run over (grading/backends/zygote.hand_over): (payload,
    status, stdin, stdout, stderr, clients), its file descriptors and the number of control
    connections. Once torch is imported, and before any worker, this zygote forks the judge from
    itself, so that one grading run imports torch once; it then exits with the judge's status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the judge's to handle
    controls = [socket.socket(fileno=fd) for fd in control_fds]
    sys.path.insert(0, root)
    if judge is not None:
        from grading.walls import kernel
        kernel.die_with_parent(os.getppid(), signal.SIGTERM)  # the caller gone: end as asked to
    import torch  # noqa: F401  (the expensive import, done once for every worker)
    import torch.utils._python_dispatch  # noqa: F401

    from grading.walls import kernel
    from grading.wire import protocol  # noqa: F401
    torch.backends.cpu.get_cpu_capability()  # reads /proc/cpuinfo now: workers may not
    kernel.become_subreaper()
    import grading.worker.training  # noqa: F401  (the demo's training runs in a worker)
    _warm_up()
    # Everything the workers need is imported: the repository leaves the path, so that a submission
    # imports neither the repository's exercises/ nor solutions/ by an absolute import.
    sys.path.remove(root)
    # Every object so far is permanent: collections in the workers skip them, and do not touch
    # (and so copy) their pages after fork.
    gc.freeze()
    children = set()
    judge_pid = None
    if judge is not None:
        judge_pid, controls = _fork_judge(*judge)
    else:
        for control in controls:
            _control_send(control, {"ready": True, "pid": os.getpid()})
    keep = set() if judge_pid is None else {judge_pid}  # the judge is no orphan to sweep
    while controls:
        for control in select.select(controls, [], [])[0]:
            try:
                request = _control_recv(control)
            except (EOFError, OSError, ValueError):
                controls.remove(control)
                control.close()
                continue
            try:
                _serve(request, control, controls, children, keep)
            except OSError:  # its judge is gone (killed mid-request): the reply has no reader
                controls.remove(control)
                control.close()
    code = 0
    if judge_pid is not None:  # its connections are closed: it is writing its results
        code = os.waitstatus_to_exitcode(os.waitpid(judge_pid, 0)[1])
        code = code if code >= 0 else 128 - code  # a judge killed by signal N: 128 + N
    for pid in children:
        _kill_group(pid)
    kernel.sweep_orphans()  # every worker and everything they started
    os._exit(code)  # nothing to flush or save; a normal teardown of torch costs half a second


def _warm_up():
    """Every primitive once, on a tiny module, so that what torch loads or builds lazily on first
    use (the dispatch modes, autograd) is loaded here once, not in every worker behind its walls."""
    import types

    import torch
    import torch.nn as nn

    from grading.wire import protocol
    from grading.wire.ops import Op
    example = types.SimpleNamespace(Layer=lambda: nn.Linear(2, 2, bias=False))
    from grading.worker.executor import Executor
    executor = Executor(example)
    layer = executor.run({"op": Op.CALL, "target": {"name": "Layer"}, "args": []})["output"]
    x, target = torch.ones(1, 2), {"handle": layer.number}
    executor.run({"op": Op.SET, "handle": layer.number, "path": "weight", "value": torch.eye(2)})
    executor.run({"op": Op.CALL, "target": target, "args": [x]})
    executor.run({"op": Op.CALL, "target": target, "args": [x], "grad": [0]})
    protocol.from_wire(protocol.to_wire(x))


def _serve(request, control, controls, children, keep=()):
    from grading.walls import kernel
    from grading.wire.ops import Op
    op = request.get("op")
    zygote = os.getpid()
    if op == Op.SPAWN:
        judge_end, worker_end = socket.socketpair()
        try:
            pid = os.fork()
        except OSError as error:  # no more processes: the judge reports a grading error
            judge_end.close()
            worker_end.close()
            _control_send(control, {"error": f"could not fork a worker: {error}"})
            return
        if pid == 0:
            try:
                kernel.die_with_parent(zygote)
                for other in controls:
                    other.close()
                judge_end.close()
                _worker_main(worker_end, request["package_dir"], request["module"],
                             request["memory"], request.get("demo", False))
            finally:
                os._exit(0)
        worker_end.close()
        children.add(pid)
        socket.send_fds(control, [json.dumps({"pid": pid}).encode()], [judge_end.fileno()])
        judge_end.close()
    elif op == Op.REAP:
        pid = request["pid"]
        _kill_group(pid)
        status = _reap(pid, children)
        kernel.sweep_orphans(keep=children | keep)  # what it left behind, even in new sessions
        _control_send(control, {"pid": pid, "status": status})
    elif op == Op.SWEEP:  # a handed-over judge is done: every worker and all they started go
        for pid in list(children):
            _kill_group(pid)
            _reap(pid, children)
        kernel.sweep_orphans(keep=keep)
        _control_send(control, {"swept": True})
    elif op == Op.CONNECT:  # a judge forks a second judge (grading/judge/split.py): its own line
        judge_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        controls.append(zygote_end)
        socket.send_fds(control, [json.dumps({"connected": True}).encode()], [judge_end.fileno()])
        judge_end.close()


def _reap(pid, children):
    """Wait for a worker and describe how it ended."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return {"code": None, "signal": None}
    children.discard(pid)
    if os.WIFSIGNALED(status):
        return {"code": None, "signal": os.WTERMSIG(status)}
    return {"code": os.WEXITSTATUS(status), "signal": None}


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _control_send(sock, message):
    sock.send(json.dumps(message).encode())


def _control_recv(sock):
    data = sock.recv(1 << 16)
    if not data:
        raise EOFError
    return json.loads(data)
