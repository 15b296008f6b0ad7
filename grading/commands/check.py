"""`python grader.py --check`: the repository's own test, for instructors and CI.

First the solutions themselves, in a few seconds (selftest/preflight.py, in a process of its own:
nothing of selftest/ is imported here): when they do not get full marks, or a known mistake no
longer applies to them, --check says which solution, which check and what it got, on the first line
after the banner, and stops: the rest would only fail because of it. Then selftest/ with pytest:
the untouched stubs fail every graded test, both trees expose the fixed API and are identical
outside the bodies, every stub has its TODO, every fixture (known mistakes with their diagnoses,
fair variants, broken code) is graded as expected. That is what a change to solutions/ or tests/
can break, and it takes a little over a minute. With full=True (`--check --full`, as CI runs it)
also the grader's own machinery: attacks beside their honest twins, right answers with habits,
the kernel walls and resource attacks, every fixture graded a second time by the portable backend, the command line, the demo,
the CI step and the Gradescope autograder. The last line is pytest's summary.
"""
import os
import random
import subprocess
import sys

from grading.config import ROOT


def check(full=False, exercise=None):
    """exercise: `--check N`, the self-test of exercise N alone (its fixtures, the solutions, the
    stubs, its tests under hostile replies): the instructor's inner loop."""
    import pytest

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if exercise is not None:
        os.environ["SELFTEST_EXERCISE"] = exercise
    print("python grader.py --check" + (f" {exercise}" if exercise else "")
          + (" --full" if full else "") + ": first the solutions "
          "must get full marks, then the stubs must score 0 and every fixture must be graded as "
          "expected" + (", then the grader's own machinery is tested." if full else "."),
          flush=True)
    seed = random.randrange(1, 1 << 31)
    if subprocess.run([sys.executable, str(ROOT / "selftest" / "preflight.py"), str(seed)],
                      cwd=ROOT).returncode != 0:
        return 1
    code = pytest.main([str(ROOT / "selftest"), "-c", str(ROOT / "pytest.ini"),
                        "--rootdir", str(ROOT), "-p", "pytest_timeout", "-p", "no:cacheprovider",
                        "-o", "timeout=300", "-q", *(["--full"] if full else [])])
    if code == pytest.ExitCode.OK:
        return 0
    return 1 if code == pytest.ExitCode.TESTS_FAILED else 2
