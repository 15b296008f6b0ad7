"""Every learner-facing text of the tests exists in 中文 and in English, and no hint gives away a
line of a solution. Read from the files' syntax trees, so a text that only shows when a check fails
is checked too."""
import ast
import re
from pathlib import Path

import pytest

from grading.commands.hints import read_hints

ROOT = Path(__file__).resolve().parents[1]
TEST_FILES = sorted((ROOT / "tests").glob("test_ex*.py"))
EXERCISES = [p.stem.removeprefix("test_") for p in TEST_FILES]
CJK = re.compile(r"[\u4e00-\u9fff]")


def calls(path, name):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == name]


def literal_text(node):
    """The text of a string or f-string argument, with {…} placeholders kept as '{}'."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_every_check_is_named_in_both_languages(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            lines = (ast.get_docstring(node) or "").splitlines()
            assert len(lines) >= 2 and not CJK.search(lines[0]) and CJK.search(lines[1]), \
                f"{node.name}: the docstring's first line names the check in English, the " \
                "second in Chinese"


@pytest.mark.parametrize("name", ["fail", "Bi", "Diagnosis", "Mismatch"])
@pytest.mark.parametrize("path", [*TEST_FILES, *sorted((ROOT / "grading").rglob("*.py"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_message_has_both_languages(path, name):
    for call in calls(path, name):
        texts = call.args[1:3] if name == "Diagnosis" else call.args[:2]
        texts = [literal_text(t) for t in texts]
        if any(t is None for t in texts) or len(texts) < 2:
            continue  # built from variables (Bi(zh, en) in a helper): checked where it is made
        zh, en = texts
        assert zh.strip() and en.strip(), f"{path.name}:{call.lineno}: an empty text"
        if CJK.search(en) is None and CJK.search(zh) is None and zh == en:
            continue  # a text that reads the same in both (a file name, a number)
        if not re.search(r"[A-Za-z\u4e00-\u9fff]", zh + en):
            continue  # punctuation only: the Chinese colon and the English one
        assert CJK.search(zh), f"{path.name}:{call.lineno}: the first text should be Chinese"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_hints_have_two_levels_in_both_languages(exercise):
    hints = read_hints(exercise)
    assert len(hints) >= 2, f"{exercise}: a nudge and then the lesson's step"
    for hint in hints:
        assert CJK.search(hint.zh) and hint.en.strip()


def solution_lines(exercise):
    """The code lines of the solution's function bodies, comments cut, spaces squeezed."""
    path = ROOT / "solutions" / f"{exercise}.py"
    source = path.read_text(encoding="utf-8").splitlines()
    lines = set()
    for node in ast.walk(ast.parse("\n".join(source))):
        if isinstance(node, ast.FunctionDef):
            for statement in node.body[1:] if ast.get_docstring(node) else node.body:
                for line in source[statement.lineno - 1:statement.end_lineno]:
                    code = " ".join(line.split("#")[0].split())
                    if code:
                        lines.add(code)
    return lines


@pytest.mark.parametrize("exercise", EXERCISES)
def test_no_hint_gives_away_a_solution_line(exercise):
    for level, hint in enumerate(read_hints(exercise), 1):
        for text in (hint.zh, hint.en):
            squeezed = " ".join(text.split())
            leaked = [line for line in solution_lines(exercise) if line in squeezed]
            assert not leaked, f"hint {level} of {exercise} contains solution code: {leaked}"
