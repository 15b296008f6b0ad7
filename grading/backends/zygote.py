"""The zygote, seen from the judge: a clean interpreter with torch imported, forking workers.

Kept free of torch so that grader.py can start it first, and both processes import torch at once.
"""
import json
import os
import shutil
import signal
import site
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from grading.errors import GradingError
from grading.wire.ops import Op

WORKER_SCRIPT = Path(__file__).resolve().parents[1] / "worker" / "main.py"
ZYGOTE_START_TIMEOUT = 120  # seconds: the zygote imports torch, ~2 s here, more on a cold disk
MEMORY_CAP = 4 * 1024 ** 3  # bytes a worker may map beyond what it holds when forked


# How a worker's Python starts (the zygote's, and the portable backend's): -I, isolated from the
# caller's environment and folders; -S, no site module, so no .pth file, sitecustomize or
# usercustomize runs in it (a .pth a submission managed to write would run, before the walls, in
# every later worker). The site-packages folders come in SITE_PACKAGES instead (worker.py puts them
# on sys.path, their .pth files unread): this Python's, as the judge found them (in a venv too).
WORKER_PYTHON = (sys.executable, "-I", "-S")
SITE_PACKAGES = "GRADER_SITE_PACKAGES"


def minimal_environment(home):
    """The worker sees no variable of the caller's (no CI tokens): only these."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
            SITE_PACKAGES: os.pathsep.join(package_folders())}


def package_folders(root=None):
    """Where this Python finds its packages, for a worker started with -I -S: the site-packages
    folders (a venv's too, the README's .venv inside the repository included), the user's (pip
    install --user) and the folders of PYTHONPATH, as sys.path holds them; but never the
    repository itself, a folder of it that is not a package folder (tests/, solutions/), nor a
    folder that holds it: a worker may read these folders."""
    from grading.config import ROOT
    root = os.path.realpath(root or ROOT)
    found = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    found += [p for p in sys.path if os.path.isabs(p)]
    kept = []
    for folder in found:
        real = os.path.realpath(folder)
        holds_root = real == root or root.startswith(real.rstrip(os.sep) + os.sep)
        in_root = real.startswith(root + os.sep)
        packages = {"site-packages", "dist-packages"} & set(real.split(os.sep))
        if os.path.isdir(real) and not holds_root and (packages or not in_root) \
                and folder not in kept:
            kept.append(folder)
    return kept


class Zygote:
    """A clean interpreter with torch imported, from which workers are forked."""

    can_fork_judges = True  # a batch forks its judges (grading/commands/batch.py)
    reads_proc = True  # the judge's Meter reads the workers' CPU time there
    isolation = ("Linux 内核的隔离（seccomp、Landlock、资源上限）",
                 "Linux kernel walls (seccomp, Landlock, resource limits)")

    def __init__(self, root, memory=MEMORY_CAP, clients=1):
        """`clients` control connections: one per judge process that will use this zygote."""
        self.controls, self.process = [], None
        self.memory = memory
        self.tmp = tempfile.mkdtemp(prefix="grader-")
        if not sys.platform.startswith("linux"):
            raise GradingError("the grader runs on Linux (or WSL on Windows); this is "
                               f"{sys.platform}")
        pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(clients)]
        self.controls = [judge_end for judge_end, _ in pairs]
        self.control = self.controls[0]
        child_fds = [child_end.fileno() for _, child_end in pairs]
        self.log_path = os.path.join(self.tmp, "zygote.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [*WORKER_PYTHON, str(WORKER_SCRIPT), str(root),
                 ",".join(map(str, child_fds))],
                pass_fds=child_fds, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env=minimal_environment(self.tmp), cwd=self.tmp)
        for _, child_end in pairs:
            child_end.close()
        self._ready = False

    def become_client(self, index):
        """In a forked judge: use control connection `index` and let go of the others."""
        self.control = self.controls[index]
        for i, control in enumerate(self.controls):
            if i != index:
                control.close()
        self.controls = [self.control]

    def _request(self, message, timeout=30):
        self.control.settimeout(timeout)
        try:
            self.control.send(json.dumps(message).encode())
            data, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 1)
        except (OSError, socket.timeout) as error:
            raise GradingError(f"the worker process stopped answering: {error}") from None
        if not data:
            raise GradingError("the worker process ended:\n" + self._log_tail())
        return json.loads(data), fds

    def wait_ready(self):
        if self._ready:
            return
        self.control.settimeout(ZYGOTE_START_TIMEOUT)
        try:
            data = self.control.recv(1 << 16)
        except (OSError, socket.timeout):
            data = b""
        if not data:
            self.process.kill()
            raise GradingError("could not start the worker process:\n" + self._log_tail())
        self._ready = True

    def _log_tail(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                return "".join(log.readlines()[-12:])
        except OSError:
            return ""

    def spawn(self, package_dir, module, demo=False):
        """Fork a worker for one exercise module; returns (pid, socket to it)."""
        self.wait_ready()
        reply, fds = self._request({"op": Op.SPAWN, "package_dir": str(package_dir),
                                    "module": module, "memory": self.memory, "demo": demo})
        if "error" in reply:
            raise GradingError(reply["error"])
        if len(fds) != 1:
            raise GradingError("the worker process did not hand over a connection")
        return reply["pid"], socket.socket(fileno=fds[0])

    def kill_and_reap(self, pid):
        """Kill a worker's whole process group and return how the worker ended."""
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        reply, _ = self._request({"op": Op.REAP, "pid": pid})
        return reply["status"]

    def release(self, pid, sock):
        """The judge is done with a worker: a forked one is never reused."""
        sock.close()
        return self.kill_and_reap(pid)

    def close(self):
        if self.process is None:
            return
        try:
            for control in self.controls:
                control.close()
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)
