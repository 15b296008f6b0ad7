"""`python grader.py --batch DIR --csv grades.csv`: a class's submissions, one per entry of DIR.

An entry is a folder of the six ex*.py files, a whole repository clone (the files in exercises/),
either of those nested one level in a folder, or a .zip of any of these (extracted into a private
temporary folder: no path leaving it, no links, at most ZIP_FILES files and ZIP_BYTES bytes).
Each row gets an honest status: graded, incomplete (which files are missing; the rest graded),
empty (no exercise file found), refused (why), or grading error (why).

torch is imported once, in this process, which then forks judges (one per core). The judges take
the next submission when they are free (a work queue, so no core idles while another has a long
share), each graded in a pytest session of its own with workers forked from the shared zygote,
exactly as a single run grades one. Every judge runs under a memory limit of its own
(limit_judge_memory). When a judge dies (killed for memory, crashed), the row it was grading is
marked "grading error" with how it ended, and a new judge takes the rest of the queue.
"""
import csv
import gc
import hashlib
import io
import json
import os
import queue
import re
import selectors
import shutil
import signal
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import unicodedata
import zipfile
from collections import Counter, deque
from pathlib import Path

from grading.config import EXERCISES, ROOT
from grading.errors import GradingError, SessionError
from grading.i18n import Bi
from grading.inert import _CONTROLS, inert_line
from grading.judge.limits import JUDGE_MEMORY, limit_judge_cpu, limit_judge_memory, restore
from grading.judge.session import grade
from grading.output import report

# The judge's CPU time for one row, all its replays and checks: a row takes a few seconds, and
# its replays are bounded apart (grading.judge.replay.EXERCISE_REPLAY_SECONDS each exercise).
ROW_CPU_SECONDS = 300

CSV_COLUMNS = ["name", *EXERCISES, "total", "of", "hidden", "status", "note", "seed", "seconds"]
CHECK_COLUMNS = ["name", "exercise", "check", "kind", "points", "of", "status", "message"]
STATUSES = ("graded", "incomplete", "empty", "refused", "grading error", "interrupted")
FILES = [f"{name}.py" for name in EXERCISES]
ZIP_FILES = 500  # entries of one .zip: a repository clone has a few dozen
ZIP_BYTES = 50 << 20  # bytes of one .zip, extracted: the six files are a few KiB
SPARE_JUDGES = 32  # judges that may be started in place of ones that died, in one batch
KILL_HOOK = "GRADER_SELFTEST_KILL_JUDGE_AT"  # the self-test's only way to make a judge die


# -- what each entry is ---------------------------------------------------------------------------

def submissions_in(folder):
    """Every subfolder and .zip file, and every symbolic link (refused when graded, so it shows in
    the CSV), but hidden ones."""
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and (
        p.is_symlink() or p.is_dir() or p.suffix.lower() == ".zip" and p.is_file()))


def is_linked(folder):
    """A submission that is a symbolic link, or whose ex*.py are: grading it would read files from
    wherever the links point."""
    return folder.is_symlink() or any(p.is_symlink() for p in folder.glob("ex*.py"))


def record_of(status, note="", seconds=0):
    """A row that was not graded (or whose grading failed): no points."""
    return {"status": status, "note": note, "exercises": {}, "total": 0, "seconds": seconds}


def prepare(entry, unpacked):
    """{"name", "path", "missing", "layout", "files"} of a submission to grade, or {"record"}: its
    row, ungraded. A .zip is extracted into a folder of its own in `unpacked` first. "layout":
    what of the entry was graded, where that is not plain (the copy chosen, a folder deep down);
    "files": a digest of its ex*.py, to note identical submissions."""
    name = entry.name
    if entry.is_symlink():
        return {"record": record_of("refused", "a symbolic link")}
    if entry.is_file():  # a .zip
        target = Path(tempfile.mkdtemp(dir=unpacked))
        why = extract_zip(entry, target)
        if why:
            return {"record": record_of("refused", why)}
        entry = target
    folder, why, layout = find_exercises(entry)
    if folder is None:
        return {"record": record_of(*why)}
    missing = [file for file in FILES if not (folder / file).is_file()]
    return {"name": name, "path": str(folder), "missing": missing, "layout": layout,
            "files": files_digest(folder)}


DEPTH = 4  # folders down that the batch looks for the exercises, at most
LOOKED = 200  # folders of one submission it looks into, at most


def find_exercises(entry):
    """(the folder holding the ex*.py files, None, a note or ""), or (None, (status, note), "").
    Looked for in the entry and its exercises/ (a repository clone), then further down, DEPTH
    folders at most: one place found is graded, and the note says where when it is not the
    entry or its exercises/, or which copy was chosen where both hold files."""
    def holds(folder):
        return any((folder / file).is_file() or (folder / file).is_symlink() for file in FILES)

    def look(folder):
        places = [place for place in (folder, folder / "exercises")
                  if place.is_symlink() or (place.is_dir() and holds(place))]
        return places  # a link: refused below

    found, note = look(entry), ""
    if len(found) == 2:
        note = "two copies: graded the files at the top, not exercises/"
    found = found[:1]
    if not found:
        found = _deeper(entry, look)
        if len(found) > 1:
            names = ", ".join(str(place.relative_to(entry)) for place in found[:4])
            return None, ("refused", f"more than one submission inside: {names}"), ""
        if found and found[0].parent != entry and found[0].parent.parent != entry:
            note = f"graded {found[0].relative_to(entry).as_posix()}/ (deeper than usual)"
    if not found:
        anything = any(not p.name.startswith(".") for p in entry.iterdir())
        return None, ("empty", "no ex*.py file of the six" if anything else "an empty folder"), ""
    place = found[0]
    while place != entry:  # a link on the way would read files from wherever it points
        if place.is_symlink():
            return None, ("refused", "a symbolic link"), ""
        place = place.parent
    if is_linked(found[0]):
        return None, ("refused", "a symbolic link"), ""
    return found[0], None, note


def _deeper(entry, look):
    """The places below `entry` (not itself) that hold the exercises, nearest first: at the
    first depth that has any, all of that depth."""
    level, looked = [entry], 0
    for _ in range(DEPTH):
        level = [inner for folder in level for inner in sorted(folder.iterdir())
                 if inner.is_dir() and not inner.is_symlink()
                 and not inner.name.startswith((".", "__"))]  # .git, __MACOSX, __pycache__
        looked += len(level)
        found = [place for folder in level for place in look(folder)[:1]]
        if found or not level or looked > LOOKED:
            return found
    return []


def files_digest(folder):
    """A digest of the exercise files a folder holds (names and bytes), or "" for none."""
    digest = hashlib.sha256()
    for file in FILES:
        path = folder / file
        if path.is_file() and not path.is_symlink():
            digest.update(file.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def note_identical(records, stubs=None):
    """Add to each graded row whose exercise files are byte for byte another row's a note that
    names the others (untouched stubs aside): identical submissions, for a person to look at."""
    groups = {}
    for name, record in records.items():
        files = record.get("files")
        if files and files != stubs and record.get("status") in ("graded", "incomplete"):
            groups.setdefault(files, []).append(name)
    for names in groups.values():
        for name in names if len(names) > 1 else ():
            others = sorted(other for other in names if other != name)
            shown = ", ".join(visible(other) for other in others[:3]) + (
                f" and {len(others) - 3} more" if len(others) > 3 else "")
            records[name]["note"] = "; ".join(filter(None, [
                records[name].get("note", ""), f"identical files to {shown}"]))


def extract_zip(path, target):
    """Extract the .zip at `path` into `target`; a reason to refuse it, or "" when done. Every
    name must stay inside target; links, too many files or too many bytes refuse the whole zip."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
            if len(entries) > ZIP_FILES:
                return f"a zip of more than {ZIP_FILES} files"
            if sum(e.file_size for e in entries) > ZIP_BYTES:
                return f"a zip of more than {ZIP_BYTES >> 20} MiB"
            written = 0
            for entry in entries:
                parts = entry.filename.replace("\\", "/").split("/")
                if entry.filename.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
                    return "a zip with a path that leaves its folder"
                kind = stat.S_IFMT(entry.external_attr >> 16)
                if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                    return "a zip holding a symbolic link or a special file"
                destination = target.joinpath(*[part for part in parts if part])
                if entry.is_dir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(entry) as source, open(destination, "xb") as out:
                    while chunk := source.read(1 << 16):  # counted as written: sizes can lie
                        written += len(chunk)
                        if written > ZIP_BYTES:
                            return f"a zip of more than {ZIP_BYTES >> 20} MiB"
                        out.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, OSError, ValueError,
            EOFError, NotImplementedError) as error:  # corrupt, encrypted, a name twice…
        return f"a zip that cannot be read ({type(error).__name__})"
    return ""


# -- one judge ------------------------------------------------------------------------------------

def status_of(record):
    """("graded", ""), or ("grading error", why) when a test met a problem of the grader."""
    for ex in record["exercises"].values():
        for test in ex["tests"]:
            if test["status"] == "error":
                message = (test["message"] or {}).get("en") or "a grading error"
                return "grading error", inert_line(message).strip()[:200]
    return "graded", ""


def grade_one(backend, folder, seed, exercises, timeout, missing=()):
    if is_linked(folder):
        return record_of("refused", "a symbolic link")
    started = time.monotonic()
    try:
        record = report.record(grade(backend, folder, seed, exercises, call_timeout=timeout))
        record["status"], record["note"] = status_of(record)
        if record["status"] == "graded" and missing:  # (and the file that is there instead)
            from grading.worker.serve import named_otherwise
            record["status"], record["note"] = "incomplete", "missing " + ", ".join(
                file + named_otherwise(folder, file[:-len(".py")]) for file in missing)
        if hidden_not_run(record):  # a copy without solutions/: no grade, and it says so
            record["note"] = "; ".join(filter(None, [
                record["note"], f"public checks only, of {record['max']:g}: the hidden checks "
                "did not run (no solutions/)"]))
    except SessionError as error:  # a problem of the tests, not of this submission
        first = (str(error).splitlines() or ["the tests could not run"])[0]
        record = record_of("grading error", inert_line(first)[:200],
                           round(time.monotonic() - started, 2))
    return record


def _serve_jobs(backend, jobs, out, seed, exercises, timeout):
    """A judge: grade each submission named on `jobs` (a JSON line each), one JSON line back."""
    for line in jobs:
        job, retire = json.loads(line), False
        if os.environ.get(KILL_HOOK) == job["name"]:  # the self-test's judge killed part-way
            os.kill(os.getpid(), signal.SIGKILL)
        limits = limit_judge_cpu(ROW_CPU_SECONDS)  # this row's, on top of its replays' budgets
        try:
            record = grade_one(backend, Path(job["path"]), seed, exercises, timeout,
                               job["missing"])
        except MemoryError:  # past limit_judge_memory: this row, then a new judge for the rest
            record, retire = record_of("grading error", "the judge ran out of memory"), True
        except GradingError as error:  # past ROW_CPU_SECONDS: this row, then a new judge
            record, retire = record_of("grading error", inert_line(str(error))[:200]), True
        finally:
            restore(limits)
        out.write(json.dumps({"name": job["name"], "record": record, "retire": retire}) + "\n")
        out.flush()
        if retire:
            return


class _Judge:
    """A judge process seen from the batch: jobs go in as lines, records come out as lines."""

    def __init__(self, jobs, records, ended, kill):
        # binary files: jobs are written to one; the other is read by its fd, never buffered,
        # and closed through its file object only (an fd closed twice may be another judge's)
        self.jobs, self.records = jobs, records
        self.ended, self.kill = ended, kill  # () -> how it ended, in words; () -> None
        self.current, self.buffer = None, b""

    def give(self, job):
        self.current = job
        try:
            self.jobs.write(json.dumps(job).encode() + b"\n")
            self.jobs.flush()
        except OSError:  # it has died: its end of the pipe shows it
            pass

    def close_jobs(self):
        try:
            self.jobs.close()
        except OSError:
            pass

    def read(self):
        return os.read(self.records.fileno(), 1 << 16)


def _how_it_ended(code):
    """A judge's exit status, as subprocess gives it (-N: killed by signal N), in words."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        why = " (out of memory, or killed from outside)" if name == "SIGKILL" else ""
        return f"was killed by {name}{why}"
    return f"ended with exit status {code}"


class _Judges:
    """Starts judges (forked from this process, or fresh ones for the portable backend) and gives
    their record lines, one at a time."""

    def __init__(self, backend, seed, exercises, timeout, most):
        self.backend, self.settings = backend, (seed, exercises, timeout)
        self.running, self.started, self.most = [], 0, most  # most: judges started in all
        self.stopped = []
        self.fork = backend.can_fork_judges
        if self.fork:
            import pytest  # noqa: F401  (imported once, before the judges fork)
            import torch  # noqa: F401

            import grading.judge.plugin  # noqa: F401
            gc.freeze()  # forked judges leave torch's objects alone (see grading/worker/zygote.py)
        if os.name == "nt":  # pipes cannot be selected on Windows: a thread reads each
            self.lines = queue.Queue()
        else:
            self.selector = selectors.DefaultSelector()

    def start(self):
        """A new judge, or None when SPARE_JUDGES have been started in place of dead ones."""
        if self.started >= self.most:  # (a forked judge needs a zygote connection of its own)
            return None
        judge = self._forked() if self.fork else self._launched()
        self.started += 1
        self.running.append(judge)
        if os.name == "nt":
            threading.Thread(target=self._read, args=(judge,), daemon=True).start()
        else:
            self.selector.register(judge.records, selectors.EVENT_READ, judge)
        return judge

    def _forked(self):
        jobs_read, jobs_write = os.pipe()
        records_read, records_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a judge
            code = 1
            try:
                os.close(jobs_write)
                os.close(records_read)
                for other in self.running:  # else a judge's end of jobs would never close
                    os.close(other.records.fileno())
                    os.close(other.jobs.fileno())
                self.backend.become_client(self.started)
                limit_judge_memory(JUDGE_MEMORY)
                with os.fdopen(jobs_read) as jobs, os.fdopen(records_write, "w") as out:
                    _serve_jobs(self.backend, jobs, out, *self.settings)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(jobs_read)
        os.close(records_write)

        def ended():
            return _how_it_ended(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))

        def kill():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return _Judge(os.fdopen(jobs_write, "wb"), os.fdopen(records_read, "rb", buffering=0),
                      ended, kill)

    def _launched(self):
        seed, exercises, timeout = self.settings
        config = {"seed": seed, "exercises": exercises, "timeout": timeout,
                  "memory": self.backend.memory}
        judge = subprocess.Popen([sys.executable, "-m", "grading.commands.batch", json.dumps(config)],
                                 cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

        return _Judge(judge.stdin, judge.stdout, lambda: _how_it_ended(judge.wait()),
                      judge.kill)

    def _read(self, judge):  # Windows: a thread per judge
        while chunk := judge.read():
            self.lines.put((judge, chunk))
        self.lines.put((judge, b""))

    def next_line(self):
        """(judge, a record line), or (judge, None) when that judge has ended."""
        while True:
            for judge in self.running:
                if b"\n" in judge.buffer:
                    line, judge.buffer = judge.buffer.split(b"\n", 1)
                    return judge, line
            if os.name == "nt":
                judge, chunk = self.lines.get()
            else:
                judge = self.selector.select()[0][0].data
                chunk = judge.read()
            if chunk:
                judge.buffer += chunk
                continue
            self.running.remove(judge)
            if os.name != "nt":
                self.selector.unregister(judge.records)
            judge.records.close()
            judge.close_jobs()
            return judge, None

    def stop(self):
        """Every judge still running, killed and waited for (an interrupted batch); they are kept
        in `stopped`, with the job each was grading."""
        for judge in list(self.running):
            judge.close_jobs()
            judge.kill()
            judge.ended()
            judge.records.close()
            self.stopped.append(judge)
        self.running = []


def judges_for(jobs):
    """How many judges a batch of `jobs` at a time may start in all: each needs a connection to
    the zygote of its own (grader.py opens that many)."""
    return max(1, jobs) + SPARE_JUDGES


def grade_all(backend, folder, seed, exercises, timeout, jobs, saved=None, done=None):
    """({name: record} for every submission in folder, `jobs` judges at a time, whether the batch
    was interrupted). `saved`: an open file each row is appended to as it is graded (a JSON
    line, flushed), so that an interrupted batch loses nothing; `done`: rows of an earlier run
    (--resume), taken as they are. Ctrl-C (or SIGTERM, which the caller turns into it) stops every
    judge at once; the rows not graded then are marked "interrupted"."""
    batch = _Rows(folder, saved, done or {})
    judges = _Judges(backend, seed, exercises, timeout, most=judges_for(jobs))
    try:
        batch.run(judges, jobs)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
        # A second interrupt must not cut the gradebook short: an interrupt sent to the whole
        # process group (a CI cancel, Ctrl-C in a make target) reaches this process more than
        # once; from here on the batch only stops its judges and writes what it has.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        judges.stop()  # at once: no judge grades on after the batch has stopped
        batch.mark_interrupted(judges)
    finally:
        judges.stop()
        shutil.rmtree(batch.unpacked, ignore_errors=True)
    batch.progress.done()
    note_identical(batch.records, files_digest(ROOT / "exercises"))
    return dict(sorted(batch.records.items())), interrupted


class _Rows:
    """The rows of one batch: the submissions still to give out, those a judge gave back when it
    died, and the records so far (each saved as it comes)."""

    def __init__(self, folder, saved, done):
        self.entries = deque(submissions_in(folder))
        self.saved, self.done = saved, done
        self.progress, self.records, self.returned = Progress(len(self.entries)), {}, deque()
        self.unpacked = tempfile.mkdtemp(prefix="grader-batch-")  # where the zips are extracted
        self.found = {}  # name -> (what of it is graded, where not plain; its files' digest)

    def finish(self, name, record):
        if name in self.found:
            layout, files = self.found.pop(name)
            record = {**record, "files": files,
                      "note": "; ".join(filter(None, [layout, record.get("note", "")]))}
        self.records[name] = record
        self.progress.step(name, record)
        if self.saved is not None and name not in self.done:
            self.saved.write(json.dumps({"name": name, "record": record}, ensure_ascii=False)
                             + "\n")
            self.saved.flush()

    def next_job(self):
        """The next submission to grade; the ones that need no judge get their row here."""
        while self.returned or self.entries:
            if self.returned:
                return self.returned.popleft()
            entry = self.entries.popleft()
            if entry.name in self.done:
                self.finish(entry.name, self.done[entry.name])
                continue
            try:
                job = prepare(entry, self.unpacked)
            except OSError as error:  # a folder that cannot be listed, say: its row, not the batch
                job = {"record": record_of("refused", f"cannot be read ({error.strerror})")}
            if "record" in job:
                self.finish(entry.name, job["record"])
            else:
                self.found[entry.name] = (job.pop("layout"), job.pop("files"))
                return job
        return None

    def run(self, judges, jobs):
        """Give out every submission, `jobs` judges at a time, until none is left."""
        for _ in range(max(1, jobs)):
            job = self.next_job()
            if job is None:
                break
            judges.start().give(job)
        while judges.running:
            judge, line = judges.next_line()
            if line is not None:
                self._graded(judge, json.loads(line))
            else:
                self._ended(judges, judge)
        while (job := self.next_job()) is not None:  # every judge gone, none may start
            self.finish(job["name"], record_of("grading error", "too many judges died"))

    def _graded(self, judge, item):
        """A judge sent a row back: it gets the next submission, or ends."""
        self.finish(item["name"], item["record"])
        judge.current = None
        job = None if item["retire"] else self.next_job()  # (a retiring judge ends by itself)
        if job is None:
            judge.close_jobs()  # it ends
        else:
            judge.give(job)

    def _ended(self, judges, judge):
        """A judge ended: the row it died on is a grading error; the next goes to a new judge."""
        how = judge.ended()
        if judge.current is not None:
            self.finish(judge.current["name"], record_of("grading error", f"its judge {how}"))
        job = self.next_job()
        if job is None:
            return
        fresh = judges.start()
        if fresh is not None:
            fresh.give(job)
        elif judges.running:
            self.returned.appendleft(job)  # for a judge still running
        else:
            self.finish(job["name"], record_of("grading error", "too many judges died"))

    def mark_interrupted(self, judges):
        left = [judge.current["name"] for judge in judges.stopped if judge.current] \
            + [job["name"] for job in self.returned] + [entry.name for entry in self.entries]
        for name in left:
            self.records.setdefault(name, record_of("interrupted", "not graded: the batch was "
                                                    "interrupted; --resume grades what is left"))


def _judge_main(config):
    """A judge of the portable backend's batch: grade each submission named on stdin."""
    from grading.backends.portable import PortableBackend
    from grading.walls.audit import install_tripwire, tripwire_wanted
    limit_judge_memory(JUDGE_MEMORY, torch_first=False)  # first: the tripwire makes /proc a
    # Linux-only call
    if tripwire_wanted():
        install_tripwire()
    config = json.loads(config)
    launcher = PortableBackend(ROOT, memory=config["memory"], spare=True)
    try:
        _serve_jobs(launcher, sys.stdin, sys.stdout, config["seed"], config["exercises"],
                    config["timeout"])
    finally:
        launcher.close()


# -- what a TA reads ------------------------------------------------------------------------------

def visible(text):
    """`text` with each character that shows nothing (controls, zero-width, bidirectional
    controls, line separators, spaces other than the plain one) written as its escape, \\u200b,
    and each backslash doubled: two names that differ look different, and a name can be told
    back from its row. Nothing is removed."""
    def shown(char):
        if char == "\\":
            return "\\\\"
        if _CONTROLS.match(char) or char in "\t\n" or (
                unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")
                and char != " "):
            code = ord(char)
            if char in "\t\n\r":
                return {"\t": "\\t", "\n": "\\n", "\r": "\\r"}[char]
            return f"\\x{code:02x}" if code < 0x100 else (
                f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        return char
    return "".join(map(shown, str(text)))


def cell(text):
    """A spreadsheet cell's text: visible, and never a formula (= + - @ tab or CR first get an
    apostrophe, as OWASP's CSV-injection advice has it)."""
    text = visible(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


shown_name = cell  # a submission's name, as the CSV and the log show it


def hidden_not_run(record):
    """The points of the hidden checks that did not run for this row (no solutions/ here)."""
    return sum(test["points"] for ex in record["exercises"].values() for test in ex.get("tests", ())
               if test["status"] == "skipped" and test.get("kind") == "hidden")


def public_only(records):
    """True when a graded row ran without the hidden checks: a copy without solutions/, whose
    totals are the public checks' alone and no grade."""
    return any(hidden_not_run(record) for record in records.values())


def csv_text(records):
    """The gradebook: a row per submission, sorted by name; the csv module quotes what needs it.
    `of` is the points the checks that ran could give (100 with the hidden checks), `hidden`
    says "not run" where they did not; the seed replays the row (--submission … --seed)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for name, record in sorted(records.items()):
        scores = [f"{record['exercises'][ex]['score']:g}" if ex in record["exercises"] else ""
                  for ex in EXERCISES]
        graded = bool(record["exercises"])
        writer.writerow([cell(name), *scores, f"{record['total']:g}",
                         f"{record['max']:g}" if graded and "max" in record else "",
                         ("not run" if hidden_not_run(record) else "ran") if graded else "",
                         record["status"], cell(record.get("note", "")),
                         record.get("seed", "") if graded else "", record["seconds"]])
    return out.getvalue()


def checks_csv(records):
    """Every check of every graded row, a line each: the points it gave of its points, its status,
    and what it said (English): how a TA answers "why 19/25?"."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CHECK_COLUMNS)
    for name, record in sorted(records.items()):
        for exercise, result in record["exercises"].items():
            for test in result["tests"]:
                message = (test.get("message") or {}).get("en", "")
                writer.writerow([cell(name), exercise, test["id"], test.get("kind", ""),
                                 f"{test['score']:g}", f"{test['points']:g}", test["status"],
                                 cell(inert_line(message)[:500])])
    return out.getvalue()


def beside(gradebook, what):
    """A file beside the gradebook: grades.csv -> grades-causes.csv, grades-checks.csv."""
    gradebook = Path(gradebook)
    return gradebook.with_name(f"{gradebook.stem}-{what}.csv")


def saved_path(gradebook):
    """Where a batch keeps its rows while it runs: grades.csv -> grades.saved.jsonl."""
    gradebook = Path(gradebook)
    return gradebook.with_name(gradebook.stem + ".saved.jsonl")


def read_saved(path, seed):
    """(the seed, {name: row}) of an earlier run's saved rows, to --resume it: the rows graded or
    refused (a grading error is graded again). ValueError when there is nothing to resume, or
    when `seed` (given again) is not the one the rows were graded with."""
    try:
        # "\n" alone ends a saved row: str.splitlines would also split at U+2028 and the other
        # line separators a folder's name may hold (written as they are: ensure_ascii=False)
        lines = [line for line in Path(path).read_text(encoding="utf-8").split("\n") if line]
        head = json.loads(lines[0])
        rows = {}
        for line in lines[1:]:
            try:
                item = json.loads(line)
            except ValueError:  # a line cut short when the batch was stopped
                continue
            if item["record"]["status"] not in ("grading error", "interrupted"):
                rows[item["name"]] = item["record"]
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        raise ValueError(Bi(f"没有可以接着评的批量评分：{path} 不存在或读不出来",
                            f"there is no batch to resume: {path} is missing or unreadable")) \
            from None
    if seed is not None and seed != head.get("seed"):
        raise ValueError(Bi(f"--resume 要用原来的随机种子 {head.get('seed')}（给的是 {seed}）",
                            f"--resume needs the batch's own seed, {head.get('seed')} (not "
                            f"{seed})"))
    return head.get("seed"), rows


def grading_errors(records):
    return [name for name, record in records.items() if record["status"] == "grading error"]


def causes(records, lang="en", examples=3):
    """What the class got wrong: [{exercise, key, count, cause, examples}] of the likely causes
    the report named (an exercise's diagnosis), most frequent first, with a few of the rows.
    Rows are grouped by cause and its very words: a cause that quotes the learner's own names
    ("head_dim is not defined") is never shown for a row whose words were others."""
    found = {}
    for name, record in sorted(records.items()):
        for exercise, result in record["exercises"].items():
            diagnosis = result.get("diagnosis")
            if diagnosis:
                text = diagnosis.get(lang) or diagnosis.get("en") or ""
                found.setdefault((exercise, diagnosis["key"], text), []).append(name)
    rows = [{"exercise": exercise, "key": key, "count": len(names), "cause": text,
             "examples": names[:examples]} for (exercise, key, text), names in found.items()]
    return sorted(rows, key=lambda row: (-row["count"], row["exercise"], row["key"]))


def causes_csv(rows):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["exercise", "key", "count", "cause", "examples"])
    for row in rows:
        writer.writerow([row["exercise"], cell(row["key"]), row["count"], cell(row["cause"]),
                         cell(", ".join(map(visible, row["examples"])))])
    return out.getvalue()


def causes_path(gradebook):
    """Where the causes go, beside the gradebook: grades.csv -> grades-causes.csv."""
    return beside(gradebook, "causes")


_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def markdown_text(text):
    """Text (a submission's name, a cause) as Markdown that renders as that very text: visible
    (see visible), on one line, and every ASCII punctuation character backslash-escaped, which
    CommonMark then shows as itself — no tag, link, emphasis, heading or table cell from it."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", inert_line(visible(str(text))))


def class_report(records, lang="en", interrupted=False):
    """`--report PATH`: what the class got wrong, as Markdown a TA can paste or print: the totals,
    then per exercise its most frequent likely causes, with counts and a few submissions."""
    say = lambda zh, en: Bi(zh, en).render(lang)  # noqa: E731
    esc = markdown_text
    totals = [r["total"] for r in records.values() if r["status"] in ("graded", "incomplete")]
    counts = Counter(record["status"] for record in records.values())
    out = [say("# 全班评分报告", "# The class's grades"), "",
           say(f"{len(records)} 份提交：", f"{len(records)} submissions: ")
           + ", ".join(f"{status} {counts[status]}" for status in STATUSES if counts[status])]
    out += [f"**{esc(line.strip())}**" for line in caveats(records, interrupted, lang)]
    most = max((r.get("max", 100) for r in records.values() if r["exercises"]), default=100)
    if totals:
        out.append(say(f"有分数的 {len(totals)} 份：平均 {statistics.mean(totals):.1f}，中位数 "
                       f"{statistics.median(totals):g}（满分 {most:g}）。",
                       f"With a grade {len(totals)}: mean {statistics.mean(totals):.1f}, median "
                       f"{statistics.median(totals):g} (of {most:g})."))
    wrong = causes(records, lang)
    out += ["", say("## 全班最常见的可能原因", "## What the class got wrong"), ""]
    if not wrong:
        out.append(say("没有一份提交得到可能的原因。", "No submission got a likely cause."))
    for exercise in sorted({row["exercise"] for row in wrong}):
        out += [f"### {exercise}", "", say("| 份数 | 可能的原因 | 例如 |", "| count | likely cause | e.g. |"),
                "|---:|---|---|"]
        out += [f"| {row['count']} | {esc(row['cause'])} | "
                f"{esc(', '.join(row['examples']))} |"
                for row in wrong if row["exercise"] == exercise]
        out.append("")
    return report.no_commands("\n".join(out)).rstrip() + "\n"


def caveats(records, interrupted, lang="en"):
    """The lines that say a batch's figures are no gradebook: the hidden checks did not run, or
    the batch was interrupted. [] for a whole batch graded with the solutions."""
    say = lambda zh, en: Bi(zh, en).render(lang)  # noqa: E731
    lines = []
    if public_only(records):
        most = max((r.get("max", 0) for r in records.values() if r["exercises"]), default=0)
        lines.append(say(f" 隐藏检查没有运行（这份拷贝里没有 solutions/）：每个总分只是公开检查的分数，满分 {most:g}，"
                         "不是成绩单。要出成绩，请在有参考答案的课程仓库里评分。",
                         " The hidden checks did not run (no solutions/ in this copy): each total "
                         f"is the public checks' alone, of {most:g} points, and this is no "
                         "gradebook. Grade where the solutions are."))
    if interrupted:
        count = sum(r["status"] != "interrupted" for r in records.values())
        lines.append(say(f" 批量评分被中断了：{len(records)} 份里评完了 {count} 份，其余标为 interrupted。"
                         "原样再运行一次同一条命令并加上 --resume，只评剩下的，分数与一次评完相同。",
                         f" The batch was interrupted: {count} of {len(records)} rows graded, the "
                         "rest marked interrupted. Run the same command again with --resume to "
                         "grade only what is left; the grades are those of one whole run."))
    return lines


def summary(records, lang="en", interrupted=False):
    """What a TA reads at the end: how many rows of each status, the mean, the median and the
    distribution of the graded totals, and every row that was not graded, with why; first, why
    these figures are no gradebook, when they are not (caveats)."""
    counts = Counter(record["status"] for record in records.values())
    totals = [r["total"] for r in records.values() if r["status"] in ("graded", "incomplete")]
    most = max((r.get("max", 100) for r in records.values() if r["exercises"]), default=100)
    public = public_only(records)
    say = lambda zh, en: Bi(zh, en).render(lang)  # noqa: E731
    lines = [say(f"\n批量评分：{len(records)} 份提交", f"\nBatch: {len(records)} submissions"),
             *caveats(records, interrupted, lang),
             " " + " · ".join(f"{status} {counts[status]}" for status in STATUSES
                              if counts[status] or status != "interrupted")]
    if totals:
        kind = ("公开检查", "public checks only, ") if public else ("", "")
        lines.append(say(f" 有分数的 {len(totals)} 份（含未完成的）：平均 {statistics.mean(totals):.1f}，"
                         f"中位数 {statistics.median(totals):g}（{kind[0]}满分 {most:g}）",
                         f" With a grade {len(totals)} (incomplete ones too): mean {statistics.mean(totals):.1f}, "
                         f"median {statistics.median(totals):g} ({kind[1]}of {most:g})"))
        bins = Counter(min(int(total // 10), 10) for total in totals)
        widest = max(bins.values())
        for b in range(11):
            label = "100" if b == 10 else f"{10 * b}-{10 * b + 9}"
            bar = "█" * round(30 * bins[b] / widest) if bins[b] else ""
            lines.append(f"   {label:>5} {bar} {bins[b] or ''}".rstrip())
    for status in ("grading error", "refused", "empty"):
        names = [name for name, r in records.items() if r["status"] == status]
        if names:
            lines.append(f" {status}:")
            lines += [f"   {cell(name)}: {cell(records[name].get('note', ''))}"
                      for name in names[:20]]
            if len(names) > 20:
                lines.append(f"   … {len(names) - 20} more (see the CSV)")
    wrong = causes(records, lang)
    if wrong:
        lines.append(say(" 全班最常见的可能原因：", " What the class got wrong (the likely causes):"))
        for row in wrong[:10]:
            names = ", ".join(map(cell, row["examples"]))
            lines.append(f"   {row['count']:>3} × {row['exercise']}: {inert_line(row['cause'])}"
                         f" ({say('例如', 'e.g.')} {names})")
    return report.no_commands("\n".join(lines))


class Progress:
    """A bar on a terminal; a line per submission elsewhere (a CI log)."""

    def __init__(self, total):
        self.total, self.count, self.tty = total, 0, sys.stderr.isatty()

    def step(self, name, record):
        self.count += 1
        name = shown_name(name)
        if self.tty:
            filled = round(30 * self.count / max(self.total, 1))
            sys.stderr.write(f"\r grading {'█' * filled}{'░' * (30 - filled)} "
                             f"{self.count}/{self.total} {name[:30]:<30}")
            sys.stderr.flush()
        else:  # a CI log, where a line may be read as a workflow command
            note = f": {cell(record['note'])}" if record.get("note") else ""
            line = f"{name}: {record['total']:g} ({record['status']}{note})"
            print(report.no_commands(line), flush=True)

    def done(self):
        if self.tty:
            sys.stderr.write("\n")


if __name__ == "__main__":
    _judge_main(sys.argv[1])
