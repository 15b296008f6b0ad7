"""The worker side: the only place where a submission's code runs. It holds no test logic.

The judge starts one *zygote* per grading run: a fresh interpreter, started with a minimal
environment, that imports torch and waits. For each exercise the judge asks it to fork a *worker*.
The worker leaves the zygote's session, sends its output to a private unlinked file, puts up its
walls (grading/walls/kernel.py), imports the one exercise module of the submission and then does what
the judge asks, one request at a time, over a socket that goes straight to the judge. The requests
are primitive (see Executor): construct an object, set a named tensor, call a function or method on
the judge's tensors, a vector-Jacobian product, the record of one call's operations. Everything the judge
concludes, it concludes from what came back.

This file imports nothing of tests/, the judge side (grading/judge, checks, diagnosis) or the solutions.
Run as a script by grading.backends.zygote: python -I -S grading/worker/main.py ROOT CONTROL_FD[,FD…]
or by grading.backends.portable:            python -I -S grading/worker/main.py --portable ADDRESS ROOT [--tripwire]
(-S: no site module, so no .pth file or sitecustomize runs; see zygote.WORKER_PYTHON.)
"""
import gc
import importlib
import importlib.machinery
import importlib.util
import json
import os
import select
import signal
import socket
import sys
import tempfile
import time
import traceback

SUBMISSION_PACKAGE = "submission"  # the name a submission folder is imported under, in a worker
# ...and the names it may import itself by: `from exercises.ex5_causal_mask import causal_softmax`
# in the learner's own exercises/ reaches their own ex5, wherever the folder is graded from.
IMPORTED_AS = (SUBMISSION_PACKAGE, "exercises")
OUTPUT_LIMIT = 2000  # characters of captured output sent back per call
OUTPUT_FILE_LIMIT = 8 * 1024 * 1024  # bytes a worker may print or write in all


# -- the zygote -----------------------------------------------------------------------------------

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


def _fork_judge(payload, status, stdin, stdout, stderr, clients):
    """Fork the judge of a handed-over run: it becomes the caller's process again (_become_caller)
    with control connections of its own; this zygote keeps their other ends and forwards SIGTERM
    to it. Returns (the judge's pid, the zygote's ends)."""
    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(clients)]
    zygote = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for zygote_end, _ in pairs:
                zygote_end.close()
            os.close(status)
            code = _become_caller(zygote, payload, (stdin, stdout, stderr),
                                  [judge_end.detach() for _, judge_end in pairs])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        except BaseException:  # noqa: B036
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(code)
    for fd in (payload, stdin, stdout, stderr):  # no worker may inherit the caller's files
        os.close(fd)
    for _, judge_end in pairs:
        judge_end.close()
    signal.signal(signal.SIGTERM, lambda signum, frame: _signal(pid, signum))
    os.write(status, str(pid).encode())
    os.close(status)
    return pid, [zygote_end for zygote_end, _ in pairs]


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _become_caller(zygote, payload, stdio, control_fds):
    """In the judge forked from the zygote: the caller's process again (its files, environment,
    folder, path, arguments and encodings, from `payload`), with the zygote's control connections
    named in ops.JUDGE_CONNECTIONS (grading/backends/zygote.inherited); then the caller's
    script runs as __main__, as the caller would have gone on to run it. Its exit status."""
    import runpy

    from grading.walls import kernel
    from grading.wire.ops import JUDGE_CONNECTIONS
    with os.fdopen(payload, "rb") as f:
        caller = json.loads(f.read())
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    kernel.die_with_parent(zygote, signal.SIGTERM)
    os.environ.clear()
    os.environ.update(caller["environ"])
    os.environ[JUDGE_CONNECTIONS] = f"{zygote}:{','.join(map(str, control_fds))}:" + caller["log"]
    os.chdir(caller["cwd"])
    sys.path[:] = caller["path"]
    sys.argv[:] = caller["argv"]
    importlib.invalidate_caches()
    tempfile.tempdir = None  # from TMPDIR again, the caller's
    # New streams on fd 0, 1 and 2 (the old ones took the zygote's log for a seekable file), in
    # the caller's encodings; line-buffered as Python makes them, stderr always, stdout on a tty.
    streams = []
    for fd, (encoding, errors) in enumerate(caller["stdio"]):
        streams.append(open(fd, "r" if fd == 0 else "w", encoding=encoding, errors=errors,
                            closefd=False,
                            buffering=1 if fd == 2 or (fd == 1 and os.isatty(1)) else -1))
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
    runpy.run_path(caller["argv"][0], run_name="__main__")
    return 0


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


# -- a worker -------------------------------------------------------------------------------------

def _worker_main(sock, package_dir, module_name, memory, demo):
    os.setsid()  # its own process group: the judge kills the group
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    import torch

    from grading.walls import kernel
    from grading.wire import protocol
    from grading.wire.ops import WALLS_NOT_UP
    if demo:  # the demo's optimiser imports torch._dynamo, which wants a writable folder at first
        import torch._dynamo  # noqa: F401

    torch.set_num_threads(1)
    output = _capture_output()
    package_dir = os.path.realpath(package_dir)
    os.chdir(package_dir)
    _close_other_files(keep={0, 1, 2, sock.fileno(), output.file.fileno()})
    walls = {"oom": kernel.prefer_oom_kill(),
             "limits": kernel.limit_resources(memory, OUTPUT_FILE_LIMIT),
             "capabilities": kernel.drop_privileges()}
    try:
        walls["landlock"] = kernel.restrict_filesystem(package_dir)
    except OSError as error:  # offered by the kernel, refused to this process (a sandbox)
        walls["landlock"] = f"refused: {error}"
    walls["seccomp"] = kernel.forbid_syscalls()
    missing = kernel.walls_not_up(walls)
    if missing:  # nothing of the learner's runs unwalled: the judge makes it a grading error
        protocol.send(sock, {"ready": False, "output": "", "error": {
            "type": WALLS_NOT_UP, "frames": [],
            "message": "; ".join(f"{name}: {why}" for name, why in missing)}})
        return
    try:
        module = _import_submission(package_dir, module_name)
    except BaseException as error:  # noqa: B036  (SystemExit and KeyboardInterrupt included)
        protocol.send(sock, {"ready": False, "error": _describe(error, package_dir),
                             "output": output.read_new()})
        return
    protocol.send(sock, {"ready": True, "output": output.read_new(),
                         "walls": {k: str(v) for k, v in walls.items()}})
    _serve_requests(sock, module, package_dir, output)


def _serve_requests(sock, module, package_dir, output):
    """Answer the judge's requests on one exercise module until it releases the worker (True)
    or closes the connection (False)."""
    from grading.errors import PeerClosed
    from grading.wire import protocol
    from grading.wire.ops import Op
    from grading.worker.executor import Executor
    executor = Executor(module)
    while True:
        try:
            request = protocol.from_wire(protocol.recv(sock))
        except PeerClosed:
            return False
        if request.get("op") == Op.RELEASE:  # the portable backend's: see portable_main
            return True
        started = time.process_time()  # what the request cost: the portable backend's Meter
        try:
            if request["op"] == Op.DEMO:  # not grading: the demo trains the learner's head here
                import grading.worker.training
                result = grading.worker.training.run(module, request["seed"])
            else:
                result = executor.run(request)
            reply = {"ok": True, "result": protocol.to_wire(result)}
        except BaseException as error:  # noqa: B036
            reply = {"ok": False, "error": _describe(error, package_dir)}
        reply["output"] = output.read_new()
        reply["cpu"] = time.process_time() - started
        protocol.send(sock, reply)


# -- a worker of the portable backend -------------------------------------------------------------

def portable_main(address, root, tripwire):
    """A worker of the portable backend (grading/backends/portable.py): a fresh interpreter, connected to
    the judge over TCP on the loopback, that imports torch, then imports and serves one exercise
    after another of one submission, for as long as the judge lends it out and it stays clean."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the judge's to handle
    token = sys.stdin.readline().strip()
    sys.path.insert(0, root)
    from grading.walls import audit
    from grading.wire.ops import Op  # (-I -S: grading/ is importable only from here on)
    stand_down = audit.install_tripwire() if tripwire else (lambda: None)
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    import torch
    import torch.utils._python_dispatch  # noqa: F401

    import grading.worker.training  # noqa: F401  (the demo's training runs in a worker)
    from grading.errors import PeerClosed, ProtocolError
    from grading.wire import protocol
    _warm_up()
    torch.set_num_threads(1)
    sys.path.remove(root)  # as in the zygote: a submission cannot import exercises/ or solutions/
    output = _PortableOutput()
    protocol.send(sock, {"token": token, "pid": os.getpid()})
    walled, before = None, None
    while True:
        try:
            request = protocol.recv(sock)
        except (PeerClosed, ProtocolError, OSError):
            os._exit(0)
        if request.get("op") != Op.LOAD or walled not in (None, request["package_dir"]):
            os._exit(0)  # not the judge's protocol: nothing more to do
        package_dir = os.path.realpath(request["package_dir"])
        if walled is None:  # the first exercise: the walls go up, for good
            if request.get("demo"):
                import torch._dynamo  # noqa: F401  (see _worker_main)
            os.chdir(package_dir)
            stand_down()  # the learner's code runs from now on: the walls answer it
            walls = {"limits": audit.limit_resources(request["memory"],
                                                            OUTPUT_FILE_LIMIT),
                     "audit": audit.put_up(package_dir)}
            walled, before = request["package_dir"], _interpreter_state()
        for name in [n for n in sys.modules if n.split(".")[0] in IMPORTED_AS]:
            del sys.modules[name]  # each exercise imports the submission afresh, as in a fork
        try:
            module = _import_submission(package_dir, request["module"])
        except BaseException as error:  # noqa: B036
            protocol.send(sock, {"ready": False, "error": _describe(error, package_dir),
                                 "output": output.read_new()})
            module = None  # the judge may still take this worker back for the next exercise
        else:
            protocol.send(sock, {"ready": True, "output": output.read_new(), "walls": walls})
        if not _serve_requests(sock, module, package_dir, output):
            os._exit(0)
        # The submission's folder entered the import cache with its first import: each exercise
        # starts without it, as in a fork (a finder left there by this one is gone with it).
        sys.path_importer_cache.pop(package_dir, None)
        clean = _interpreter_state() == before
        protocol.send(sock, {"clean": clean})
        if not clean:
            os._exit(0)


def _interpreter_state():
    """What one exercise could change for the next in a shared interpreter: the objects that
    torch, its functions, the tensor and module classes, the builtins and math hold, the modules
    loaded, the modes and settings of torch, the threads running. Compared, not trusted: a
    learner who fakes it harms only their own next exercise."""
    import _thread
    import builtins
    import math
    import threading

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    worker = sys.modules[__name__]  # this file, run as __main__: its functions and classes too
    grading = [worker, *(m for n, m in sys.modules.items() if n.startswith("grading."))]
    # the grader's modules and their classes (worker.executor.Executor, whose methods answer
    # the judge: an exercise that patches one would answer for the next)
    own = [*grading, *(v for m in grading for v in vars(m).values()
                       if isinstance(v, type) and v.__module__ in (m.__name__, "__main__"))]
    namespaces = [builtins, math, torch, nn, F, nn.init, torch.linalg, torch.autograd, sys, os,
                  torch.Tensor, torch._C.TensorBase, nn.Module, nn.Linear, nn.Embedding,
                  nn.Parameter, torch.autograd.Function, *own]
    held = tuple(tuple(sorted((k, id(v)) for k, v in vars(ns).items()))
                 for ns in namespaces)
    modules = tuple(sorted((n, id(m)) for n, m in sys.modules.items()
                           if n.split(".")[0] not in IMPORTED_AS))
    # What decides the next import, item by item: vars(sys) above holds only the lists' identity,
    # and a finder put on sys.meta_path would decide what the next exercise's module is.
    importing = (tuple(map(id, sys.meta_path)), tuple(map(id, sys.path_hooks)), tuple(sys.path),
                 tuple(sorted((str(k), id(v)) for k, v in sys.path_importer_cache.items())))
    settings = (torch.get_default_dtype(), torch.is_grad_enabled(), torch.get_num_threads(),
                torch.are_deterministic_algorithms_enabled(), torch.is_inference_mode_enabled(),
                torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack(),
                sys.gettrace(), sys.getprofile(), sys.getrecursionlimit(),
                threading.active_count(), _thread._count(), len(gc.callbacks), gc.isenabled(),
                os.getcwd())
    return hash((held, modules, importing, settings))


class _PortableOutput:
    """fd 1 and 2 into a temporary file (gone when the worker is: no name on POSIX, deleted on
    close on Windows); each call sends back what is new, cut to OUTPUT_LIMIT."""

    def __init__(self):
        self.file = tempfile.TemporaryFile()
        self.position = 0
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)

    def read_new(self):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        self.file.seek(self.position)  # fd 1 and 2 share this offset: writes go on at the end
        data = self.file.read(OUTPUT_LIMIT + 1)
        self.position = self.file.seek(0, os.SEEK_END)
        text = data.decode("utf-8", "replace")
        return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + " …(cut)"


def _import_submission(package_dir, module_name):
    """Import `module_name` from the folder as submodule of a package, so relative imports work.
    Every exercise starts from the same random state, whichever worker imports it (a forked one,
    or a portable one that served an exercise before): the learner's random numbers, and so the
    messages, are the same in both backends and in a replay."""
    import random
    import warnings

    import torch
    warnings.showwarning = _show_warning
    torch.manual_seed(0)
    random.seed(0)
    if "numpy.random" in sys.modules:  # (imported by the learner's code: seeding imports it)
        sys.modules["numpy.random"].seed(0)
    init = os.path.join(package_dir, "__init__.py")
    if os.path.exists(init):
        spec = importlib.util.spec_from_file_location(
            SUBMISSION_PACKAGE, init, submodule_search_locations=[package_dir])
    else:
        spec = importlib.machinery.ModuleSpec(SUBMISSION_PACKAGE, None, is_package=True)
        spec.submodule_search_locations = [package_dir]
    package = importlib.util.module_from_spec(spec)
    for name in IMPORTED_AS:
        sys.modules[name] = package
    if spec.loader is not None:
        spec.loader.exec_module(package)
    if not os.path.exists(os.path.join(package_dir, module_name + ".py")):
        raise FileNotFoundError(f"{module_name}.py is missing from the submission"
                                + named_otherwise(package_dir, module_name))
    return importlib.import_module(f"{SUBMISSION_PACKAGE}.{module_name}")


def named_otherwise(package_dir, module_name):
    """" (X is there)" when a file of the folder is the exercise's under another case or with a
    copy's suffix (Ex5_causal_mask.py, ex5_causal_mask (1).py, ex5_causal_mask.py.txt): the
    learner sees the file that is there, not only the one that is not."""
    try:
        names = sorted(os.listdir(package_dir))
    except OSError:
        return ""
    wanted = module_name.lower()
    for name in names:
        plain = name.lower().replace(" ", "")
        if name != module_name + ".py" and plain.startswith(wanted) and (
                plain.endswith(".py") or plain.startswith(wanted + ".py")):
            return f" ({name[:100]} is there)"
    return ""


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning on one line of its own, whole, that the judge's report shows as a warning (not
    as printed output): PyTorch's warnings often name the fix."""
    text = " ".join(str(message).split())
    text = text.split(" (Triggered internally at ")[0]  # where in PyTorch's C++: not for learners
    sys.stderr.write(f"{category.__name__}: {text} [{os.path.basename(filename)}:{lineno}]\n")


def _describe(error, package_dir):
    """The exception as data: its type, message and the frames that are in the submission."""
    frames = []
    for frame in traceback.extract_tb(error.__traceback__):
        path = os.path.realpath(frame.filename) if os.path.isabs(frame.filename) else ""
        if path.startswith(package_dir + os.sep):
            frames.append([os.path.relpath(path, package_dir), frame.lineno or 0, frame.name,
                           (frame.line or "").strip()])
    if isinstance(error, SyntaxError) and error.filename:
        path = os.path.realpath(error.filename)
        if path.startswith(package_dir + os.sep):
            frames.append([os.path.relpath(path, package_dir), error.lineno or 0, "<module>",
                           (error.text or "").strip()])
    if isinstance(error, SystemExit):
        message = repr(error.code)  # the judge words it
    else:
        try:
            message = str(error)
        except BaseException:  # noqa: B036  (a __str__ of the learner's that raises)
            message = "?"
    return {"type": type(error).__name__, "message": message[:2000], "frames": frames[-5:]}


class _Output:
    """fd 1 and 2 go to a file; each call sends back what is new, cut to OUTPUT_LIMIT."""

    def __init__(self, file):
        self.file = file

    def read_new(self):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        data = self.file.read(OUTPUT_LIMIT + 1)
        self.file.seek(0, os.SEEK_END)  # anything beyond the limit is dropped, not sent later
        text = data.decode("utf-8", "replace")
        return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + " …(cut)"


def _capture_output():
    """fd 1 and 2 into a file that has no name (removed at once): it needs no writable folder,
    and it is gone with the worker. Its size is capped by RLIMIT_FSIZE."""
    fd, path = tempfile.mkstemp(prefix="grader-output-")
    reader = open(path, "rb")
    os.unlink(path)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)
    return _Output(reader)


def _close_other_files(keep):
    """Nothing inherited stays open in a worker but what it needs."""
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        open_fds = range(3, 256)
    for fd in open_fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _add_site_packages():
    """Started with -S: the judge's site-packages folders on the path, and the builtins the site
    module would add (exit, quit, help: a learner may call them), without reading any .pth file."""
    import site
    for folder in os.environ.get("GRADER_SITE_PACKAGES", "").split(os.pathsep):
        if folder and os.path.isdir(folder) and folder not in sys.path:
            sys.path.append(folder)
    site.setquit()
    site.setcopyright()
    site.sethelper()


if __name__ == "__main__":
    _add_site_packages()
    if sys.argv[1] == "--portable":
        portable_main(sys.argv[2], sys.argv[3], "--tripwire" in sys.argv[4:])
    elif sys.argv[2] == "--judge":
        zygote_main(sys.argv[1], [], [int(n) for n in sys.argv[3].split(",")])
    else:
        zygote_main(sys.argv[1], [int(fd) for fd in sys.argv[2].split(",")])
