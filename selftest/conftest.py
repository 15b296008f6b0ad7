"""One grading of every fixture, shared by the grader's own tests.

All the submissions (solutions, stubs, and every mistake, fair, broken and attack fixture laid over
a copy of the solutions) are graded by `grader.py --batch` in a temporary copy of the repository,
as a course would grade a class: one torch import, the default limits, a fixed seed. An attack that
writes to disk can only harm the copy, and the tests then check that it did not even do that.
"""
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fixtures import (MISTAKES, SOLUTIONS, fixture_dirs, materialise_files, materialise_mistake,
                      mistake_id)

ROOT = Path(__file__).resolve().parents[1]
SEED = random.randrange(1, 1 << 31)  # fresh inputs every check, printed for replay
SECRET = "GRADER_TEST_SECRET"  # put in the grader's environment; no worker may see it
GRADER_FILES = ("grader.py", "pytest.ini", "grading", "tests", "solutions", "exercises")


def run_grader(*args, cwd=ROOT, timeout=300, lang="en"):
    """grader.py in a subprocess, in a fixed language whatever the instructor's locale."""
    return subprocess.run([sys.executable, str(Path(cwd) / "grader.py"), *map(str, args),
                           "--lang", lang], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def copy_repository(target):
    """The parts of the repository that grade, copied to `target` (made if missing)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in GRADER_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target / name)
    return target


def fingerprint(folder):
    """Every file of the grading code, by content."""
    digests = {}
    for name in ("grader.py", "pytest.ini", "grading", "tests", "solutions"):
        for path in sorted([folder / name] if (folder / name).is_file()
                           else (folder / name).rglob("*.py")):
            digests[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def processes_mentioning(text):
    """Pids of live processes whose command line mentions text."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


SLOW = ("loop", "slow")  # fixtures that spend seconds on purpose: spread over the two batches
_batch = {}  # started when the session starts, so the other tests run while it grades


def pytest_sessionstart(session):
    """Lay out every submission and start grading it in a temporary copy of the repository."""
    base = Path(tempfile.mkdtemp(prefix="grader-selftest-"))
    copy = copy_repository(base / "repository")
    folder = base / "submissions"
    folder.mkdir()
    shutil.copytree(SOLUTIONS, folder / "solutions")
    shutil.copytree(ROOT / "exercises", folder / "stubs")
    for mistake in MISTAKES:
        materialise_mistake(mistake, folder / mistake_id(mistake))
    materialise_mistake(MISTAKES[0], folder / "replay")  # the same mistake twice: same messages
    for kind in ("fair", "broken", "attack", "twin"):
        for fixture in fixture_dirs(kind):
            materialise_files(fixture, folder / fixture.name)
    # Two batches at once, one per core, the slow fixtures dealt out between them.
    halves = [base / "half-0", base / "half-1"]
    for half in halves:
        half.mkdir()
    order = sorted(folder.iterdir(), key=lambda p: (not any(s in p.name for s in SLOW), p.name))
    for i, submission in enumerate(order):
        submission.rename(halves[i % 2] / submission.name)
    environment = {**os.environ, SECRET: "hunter2"}
    _batch.update(base=base, copy=copy, before=fingerprint(copy), halves=halves, runs=[
        subprocess.Popen([sys.executable, str(copy / "grader.py"), "--batch", str(half),
                          "--json", str(half / "batch.json"), "--seed", str(SEED),
                          "--csv", str(half / "grades.csv"), "--jobs", "1"],
                         cwd=copy, env=environment, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
        for half in halves])


def pytest_sessionfinish(session):
    for run in _batch.get("runs", []):
        run.kill()
        run.wait()
    if "base" in _batch:
        shutil.rmtree(_batch["base"], ignore_errors=True)


def pytest_collection_modifyitems(items):
    """Tests that need the batch's results last: the rest run while it grades."""
    items.sort(key=lambda item: "graded" in item.fixturenames)


@pytest.fixture(scope="session")
def repository():
    """The temporary copy of the repository, and its fingerprint before any grading."""
    return _batch["copy"], _batch["before"]


@pytest.fixture(scope="session")
def gradebooks(graded):
    """The CSV gradebooks the two batches wrote, as text."""
    return [(half / "grades.csv").read_text() for half in _batch["halves"]]


@pytest.fixture(scope="session")
def graded():
    """{submission name: record} for every fixture, plus 'solutions', 'stubs' and 'replay'."""
    graded = {}
    for run, half in zip(_batch["runs"], _batch["halves"]):
        output = run.communicate(timeout=600)[0]
        assert run.returncode == 0, f"the batch run failed (seed {SEED}):\n{output}"
        graded.update(json.loads((half / "batch.json").read_text())["submissions"])
    return graded


def pytest_report_header():
    return f"grading fixtures with seed {SEED}"
