"""A learner's machine as it is (issue 35): hard resource limits already set on it (a shared
server's `ulimit -v`, `-t`, `-f`, a JupyterHub's) are the worker's ceiling, not a wall it dies on.
Before, the worker asked for limits above them and died before importing anything: the solutions
scored 0/100, each exercise "your code ended the Python process while importing".

Simulated here without a second user: the grader runs with every capability dropped (as a user
who is not root has none: no raising a hard limit) and with the hard limits lowered first."""
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from grading.walls import kernel

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.full, pytest.mark.timeout(240),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux limits")]
LIMITS = {"RLIMIT_AS": 3 << 30, "RLIMIT_CPU": 300, "RLIMIT_FSIZE": 4 << 20}  # ulimit -v 3G …


def lowered(limits):
    """A preexec_fn: no capabilities, then these hard (and soft) limits."""
    def apply():
        kernel.drop_privileges()
        for name, value in limits.items():
            resource.setrlimit(getattr(resource, name), (value, value))
    return apply


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_a_hard_limit_on_the_machine_is_the_workers_ceiling(name):
    code = ("import json; from grading.walls import kernel; "
            "print(json.dumps(kernel.limit_resources(4 << 30, 8 << 20)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, preexec_fn=lowered({name: LIMITS[name]}))
    assert done.returncode == 0, done.stderr[-2000:]
    held = json.loads(done.stdout)
    assert held[name] <= LIMITS[name] and name in held["lowered"]


def test_the_solutions_grade_full_under_the_machines_hard_limits(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "--solutions", "--lang", "en",
                           "--json", str(tmp_path / "results.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=200,
                          preexec_fn=lowered(LIMITS))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 100


def test_a_wall_offered_but_refused_stops_the_worker_before_the_learners_code():
    """Issue 35: seccomp that answers PR_GET_SECCOMP but refuses the filter (or a Landlock that
    refuses landlock_restrict_self) left the worker running the learner's code unwalled. The
    worker now names what is missing and imports nothing; the judge makes it a grading error."""
    from grading.walls.kernel import walls_not_up
    assert walls_not_up({"landlock": 3, "seccomp": True}) == []
    assert [w for w, _ in walls_not_up({"landlock": 3, "seccomp": False})] == ["seccomp"]
    assert [w for w, _ in walls_not_up({"landlock": "refused: [Errno 1] landlock_restrict_self",
                                        "seccomp": True})] == ["Landlock"]
    assert [w for w, _ in walls_not_up({"landlock": 0, "seccomp": False})] == ["Landlock", "seccomp"]


# A machine (a container, a sandbox) whose kernel answers PR_GET_SECCOMP but refuses a filter:
# built with the project's own seccomp helpers, installed in the grader's process before it runs.
REFUSE_SECCOMP = r"""
import ctypes, os, sys
from grading.walls import kernel as k
column, audit_arch, seccomp_nr = k._ARCHES[os.uname().machine]
prctl_nr = {0: 157, 1: 167}[column]
program = [k._op(k._LD_W_ABS, k._NR)] + k._deny(seccomp_nr, k._EPERM)
program += k._on_arg(prctl_nr, k._arg(0), [22], k._EPERM, k._ALLOW)  # PR_SET_SECCOMP
program += [k._op(k._RET, k._ALLOW)]
filters = (k._SockFilter * len(program))(*program)
fprog = k._SockFprog(len(program), filters)
assert k._libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS: no root needed
assert k._libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0
sys.argv = ["grader.py", *sys.argv[1:]]
import runpy
runpy.run_path("grader.py", run_name="__main__")
"""


@pytest.mark.skipif(not kernel.seccomp_available(), reason="no seccomp here")
def test_seccomp_offered_but_refused_is_a_grading_error_naming_it(tmp_path):
    """Issue 35: with seccomp visible but refused, a submission ran /bin/sh during grading while
    the report said "Linux kernel walls (seccomp, …)". Now nothing of the learner's runs: every
    check is a grading error that names seccomp, exit 2, and results.json is not a grade."""
    results = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-c", REFUSE_SECCOMP, "--solutions", "1", "--json",
                           str(results), "--lang", "en"], cwd=ROOT, capture_output=True,
                          text=True, timeout=200)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "seccomp" in done.stdout and "could not be put up" in done.stdout, done.stdout
    data = json.loads(results.read_text(encoding="utf-8"))
    assert data["score"] == 0 and all(t["status"] == "failed" for t in data["tests"])
    assert any("grading-error" in t["tags"] for t in data["tests"])  # (the rest wait for them)
    assert "Isolation: Linux kernel walls" not in done.stdout and "none:" in done.stdout
