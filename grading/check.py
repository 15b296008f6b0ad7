"""`python grader.py --check`: the repository's own test, for instructors and CI.

Runs selftest/ with pytest: the solutions score 100, the untouched stubs fail every graded test,
both trees expose the fixed API and are identical outside the bodies, every stub has its TODO, every
fixture (known mistakes with their diagnoses, fair variants, broken code, attacks beside their
honest twins) is graded as expected. That is what a change to solutions/ or tests/ can break, and
it takes about a minute. With full=True (`--check --full`, as CI runs it) also the grader's own
machinery: the kernel walls and resource attacks, every fixture graded a second time by the
portable backend, the command line, the demo, the CI step and the Gradescope autograder. The last
line is pytest's summary.
"""
import os

from grading.session import ROOT


def check(full=False):
    import pytest

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    print("Checking the repository: solutions 100, stubs 0, every fixture graded as expected"
          + (", and the grader's own machinery." if full else "."))
    code = pytest.main([str(ROOT / "selftest"), "-c", str(ROOT / "pytest.ini"),
                        "--rootdir", str(ROOT), "-p", "pytest_timeout", "-p", "no:cacheprovider",
                        "-o", "timeout=300", "-q", *(["--full"] if full else [])])
    if code == pytest.ExitCode.OK:
        return 0
    return 1 if code == pytest.ExitCode.TESTS_FAILED else 2
