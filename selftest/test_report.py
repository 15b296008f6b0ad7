"""What the terminal report says about a failing exercise, from results made here (no grading):
a check that waits for another is shown as waiting, not failing; warnings are shown whole, as
warnings, not as printed output."""
from pathlib import Path

from grading.i18n import Bi
from grading.judge.plugin import TestResult as Result
from grading.output.report import text
from grading.judge.session import ExerciseGrade, Grade

WARNING = ("UserWarning: Implicit dimension choice for softmax has been deprecated. Change the call "
           "to include dim=X as an argument. [ex5_causal_mask.py:40]")


def report_of(results, lang="en"):
    exercise = ExerciseGrade("ex5_causal_mask", results)
    return text(Grade(Path("exercises"), 1, [exercise], 0.1), lang=lang)


def result(number, name, status="passed", cause="", message=None, output=""):
    return Result("ex5_causal_mask", number, Bi(name + "（中文）", name), f"t::test_{number}", 3,
                      "public", status=status, cause=cause, message=message, output=output)


def test_a_check_waiting_for_another_is_shown_waiting_not_failing():
    shown = report_of([
        result(1, "rows sum to 1", "failed", "check", Bi("第 0 行之和是 2", "row 0 sums to 2")),
        result(2, "the upper triangle is 0", "failed", "gate",
               Bi("这一项要在\u201c权重的每一行之和为 1\u201d通过之后才计分",
                  "this counts once \u201crows sum to 1\u201d passes")),
        result(3, "the first row", "failed", "check", Bi("不对", "wrong"))])
    assert "also failing: the first row" in shown
    assert "the upper triangle is 0" not in shown.split("also failing")[1].splitlines()[0]
    assert "waiting: the upper triangle is 0 (this counts once “rows sum to 1” passes)" in shown


def test_warnings_are_shown_whole_as_warnings():
    printed = "a line the learner printed\n" + WARNING + "\n"
    for lang, label in (("en", "warning: "), ("zh", "警告：")):
        shown = report_of([result(1, "rows sum to 1", "failed", "check",
                                  Bi("第 0 行之和是 2", "row 0 sums to 2"), output=printed)], lang)
        assert label + WARNING in shown
        printed_line = next(line for line in shown.splitlines() if "a line the learner" in line)
        assert "more lines" not in printed_line and "另有" not in printed_line
