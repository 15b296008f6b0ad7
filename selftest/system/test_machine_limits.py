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
