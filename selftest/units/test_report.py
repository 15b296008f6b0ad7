"""What the terminal report says about a failing exercise, from results made here (no grading):
a check that waits for another is shown as waiting, not failing; warnings are shown whole, as
warnings, not as printed output."""
from pathlib import Path

from grading.i18n import Bi
from grading.judge.plugin import TestResult as Result
from grading.judge.session import ExerciseGrade, Grade
from grading.output.report import text

WARNING = ("UserWarning: Implicit dimension choice for softmax has been deprecated. Change the call "
           "to include dim=X as an argument. [ex5_causal_mask.py:40]")


def report_of(results, lang="en"):
    exercise = ExerciseGrade("ex5_causal_mask", results)
    return text(Grade(Path("exercises"), 1, [exercise], 0.1), lang=lang)


def result(number, name, status="passed", cause="", message=None, output="", waits_for=None):
    return Result("ex5_causal_mask", number, Bi(name + "（中文）", name), f"t::test_{number}", 3,
                  "public", status=status, cause=cause, message=message, output=output,
                  waits_for=waits_for)


ROWS = Bi("每一行之和为 1", "rows sum to 1")


def waiting(number, name):
    return result(number, name, "failed", "gate",
                  Bi(f"这一项要在\u201c{ROWS.zh}\u201d通过之后才计分",
                     f"this counts once \u201c{ROWS.en}\u201d passes"), waits_for=ROWS)


def test_a_check_waiting_for_another_is_shown_waiting_not_failing():
    shown = report_of([
        result(1, "rows sum to 1", "failed", "check", Bi("第 0 行之和是 2", "row 0 sums to 2")),
        waiting(2, "the upper triangle is 0"),
        result(3, "the first row", "failed", "check", Bi("不对", "wrong"))])
    assert "also failing: the first row" in shown
    assert "the upper triangle is 0" not in shown.split("also failing")[1].splitlines()[0]
    assert "waiting: 1 more check counts once “rows sum to 1” passes" in shown


def test_waiting_checks_take_one_short_line_once():
    """However many checks wait, for the same check or for others: one line, each check they
    wait for named once; in Chinese, with no English word outside the names."""
    checks = [result(1, "rows sum to 1", "failed", "check", Bi("第 0 行之和是 2", "row 0 sums to 2")),
              *(waiting(n, f"waiting check {n}") for n in range(2, 6))]
    for lang, line in (("en", "waiting: 4 more checks count once “rows sum to 1” passes"),
                       ("zh", "还有 4 项检查要等“每一行之和为 1”通过后才计分")):
        shown = report_of(checks, lang)
        lines = [row.strip() for row in shown.splitlines() if "waiting" in row or "还有" in row]
        assert lines == [line], shown
        assert "waiting check" not in shown and "this counts once" not in shown


def test_nothing_waits_when_the_file_could_not_be_imported():
    """An exercise that could not be imported ran nothing: no list of failing or waiting checks,
    one line that says the rest could not run."""
    broken = Bi("无法导入 ex5_causal_mask.py：SyntaxError: invalid syntax",
                "ex5_causal_mask.py could not be imported: SyntaxError: invalid syntax")
    checks = [result(1, "rows sum to 1", "failed", "import", broken),
              result(2, "the first row", "failed", "import", broken),
              waiting(3, "the upper triangle is 0"), waiting(4, "no ready-made attention")]
    for lang, line in (("en", "the other 3 checks could not run either: the file must import "
                              "first"),
                       ("zh", "其余 3 项检查也没能运行：文件要先能导入")):
        shown = report_of(checks, lang)
        assert line in shown, shown
        for absent in ("waiting", "also failing", "还有", "另外没通过", "the first row",
                       "upper triangle", "ready-made"):
            assert absent not in shown, (absent, shown)


def test_warnings_are_shown_whole_as_warnings():
    printed = "a line the learner printed\n" + WARNING + "\n"
    for lang, label in (("en", "warning: "), ("zh", "警告：")):
        shown = report_of([result(1, "rows sum to 1", "failed", "check",
                                  Bi("第 0 行之和是 2", "row 0 sums to 2"), output=printed)], lang)
        assert label + WARNING in shown
        printed_line = next(line for line in shown.splitlines() if "a line the learner" in line)
        assert "more lines" not in printed_line and "另有" not in printed_line
