"""Every learner-facing text of the tests exists in 中文 and in English, and no hint gives away a
line of a solution. Read from the files' syntax trees, so a text that only shows when a check fails
is checked too."""
import ast
import re
from pathlib import Path

import pytest

import course
from grading.commands.hints import read_hints

ROOT = Path(__file__).resolve().parents[2]
TEST_FILES = sorted((ROOT / "tests").glob("test_ex*.py"))
EXERCISES = [p.stem.removeprefix("test_") for p in TEST_FILES]
DIAGNOSES_FILES = sorted((ROOT / "tests").glob("diagnoses_ex*.py"))
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
@pytest.mark.parametrize("path", [*TEST_FILES, *DIAGNOSES_FILES, ROOT / "tests" / "lesson_steps.py", *sorted((ROOT / "grading").rglob("*.py"))],
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


# -- Chinese without English ----------------------------------------------------------------------
# The zh side of a learner's text holds no English word outside code. "Code", narrowly: what is in
# backticks; a command line (python grader.py …, pip install …) or an option (--seed); an index,
# a call or a shape, brackets with no Chinese inside (out[:, 0], nn.Linear(n_embd, head_size),
# (B, T, C)); a path or a dotted name (solutions/, ex3_qkv.py, .weight); a value in quotes
# ('fr'); the text of an exception after its name (SyntaxError: …, Python's words or the
# learner's); a line of the learner's source, quoted after 第 N 行：; and words that are names:
# with _ . = or a digit, in CamelCase or capitals (NotImplementedError, PyTorch, NaN, SIGKILL), one letter (q, T), a name
# of the exercises' or solutions' code (weights, idx, tril), of torch (softmax, clamp), or one of
# KNOWN; never an English word of a sentence (ENGLISH), whatever torch calls its methods.

CODE_SPANS = re.compile("|".join([
    r"`[^`]*`",
    r"python [\w./-]+\.py(?: [\w./=<>{}|-]+)*",
    r"pip install [\w.=<>-]+",
    r"--[\w-]+",
    r"\b\w*(?:Error|Exception|Warning|Exit|Interrupt)\b:[^，。；！？（）“”\u4e00-\u9fff]*",
    r"[\w.]*\[[^\]\u4e00-\u9fff]*\]",
    r"[\w.]*\([^()\u4e00-\u9fff]*\)",
    r"（[A-Za-z_][\w.]*）",  # a Python name as the gloss of a Chinese one: 元组（tuple）
    r"[\w.{}-]*/[\w./{}-]*",
    r"[\w{}]*(?:\.[\w{}]+)+",
    r"\{\}",
    r"'[^'\u4e00-\u9fff]*'",
    r"第 \d+ 行：[^）]*",
]))
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.'=+*-]*")
KNOWN = set("""Python Bigram GitHub Actions Gradescope Markdown Linux Landlock seccomp macOS Windows
matplotlib pip numpy cgroups autograd demo release hint gradescope self bias keepdim None True
False return""".split())
ENGLISH = set("""a an the at is are was be of in on to or and not with from as for by into it its
this that these those here there what which who where when than then but if so no yes one two all
any each every more most less line got expected should must can cannot""".split())


def code_names():
    """The names in the exercises' and solutions' code, and torch's."""
    import keyword

    import torch
    import torch.nn.functional as F
    names = set()
    for folder in ("exercises", "solutions"):
        for path in (ROOT / folder).glob("ex*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names.update(getattr(node, attr) for attr in ("id", "attr", "arg", "name")
                             if isinstance(getattr(node, attr, None), str))
    names.update(n for space in (torch, torch.Tensor, F, torch.nn) for n in dir(space)
                 if not n.startswith("_"))
    return {n for n in names if not keyword.iskeyword(n)}


_NAMES = []


def latin_words(zh):
    """The English words of a Chinese text, outside code (see above)."""
    if not _NAMES:
        _NAMES.append(code_names() | KNOWN)
    words = LATIN_WORD.findall(CODE_SPANS.sub(" ", zh))

    def code(word):
        word = word.rstrip(".'")
        if word.lower() in ENGLISH:
            return False
        return (len(word) <= 1 or any(c in word for c in "_.=+*") or any(c.isdigit() for c in word)
                or re.search(r"[a-z][A-Z]", word) is not None or word.isupper()
                or word in _NAMES[0])
    return [word for word in words if not code(word)]


def test_the_scan_finds_english_in_chinese_and_spares_code():
    for text in ("out[:, 0] at [1, 0] 是 0.5", "返回的却是 None，it should be a tensor",
                 "第 0 行 sums to 2", "检查 expected 的值"):
        assert latin_words(text), text
    for text in ("out[:, 0] 在 [1, 0] 处是 0.5", "x @ weights 是在通道方向上混合",
                 "无法导入 ex3_qkv.py：SyntaxError: expected ':' (ex3_qkv.py, line 45)",
                 "nn.Linear(n_embd, head_size, bias=False) 没有偏置；q、k、v 的形状是 (B, T, head_size)",
                 "运行 python grader.py hint 5 2，或者加上 --seed 3", "用 PyTorch 算 softmax 得到 NaN",
                 "self.query.weight、self.key.weight 得不到梯度", "`F.softmax` 少了 dim",
                 "返回的却是一个含 2 项的元组（tuple）"):
        assert latin_words(text) == [], (text, latin_words(text))


def literal_or_sum(node):
    """literal_text, also of "a" "b" written as a + b."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal_or_sum(node.left), literal_or_sum(node.right)
        return left + right if left is not None and right is not None else None
    return literal_text(node)


LEARNER_FILES = [*TEST_FILES, *DIAGNOSES_FILES, ROOT / "tests" / "lesson_steps.py", *sorted((ROOT / "grading").rglob("*.py")), ROOT / "grader.py"]


@pytest.mark.parametrize("path", LEARNER_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_chinese_texts_hold_no_english_words(path):
    """Every Chinese text written in the file (Bi, fail, Diagnosis, Way, Mismatch: the first
    argument with Chinese in it, its {…} left out) holds no English word outside code."""
    found = []
    for name in ("Bi", "fail", "Diagnosis", "Way", "Mismatch"):
        for call in calls(path, name):
            zh = next((t for t in map(literal_or_sum, call.args) if t and CJK.search(t)), None)
            if zh and latin_words(zh):
                found.append(f"{path.name}:{call.lineno}: {latin_words(zh)} in {zh[:80]!r}")
    assert not found, "\n".join(found)


def test_chinese_lists_use_the_chinese_comma():
    """A list joined inside a Chinese text is joined with 、 (or ；), never with ", " — except
    inside brackets, where it is code: a shape, an index, a call."""
    found = []
    for path in LEARNER_FILES:
        for call in [*calls(path, "Bi"), *calls(path, "fail"), *calls(path, "Diagnosis")]:
            zh = next((a for a in call.args if isinstance(a, ast.JoinedStr)
                       and CJK.search(literal_text(a) or "")), None)
            for value in (zh.values if zh is not None else []):
                if isinstance(value, ast.FormattedValue) and "', '.join" in ast.unparse(value) \
                        or isinstance(value, ast.FormattedValue) \
                        and "\", \".join" in ast.unparse(value):
                    found.append(f"{path.name}:{call.lineno}: {ast.unparse(value)}")
    assert not found, "\n".join(found)


@pytest.mark.timeout(600)  # the first test to ask for the batch's records waits for it
def test_learner_texts_of_the_mistakes_hold_no_english_in_chinese(graded):
    """What the grader says in Chinese on every fixture it grades (the catalogue of mistakes, the
    broken and fair code, the stubs): each check's name and message and each diagnosis, with the
    learner's own words (an exception's text) left out."""
    found = {}
    for name, record in graded.items():
        for exercise, ex in record["exercises"].items():
            texts = [ex["diagnosis"]["zh"]] if ex["diagnosis"] else []
            for test in ex["tests"]:
                texts += [(test.get(part) or {}).get("zh", "") for part in ("name", "message")]
            for text in texts:
                if latin_words(text):
                    found.setdefault(f"{latin_words(text)} in {text[:100]!r}", name)
    assert not found, "\n".join(f"{where}: {text}" for text, where in found.items())


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_last_hint_names_the_lesson_section(exercise):
    from grading.commands.hints import show
    last = len(read_hints(exercise))
    for lang in ("zh", "en"):
        end = show(exercise, last, False, lang).splitlines()[-1]
        heading = course.BY_NAME[exercise].heading[0]
        assert f"\u201c{heading}\u201d" in end and exercise not in end, end
    assert latin_words(show(exercise, last, False, "zh")) == []


CLI_ERRORS = [["9"], ["ex9"], ["--bogus"], ["--seed", "x"], ["--seed"], ["--lang", "fr"],
              ["--submission", "/no/such/folder"], ["--pass-mark", "300"], ["--memory", "0"],
              ["--timeout", "99"], ["--json", "/no/such/r.json"], ["--csv", "g.csv"],
              ["--watch", "--json", "r.json"], ["--full"], ["hint"], ["hint", "5", "9"],
              ["demo", "3"], ["release"], ["--solutions", "--batch", "x"]]


@pytest.mark.parametrize("argv", CLI_ERRORS, ids=" ".join)
def test_a_command_line_error_is_told_in_the_chosen_language(argv, capsys, monkeypatch):
    """One line on stderr, in the language --lang asks for (or the locale's: release takes no
    option), before anything runs."""
    import grader
    told = {}
    for lang, locale in (("zh", "zh_CN.UTF-8"), ("en", "C")):
        monkeypatch.setenv("LC_ALL", locale)
        words = argv if argv[:1] in (["--lang"], ["release"]) else [*argv, f"--lang={lang}"]
        assert grader.main(words) == grader.USAGE_ERROR
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1, err
        told[lang] = err.strip()
    assert CJK.search(told["zh"]) and latin_words(told["zh"]) == [], told["zh"]
    assert not CJK.search(told["en"].replace("“", "").replace("”", "")), told["en"]


def test_the_test_kits_messages_say_where_and_what_in_chinese():
    """The messages grading.checks composes: a place in a tensor that is already indexed is
    'out[:, 0] 在 [1, 0] 处' in Chinese ('at' in English), a None is '是 None' (with its space)."""
    import torch

    from grading.checks.expect import expect_close, expect_sequence, expect_tensor
    from grading.errors import CheckFailed
    want = torch.zeros(2, 3)
    got = want.clone()
    got[1, 0] = 0.5
    told = []
    for check in (lambda: expect_close(got, want, "out[:, 0]"),
                  lambda: expect_tensor(torch.tensor([[0.0, float("nan")]]), "weights[0]"),
                  lambda: expect_sequence(None, "forward(x)", 3)):
        with pytest.raises(CheckFailed) as failed:
            check()
        told.append(failed.value.text)
    assert told[0].zh.startswith("out[:, 0] 在 [1, 0] 处是 0.5，") and \
        told[0].en.startswith("out[:, 0] at [1, 0] is 0.5, "), told[0]
    assert told[1].zh.startswith("weights[0] 在 [0, 1] 处是 nan："), told[1]
    assert "实际返回的是 None" in told[2].zh, told[2]
    for text in told:
        assert latin_words(text.zh) == [], text.zh


def test_hints_name_the_lessons_real_headings():
    """Each exercise's heading is a heading of the lesson, as docs/lesson.zh.txt has it (the last
    hint sends the learner there): a line of its own, word for word."""
    lesson = (ROOT / "docs" / "lesson.zh.txt").read_text(encoding="utf-8").splitlines()
    for exercise in course.EXERCISES:
        assert exercise.heading[0] in lesson, f"{exercise.name}: no heading {exercise.heading[0]}"


def test_no_scaffold_placeholder_is_left():
    """`python selftest/scaffold.py` marks every text the instructor still has to write (the
    exercise's description, its hints, the README's row, the test's sizes and shape) with a TODO
    of its own: --check N lists each one left, by file and line, until it is written."""
    from scaffold import TODO
    files = [ROOT / "course.py", ROOT / "README.md",
             *sorted((ROOT / "tests").glob("*.py")),
             *sorted((ROOT / "exercises").glob("ex*.py")), *sorted((ROOT / "solutions").glob("ex*.py"))]
    left = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
            for path in files
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if any(mark in line for mark in TODO)]
    assert not left, ("texts the scaffold left for the instructor to write:\n  "
                      + "\n  ".join(left))
