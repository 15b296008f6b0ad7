"""A worker of the portable backend (grading/backends/portable.py, macOS and Windows): a fresh
interpreter, connected to the judge over TCP on the loopback, that imports torch and then serves
one exercise after another of one submission, its walls the audit hooks of grading/walls/audit.py.
"""
import contextlib
import gc
import os
import signal
import socket
import sys
import tempfile

from grading.worker.serve import (
    IMPORTED_AS,
    OUTPUT_FILE_LIMIT,
    OUTPUT_LIMIT,
    _describe,
    _import_submission,
    _serve_requests,
    cut_output,
    flush_output,
)
from grading.worker.zygote import _warm_up


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
    # the grader's modules (this worker's own among them) and their classes (worker.executor.
    # Executor, whose methods answer the judge: an exercise that patches one would answer for the
    # next)
    grading = [m for n, m in sys.modules.items() if n.startswith("grading.")]
    own = [*grading, *(v for m in grading for v in vars(m).values()
                       if isinstance(v, type) and v.__module__ == m.__name__)]
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
        self.kept = b""  # read before an unheard block, not sent yet
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)

    def read_new(self):
        flush_output()
        self.file.seek(self.position)  # fd 1 and 2 share this offset: writes go on at the end
        data = self.kept + self.file.read(max(OUTPUT_LIMIT + 1 - len(self.kept), 0))
        self.kept = b""
        self.position = self.file.seek(0, os.SEEK_END)
        return cut_output(data)

    @contextlib.contextmanager
    def unheard(self):
        """What is printed inside the block is dropped, as serve._Output.unheard."""
        flush_output()
        self.file.seek(self.position)
        self.kept += self.file.read(max(OUTPUT_LIMIT + 1 - len(self.kept), 0))
        self.position = self.file.seek(0, os.SEEK_END)
        try:
            yield
        finally:
            flush_output()
            self.position = self.file.seek(0, os.SEEK_END)
