"""The judge's handle on one exercise's worker: fork it from the zygote, send it requests.

Failure policy, so that any submission is graded in bounded time and costs only its own exercise:
- the exercise module raised while importing → every test of that exercise fails with that error;
- a call raised → that test fails with the learner's own traceback lines, the worker lives on;
- the worker died (exit, segfault) → that test fails, a new worker is forked for the next test,
  at most MAX_RESTARTS times;
- an import or a call ran over the time limit, or the exercise used up its time budget → the
  worker's process group is killed and the exercise's remaining tests fail at once with the same
  message. Limits count the worker's own time (see Meter), so a busy machine costs no points;
- the wall-clock backstop (WALL_FACTOR times a limit) reached while the worker's own time is
  under the limit → the machine was too busy: the worker is stopped, a WorkerFailure "busy" goes
  to the plugin, which grades the scenario again once and otherwise reports a grading error;
- a reply that is not one the worker is meant to send → the exercise's remaining tests fail.
"""
import os
import re
import select
import signal
import time

from grading.config import EXERCISE_BUDGET
from grading.errors import (
    Busy,
    PeerClosed,
    ProtocolError,
    Timeout,
    WallsRefused,
    WorkerFailure,
)
from grading.i18n import Bi
from grading.wire import protocol
from grading.wire.ops import WALLS_NOT_UP, reply_problem

MAX_RESTARTS = 3
WALL_FACTOR = 4  # the wall-clock backstop: this many times a limit of the worker's own time
PORTABLE_FACTOR = 2  # without /proc, a call may take this many times its limit of wall time
OUTPUT_SHOWN = 4000  # characters of a test's printed output kept and shown
SIGNAL_NAMES = {getattr(signal, name): text for name, text in {  # those this OS has
    "SIGSEGV": Bi("段错误（SIGSEGV）", "a segmentation fault (SIGSEGV)"),
    "SIGBUS": Bi("总线错误（SIGBUS）", "a bus error (SIGBUS)"),
    "SIGABRT": Bi("中止信号（SIGABRT）", "an abort (SIGABRT)"),
    "SIGKILL": Bi("SIGKILL（被强制结束）", "SIGKILL (killed)"),
    "SIGFPE": Bi("浮点异常（SIGFPE）", "a floating-point exception (SIGFPE)"),
    "SIGILL": Bi("非法指令（SIGILL）", "SIGILL")}.items() if hasattr(signal, name)}


def describe_exit(status, during):
    """How the worker ended, for the learner; `during` is a Bi like ("导入时", "while importing")."""
    if status.get("signal"):
        sig = status["signal"]
        name = SIGNAL_NAMES.get(sig, Bi(f"信号 {sig}", f"signal {sig}"))
        return Bi(f"你的代码{during.zh}让 Python 进程因{name.zh}崩溃了",
                  f"your code crashed the Python process with {name.en} {during.en}")
    code = status.get("code")
    if code == 0:
        return Bi(f"你的代码{during.zh}结束了 Python 进程（os._exit 之类），所以什么也没有返回",
                  f"your code ended the Python process {during.en} (os._exit or similar), so "
                  "nothing came back")
    return Bi(f"你的代码{during.zh}以退出码 {code} 结束了 Python 进程",
              f"your code ended the Python process with exit status {code} {during.en}")


class Meter:
    """What a worker has cost since `start()`, read from /proc/PID/stat: its own CPU time (user
    and system, all its threads) and, bounded separately, the time it chose to spend asleep (S, or
    Z: a main thread gone while its other threads live on) or stopped (T, t: a SIGSTOP it sent
    itself; nothing of the judge's stops a worker). Time waiting for a CPU (R) or for the
    disk (D: a page fault on a machine short of memory) is the machine's, never the learner's;
    so is time the judge itself was kept from looking (each interval between two readings counts
    as asleep for at most SLEEP_STEP, and only when both readings show the worker asleep).
    Where /proc is missing (the portable backend), wall-clock time stands for both."""

    TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    POLL = 0.05  # seconds between two readings while a call runs
    SLEEP_STEP = 2 * POLL  # the most one interval between readings adds to the time asleep

    def __init__(self, pid, use_proc=True, stat=None):
        """use_proc False: the portable backend, which reads no /proc (wall-clock time). stat:
        /proc/PID/stat already open (ExerciseWorker keeps it for its worker's life)."""
        self.path = f"/proc/{pid}/stat" if use_proc else None
        self.stat = stat

    def _read(self):
        """(CPU seconds, state letter) or None."""
        if self.path is None:
            return None
        try:
            if self.stat is not None:
                text = os.pread(self.stat, 4096, 0)
            else:
                with open(self.path, "rb") as stat:
                    text = stat.read()
            fields = text.rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / self.TICK, fields[0].decode()
        except (OSError, IndexError, ValueError):
            return None

    def start(self):
        self.wall_start = time.monotonic()
        first = self._read()
        self.proc = first is not None
        self.cpu_start = first[0] if first else 0.0
        self.cpu_now = self.cpu_start
        self.asleep = False
        self.slept = 0.0
        self.last = self.wall_start

    def read(self):
        """Take a reading: the CPU time, and the time asleep since the last reading."""
        now = time.monotonic()
        reading = self._read()
        if reading is None:
            self.last = now
            return
        asleep = reading[1] in "SZTt" and reading[0] == self.cpu_now
        if asleep and self.asleep:
            self.slept += min(now - self.last, self.SLEEP_STEP)
        self.cpu_now, self.asleep, self.last = reading[0], asleep, now

    def cpu(self):
        return self.cpu_now - self.cpu_start if self.proc else self.wall()

    def sleep(self):
        return self.slept if self.proc else 0.0

    def charged(self, reported=None):
        """The learner's seconds: CPU time and time asleep. Without /proc, the CPU time the worker
        reported for the request (time.process_time), but at least the wall-clock time divided
        by WALL_FACTOR (a worker that sleeps, or under-reports, is still charged) and at most
        the wall-clock time: a machine up to WALL_FACTOR times slower costs nothing."""
        if self.proc:
            return self.cpu() + self.sleep()
        wall = self.wall()
        if type(reported) in (int, float) and 0 <= reported:
            return min(max(float(reported), wall / WALL_FACTOR), wall)
        return wall

    def wall(self):
        return time.monotonic() - self.wall_start


class ExerciseWorker:
    """The worker of one exercise of one submission, with the failure policy above."""

    def __init__(self, backend, package_dir, module, call_timeout, budget=EXERCISE_BUDGET,
                 demo=False):
        self.budget = budget  # seconds of the submission's own time, imports included
        self.demo = demo  # a worker for grader.py demo
        self.backend = backend
        self.package_dir = package_dir
        self.module = module
        self.call_timeout = call_timeout
        self.pid = None
        self.sock = None
        self.stat = None  # /proc/PID/stat of the worker, open while it lives (the Meter reads it)
        self.generation = 0  # counts the workers started: handles belong to one of them
        self.restarts = 0
        self.spent = 0.0  # seconds this exercise's code has taken, imports included
        self.sticky = None  # a WorkerFailure that ends the exercise
        self.printed = []  # what the submission printed since take_output() was last called
        self.walls = {}  # what the worker says it put up (informative only)

    def take_output(self):
        text, self.printed = "".join(self.printed), []
        return text if len(text) <= OUTPUT_SHOWN else text[:OUTPUT_SHOWN] + " …(cut)"

    def request(self, message):
        """Send one primitive request (see grading.worker.executor.Executor); the decoded result."""
        self._start()
        limit = self._time_left()
        try:
            protocol.send(self.sock, protocol.to_wire(message))
            kind, value, output = protocol.reply(self._receive(limit))
        except Busy as busy:  # (a Timeout: first)
            raise self._busy(busy) from None
        except Timeout:
            raise self._end_sticky(self._timeout_failure(
                limit, Bi(f"你的 {self.module}.py 的一次调用", f"one call of your {self.module}.py"),
                Bi("死循环？", "an endless loop?"))) from None
        except (PeerClosed, BrokenPipeError, ConnectionResetError):
            status = self._stop()
            self.restarts += 1
            failure = WorkerFailure("crash", describe_exit(status, Bi("在运行时", "while running")))
            if self.restarts > MAX_RESTARTS:
                self.sticky = failure
            raise failure from None
        except ProtocolError as error:
            raise self._end_sticky(garbled(error)) from None
        except BaseException:
            self._stop()  # interrupted mid-call (Ctrl-C, pytest-timeout): the worker is unusable
            raise
        self.printed.append(output)
        if kind == "error":
            raise WorkerFailure("raised", raised_text(value), error=value)
        problem = reply_problem(message.get("op"), value, len(message.get("args") or []))
        if problem:
            raise self._end_sticky(garbled(problem))
        return value

    def _receive(self, limit):
        """One message, while the worker's own time (its CPU time; its time asleep, apart) stays
        within `limit` seconds. The wall clock's backstop, WALL_FACTOR times that, bounds every
        call; when it is reached with the worker's own time under the limit, the machine was
        too busy (Busy): not the learner's fault, the call is graded again."""
        meter = Meter(self.pid, use_proc=self.backend.reads_proc, stat=self.stat)
        meter.start()

        def wait(sock):
            while not select.select([sock], [], [], Meter.POLL)[0]:
                meter.read()
                if not meter.proc:  # the wall clock alone, with room for a busy machine
                    if meter.wall() > PORTABLE_FACTOR * limit:
                        raise Timeout()
                    continue
                if meter.cpu() > limit or meter.sleep() > limit:
                    raise Timeout()
                if meter.wall() > WALL_FACTOR * limit:
                    raise Busy(meter.wall())

        message = None
        try:
            message = protocol.recv(self.sock, wait=wait)
            return message
        finally:
            meter.read()
            self.spent += meter.charged(message.get("cpu") if isinstance(message, dict)
                                        else None)

    def _start(self):
        if self.sticky is not None:
            raise self.sticky.copy()  # a fresh object: re-raising one would grow its traceback
        if self.sock is not None:
            return
        limit = self._time_left()
        self.pid, self.sock = self.backend.spawn(self.package_dir, self.module, self.demo)
        self.generation += 1
        if self.backend.reads_proc:
            try:
                self.stat = os.open(f"/proc/{self.pid}/stat", os.O_RDONLY)
            except OSError:
                self.stat = None  # (the Meter opens it at each reading then)
        try:
            kind, value, output = protocol.ready(self._receive(limit))
        except Busy as busy:
            raise self._busy(busy) from None
        except Timeout:
            raise self._end_sticky(self._timeout_failure(
                limit, Bi(f"导入 {self.module}.py", f"importing {self.module}.py"),
                Bi("文件顶层、函数之外有死循环？",
                   "an endless loop at the top level of the file, outside any function?"))) \
                from None
        except (PeerClosed, ConnectionResetError):
            status = self._stop()
            raise self._end_sticky(WorkerFailure("crash", describe_exit(
                status, Bi(f"在导入 {self.module}.py 时", f"while importing {self.module}.py")))) \
                from None
        except ProtocolError as error:
            raise self._end_sticky(garbled(error)) from None
        self.printed.append(output)
        if kind == "error" and value.get("type") == WALLS_NOT_UP:  # said before any import
            self.close()
            raise WallsRefused(
                f"the Linux walls could not be put up around {self.module}.py ({value['message']}), "
                "so none of it ran. This machine offers them but refuses to install them (a "
                "container or sandbox that filters system calls?): grade on a machine that "
                "allows them, or get feedback only with GRADER_BACKEND=portable")
        if kind == "error":
            self.close()  # the worker is sound (the portable backend may lend it again)
            value = undecodable_frame(value, self.module, self._source())
            self.sticky = WorkerFailure(
                "import", Bi(f"无法导入 {self.module}.py：", f"{self.module}.py could not be imported: ")
                + raised_text(value, self._source()), error=value, sticky=True)
            raise self.sticky.copy()
        self.walls = value

    def _source(self):
        """The first MiB of the exercise's file as bytes, read here in the judge (to say where a
        file not in UTF-8 first parts from it); None when it cannot be read."""
        try:
            with open(os.path.join(self.package_dir, self.module + ".py"), "rb") as file:
                return file.read(1 << 20)
        except (OSError, TypeError):
            return None

    def _time_left(self):
        left = self.budget - self.spent
        if left <= 0.05:
            raise self._end_sticky(WorkerFailure("timeout", Bi(
                f"你的代码用完了这个练习的 {self.budget:g} 秒，被停止了：参考答案只需要远不到一秒（循环跑得太久？）",
                f"your code has used up this exercise's {self.budget:g} s and was stopped: "
                "the solution needs well under a second (a loop that runs too long?)")))
        return min(self.call_timeout, left)

    def _timeout_failure(self, timeout, doing, guess):
        if timeout < self.call_timeout:
            return WorkerFailure("timeout", Bi(
                f"{doing.zh}用完了这个练习的 {self.budget:g} 秒，被停止了（{guess.zh}）",
                f"{doing.en} used up this exercise's {self.budget:g} s and was stopped "
                f"({guess.en})"))
        return WorkerFailure("timeout", Bi(
            f"{doing.zh}超过了 {timeout:g} 秒，被停止了（{guess.zh}）",
            f"{doing.en} took more than {timeout:g} s and was stopped ({guess.en})"))

    def _busy(self, busy):
        """The machine kept the worker from its work (see _receive): the worker is stopped, and
        the next request starts a new one; the judge grades the scenario again (plugin)."""
        self._stop()
        return WorkerFailure("busy", Bi(
            f"机器太忙：你的代码自己只用了不到一半的时间，这一次调用却等了 {busy.seconds:.0f} 秒（不扣你的分，会重新评分）",
            f"the machine was too busy: this call waited {busy.seconds:.0f} s while your code "
            "itself used far less (no points are taken for it; it is graded again)"))

    def _end_sticky(self, failure):
        self._stop()
        failure.sticky = True
        self.sticky = failure
        return failure

    def _forget_stat(self):
        if self.stat is not None:
            os.close(self.stat)
            self.stat = None

    def _stop(self):
        """Kill the worker (it crashed, ran over time or was interrupted): how it ended."""
        if self.sock is None:
            return {}
        self._forget_stat()
        self.sock.close()
        self.sock = None
        pid, self.pid = self.pid, None
        return self.backend.kill_and_reap(pid)

    def close(self):
        """The judge is done with this exercise: hand the worker back (grading/backends/portable.py may
        lend it for the submission's next exercise; a forked one is killed)."""
        if self.sock is None:
            return
        self._forget_stat()
        sock, self.sock = self.sock, None
        pid, self.pid = self.pid, None
        self.backend.release(pid, sock)


def garbled(error):
    return WorkerFailure("garbled", Bi(
        # what is wrong with it is told in English only (the protocol's words, for the instructor)
        "运行你的代码的进程传回了不合规定的内容，这个练习的其余检查都不再运行",
        f"your code's worker sent back something that is not a valid reply ({error}); this "
        "exercise's remaining checks were not run"))


# What a Chinese input method types where Python wants ASCII: the full-width forms (NFKC maps
# them), the ideographic space, and the curly quotes and the enumeration comma, which it does not.
_HALF_WIDTH = {"\u3000": " ", "“": '"', "”": '"', "‘": "'", "’": "'", "、": ",", "。": ".",
               "【": "[", "】": "]", "《": "<", "》": ">", "—": "-", "…": "..."}


def _half_width(char):
    import unicodedata
    plain = _HALF_WIDTH.get(char) or unicodedata.normalize("NFKC", char)
    return plain if plain != char and plain.isascii() else None


def _slip_text(kind, message, source):
    """The lesson's word on a slip of the keyboard or the editor that Python reports in English
    alone: a full-width character from an input method, tabs among spaces, a file not in UTF-8."""
    line = re.search(r"line (\d+)\)?$", message)
    where = Bi(f"第 {line.group(1)} 行", f"line {line.group(1)}") if line else Bi("文件里", "the file")
    found = re.search(r"invalid (?:non-printable )?character (?:'(.)' )?\(?U\+([0-9A-F]{4,6})\)?",
                      message) if kind == "SyntaxError" else None
    if found:
        char = chr(int(found.group(2), 16))
        plain = _half_width(char)
        if plain is not None:
            shown = "全角空格" if char == "\u3000" else f"'{char}'"
            shown_en = "the ideographic (full-width) space" if char == "\u3000" else f"'{char}'"
            half = "半角空格" if plain == " " else f"半角的 '{plain}'"
            half_en = "a plain space" if plain == " " else f"the half-width '{plain}'"
            return Bi(f"{where.zh}有一个 {shown}（U+{found.group(2)}），是中文输入法打出来的；Python 只认"
                      f"{half}。切换到英文（半角）输入，重新打这个字符",
                      f"{where.en} holds {shown_en} (U+{found.group(2)}), typed by a Chinese input "
                      f"method; Python reads only {half_en}. Switch the input method to English "
                      "(half-width) and type it again")
    if kind == "TabError":
        return Bi(f"{where.zh}的缩进混用了制表符和空格：请全部用空格缩进（一级 4 个），编辑器里可以设置按下制表键时插入空格",
                  f"{where.en}'s indentation mixes tabs and spaces: indent with spaces alone (4 a "
                  "level); editors can insert spaces when Tab is pressed")
    if kind == "SyntaxError" and "codec can't decode" in message and source is not None:
        try:
            source.decode("utf-8")
        except UnicodeDecodeError as bad:
            at = source.count(b"\n", 0, bad.start) + 1
            byte = source[bad.start]
            return Bi(f"这个文件不是用 UTF-8 保存的（第 {at} 行的字节 0x{byte:02x} 不是 UTF-8）：它大概是用“ANSI”或"
                      "GBK 保存的。请把它另存为 UTF-8（记事本：另存为 → 编码选 UTF-8）",
                      f"the file is not saved as UTF-8 (line {at} holds the byte 0x{byte:02x}, "
                      "which is not UTF-8): it was probably saved as \"ANSI\" or GBK. Save it "
                      "as UTF-8 (Notepad: Save As → Encoding: UTF-8)")
    return None


def undecodable_frame(error, module, source):
    """An import error of a file not in UTF-8, with its frame at the first byte that is not
    (Python names the end of the string it could not decode, far from it); others as they are."""
    if not isinstance(error, dict) or "codec can't decode" not in str(error.get("message")) \
            or source is None:
        return error
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as bad:
        start = source.rfind(b"\n", 0, bad.start) + 1
        end = source.find(b"\n", bad.start)
        text = source[start:end if end >= 0 else len(source)].decode("utf-8", "replace").strip()
        line = source.count(b"\n", 0, bad.start) + 1
        return {**error, "frames": [[f"{module}.py", line, "<module>", text[:200]]]}
    return error


def raised_text(error, source=None):
    """What the learner's exception says, with a word on the cases a learner cannot read alone.
    `source`: the file's bytes, where an import failed (a file not in UTF-8: where it parts)."""
    kind, message = error.get("type", "Exception"), error.get("message", "")
    slip = _slip_text(kind, message, source)
    if slip is not None:
        return Bi(f"{slip.zh}（{kind}: {message}）", f"{slip.en} ({kind}: {message})")
    if kind == "ModuleNotFoundError" and re.search(r"'(solutions|ex\d+_\w+)", message):
        return Bi(f"{kind}: {message}——导入别的练习要用相对导入，例如 "
                  "`from .ex5_causal_mask import causal_softmax`（或 `from exercises.ex5_causal_mask "
                  "import causal_softmax`），这样在任何文件夹里都能用",
                  f"{kind}: {message} — import another exercise relatively, as in "
                  "`from .ex5_causal_mask import causal_softmax` (or `from exercises.ex5_causal_mask "
                  "import causal_softmax`), so that it works in any folder")
    there = re.fullmatch(r"(ex\d+_\w+\.py) is missing from the submission(?: \((.+) is there\))?",
                         message) if kind == "FileNotFoundError" else None
    if there and there.group(2):
        wanted, found = there.group(1), there.group(2)
        return Bi(f"没有 {wanted}，但有 {found}：文件名要一字不差（全是小写），请把它改名为 {wanted}",
                  f"{wanted} is missing, but {found} is there: the name must match exactly (all "
                  f"lower case): rename it to {wanted}")
    if there:
        return Bi(f"{there.group(1)} 不在提交的文件夹里", f"{there.group(1)} is missing from the submission")
    if kind == "SystemExit":
        return Bi(f"调用了 sys.exit({message})——评分需要你的代码返回结果，而不是退出",
                  f"sys.exit({message}) was called — the grader needs your code to return, not "
                  "to exit")
    text = f"{kind}: {message}" if message else kind
    if kind == "PermissionError":
        return Bi(f"{text}——评分的沙箱拒绝了它：你的代码只能读取它自己的文件夹，不能写文件、启动进程或联网",
                  f"{text} — refused by the grader's sandbox: your code may read its own folder, "
                  "and may not write files, start processes or use the network")
    if "can't allocate memory" in message or kind == "MemoryError":
        return Bi(f"{text}——超过了每个练习的内存上限（--memory）",
                  f"{text} — more memory than one exercise may take (--memory)")
    return Bi(text, text)
