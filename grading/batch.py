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
import selectors
import sys
import time

from grading import report
from grading.session import EXERCISES, SessionError, grade

CSV_COLUMNS = ["name", *EXERCISES, "total", "status", "seconds"]


def submissions_in(folder):
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def grade_one(zygote, folder, seed, exercises, timeout):
    started = time.monotonic()
    try:
        record = report.record(grade(zygote, folder, seed, exercises, call_timeout=timeout))
        record["status"] = "graded"
    except SessionError as error:  # a problem of the tests, not of this submission
        record = {"status": f"error: {str(error).splitlines()[0]}", "exercises": {},
                  "total": 0, "seconds": round(time.monotonic() - started, 2)}
    return record


def grade_all(zygote, folder, seed, exercises, timeout, jobs):
    """{name: record} for every submission in folder, `jobs` judges at a time."""
    import pytest  # noqa: F401  (imported once, before the judges fork)
    import torch  # noqa: F401
    import grading.plugin  # noqa: F401
    gc.freeze()  # the judges forked below leave torch's objects alone (see grading/worker.py)
    submissions = submissions_in(folder)
    jobs = max(1, min(jobs, len(submissions)))
    progress = Progress(len(submissions))
    readers, selector = {}, selectors.DefaultSelector()
    for index in range(jobs):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # a judge: its share of the submissions
            os.close(read_end)
            zygote.become_client(index)
            with os.fdopen(write_end, "w") as out:
                for sub in submissions[index::jobs]:
                    record = grade_one(zygote, sub, seed, exercises, timeout)
                    out.write(json.dumps({"name": sub.name, "record": record}) + "\n")
                    out.flush()
            os._exit(0)
        os.close(write_end)
        stream = os.fdopen(read_end)
        readers[stream] = pid
        selector.register(stream, selectors.EVENT_READ)
    records = {}
    while readers:
        for key, _ in selector.select():
            line = key.fileobj.readline()
            if not line:
                selector.unregister(key.fileobj)
                os.waitpid(readers.pop(key.fileobj), 0)
                continue
            item = json.loads(line)
            records[item["name"]] = item["record"]
            progress.step(item["name"], item["record"])
    for sub in submissions:  # a judge that died leaves its share ungraded, and says so
        records.setdefault(sub.name, {"status": "error: its grading process ended early",
                                      "exercises": {}, "total": 0, "seconds": 0})
    progress.done()
    return dict(sorted(records.items()))


def csv_text(records):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for name, record in sorted(records.items()):
        scores = [f"{record['exercises'][ex]['score']:g}" if ex in record["exercises"] else ""
                  for ex in EXERCISES]
        writer.writerow([name, *scores, f"{record['total']:g}", record["status"],
                         record["seconds"]])
    return out.getvalue()


class Progress:
    """A bar on a terminal; a line per submission elsewhere (a CI log)."""

    def __init__(self, total):
        self.total, self.count, self.tty = total, 0, sys.stderr.isatty()

    def step(self, name, record):
        self.count += 1
        if self.tty:
            filled = round(30 * self.count / self.total)
            sys.stderr.write(f"\r grading {'█' * filled}{'░' * (30 - filled)} "
                             f"{self.count}/{self.total} {name[:30]:<30}")
            sys.stderr.flush()
        else:
            print(f"{name}: {record['total']:g} ({record['status']})", flush=True)

    def done(self):
        if self.tty:
            sys.stderr.write("\n")
