"""The zygote, seen from the judge: a clean interpreter with torch imported, forking workers.

A run of grader.py hands itself over (hand_over): it starts the zygote and waits; the zygote,
once torch is imported, forks the judge from itself, which becomes grader.py's process again
(its environment, folder, files) and runs the command with the zygote as its parent (inherited,
ParentZygote). So a grading run imports torch once, and the workers are forked from the zygote
before anything of the judge's is in it. A judge in another process (the self-test's) starts a
Zygote of its own, which it imports torch beside. Kept free of torch.
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
import time
from pathlib import Path

from grading.errors import GradingError
from grading.wire.ops import JUDGE_CONNECTIONS, Op

# Why a process that printed nothing may have been killed, by its signal's number.
KILLED = {9: ", killed without a word: most often the system ran out of memory (the kernel's "
             "OOM killer; see dmesg). Close other programs, or give the grader less with "
             "--memory, or more memory to the machine",
          24: ": it ran over the CPU time limit (ulimit -t)", 25: ": it ran over the file "
          "size limit (ulimit -f)"}

WORKER_SCRIPT = Path(__file__).resolve().parents[1] / "worker" / "main.py"
ZYGOTE_START_TIMEOUT = 120  # seconds: the zygote imports torch, ~2 s here, more on a cold disk
MEMORY_CAP = 4 * 1024 ** 3  # bytes a worker may map beyond what it holds when forked
SI_KERNEL = 0x80  # siginfo's si_code of a signal the kernel sent (a terminal's Ctrl-C, hang-up)


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


def log_tail(path, lines=12):
    """The last lines of a log the workers' interpreter wrote (its stderr): why it ended."""
    try:
        with open(path, encoding="utf-8", errors="replace") as log:
            return "".join(log.readlines()[-lines:])
    except OSError:
        return ""


class Zygote:
    """A clean interpreter with torch imported, from which workers are forked."""

    can_fork_judges = True  # a batch forks its judges (grading/commands/batch.py)
    reads_proc = True  # the judge's Meter reads the workers' CPU time there
    forks_workers = True  # a second worker of an exercise is one fork
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
        return log_tail(self.log_path)

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

    def connection(self):
        """A control connection of its own for a second judge this one forks to share the work
        (grading/judge/split.py): a backend on the same zygote, whose workers this judge's
        close() sweeps; closing it closes the connection alone."""
        self.wait_ready()
        reply, fds = self._request({"op": Op.CONNECT})
        if not reply.get("connected") or len(fds) != 1:
            raise GradingError("the worker process did not hand over a control connection")
        pid = self.process.pid if self.process is not None else self.pid
        return Connection(pid, [fds[0]], self.log_path, self.memory)

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


class ParentZygote(Zygote):
    """The zygote as a judge forked from it sees it (hand_over): its parent, already past torch's
    import, with control connections inherited."""

    def __init__(self, pid, control_fds, log_path, memory=MEMORY_CAP):
        self.pid, self.memory, self.log_path = pid, memory, log_path
        self.controls = [socket.socket(fileno=fd) for fd in control_fds]
        self.control, self.process, self.tmp, self._ready = self.controls[0], None, None, True

    def close(self):
        """Every worker, and all they started, gone (the zygote says so), then the connections
        closed; the zygote ends after this judge does."""
        if not self.controls:
            return
        try:
            self._request({"op": Op.SWEEP})
        except GradingError:
            pass
        for control in self.controls:
            control.close()
        self.controls = []


class Connection(ParentZygote):
    """A second judge's own control connection to a zygote (Zygote.connection)."""

    def close(self):
        for control in self.controls:
            control.close()
        self.controls = []


def inherited(memory=MEMORY_CAP):
    """In a judge forked from its zygote: that zygote, as a backend (once: the variable goes, so
    that no process this one starts takes it for its own); None elsewhere."""
    spec = os.environ.pop(JUDGE_CONNECTIONS, None)
    if not spec:
        return None
    pid, fds, log_path = spec.split(":", 2)
    if not pid.isdigit() or int(pid) != os.getppid():  # not set by this process's zygote
        return None
    return ParentZygote(int(pid), [int(fd) for fd in fds.split(",")], log_path, memory)


class HandedOver:
    """This run of grader.py, handed over to a judge that a fresh zygote forks from itself once
    torch is imported (worker/handover.py's _fork_judge): this process imports no torch; it waits,
    passes signals on, and ends with the judge's status (wait)."""

    def __init__(self, root, script, argv, clients=1):
        if not sys.platform.startswith("linux"):
            raise GradingError("the grader runs on Linux (or WSL on Windows); this is "
                               f"{sys.platform}")
        for fd in (0, 1, 2):  # a closed one (python grader.py <&-) would be taken by a pipe below
            try:
                os.fstat(fd)
            except OSError:
                os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: this one
        self.tmp = tempfile.mkdtemp(prefix="grader-")
        self.log_path = os.path.join(self.tmp, "zygote.log")
        streams = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
        caller = {"environ": dict(os.environ), "cwd": os.getcwd(), "path": list(sys.path),
                  "argv": [script, *argv], "log": self.log_path,
                  "stdio": [[getattr(s, "encoding", None) or "utf-8",
                             getattr(s, "errors", None) or "strict"] for s in streams]}
        payload = tempfile.TemporaryFile(dir=self.tmp)  # no name: only the judge reads it
        payload.write(json.dumps(caller).encode())
        payload.seek(0)
        status_read, status_write = os.pipe()
        stdio = [os.dup(fd) for fd in (0, 1, 2)]
        fds = [payload.fileno(), status_write, *stdio]
        try:
            with open(self.log_path, "wb") as log:
                self.process = subprocess.Popen(
                    [*WORKER_PYTHON, str(WORKER_SCRIPT), str(root), "--judge",
                     ",".join(map(str, [*fds, clients]))],
                    pass_fds=fds, stdin=subprocess.DEVNULL,
                    stdout=log, stderr=log, env=minimal_environment(self.tmp), cwd=self.tmp)
        finally:
            payload.close()
            os.close(status_write)
            for fd in stdio:
                os.close(fd)
        self.status = status_read
        self.judge = None

    def _log_tail(self):
        return log_tail(self.log_path)

    def wait(self):
        """The judge's exit status, once the zygote ends; GradingError if no judge started.
        Ctrl-C at a terminal reaches the judge itself; a SIGINT, SIGTERM or SIGHUP sent to this
        process alone is passed on to it. Before the judge exists (torch is being imported), any
        of them stops the zygote: KeyboardInterrupt."""
        import select
        passed = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        signal.pthread_sigmask(signal.SIG_BLOCK, passed | {signal.SIGCHLD})
        try:
            deadline = time.monotonic() + ZYGOTE_START_TIMEOUT
            while not select.select([self.status], [], [], 0.05)[0]:
                if signal.sigtimedwait(passed, 0) is not None or time.monotonic() > deadline:
                    self.process.kill()  # asked to stop (Ctrl-C too) before the judge exists
                    self.process.wait()
                    if time.monotonic() <= deadline:
                        raise KeyboardInterrupt
                    break
            pid = os.read(self.status, 32) if self.process.poll() is None else b""
            os.close(self.status)
            if not pid.strip().isdigit():
                self.process.kill()
                self.process.wait()
                raise GradingError("could not start the worker process:\n" + self._log_tail())
            self.judge = int(pid)
            while self.process.poll() is None:
                info = signal.sigtimedwait(passed | {signal.SIGCHLD}, 1)
                if info is None or info.si_signo == signal.SIGCHLD or info.si_code == SI_KERNEL:
                    continue  # (a terminal's Ctrl-C or hang-up: the judge, in its group, has it)
                try:
                    os.kill(self.judge, info.si_signo)
                except ProcessLookupError:
                    pass
            if self.process.returncode < 0:  # the zygote killed (its judge gets SIGTERM then)
                number = -self.process.returncode
                tail = self._log_tail().strip()
                raise GradingError(f"the worker process ended (signal {number})" + (
                    ":\n" + tail if tail else KILLED.get(number, "")))
            return self.process.returncode
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, passed | {signal.SIGCHLD})
            shutil.rmtree(self.tmp, ignore_errors=True)
