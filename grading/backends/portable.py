"""The portable backend, seen from the judge: workers that are fresh Python processes.

Used where Linux's walls are missing (macOS, Windows, a Linux without Landlock or seccomp), or when
GRADER_BACKEND=portable. It asks the OS for nothing Linux alone has: no fork (a process that has
imported torch cannot safely fork on macOS, and Windows has no fork), no /proc, no SOCK_SEQPACKET,
no prctl. A worker is `python -I -S grading/worker/main.py --portable ADDRESS ROOT`: it connects back over
TCP on the loopback, proves with a token given on its stdin that it is the one started, imports
torch, and waits to be given a submission's exercise (see worker.portable_main). Its walls are
Python audit hooks (grading/walls/audit.py).

A fresh interpreter costs a torch import (2–3 s), so a worker is reused, for the next exercise of
the same submission only, when the exercise ended normally and the worker reports that torch, the
builtins and the interpreter are as they were (worker._interpreter_state). Anything one exercise
could do to the next, the learner could do in that exercise's own file: reuse gives no way to gain
points, and a worker is never reused for another submission. One that crashed, ran over time or
was left changed is killed, and a fresh one started. Same checks, same points, same messages as
the Linux backend; only the walls differ.

Kept free of torch (grading.wire.protocol is imported when first needed), so that grader.py can start
the first worker before the judge imports torch, and both import it at once.
"""
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

from grading.backends.zygote import (
    MEMORY_CAP,
    WORKER_PYTHON,
    WORKER_SCRIPT,
    ZYGOTE_START_TIMEOUT,
    log_tail,
)
from grading.backends.zygote import minimal_environment as zygote_environment
from grading.errors import GradingError, PeerClosed, ProtocolError, Timeout, WallsMissing
from grading.i18n import Bi
from grading.walls.audit import tripwire_wanted
from grading.wire.ops import Op

BACKENDS = ("auto", "linux", "portable")


def chosen_backend(counts=False):
    """"linux" or "portable", from GRADER_BACKEND (auto, the default, chooses by the machine).
    `counts`: the grades count (--batch, --json, CI, Gradescope). The portable backend is not a
    security boundary, so for these `auto` refuses it rather than falling back (WallsMissing); a
    course that accepts the risk says so with GRADER_BACKEND=portable."""
    wanted = os.environ.get("GRADER_BACKEND", "auto").strip().lower() or "auto"
    if wanted not in BACKENDS:
        raise GradingError(f"GRADER_BACKEND={wanted!r}: choose one of {', '.join(BACKENDS)}")
    if wanted == "portable":
        return "portable"  # asks nothing of the machine (the tripwire may be up)
    missing = missing_walls()
    if wanted == "linux" and missing:
        raise GradingError(f"GRADER_BACKEND=linux, but this machine lacks {' and '.join(missing)} "
                           "(Linux's walls: Landlock and seccomp, kernel 5.13 or newer); "
                           "GRADER_BACKEND=auto chooses the portable backend here")
    if missing and counts:
        raise WallsMissing(refusal(missing))
    return "portable" if missing else "linux"


def missing_walls():
    """The walls of the Linux backend that this machine lacks, by name ([]: none). A kernel too
    old, or a container whose seccomp profile refuses Landlock's calls, lacks Landlock."""
    if not sys.platform.startswith("linux"):
        return ["Landlock", "seccomp"]  # Linux's alone
    from grading.walls import kernel
    return [name for name, there in (("Landlock", kernel.landlock_abi() >= 1),
                                     ("seccomp", kernel.seccomp_available())) if not there]


def refusal(missing):
    """The one line that refuses grades that count without the Linux walls: what is missing, and
    how to accept the risk knowingly."""
    lacks = " and ".join(missing)
    where = "this machine" if sys.platform.startswith("linux") else f"this {sys.platform} machine"
    return Bi(f"拒绝评分：算数的分数（--batch、--json、CI、Gradescope）只在 Linux 的隔离墙后给出，"
              f"而这台机器缺少 {' 和 '.join(missing)}；可移植后端（Python 审计钩子）挡不住恶意代码。"
              f"如果明知风险仍要在这里评分，请设置 GRADER_BACKEND=portable",
              f"refused: grades that count (--batch, --json, CI, Gradescope) come only from "
              f"behind Linux's walls, and {where} lacks {lacks}; the portable backend (Python "
              f"audit hooks) does not stop hostile code. To grade here knowing that risk, set "
              f"GRADER_BACKEND=portable")


def start(root, memory=MEMORY_CAP, clients=1, batch=False, counts=False, hand_over=None):
    """The backend for this machine, started: the zygote (Linux) or a PortableBackend (whose
    batches start judges with launchers of their own: this one starts no worker then).
    `counts`: see chosen_backend. `hand_over`: (script, argv) of a run of grader.py, which on
    Linux is handed over to a judge forked from the zygote (zygote.HandedOver, returned then);
    a judge so forked gets its zygote here."""
    if chosen_backend(counts) == "linux":
        from grading.backends import zygote
        parent = zygote.inherited(memory)
        if parent is not None:
            return parent
        if hand_over is not None:
            return zygote.HandedOver(root, *hand_over, clients=clients)
        return zygote.Zygote(root, memory=memory, clients=clients)
    return PortableBackend(root, memory=memory, first=not batch)


def minimal_environment(home):
    """The Linux worker's environment (zygote.minimal_environment: no variable of the caller's),
    with what other systems need: no C.UTF-8 locale on macOS, and on Windows the few variables
    without which Python cannot start."""
    env = {**zygote_environment(home), "TEMP": home, "TMP": home, "PYTHONIOENCODING": "utf-8",
           "PYTHONUTF8": "1"}
    if not sys.platform.startswith("linux"):
        del env["LANG"], env["LC_ALL"]
    if sys.platform == "win32":
        env.update({k: os.environ[k] for k in ("SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "PATH",
                                               "PATHEXT", "USERPROFILE") if k in os.environ})
    return env


class _Process:
    """One worker process: its Popen, and its connection once it has said hello."""

    def __init__(self, popen):
        self.popen, self.sock, self.package_dir = popen, None, None

    @property
    def pid(self):
        return self.popen.pid


class PortableBackend:
    """Starts, lends, takes back and stops portable workers. The judge's interface is the
    zygote's: spawn, release, kill_and_reap, close."""

    can_fork_judges = False
    reads_proc = False
    # A second worker would be a fresh interpreter importing torch (a second each): a call made
    # again "elsewhere" is made here in the same worker (judge.remote.Module.elsewhere). Grades
    # that count come from behind the kernel walls, where it is a fork.
    forks_workers = False
    isolation = ("可移植后端（独立进程和 Python 审计钩子），不如 Linux 内核的隔离严密",
                 "portable backend (separate processes, Python audit hooks), weaker than the "
                 "Linux kernel's walls")

    def __init__(self, root, memory=MEMORY_CAP, spare=False, first=True):
        """`first`: start a worker now, to import torch while the judge does. `spare`: keep one
        fresh worker warming ahead of need (a batch's judge grades one submission after another,
        each with fresh workers)."""
        self.root, self.memory, self.spare = str(root), memory, spare
        self.tmp = tempfile.mkdtemp(prefix="grader-")
        self.log_path = os.path.join(self.tmp, "workers.log")
        self.token = secrets.token_hex(16)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.starting = []  # processes importing torch, not yet connected
        self.fresh = []  # connected, never given a submission
        self.lent = {}  # pid → process, working for the judge
        self.idle = {}  # package_dir → a process that finished an exercise of it cleanly
        self.tripwire = tripwire_wanted()
        if first:
            self._start_one()

    def _start_one(self):
        with open(self.log_path, "ab") as log:
            popen = subprocess.Popen(
                [*WORKER_PYTHON, str(WORKER_SCRIPT), "--portable", self.address, self.root]
                + (["--tripwire"] if self.tripwire else []),
                stdin=subprocess.PIPE, stdout=log, stderr=log, env=minimal_environment(self.tmp),
                cwd=self.tmp, **_new_group())
        try:
            popen.stdin.write((self.token + "\n").encode())
            popen.stdin.close()
        except OSError:
            pass  # it died already: its missing hello says so
        self.starting.append(_Process(popen))

    def _accept(self):
        """Wait for one starting process to connect and say hello; returns it."""
        from grading.wire import protocol
        self.listener.settimeout(ZYGOTE_START_TIMEOUT)
        while True:
            if not self.starting:
                raise GradingError("no worker process is starting")
            if all(p.popen.poll() is not None for p in self.starting):
                raise GradingError("could not start the worker process:\n" + self._log_tail())
            try:
                sock, _ = self.listener.accept()
            except (socket.timeout, OSError) as error:
                raise GradingError(f"the worker process did not start ({error}):\n"
                                   + self._log_tail()) from None
            try:
                hello = protocol.recv(sock, timeout=ZYGOTE_START_TIMEOUT)
            except (ProtocolError, PeerClosed, Timeout, OSError):
                sock.close()
                continue
            process = next((p for p in self.starting if p.pid == hello.get("pid")), None)
            if hello.get("token") != self.token or process is None:
                sock.close()  # not one of ours: a stranger on the loopback
                continue
            self.starting.remove(process)
            sock.setblocking(True)
            process.sock = sock
            return process

    def wait_ready(self):
        if not self.fresh:
            self.fresh.append(self._accept())

    def spawn(self, package_dir, module, demo=False):
        """A worker for one exercise module: (pid, socket to it)."""
        from grading.wire import protocol
        package_dir = os.path.realpath(str(package_dir))
        process = self.idle.pop(package_dir, None)
        for other in list(self.idle):  # another submission's: never reused
            self._kill(self.idle.pop(other))
        if process is None:
            if not self.fresh and not self.starting:
                self._start_one()
            process = self.fresh.pop() if self.fresh else self._accept()
            if self.spare and not self.starting:
                self._start_one()
        process.package_dir = package_dir
        try:
            protocol.send(process.sock, {"op": Op.LOAD, "package_dir": package_dir,
                                         "module": module, "memory": self.memory,
                                         "demo": bool(demo)})
        except OSError:
            pass  # it died: the judge reads the end of the stream as a crash
        self.lent[process.pid] = process
        return process.pid, process.sock

    def release(self, pid, sock=None):
        """The judge is done with a worker whose exercise ended normally: keep it for the next
        exercise of the same submission if it says it is as it was, else stop it."""
        from grading.wire import protocol
        process = self.lent.pop(pid, None)
        if process is None:
            return {}
        try:
            protocol.send(process.sock, protocol.to_wire({"op": Op.RELEASE}))
            reply = protocol.recv(process.sock, timeout=5)
            clean = reply == {"clean": True}
        except (OSError, ProtocolError, PeerClosed, Timeout):
            clean = False
        if clean and process.popen.poll() is None:
            self.idle[process.package_dir] = process
            return {}
        return self._kill(process)

    def kill_and_reap(self, pid):
        """Stop a worker and return how it ended."""
        process = self.lent.pop(pid, None)
        return self._kill(process) if process else {"code": None, "signal": None}

    def _kill(self, process):
        if process.sock is not None:
            process.sock.close()
        _kill_group(process.popen)
        code = process.popen.wait()
        if code < 0:
            return {"code": None, "signal": -code}
        return {"code": code, "signal": None}

    def _log_tail(self):
        return log_tail(self.log_path)

    def close(self):
        if self.listener is None:
            return
        for process in [*self.starting, *self.fresh, *self.lent.values(), *self.idle.values()]:
            self._kill(process)
        self.starting, self.fresh, self.lent, self.idle = [], [], {}, {}
        self.listener.close()
        self.listener = None
        shutil.rmtree(self.tmp, ignore_errors=True)


def _new_group():
    """Popen options that put the worker in a process group of its own, to be stopped whole."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def _kill_group(popen):
    if sys.platform != "win32":
        try:
            os.killpg(popen.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            pass
    try:
        popen.kill()
    except OSError:
        pass
