"""A worker: the one process where a submission's code runs, for one exercise (the zygote forks it,
grading/worker/zygote.py; the portable backend's worker runs the same serving loop,
grading/worker/portable.py). It puts up its walls (grading/walls/kernel.py), imports the exercise
module of the submission and answers the judge's requests (grading/worker/executor.py) over its
socket until the judge is done with it.
"""
import contextlib
import importlib
import importlib.machinery
import importlib.util
import os
import signal
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
    executor = Executor(module, unheard=output.unheard)
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
        self.kept = b""  # read before an unheard block, not sent yet

    def read_new(self):
        flush_output()
        data = self.kept + self.file.read(max(OUTPUT_LIMIT + 1 - len(self.kept), 0))
        self.kept = b""
        self.file.seek(0, os.SEEK_END)  # anything beyond the limit is dropped, not sent later
        return cut_output(data)

    @contextlib.contextmanager
    def unheard(self):
        """What is printed inside the block is dropped (a call made again as in training:
        grading.worker.executor.Executor.call); what came before is kept for read_new."""
        flush_output()
        self.kept += self.file.read(max(OUTPUT_LIMIT + 1 - len(self.kept), 0))
        try:
            yield
        finally:
            flush_output()
            self.file.seek(0, os.SEEK_END)


def flush_output():
    """What the submission's Python streams hold, into fd 1 and 2 (a stream it closed: nothing)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def cut_output(data):
    """Output bytes as the text sent back to the judge, cut to OUTPUT_LIMIT characters."""
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
