"""Issue 33: the report shows what the learner built and fits the terminal.

- a picture puts the learner's small matrix beside the expected one, the first wrong cell in
  brackets in both, in either language, narrow enough for 80 columns with the report's indent;
- every report line fits the width it is given, CJK characters counted double, no word split,
  no word lost;
- a values check says how the values differ when the difference is simple (transposed, one scale
  factor, negatives made 0), and nothing when it is not.
"""
from pathlib import Path

import torch

from grading.checks.expect import relation
from grading.diagnosis.pictures import Picture
from grading.i18n import Bi
from grading.judge.plugin import TestResult as Result
from grading.judge.session import ExerciseGrade, Grade
from grading.output import terminal
from grading.output.report import text

AVERAGING = torch.tril(torch.ones(5, 5)) / torch.arange(1, 6)[:, None]
COLUMNS = torch.tril(torch.ones(5, 5)) / torch.tril(torch.ones(5, 5)).sum(dim=0, keepdim=True)


def test_a_picture_marks_the_first_wrong_cell_in_both_matrices():
    picture = Picture(Bi("averaging_matrix(5)", "averaging_matrix(5)"), COLUMNS, AVERAGING)
    assert picture.first_wrong() == (0, 0)
    for lang in ("en", "zh"):
        lines = picture.lines(lang)
        row = lines[2]  # title, column names, then row 0
        assert row.count("[") == 2 and "[0.20]" in row and "[1.00]" in row, lines
        assert all(terminal.columns(line) + 8 <= 80 for line in lines), lines
    assert "expected" in "\n".join(picture.lines("en")) and "应当是" in "\n".join(picture.lines("zh"))


def test_a_right_matrix_has_no_wrong_cell_and_a_lone_one_marks_what_it_is_told():
    assert Picture(Bi("m", "m"), AVERAGING, AVERAGING).first_wrong() is None
    future = torch.triu(torch.ones(5, 5), diagonal=1).bool()
    alone = Picture(Bi("m", "m"), torch.full((5, 5), 0.2), wrong=future)
    assert alone.first_wrong() == (0, 1) and "[0.20]" in alone.lines("en")[2]


def test_a_picture_is_shown_under_its_failing_check():
    failing = Result("ex2_averaging", 1, Bi("每一行之和为 1", "every row sums to 1"), "t::test_1", 1,
                     "public", status="failed", cause="check", message=Bi("第 4 行", "row 4"))
    grade = Grade(Path("exercises"), 1, [ExerciseGrade(
        "ex2_averaging", [failing], picture=Picture(Bi("averaging_matrix(5)", "averaging_matrix(5)"),
                                                    COLUMNS, AVERAGING))], 0.1)
    shown = text(grade, lang="en", most=80)
    assert "averaging_matrix(5):" in shown and "[1.00]" in shown


LONG = ("The row sums were broadcast the wrong way: tril.sum(dim=1) without keepdim=True has shape "
        "(T,), and dividing by it divides column j by row j's sum instead of row i by its own. "
        "每行之和被沿错了方向广播：tril.sum(dim=1) 不加 keepdim=True 的形状是 (T,)，除以它时第 j 列被除以第 j 行的和。")


def test_every_line_fits_and_no_word_is_split_or_lost():
    for most in (60, 80, 100):
        lines = terminal.fit("      → Likely cause: " + LONG, most)
        assert all(terminal.columns(line) <= most for line in lines), lines
        assert "".join("".join(lines).split()) == "".join(("→ Likely cause: " + LONG).split())
        words = set(LONG.split())
        for line in lines:  # a Latin word is never cut in two: each piece of a line is whole
            for piece in line.split():
                if piece.isascii() and piece.isalpha():
                    assert piece in words or piece in ("Likely", "cause:"), piece
    assert terminal.columns("注意力") == 6 and terminal.columns("（，）") == 6


def test_a_values_message_says_how_simple_differences_differ():
    want = torch.randn(2, 5, 5, dtype=torch.float64)
    assert "transposed" in relation(want.transpose(-2, -1), want).en
    assert "√8" in relation(want * 8 ** 0.5, want).en
    assert "1/√8" in relation(want * 8 ** -0.5, want).en
    assert "ReLU" in relation(want.clamp(min=0), want).en
    assert relation(torch.randn(2, 5, 5, dtype=torch.float64), want) is None


def test_hint_starts_from_the_last_runs_cause_and_forgets_it_once_fixed(tmp_path, monkeypatch):
    from grading.commands import hints
    from grading.diagnosis.causes import Diagnosis
    monkeypatch.setattr(hints, "LAST_RUN", tmp_path / ".grader-last.json")
    failing = Result("ex2_averaging", 1, Bi("每一行之和为 1", "every row sums to 1"), "t::test_1", 1,
                     "public", status="failed", cause="check", message=Bi("第 4 行", "row 4"))
    cause = Diagnosis("ex2.column_normalised", "归一化沿错了方向", "Normalised along the wrong direction")
    hints.remember_run(Grade(Path("exercises"), 7, [ExerciseGrade("ex2_averaging", [failing], cause)],
                             0.1))
    for lang, words in (("en", "Normalised along the wrong direction"), ("zh", "归一化沿错了方向")):
        shown = hints.show("ex2_averaging", None, False, lang)
        assert words in shown and "7" in shown.splitlines()[0], shown
        assert words not in hints.show("ex2_averaging", 2, False, lang)  # the level asked for
    passing = Result("ex2_averaging", 1, Bi("每一行之和为 1", "every row sums to 1"), "t::test_1", 1,
                     "public", status="passed")
    hints.remember_run(Grade(Path("exercises"), 8, [ExerciseGrade("ex2_averaging", [passing])], 0.1))
    assert "wrong direction" not in hints.show("ex2_averaging", None, False, "en")


def test_a_narrow_terminal_gets_the_two_matrices_one_above_the_other():
    picture = Picture(Bi("averaging_matrix(5)", "averaging_matrix(5)"), COLUMNS, AVERAGING)
    for lang in ("en", "zh"):
        lines = picture.lines(lang, most=60)
        assert all(terminal.columns(line) + 8 <= 60 for line in lines), lines
        assert sum("[0." in line or "[1." in line for line in lines) == 2  # the marked cells


def test_a_test_file_that_does_not_parse_is_named_with_its_line(tmp_path, monkeypatch):
    """Issue 37: a syntax error in a test file read as pytest's import traceback, no file named."""
    from grading import config
    from grading.judge.plugin import syntax_problem
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ex9_new.py").write_text("def test_x(submission):\n    fail((\n")
    monkeypatch.setattr(config, "ROOT", tmp_path)
    said = syntax_problem("tests/test_ex9_new.py")
    assert said.startswith("tests/test_ex9_new.py, line 2: SyntaxError") and "fail((" in said
    (tmp_path / "tests" / "test_ex9_new.py").write_text("x = 1\n")
    assert syntax_problem("tests/test_ex9_new.py") == ""
