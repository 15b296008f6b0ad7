"""One batch grading of every fixture, shared by the grader's own tests.

All the submissions (solutions, stubs, and every mistake, fair and broken fixture over a copy of
the solutions) are laid out in a temporary folder and graded by one `grader.py --batch` run, as a
course would grade a class: one torch import, the default time limits, a fixed seed.
"""
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures import (MISTAKES, SOLUTIONS, fixture_dirs, materialise_files, materialise_mistake,
                      mistake_id)

ROOT = Path(__file__).resolve().parents[1]
SEED = random.randrange(1, 1 << 31)  # fresh inputs every check, printed for replay


def run_grader(*args, cwd=ROOT, timeout=300, lang="en"):
    """grader.py in a subprocess, in a fixed language whatever the instructor's locale."""
    return subprocess.run([sys.executable, str(ROOT / "grader.py"), *map(str, args), "--lang", lang],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """{submission name: record} for every fixture, plus 'solutions', 'stubs' and 'replay'."""
    folder = tmp_path_factory.mktemp("submissions")
    shutil.copytree(SOLUTIONS, folder / "solutions")
    shutil.copytree(ROOT / "exercises", folder / "stubs")
    for mistake in MISTAKES:
        materialise_mistake(mistake, folder / mistake_id(mistake))
    materialise_mistake(MISTAKES[0], folder / "replay")  # the same mistake twice: same messages
    for kind in ("fair", "broken"):
        for fixture in fixture_dirs(kind):
            materialise_files(fixture, folder / fixture.name)
    # Two batches at once, one per core: the broken fixtures spend most of their time waiting.
    halves = [tmp_path_factory.mktemp("half") for _ in range(2)]
    for i, submission in enumerate(sorted(folder.iterdir())):
        submission.rename(halves[i % 2] / submission.name)
    runs = [subprocess.Popen([sys.executable, str(ROOT / "grader.py"), "--batch", str(half),
                              "--json", str(half / "batch.json"), "--seed", str(SEED)],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for half in halves]
    graded = {}
    for run, half in zip(runs, halves):
        output = run.communicate(timeout=600)[0]
        assert run.returncode == 0, f"the batch run failed (seed {SEED}):\n{output}"
        graded.update(json.loads((half / "batch.json").read_text())["submissions"])
    return graded


def pytest_report_header():
    return f"grading fixtures with seed {SEED}"
