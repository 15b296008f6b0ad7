"""The judge's handle on the workers: start the zygote, fork a worker per exercise, call scenarios.

Failure policy, so that any submission is graded in bounded time and costs only its own exercise:
- the exercise module raised while importing → every test of that exercise fails with that error;
- a call raised → that test fails with the learner's own traceback lines, the worker lives on;
- the worker died (exit, segfault) → that test fails, a new worker is forked for the next test,
  at most MAX_RESTARTS times;
- an import or a call ran over the time limit → the worker's process group is killed and the
  exercise's remaining tests fail at once with the same message.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from grading import protocol

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
MAX_RESTARTS = 3
ZYGOTE_START_TIMEOUT = 120  # seconds: the zygote imports torch, ~3 s here, more on a cold disk
SIGNAL_NAMES = {signal.SIGSEGV: "a segmentation fault (SIGSEGV)", signal.SIGBUS: "a bus error (SIGBUS)",
                signal.SIGABRT: "an abort (SIGABRT)", signal.SIGKILL: "SIGKILL (killed)",
                signal.SIGFPE: "a floating-point exception (SIGFPE)", signal.SIGILL: "SIGILL"}


class GradingError(Exception):
    """Grading itself could not run (not the submission's fault)."""


class WorkerFailure(Exception):
    """The submission's code failed in its worker: kind is raised, import, crash, timeout or garbled."""

    def __init__(self, kind, message, error=None, output="", sticky=False):
        super().__init__(message)
        self.kind = kind
        self.error = error or {}  # {"type", "message", "frames": [[file, line, function, source]]}
        self.output = output
        self.sticky = sticky

    @property
    def not_implemented(self):
        return self.error.get("type") == "NotImplementedError"


def minimal_environment(home):
    """The worker sees no variable of the caller's (no CI tokens): only these."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}


class Zygote:
    """A clean interpreter with torch imported, from which workers are forked."""

    def __init__(self, root, tests_dir):
        self.tmp = tempfile.mkdtemp(prefix="grader-")
        self._count = 0
        self.control, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log_path = os.path.join(self.tmp, "zygote.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-I", str(WORKER_SCRIPT), str(root), str(tests_dir),
                 str(child_end.fileno())],
                pass_fds=[child_end.fileno()], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env=minimal_environment(self.tmp), cwd=self.tmp)
        child_end.close()
        self._ready = False

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

    def spawn(self, package_dir, module):
        """Fork a worker for one exercise module; returns (pid, socket to it)."""
        self.wait_ready()
        self._count += 1
        workdir = os.path.join(self.tmp, f"worker-{self._count}")
        reply, fds = self._request({"op": "spawn", "package_dir": str(package_dir),
                                    "module": module, "workdir": workdir})
        if len(fds) != 1:
            raise GradingError("the worker process did not hand over a connection")
        return reply["pid"], socket.socket(fileno=fds[0])

    def kill_and_reap(self, pid):
        """Kill a worker's whole process group and return how the worker ended."""
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        reply, _ = self._request({"op": "reap", "pid": pid})
        return reply["status"]

    def close(self):
        try:
            self.control.close()
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def describe_exit(status, during):
    if status.get("signal"):
        sig = status["signal"]
        name = SIGNAL_NAMES.get(sig, f"signal {sig}")
        return f"your code crashed the Python process with {name} {during}"
    code = status.get("code")
    if code == 0:
        return f"your code ended the Python process {during} (os._exit or similar), so nothing came back"
    return f"your code ended the Python process with exit status {code} {during}"


class ExerciseWorker:
    """The worker of one exercise of one submission, with the failure policy above."""

    def __init__(self, zygote, package_dir, module, call_timeout):
        self.zygote = zygote
        self.package_dir = package_dir
        self.module = module
        self.call_timeout = call_timeout
        self.pid = None
        self.sock = None
        self.restarts = 0
        self.sticky = None  # a WorkerFailure that ends the exercise

    def call(self, scenario, params, seed):
        """Run scenario(module, generator, **params) in the worker; the decoded result."""
        self._start()
        request = {"scenario": [scenario.__module__, scenario.__qualname__],
                   "params": params, "seed": seed}
        try:
            protocol.send(self.sock, request)
            reply = protocol.recv(self.sock, timeout=self.call_timeout)
        except protocol.Timeout:
            raise self._end_sticky(WorkerFailure(
                "timeout", f"your code ran for more than {self.call_timeout:g} s in "
                f"{scenario.__name__} and was stopped (an endless loop?)")) from None
        except (protocol.PeerClosed, BrokenPipeError, ConnectionResetError):
            status = self._stop()
            self.restarts += 1
            failure = WorkerFailure("crash", describe_exit(status, "while running"))
            if self.restarts > MAX_RESTARTS:
                self.sticky = failure
            raise failure from None
        except protocol.ProtocolError as error:
            raise self._end_sticky(WorkerFailure(
                "garbled", f"your code's worker sent back something unreadable ({error})")) from None
        except BaseException:
            self._stop()  # interrupted mid-call (Ctrl-C, pytest-timeout): the worker is unusable
            raise
        output = str(reply.get("output", ""))
        if "internal" in reply:
            raise GradingError(str(reply["internal"]))
        if not reply.get("ok"):
            error = reply.get("error") or {}
            raise WorkerFailure("raised", _raised_text(error), error=error, output=output)
        try:
            return protocol.from_wire(reply.get("result"))
        except protocol.ProtocolError as error:
            raise self._end_sticky(WorkerFailure(
                "garbled", f"your code returned something that cannot be read back ({error})")) \
                from None

    def _start(self):
        if self.sticky is not None:
            raise self.sticky
        if self.sock is not None:
            return
        self.pid, self.sock = self.zygote.spawn(self.package_dir, self.module)
        try:
            ready = protocol.recv(self.sock, timeout=self.call_timeout)
        except protocol.Timeout:
            raise self._end_sticky(WorkerFailure(
                "timeout", f"importing {self.module}.py took more than {self.call_timeout:g} s "
                "and was stopped (an endless loop at the top level of the file?)")) from None
        except (protocol.PeerClosed, ConnectionResetError):
            status = self._stop()
            raise self._end_sticky(WorkerFailure(
                "crash", describe_exit(status, f"while importing {self.module}.py"))) from None
        except protocol.ProtocolError as error:
            raise self._end_sticky(WorkerFailure("garbled", f"unreadable worker reply ({error})")) \
                from None
        if not ready.get("ready"):
            error = ready.get("error") or {}
            raise self._end_sticky(WorkerFailure(
                "import", f"{self.module}.py could not be imported: " + _raised_text(error),
                error=error, output=str(ready.get("output", ""))))

    def _end_sticky(self, failure):
        self._stop()
        failure.sticky = True
        self.sticky = failure
        return failure

    def _stop(self):
        if self.sock is None:
            return {}
        self.sock.close()
        self.sock = None
        pid, self.pid = self.pid, None
        return self.zygote.kill_and_reap(pid)

    close = _stop


def _raised_text(error):
    kind, message = error.get("type", "Exception"), error.get("message", "")
    if kind == "SystemExit":
        return f"{message} — the grader needs your code to return, not to exit"
    return f"{kind}: {message}" if message else kind
