"""Grades that count come only from behind the Linux walls (portable.chosen_backend).

Here the walls are really taken away, as a container's seccomp profile takes them: each command runs
under a seccomp filter of this test's (HIDE_WALLS) that answers Landlock's calls with ENOSYS and
prctl(PR_GET_SECCOMP) with EINVAL, so that the grader's own probes (sandbox.landlock_abi,
sandbox.seccomp_available) find neither. Then `--json`, `--batch`, CI's grade.sh and the Gradescope
bundle refuse, exit status 2 (the bundle: a results.json that says so), with one line that names
what is missing and GRADER_BACKEND=portable; with GRADER_BACKEND=portable they grade, and say which
walls did; a learner's plain `python grader.py` still falls back, with its isolation line.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import course
from conftest import copy_repository

pytestmark = [pytest.mark.full,  # the grader's own machinery: --check --full
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's walls")]

ROOT = Path(__file__).resolve().parents[2]
PORTABLE = "portable backend (separate processes, Python audit hooks)"
HIDE_WALLS = f"""
import ctypes, os, sys
sys.path.insert(0, {str(ROOT)!r})
from grading.walls import kernel as s
column, arch, _ = s._ARCHES[os.uname().machine]
program = [s._op(s._LD_W_ABS, s._ARCH), s._op(s._JEQ, arch, 1, 0), s._op(s._RET, s._ALLOW),
           s._op(s._LD_W_ABS, s._NR)]
for nr in (444, 445, 446):  # landlock_create_ruleset, _add_rule, _restrict_self: no such call
    program += s._deny(nr, s._ENOSYS)
prctl = (157, 167)[column]  # prctl(PR_GET_SECCOMP): EINVAL, as without seccomp
program += s._on_arg(prctl, s._arg(0), [s._PR_GET_SECCOMP], 0x00050000 | 22, s._ALLOW)
program.append(s._op(s._RET, s._ALLOW))
fprog = s._SockFprog(len(program), (s._SockFilter * len(program))(*program))
assert s._libc.prctl(s._PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
assert s._libc.prctl(s._PR_SET_SECCOMP, s._SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
os.execvp(sys.argv[1], sys.argv[1:])
"""


def without_walls(*command, backend="auto", cwd=ROOT, **env):
    """`command`, run where Landlock and seccomp are missing."""
    environment = {**os.environ, "GRADER_BACKEND": backend, **env}
    return subprocess.run([sys.executable, "-c", HIDE_WALLS, *map(str, command)], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=300)


def grader(*args, **kwargs):
    return without_walls(sys.executable, ROOT / "grader.py", *args, **kwargs)


def assert_refused(done, lang="en"):
    """Exit status 2 and one line: what is missing, and how to accept the risk."""
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Landlock" in lines[0] and "seccomp" in lines[0] and "GRADER_BACKEND=portable" in lines[0]
    assert ("refused" in lines[0]) if lang == "en" else ("拒绝评分" in lines[0])


def test_the_walls_really_are_missing_under_the_filter():
    done = without_walls(sys.executable, "-c",
                         "from grading.backends.portable import missing_walls; print(missing_walls())")
    assert done.stdout.strip() == "['Landlock', 'seccomp']", done.stdout + done.stderr


def test_json_refuses_unless_portable_is_chosen(tmp_path):
    out = tmp_path / "results.json"
    assert_refused(grader("--solutions", "1", "--json", out, "--lang", "en"))
    assert_refused(grader("--solutions", "1", "--json", out, "--lang", "zh"), lang="zh")
    assert not out.exists()
    done = grader("--solutions", "1", "--json", out, "--lang", "en", backend="portable")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Isolation: {PORTABLE}" in done.stdout
    results = json.loads(out.read_text())
    assert results["score"] == course.BY_NAME["ex1_embedding"].points and results["extra_data"]["isolation"].startswith(PORTABLE)


def test_batch_refuses_unless_portable_is_chosen(tmp_path):
    shutil.copytree(ROOT / "solutions", tmp_path / "class" / "right")
    csv = tmp_path / "grades.csv"
    assert_refused(grader("--batch", tmp_path / "class", "--csv", csv, "1", "--lang", "en"))
    assert not csv.exists()
    done = grader("--batch", tmp_path / "class", "--csv", csv, "--json", tmp_path / "b.json",
                  "1", "--lang", "en", backend="portable")
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads((tmp_path / "b.json").read_text())["submissions"]["right"]
    assert record["total"] == course.BY_NAME["ex1_embedding"].points and record["isolation"].startswith(PORTABLE)


def test_the_ci_grading_step_refuses_unless_portable_is_chosen(tmp_path):
    copy = copy_repository(tmp_path / "repository")
    shutil.copytree(ROOT / ".github", copy / ".github")
    script = copy / ".github" / "scripts" / "grade.sh"
    assert_refused(without_walls("bash", script, cwd=copy, GRADER_LANG="en"))
    assert not (copy / "results.json").exists()
    done = without_walls("bash", script, cwd=copy, GRADER_LANG="en", backend="portable")
    assert done.returncode == 1, done.stdout + done.stderr  # the stubs: 0 points, graded
    results = json.loads((copy / "results.json").read_text())
    assert results["score"] == 0 and results["extra_data"]["isolation"].startswith(PORTABLE)


def test_the_gradescope_bundle_refuses_unless_portable_is_chosen(tmp_path):
    for name in ("refused", "accepted"):
        (tmp_path / name / "submission").mkdir(parents=True)
        for path in (ROOT / "solutions").glob("ex*.py"):
            shutil.copy(path, tmp_path / name / "submission")
    command = (sys.executable, "-m", "grading.commands.gradescope", "run")
    without_walls(*command, AUTOGRADER_ROOT=tmp_path / "refused", GRADER_LANG="en")
    refused = json.loads((tmp_path / "refused" / "results" / "results.json").read_text())
    assert refused["score"] == 0 and refused["tests"] == []
    [line] = [line for line in refused["output"].splitlines() if "GRADER_BACKEND" in line]
    assert "refused" in line and "Landlock and seccomp" in line, refused["output"]
    without_walls(*command, AUTOGRADER_ROOT=tmp_path / "accepted", GRADER_LANG="en",
                  backend="portable")
    accepted = json.loads((tmp_path / "accepted" / "results" / "results.json").read_text())
    assert accepted["score"] == course.TOTAL, accepted.get("output")
    assert accepted["extra_data"]["isolation"].startswith(PORTABLE)


def test_a_learners_plain_run_still_falls_back_and_says_so():
    done = grader("--solutions", "1", "--lang", "en")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Isolation: {PORTABLE}" in done.stdout and not done.stderr.strip()
