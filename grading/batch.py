"""`python grader.py --batch DIR --csv grades.csv`: a class's submissions, one per subfolder of DIR.

torch is imported once, in this process, which then forks one judge per core; each judge grades its
share of the submissions one after another, each in a pytest session of its own with workers forked
from the shared zygote, exactly as a single run grades one. Records stream back over pipes, so the
progress bar moves as submissions finish; the CSV is written sorted by name.
"""
import csv
import gc
import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from grading import report
from grading.inert import inert_line
from grading.session import EXERCISES, ROOT, SessionError, grade

CSV_COLUMNS = ["name", *EXERCISES, "total", "status", "seconds"]
REFUSED_LINK = "refused: a symbolic link"


def submissions_in(folder):
    """Every subfolder, and every symbolic link (refused when graded, so it shows in the CSV)."""
    return sorted(p for p in folder.iterdir()
                  if (p.is_dir() or p.is_symlink()) and not p.name.startswith("."))


def is_linked(folder):
    """A submission that is a symbolic link, or whose ex*.py are: grading it would read files from
    wherever the links point."""
    return folder.is_symlink() or any(p.is_symlink() for p in folder.glob("ex*.py"))


def status_of(record):
    """"graded", or "error: …" when a test met a problem of the grader (a result "error")."""
    for ex in record["exercises"].values():
        for test in ex["tests"]:
            if test["status"] == "error":
                message = (test["message"] or {}).get("en") or "a grading error"
                return "error: " + inert_line(message).strip()[:200]
    return "graded"


def grade_one(zygote, folder, seed, exercises, timeout):
    if is_linked(folder):
        return {"status": REFUSED_LINK, "exercises": {}, "total": 0, "seconds": 0}
    started = time.monotonic()
    try:
        record = report.record(grade(zygote, folder, seed, exercises, call_timeout=timeout))
        record["status"] = status_of(record)
    except SessionError as error:  # a problem of the tests, not of this submission
        first = (str(error).splitlines() or ["the tests could not run"])[0]
        record = {"status": f"error: {inert_line(first)[:200]}", "exercises": {},
                  "total": 0, "seconds": round(time.monotonic() - started, 2)}
    return record


def grade_all(zygote, folder, seed, exercises, timeout, jobs):
    """{name: record} for every submission in folder, `jobs` judges at a time."""
    submissions = submissions_in(folder)
    jobs = max(1, min(jobs, len(submissions)))
    progress = Progress(len(submissions))
    shares = [submissions[index::jobs] for index in range(jobs)]
    if zygote.can_fork_judges:
        streams = _forked_judges(zygote, shares, seed, exercises, timeout)
    else:
        streams = _started_judges(zygote, shares, seed, exercises, timeout)
    records, lines = {}, queue.Queue()

    def read(stream, wait_for_judge):  # a thread per judge: pipes cannot be selected on Windows
        for line in stream:
            lines.put(line)
        wait_for_judge()
        lines.put(None)

    for stream, wait_for_judge in streams.items():
        threading.Thread(target=read, args=(stream, wait_for_judge), daemon=True).start()
    running = len(streams)
    while running:
        line = lines.get()
        if line is None:
            running -= 1
            continue
        item = json.loads(line)
        records[item["name"]] = item["record"]
        progress.step(item["name"], item["record"])
    for sub in submissions:  # a judge that died leaves its share ungraded, and says so
        records.setdefault(sub.name, {"status": "error: its grading process ended early",
                                      "exercises": {}, "total": 0, "seconds": 0})
    progress.done()
    return dict(sorted(records.items()))


def _forked_judges(zygote, shares, seed, exercises, timeout):
    """Linux: judges forked from this process, torch imported once for all.
    {stream of JSON lines: a function that waits for its judge}"""
    import pytest  # noqa: F401  (imported once, before the judges fork)
    import torch  # noqa: F401
    import grading.plugin  # noqa: F401
    gc.freeze()  # the judges forked below leave torch's objects alone (see grading/worker.py)
    streams = {}
    for index, share in enumerate(shares):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # a judge: its share of the submissions
            os.close(read_end)
            zygote.become_client(index)
            with os.fdopen(write_end, "w") as out:
                _grade_share(zygote, share, seed, exercises, timeout, out)
            os._exit(0)
        os.close(write_end)
        streams[os.fdopen(read_end)] = lambda pid=pid: os.waitpid(pid, 0)
    return streams


def _started_judges(launcher, shares, seed, exercises, timeout):
    """The portable backend: each judge a fresh process (`python -m grading.batch`), with
    workers of its own. {stream of JSON lines: a function that waits for its judge}"""
    streams = {}
    for share in shares:
        job = {"submissions": [os.path.abspath(sub) for sub in share], "seed": seed,
               "exercises": exercises, "timeout": timeout, "memory": launcher.memory}
        judge = subprocess.Popen([sys.executable, "-m", "grading.batch", json.dumps(job)],
                                 cwd=ROOT, stdout=subprocess.PIPE, text=True, encoding="utf-8")
        streams[judge.stdout] = judge.wait
    return streams


def _grade_share(backend, share, seed, exercises, timeout, out):
    for sub in share:
        record = grade_one(backend, sub, seed, exercises, timeout)
        out.write(json.dumps({"name": sub.name, "record": record}) + "\n")
        out.flush()


def _judge_main(job):
    """A judge of the portable backend's batch: grade its share, one JSON line each."""
    from grading.portable import PortableLauncher
    from grading.python_walls import install_tripwire, tripwire_wanted
    if tripwire_wanted():
        install_tripwire()
    job = json.loads(job)
    launcher = PortableLauncher(ROOT, memory=job["memory"], spare=True)
    try:
        _grade_share(launcher, [Path(sub) for sub in job["submissions"]], job["seed"],
                     job["exercises"], job["timeout"], sys.stdout)
    finally:
        launcher.close()


def shown_name(name):
    """A submission folder's name as the CSV and the log show it: one inert line, and never a
    spreadsheet formula (a leading = + - @ gets an apostrophe)."""
    name = inert_line(name)
    return "'" + name if name[:1] in ("=", "+", "-", "@") else name


def csv_text(records):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for name, record in sorted(records.items()):
        scores = [f"{record['exercises'][ex]['score']:g}" if ex in record["exercises"] else ""
                  for ex in EXERCISES]
        writer.writerow([shown_name(name), *scores, f"{record['total']:g}",
                         inert_line(record["status"]), record["seconds"]])
    return out.getvalue()


class Progress:
    """A bar on a terminal; a line per submission elsewhere (a CI log)."""

    def __init__(self, total):
        self.total, self.count, self.tty = total, 0, sys.stderr.isatty()

    def step(self, name, record):
        self.count += 1
        name = shown_name(name)
        if self.tty:
            filled = round(30 * self.count / self.total)
            sys.stderr.write(f"\r grading {'█' * filled}{'░' * (30 - filled)} "
                             f"{self.count}/{self.total} {name[:30]:<30}")
            sys.stderr.flush()
        else:  # a CI log, where a line may be read as a workflow command
            line = f"{name}: {record['total']:g} ({inert_line(record['status'])})"
            print(report.no_commands(line), flush=True)

    def done(self):
        if self.tty:
            sys.stderr.write("\n")


if __name__ == "__main__":
    _judge_main(sys.argv[1])
