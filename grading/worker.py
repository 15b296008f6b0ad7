"""The worker side: the only place where a submission's code runs.

The judge starts one *zygote* per grading run: a fresh interpreter, started with a minimal
environment, that imports torch and the scenario functions of tests/ (never the solutions) and then
waits. For each exercise the judge asks it to fork a *worker*. The worker leaves the zygote's
session, redirects its output to a private file, imports the one exercise module of the submission
and then runs scenarios on it, one request at a time, over a socket that goes straight to the judge.

Run as a script by grading.zygote: python -I grading/worker.py ROOT TESTS_DIR CONTROL_FD[,FD…]
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
import traceback

SUBMISSION_PACKAGE = "submission"  # the name a submission folder is imported under, in a worker
OUTPUT_LIMIT = 2000  # characters of captured output sent back per call


# -- the zygote -----------------------------------------------------------------------------------

def zygote_main(root, tests_dir, control_fds):
    """Serve fork requests on each control connection (one per judge) until all are closed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the judge's to handle
    controls = [socket.socket(fileno=fd) for fd in control_fds]
    sys.path.insert(0, root)
    sys.path.insert(0, tests_dir)
    import torch  # noqa: F401  (the expensive import, done once for every worker)
    from grading import protocol, sandbox  # noqa: F401
    torch.backends.cpu.get_cpu_capability()  # reads /proc/cpuinfo now: workers may not
    sandbox.become_subreaper()
    for name in sorted(os.listdir(tests_dir)):
        if name.startswith("test_") and name.endswith(".py"):
            importlib.import_module(name[:-3])  # scenarios live in the test modules
    import grading.demo  # noqa: F401  (the demo's training runs in a worker too)
    # Everything the workers need is imported: the repository leaves the path, so that a submission
    # imports neither the repository's exercises/ nor solutions/ by an absolute import.
    sys.path.remove(root)
    sys.path.remove(tests_dir)
    # Every object so far is permanent: collections in the workers skip them, and do not touch
    # (and so copy) their pages after fork.
    gc.freeze()
    children = set()
    for control in controls:
        _control_send(control, {"ready": True, "pid": os.getpid()})
    while controls:
        for control in select.select(controls, [], [])[0]:
            try:
                request = _control_recv(control)
            except (EOFError, OSError, ValueError):
                controls.remove(control)
                control.close()
                continue
            _serve(request, control, controls, children)
    for pid in children:
        _kill_group(pid)
    sandbox.sweep_orphans()  # every worker and everything they started
    os._exit(0)  # nothing to flush or save; a normal teardown of torch costs half a second


def _serve(request, control, controls, children):
    from grading import sandbox
    op = request.get("op")
    if op == "spawn":
        judge_end, worker_end = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            try:
                for other in controls:
                    other.close()
                judge_end.close()
                _worker_main(worker_end, request["package_dir"], request["module"],
                             request["workdir"], request["memory"])
            finally:
                os._exit(0)
        worker_end.close()
        children.add(pid)
        socket.send_fds(control, [json.dumps({"pid": pid}).encode()], [judge_end.fileno()])
        judge_end.close()
    elif op == "reap":
        pid = request["pid"]
        _kill_group(pid)
        status = _reap(pid, children)
        sandbox.sweep_orphans(keep=children)  # what it left behind, even in new sessions
        _control_send(control, {"pid": pid, "status": status})


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

def _worker_main(sock, package_dir, module_name, workdir, memory):
    os.setsid()  # its own process group: the judge kills the group, children included
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    import torch
    from grading import protocol, sandbox

    torch.set_num_threads(1)
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)  # the judge removes it when the run ends
    output = _capture_output(workdir)
    package_dir = os.path.realpath(package_dir)
    sandbox.limit_resources(memory)
    walls = sandbox.restrict_filesystem(package_dir, os.path.realpath(workdir))

    try:
        module = _import_submission(package_dir, module_name)
    except BaseException as error:  # noqa: B036  (SystemExit and KeyboardInterrupt included)
        protocol.send(sock, {"ready": False, "error": _describe(error, package_dir),
                             "output": output.read_new()})
        return
    protocol.send(sock, {"ready": True, "output": output.read_new(), "landlock": walls})

    while True:
        try:
            request = protocol.recv(sock)
        except protocol.PeerClosed:
            return
        try:
            scenario = _find_scenario(*request["scenario"])
        except (KeyError, AttributeError) as error:
            protocol.send(sock, {"ok": False, "internal": f"scenario not found: {error}"})
            continue
        generator = torch.Generator().manual_seed(request["seed"])
        try:
            result = scenario(module, generator, **request["params"])
            reply = {"ok": True, "result": protocol.to_wire(result)}
        except BaseException as error:  # noqa: B036
            reply = {"ok": False, "error": _describe(error, package_dir)}
        reply["output"] = output.read_new()
        protocol.send(sock, reply)


def _find_scenario(module_name, qualname):
    found = sys.modules[module_name]
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _import_submission(package_dir, module_name):
    """Import `module_name` from the folder as submodule of a package, so relative imports work."""
    init = os.path.join(package_dir, "__init__.py")
    if os.path.exists(init):
        spec = importlib.util.spec_from_file_location(
            SUBMISSION_PACKAGE, init, submodule_search_locations=[package_dir])
    else:
        spec = importlib.machinery.ModuleSpec(SUBMISSION_PACKAGE, None, is_package=True)
        spec.submodule_search_locations = [package_dir]
    package = importlib.util.module_from_spec(spec)
    sys.modules[SUBMISSION_PACKAGE] = package
    if spec.loader is not None:
        spec.loader.exec_module(package)
    if not os.path.exists(os.path.join(package_dir, module_name + ".py")):
        raise FileNotFoundError(f"{module_name}.py is missing from the submission")
    return importlib.import_module(f"{SUBMISSION_PACKAGE}.{module_name}")


def _describe(error, package_dir):
    """The exception as data: its type, message and the frames that are in the submission."""
    frames = []
    for frame in traceback.extract_tb(error.__traceback__):
        path = os.path.realpath(frame.filename)
        if path.startswith(package_dir + os.sep):
            frames.append([os.path.relpath(path, package_dir), frame.lineno, frame.name,
                           (frame.line or "").strip()])
    if isinstance(error, SyntaxError) and error.filename:
        path = os.path.realpath(error.filename)
        if path.startswith(package_dir + os.sep):
            frames.append([os.path.relpath(path, package_dir), error.lineno or 0, "<module>",
                           (error.text or "").strip()])
    if isinstance(error, SystemExit):
        message = repr(error.code)  # the judge words it
    else:
        message = str(error)
    return {"type": type(error).__name__, "message": message[:2000], "frames": frames[-5:]}


class _Output:
    """fd 1 and 2 go to a file; each call sends back what is new, cut to OUTPUT_LIMIT."""

    def __init__(self, path):
        self.file = open(path, "rb")

    def read_new(self):
        sys.stdout.flush()
        sys.stderr.flush()
        data = self.file.read(OUTPUT_LIMIT + 1)
        self.file.seek(0, os.SEEK_END)  # anything beyond the limit is dropped, not sent later
        text = data.decode("utf-8", "replace")
        return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + " …(cut)"


def _capture_output(workdir):
    path = os.path.join(workdir, "output.txt")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)
    return _Output(path)


if __name__ == "__main__":
    zygote_main(sys.argv[1], sys.argv[2], [int(fd) for fd in sys.argv[3].split(",")])
