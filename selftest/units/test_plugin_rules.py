"""The judge's plugin refuses a test file that breaks its rules (grading/judge/plugin.py:
GradingPlugin.pytest_collection_modifyitems and _mark_problem), before any test runs.

Each test writes a tiny tests/ folder holding one malformed test file and collects it, in this
process (pytester), with a GradingPlugin that has no backend and no solutions: when collection
finds a problem no test runs, so no worker is needed. The message must name the test (or the file)
and say what to do. A well-formed file, collected the same way, gets no message: each malformed
file breaks only its own rule.
"""
import sys
import textwrap

import pytest
import torch

import course
from grading.errors import SessionError
from grading.judge import session
from grading.judge.plugin import GradingPlugin

pytest_plugins = ["pytester"]

EXERCISE = "ex1_embedding"
POINTS = course.BY_NAME[EXERCISE].points
HEADER = "import pytest\n\nfrom grading.checks.scenario import hidden, public\n\n"
INI = "[pytest]\nmarkers =\n    grade(points, kind): points of a graded test\n"

# Two tests that keep every rule: a public check and a hidden one, POINTS in all.
GOOD = f'''
@public({POINTS - 4})
def test_shape(submission):
    """the output's shape
    输出的形状"""


@hidden(4)
def test_values(compare):
    """the values
    数值"""
'''


@pytest.fixture(autouse=True)
def as_the_judge_runs(monkeypatch):
    """No plugins but the judge's (grade() sets this too): 0.05 s a collection, not 0.8 s."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def collect(pytester, text, name=f"test_{EXERCISE}.py", *args, diagnoses=None):
    """tests/<name> holding `text` (and tests/diagnoses_<exercise>.py holding `diagnoses`),
    collected with the judge's plugin: (plugin, pytester's result). Nothing may run: the plugin
    has no backend (a test that ran would fail on it)."""
    pytester.makeini(INI)
    tests = pytester.mkdir("tests")
    (tests / name).write_text(HEADER + textwrap.dedent(text), encoding="utf-8")
    if diagnoses is not None:
        (tests / f"diagnoses_{EXERCISE}.py").write_text(diagnoses, encoding="utf-8")
        sys.modules.pop(f"diagnoses_{EXERCISE}", None)
    threads = torch.get_num_threads()  # the plugin sets the judge's one thread: not this process's
    try:
        plugin = GradingPlugin(None, pytester.path, None, seed=1, call_timeout=1)
        result = pytester.runpytest_inprocess("tests", "-p", "no:cacheprovider",
                                              "--import-mode=importlib", *args, plugins=[plugin])
    finally:
        torch.set_num_threads(threads)
    return plugin, result


def refused(pytester, text, name=f"test_{EXERCISE}.py", diagnoses=None):
    """The one message of the plugin on a malformed file, once it is sure nothing ran."""
    plugin, result = collect(pytester, text, name, diagnoses=diagnoses)
    outcomes = result.parseoutcomes()
    ran = {key: outcomes.get(key, 0) for key in ("passed", "failed", "skipped")}
    assert ran == {"passed": 0, "failed": 0, "skipped": 0} and not plugin.results, result.stdout
    assert len(plugin.errors) == 1, plugin.errors
    return plugin.errors[0]


def test_a_well_formed_file_gets_no_message(pytester):
    plugin, result = collect(pytester, GOOD, f"test_{EXERCISE}.py", "--collect-only")
    assert plugin.errors == [], plugin.errors
    result.stdout.fnmatch_lines(["*2 tests collected*"])


def test_a_test_without_a_grade_mark(pytester):
    text = GOOD.replace(f"@public({POINTS - 4})\n", "")
    error = refused(pytester, text)
    assert error == (f"tests/test_{EXERCISE}.py::test_shape: "
                     "it has no @public(points) or @hidden(points)")


def test_a_grade_mark_of_an_unknown_kind(pytester):
    text = GOOD.replace(f"@public({POINTS - 4})",
                        f"@pytest.mark.grade(points={POINTS - 4}, kind='secret')")
    error = refused(pytester, text)
    assert error.startswith(f"tests/test_{EXERCISE}.py::test_shape: ")
    assert "kind 'secret': use @public(points) or @hidden(points)" in error


@pytest.mark.parametrize("points", ["0", "-4", "True", "'6'", "None"])
def test_points_that_are_not_a_positive_number(pytester, points):
    error = refused(pytester, GOOD.replace(f"@public({POINTS - 4})", f"@public({points})"))
    assert error == (f"tests/test_{EXERCISE}.py::test_shape: its points are {eval(points)!r}: "
                     "give a positive number, @public(3)")


@pytest.mark.parametrize("after", ["test_values", "test_nothing"])
def test_after_names_a_test_written_later_or_none(pytester, after):
    """after= may name only a test above it in its file: test_values is below, test_nothing is
    nowhere."""
    error = refused(pytester, GOOD.replace(f"@public({POINTS - 4})",
                                           f"@public({POINTS - 4}, after=[{after!r}])"))
    assert error == (f"tests/test_{EXERCISE}.py::test_shape: after={after!r} names no test "
                     "written before it in its file: a test counts only after tests that have "
                     "already run")


def test_after_naming_an_earlier_test_is_fine(pytester):
    text = GOOD.replace("@hidden(4)\ndef test_values(compare):",
                        "@public(4, after=['test_shape'])\ndef test_values(submission):")
    plugin, _ = collect(pytester, text, f"test_{EXERCISE}.py", "--collect-only")
    assert plugin.errors == []


@pytest.mark.parametrize("docstring", ["", '"""the output\'s shape"""',
                                       '"""\n    输出的形状"""', '"""the output\'s shape\n    """'])
def test_a_docstring_without_its_two_lines(pytester, docstring):
    """No docstring, English alone, Chinese alone, an empty second line."""
    text = GOOD.replace('"""the output\'s shape\n    输出的形状"""', docstring or "pass")
    error = refused(pytester, text)
    assert error == (f"tests/test_{EXERCISE}.py::test_shape: its docstring needs two lines, the "
                     "check's name in English and then in Chinese")


def test_a_hidden_case_without_compare(pytester):
    error = refused(pytester, GOOD.replace("def test_values(compare):",
                                           "def test_values(submission):"))
    assert error == (f"tests/test_{EXERCISE}.py::test_values: a hidden case must use `compare` "
                     "and a public case must not")


def test_a_public_case_with_compare(pytester):
    error = refused(pytester, GOOD.replace("def test_shape(submission):",
                                           "def test_shape(compare):"))
    assert error == (f"tests/test_{EXERCISE}.py::test_shape: a hidden case must use `compare` "
                     "and a public case must not")


def test_a_file_named_after_no_exercise(pytester):
    assert "ex9_nothing" not in course.BY_NAME
    plugin, result = collect(pytester, GOOD, "test_ex9_nothing.py")
    assert not plugin.results and result.parseoutcomes().get("passed", 0) == 0
    assert plugin.errors and all(error.startswith("tests/test_ex9_nothing.py::test_")
                                 for error in plugin.errors), plugin.errors
    assert plugin.errors[0].endswith(
        "ex9_nothing is no exercise of course.py: name the file tests/test_<exercise>.py after "
        "one, or add the exercise to course.py")


def test_points_that_do_not_add_up_to_course_pys(pytester):
    error = refused(pytester, GOOD.replace("@hidden(4)", "@hidden(5)"))
    assert error == (f"tests/test_{EXERCISE}.py: its checks' points add up to {POINTS + 1:g}, but "
                     f"course.py gives {EXERCISE} {POINTS}: change the points of its "
                     "@public/@hidden marks, or the exercise's points in course.py")


@pytest.mark.parametrize("line, shown", [("import not_a_module_of_the_course", "ModuleNotFoundError"),
                                         ("def broken(:", "SyntaxError")])
def test_a_file_that_does_not_import(pytester, line, shown):
    error = refused(pytester, GOOD + f"\n{line}\n")
    assert error.startswith(f"tests/test_{EXERCISE}.py could not be collected:\n"), error
    assert shown in error


def test_a_broken_file_stops_grade_with_a_session_error(tmp_path, monkeypatch):
    """grading.judge.session.grade, as the grader calls it (no backend: nothing may run), on a
    tests/ folder with a test of no points: SessionError, with the plugin's message."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / f"test_{EXERCISE}.py").write_text(
        HEADER + textwrap.dedent(GOOD.replace(f"@public({POINTS - 4})", "@public(0)")),
        encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(session.ROOT.joinpath("pytest.ini").read_text())
    monkeypatch.setattr(session, "TESTS", tests)
    monkeypatch.setattr(session, "ROOT", tmp_path)  # its rootdir: node ids as in the real one
    real = sys.modules.pop(f"test_{EXERCISE}", None)  # the real file's, if a test imported it
    path, threads = sys.path[:], torch.get_num_threads()
    try:
        with pytest.raises(SessionError) as raised:
            session.grade(None, tmp_path, 1, exercises=[EXERCISE], reference_dir=tmp_path / "no")
    finally:  # the tmp file's module and its folder on sys.path go; the real ones come back
        sys.modules.pop(f"test_{EXERCISE}", None)
        if real is not None:
            sys.modules[f"test_{EXERCISE}"] = real
        sys.path[:] = path
        torch.set_num_threads(threads)
    assert str(raised.value) == (f"tests/test_{EXERCISE}.py::test_shape: its points are 0: give a "
                                 "positive number, @public(3)")


@pytest.mark.parametrize("arguments", ["submission, tmp_path", "", "submission, compare"])
def test_a_graded_test_with_other_arguments(pytester, arguments):
    """The self-test calls every graded test with its one fixture (test_reply_fuzz.py): a test
    that takes more, or none, is refused at collection, not met as a crash there."""
    error = refused(pytester, GOOD.replace("def test_shape(submission):",
                                           f"def test_shape({arguments}):"))
    assert error.startswith(f"tests/test_{EXERCISE}.py::test_shape: "), error
    if "compare" not in arguments:
        assert error.endswith(f"it takes ({arguments}): a graded test takes one argument, "
                              "`submission` (a public case) or `compare` (a hidden case), and "
                              "nothing else (the self-test calls each test with that one "
                              "argument, on hostile replies)"), error


@pytest.mark.parametrize("definition", ["def diagnose():\n    return None\n",
                                        "diagnose = 3\n",
                                        "def diagnose_error(error, more):\n    return None\n"])
def test_a_diagnose_that_the_judge_could_not_call(pytester, definition):
    name = definition.split("(")[0].split(" = ")[0].replace("def ", "")
    takes = "probe" if name == "diagnose" else "error"
    error = refused(pytester, GOOD, diagnoses=definition)
    assert error == (f"tests/diagnoses_{EXERCISE}.py: its {name} must be a function of one "
                     f"argument, def {name}({takes}): the judge calls it so when a check of the "
                     f"exercise fails (or leave {name} out: it is optional)")


def test_a_diagnose_in_the_test_file_is_sent_to_its_own_file(pytester):
    """The diagnoses live beside the checks, in a file the student copy leaves out."""
    error = refused(pytester, GOOD + "\n\ndef diagnose(probe):\n    return None\n")
    assert error.startswith(f"tests/test_{EXERCISE}.py defines diagnose: an exercise's diagnoses "
                            f"live in tests/diagnoses_{EXERCISE}.py"), error


def test_a_diagnose_of_one_argument_is_welcome(pytester):
    text = "def diagnose(probe):\n    return None\n\n\ndef diagnose_error(e):\n    return None\n"
    plugin, _ = collect(pytester, GOOD, f"test_{EXERCISE}.py", "--collect-only", diagnoses=text)
    assert plugin.errors == [], plugin.errors
    assert plugin.diagnoses_modules[EXERCISE].diagnose(None) is None
