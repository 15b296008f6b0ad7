"""A grade is a function of the code alone (issue 23): identical submissions get identical grades,
and the solutions full marks, on a machine under a heavy mixed load — torch processes that
compute, memory pressure that evicts the page cache, disk writes that wait for the disk. On
d1ed0b4 such a load cost the solutions points ("your code has used up this exercise's 8 s"):
the Meter charged a worker the time it spent in page faults and the time the judge's own polls
were late. The load is set up here, each process with its own memory limit, and killed after.
"""
import csv
import os
import signal
import subprocess
import sys
import time

import pytest

import course
from conftest import run_grader
from long_runs import solutions_in

pytestmark = [pytest.mark.full, pytest.mark.under_load,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
              pytest.mark.timeout(900)]

COPIES = 6
BURNERS = 2 * (os.cpu_count() or 1)  # torch processes that compute, more than the cores
MEMORY_SHARE = 0.75  # of the memory available: what the hog takes and keeps touching


def _available():
    with open("/proc/meminfo") as meminfo:
        return next(int(line.split()[1]) * 1024 for line in meminfo
                    if line.startswith("MemAvailable:"))


def _limited(nbytes):
    def limit():
        import resource
        os.setpgrp()
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return limit


def start_load(folder):
    """The load's processes, each in a group of its own with its own memory limit."""
    hog = int(_available() * MEMORY_SHARE)
    started = []
    burner = ("import torch\ntorch.set_num_threads(1)\na = torch.randn(384, 384)\n"
              "while True:\n    a = (a @ a).tanh()\n")
    for _ in range(BURNERS):
        started.append(subprocess.Popen([sys.executable, "-c", burner],
                                        preexec_fn=_limited(2 << 30)))
    hogging = ("import sys\nstep = 64 << 20\nblocks = []\n"
               f"while len(blocks) < {hog} // step:\n    blocks.append(bytearray(step))\n"
               "while True:\n    for block in blocks:\n"
               "        block[::4096] = bytes(len(block[::4096]))\n")
    started.append(subprocess.Popen([sys.executable, "-c", hogging],
                                    preexec_fn=_limited(hog + (512 << 20))))
    for n in range(2):
        path = folder / f"written-{n}"
        started.append(subprocess.Popen(
            ["bash", "-c", f"while true; do dd if=/dev/zero of={path} bs=1M count=256 "
             f"conv=fsync status=none; cat {path} > /dev/null; done"],
            preexec_fn=_limited(1 << 30)))
    time.sleep(5)  # the hog fills its memory, the page cache is evicted
    return started


def stop_load(started):
    for process in started:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for process in started:
        process.wait()


def test_identical_submissions_get_identical_grades_under_a_heavy_mixed_load(tmp_path):
    folder = tmp_path / "class"
    for n in range(COPIES):
        solutions_in(folder / f"copy-{n}")
    gradebook = tmp_path / "grades.csv"
    load = start_load(tmp_path)
    try:
        done = run_grader("--batch", folder, "--seed", "7", "--csv", gradebook, timeout=800)
    finally:
        stop_load(load)
    rows = list(csv.DictReader(gradebook.open(encoding="utf-8-sig")))
    totals = {row["name"]: (row["status"], row["total"]) for row in rows}
    assert len(totals) == COPIES, done.stdout[-2000:]
    assert set(totals.values()) == {("graded", f"{course.TOTAL:g}")}, (totals, done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-2000:]
