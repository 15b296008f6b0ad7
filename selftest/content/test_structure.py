"""exercises/ and solutions/ mirror each other: the same text outside the function bodies, the
fixed API of course.py, a TODO and NotImplementedError in every stub body, none in the solutions."""
import ast
import difflib
import os
from pathlib import Path

import pytest

import course

ROOT = Path(__file__).resolve().parents[2]
API = {exercise.name: list(exercise.api) for exercise in course.EXERCISES}  # graded against


def functions(path):
    """(qualified name, node) for every function of the file, classes' methods included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            found += [(f"{node.name}.{f.name}", f) for f in node.body
                      if isinstance(f, ast.FunctionDef)]
    return found


def has_docstring(function):
    first = function.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)


def body_lines(function):
    """(first, last) line numbers of the body: everything after the docstring, or after the
    signature when there is none, comments included."""
    if has_docstring(function):
        return function.body[0].end_lineno + 1, function.end_lineno
    signature_end = max([function.lineno] + [a.end_lineno for a in function.args.args])
    return signature_end + 1, function.end_lineno


def outside_bodies(path):
    """The file's lines with every function body cut out."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for _, function in sorted(functions(path), key=lambda f: -f[1].lineno):
        first, last = body_lines(function)
        del lines[first - 1:last]
    return lines


def signature(name, function):
    return f"{name}({', '.join(a.arg for a in function.args.args)})"


@pytest.mark.parametrize("exercise", API)
def test_identical_outside_the_bodies(exercise):
    stub, solution = ROOT / "exercises" / f"{exercise}.py", ROOT / "solutions" / f"{exercise}.py"
    diff = list(difflib.unified_diff(outside_bodies(stub), outside_bodies(solution),
                                     "exercises", "solutions", lineterm="", n=1))
    assert not diff, "\n".join(diff[:20])


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
@pytest.mark.parametrize("exercise", API)
def test_the_fixed_api(folder, exercise):
    path = ROOT / folder / f"{exercise}.py"
    assert [signature(name, f) for name, f in functions(path)] == API[exercise]


@pytest.mark.parametrize("exercise", API)
def test_every_stub_body_is_a_todo(exercise):
    path = ROOT / "exercises" / f"{exercise}.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    for name, function in functions(path):
        first, last_line = body_lines(function)
        assert "# TODO:" in "\n".join(lines[first - 1:last_line]), f"{name} has no '# TODO:' line"
        last = function.body[-1]
        assert isinstance(last, ast.Raise) and "NotImplementedError" in ast.unparse(last) \
            and f"{exercise.split('_')[0]}:" in ast.unparse(last), \
            f"{name} should end with raise NotImplementedError(\"{exercise.split('_')[0]}: …\")"


@pytest.mark.parametrize("exercise", API)
def test_solutions_are_complete(exercise):
    text = (ROOT / "solutions" / f"{exercise}.py").read_text(encoding="utf-8")
    left = [f"line {n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
            if "TODO" in line or "NotImplementedError" in line]
    assert not left, f"solutions/{exercise}.py is not written yet: " + "; ".join(left)


def test_both_backends_have_the_backends_interface():
    """The judge uses a backend only through grading.backends.Backend: both kinds have it all."""
    import inspect

    from grading.backends import Backend
    from grading.backends.portable import PortableBackend
    from grading.backends.zygote import Zygote
    wanted = {name for name in vars(Backend) if not name.startswith("_")} | \
        set(Backend.__annotations__)
    for kind in (Zygote, PortableBackend):
        have = {name for name in dir(kind) if not name.startswith("_")}
        assert wanted <= have, f"{kind.__name__} lacks {sorted(wanted - have)}"
        for name in wanted & set(vars(Backend)):
            assert list(inspect.signature(getattr(kind, name)).parameters) == \
                list(inspect.signature(getattr(Backend, name)).parameters), (kind, name)


def test_every_exception_lives_in_errors_py():
    """The rooms raise to one another only exceptions of grading/errors.py, where each says who
    raises it and who catches it: no class elsewhere in grading/ or tests/ derives from an
    exception (a built-in one or one of errors.py's)."""
    import ast
    import builtins
    errors = ast.parse((ROOT / "grading" / "errors.py").read_text(encoding="utf-8"))
    exceptions = {name for name, value in vars(builtins).items()
                  if isinstance(value, type) and issubclass(value, BaseException)}
    exceptions |= {node.name for node in errors.body if isinstance(node, ast.ClassDef)}
    elsewhere = []
    for path in [*sorted((ROOT / "grading").rglob("*.py")), *sorted((ROOT / "tests").glob("*.py"))]:
        if path.name == "errors.py" and path.parent.name == "grading":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    (base.id if isinstance(base, ast.Name) else getattr(base, "attr", None))
                    in exceptions for base in node.bases):
                elsewhere.append(f"{path.relative_to(ROOT)}: class {node.name}")
    assert not elsewhere, elsewhere


@pytest.mark.parametrize("exercise", [e.name for e in course.EXERCISES])
def test_the_selftest_loads_for_each_exercise_alone(exercise):
    """`python grader.py --check N` keeps exercise N's fixtures alone: every module of the
    self-test must still import then (long_runs.py took an ex5 mistake from the kept ones)."""
    import subprocess
    import sys
    code = "import conftest, fixtures, hostile, long_runs"
    env = {**os.environ, "SELFTEST_EXERCISE": exercise,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "selftest", env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_units_read_the_whole_catalogue():
    """`--check N` keeps exercise N's mistakes in fixtures.MISTAKES; a unit or content test that
    reads it finds none of another exercise's (test_the_catalogued_loops asserted ex2's and ex6's
    loops and failed under --check 1, 3, 4 and 5). They read fixtures.ALL_MISTAKES."""
    readers = []
    for path in sorted((ROOT / "selftest").glob("[uc][no]*/test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "fixtures" \
                    and any(alias.name == "MISTAKES" for alias in node.names):
                readers.append(str(path.relative_to(ROOT)))
    assert not readers, readers


@pytest.mark.skipif(not __import__("shutil").which("shellcheck"), reason="no shellcheck here")
def test_the_shell_scripts_are_clean_for_shellcheck():
    """Issue 37: grade.sh's `cd` without `|| exit` (SC2164); the guide says the scripts are clean."""
    import subprocess
    scripts = sorted(str(p) for p in (ROOT / ".github" / "scripts").glob("*.sh"))
    done = subprocess.run(["shellcheck", *scripts], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.parametrize("exercise", API)
def test_an_exercise_uses_earlier_exercises_only(exercise):
    """course.py's `uses` names earlier exercises (no circle, nothing unknown) whose files the
    exercise imports relatively, and graded_over is one of the two ways (course.py)."""
    entry = course.BY_NAME[exercise]
    earlier = course.NAMES[:course.NAMES.index(exercise)]
    assert all(used in earlier for used in entry.uses), (
        f"{exercise}: uses={entry.uses!r} must name exercises before it ({', '.join(earlier)})")
    assert entry.graded_over in ("reference", "own"), f"{exercise}: graded_over={entry.graded_over!r}"
    for folder in ("exercises", "solutions"):
        text = (ROOT / folder / f"{exercise}.py").read_text(encoding="utf-8")
        for used in entry.uses:
            assert f"from .{used} import" in text, (
                f"{folder}/{exercise}.py: import what it uses relatively, from .{used} import …: "
                "the grader puts the reference's copy in its place (course.py, graded_over)")
