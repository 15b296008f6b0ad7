"""`python grader.py --check`: the repository's own test, for instructors and CI.

Runs selftest/ with pytest: the solutions score 100, the untouched stubs fail every graded test,
both trees expose the fixed API and are identical outside the bodies, every stub has its TODO, every
fixture (known mistakes, fair variants, broken code) is graded as expected, and the command line
behaves. The last line is pytest's summary.
"""
import os

from grading.session import ROOT


def check():
    import pytest

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    print("Checking the repository: solutions 100, stubs 0, every fixture graded as expected.")
    code = pytest.main([str(ROOT / "selftest"), "-c", str(ROOT / "pytest.ini"),
                        "--rootdir", str(ROOT), "-p", "pytest_timeout", "-p", "no:cacheprovider",
                        "-o", "timeout=300", "-q"])
    if code == pytest.ExitCode.OK:
        return 0
    return 1 if code == pytest.ExitCode.TESTS_FAILED else 2
