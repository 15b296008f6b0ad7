"""Learner text is inert wherever the grader shows it: the terminal report, results.json, batch
records and the CSV, and, in GitHub Actions, the log, the annotations and the job summary.

The learner controls what their code prints and raises, its traceback lines and, in a batch, their
folder's name. Here a grade is built by hand, with every such text hostile: terminal escapes that
clear the screen, a carriage return that overwrites a line, a bidi override, a NUL, and lines that
are GitHub workflow commands. `runner_commands` reads a log the way the Actions runner does (see
its docstring), so the tests check what the runner would actually do, not a string pattern.
"""
import csv
import json
import re
import shutil
from pathlib import Path

from grading.commands import batch
from grading.diagnosis.causes import Diagnosis
from grading.i18n import Bi
from grading.judge.plugin import TestResult as Result  # not collected as a test class
from grading.judge.session import ExerciseGrade, Grade
from grading.output import report
from hostile import ESCAPES, IN_A_NAME, LEARNER, controls, runner_commands, strings

ROOT = Path(__file__).resolve().parents[2]


def result(exercise, number, status="failed", cause="raised", frames=(), output=LEARNER):
    message = Bi(f"你的代码抛出了 ValueError：{LEARNER}", f"your code raised ValueError: {LEARNER}")
    return Result(exercise=exercise, number=number, name=Bi(f"检查 {number}", f"check {number}"),
                      nodeid=f"tests/test_{exercise}.py::test_{number}", points=5, kind="public",
                      status=status, cause=cause, message=None if status == "passed" else message,
                      frames=list(frames), output=output)


def hostile_grade():
    """A grade of six exercises in every state, each learner text hostile."""
    frame = [f"ex1_embedding.py{ESCAPES}", 12, f"embed{ESCAPES}", f"print('{LEARNER}')"]
    forged = ["ex1_embedding.py", "3,title=x::y\n::add-mask::z", "f", "x"]  # a lying worker
    return Grade(submission=Path(f"/tmp/class/sub{IN_A_NAME}"), seed=7, seconds=1.5, exercises=[
        ExerciseGrade("ex1_embedding", [result("ex1_embedding", 1, frames=[frame, forged]),
                                        result("ex1_embedding", 2, "passed", "")]),
        ExerciseGrade("ex2_averaging", [result("ex2_averaging", 1, "todo", frames=[frame])]),
        ExerciseGrade("ex3_qkv", [result("ex3_qkv", 1, "error", "")]),
        ExerciseGrade("ex4_scaling", [result("ex4_scaling", 1, "passed", "")]),
        ExerciseGrade("ex5_causal_mask", [result("ex5_causal_mask", 1, cause="check")],
                      Diagnosis("mask", f"掩码{LEARNER}", f"the mask{LEARNER}"), LEARNER),
        ExerciseGrade("ex6_head", [result("ex6_head", 1, cause="crash", frames=[forged])]),
    ])


FAILING = 5  # exercises of hostile_grade() that are not done: one annotation each


# -- every rendering: no control character -------------------------------------------------------

def test_terminal_report_has_no_control_characters():
    for lang in ("en", "zh"):
        shown = report.text(hostile_grade(), lang=lang)
        assert not controls(shown), controls(shown)
        assert "your code printed" in shown or "你的代码打印了" in shown  # learner text still shown


def test_results_json_has_no_control_characters():
    for lang in ("en", "zh"):
        data = json.loads(json.dumps(report.gradescope(hostile_grade(), lang)))
        assert not [s for s in strings(data) if controls(s)]
        assert any("::add-mask::secret" in s for s in strings(data))  # shown, as plain text


def test_batch_record_has_no_control_characters():
    data = json.loads(json.dumps(report.record(hostile_grade())))
    assert not [s for s in strings(data) if controls(s)]


def test_annotations_and_summary_have_no_control_characters():
    grade = hostile_grade()
    for lang in ("en", "zh"):
        assert not controls("\n".join(report.github_annotations(grade, lang)))
        assert not controls(report.github_summary(grade, 100, lang))


# -- GitHub Actions: no learner line is a workflow command ----------------------------------------

def actions_output(grade, lang="en"):
    """What grader.py prints in Actions: the report, then its annotations."""
    return report.github_log(report.text(grade, lang=lang)) + "\n" + \
        "\n".join(report.github_annotations(grade, lang))


def test_the_runner_runs_only_the_graders_own_commands():
    for lang in ("en", "zh"):
        printed = actions_output(hostile_grade(), lang)
        lines = printed.split("\n")
        token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0]).group(1)
        end = lines.index(f"::{token}::")
        ran = runner_commands(printed)
        assert [name for name, _ in ran] == ["stop-commands", token] + ["error"] * FAILING, ran
        outside = lines[:1] + lines[end:]
        assert all(line.startswith(("::stop-commands::", f"::{token}::", "::error file="))
                   for line in outside), outside
        region = lines[1:end]
        assert not [line for line in region if line.lstrip().startswith("::") or "##[" in line]


def test_without_stop_commands_the_learner_lines_still_run_nothing():
    """The second layer alone: were the stop ever lifted, no learner line is a command."""
    assert runner_commands(LEARNER)  # the hostile text is made of commands …
    assert runner_commands(report.no_commands(LEARNER)) == []  # … and is none once shown
    assert runner_commands(report.no_commands(report.text(hostile_grade()))) == []


def test_a_fresh_token_every_run():
    first, second = report.github_log("x"), report.github_log("x")
    assert first.split("\n")[0] != second.split("\n")[0]


def test_annotations_carry_learner_text_only_as_escaped_data():
    for line in report.github_annotations(hostile_grade()):
        assert "\n" not in line and "\r" not in line
        info = line[2:line.index("::", 2)]
        name, properties = info.split(" ", 1)
        assert name == "error"
        pairs = [p.split("=", 1) for p in properties.split(",")]
        keys = [key for key, _ in pairs]
        assert sorted(keys) in (["file", "line", "title"], ["file", "title"]), keys
        pairs = dict(pairs)
        assert pairs.get("line", "1").isdigit()  # a forged "3,title=x::y" line is dropped
        assert re.match(r"ex\d+_\w+ · check \d", pairs["title"]), pairs["title"]


def test_summary_learner_text_is_one_line_of_plain_text():
    summary = report.github_summary(hostile_grade(), 100)
    rows = [line for line in summary.split("\n") if line.startswith("|")]
    assert len(rows) == 2 + len(hostile_grade().exercises)  # no row added by a newline
    assert all(row.count("|") == 5 for row in rows)  # no cell added by a |
    assert not set("<>`[]") & set(summary)  # no HTML, no code span, no link
    assert "&lt;img src=x" in summary  # shown, escaped


# -- batches --------------------------------------------------------------------------------------

def test_a_grading_error_is_not_graded():
    record = report.record(hostile_grade())  # ex3 met a grading error
    assert batch.status_of(record)[0] == "grading error"
    record["status"], record["note"] = batch.status_of(record)
    row = next(csv.DictReader(batch.csv_text({"alice": record}).splitlines()))
    assert row["status"] == "grading error" and row["note"] and not controls(row["note"])
    fine = hostile_grade()
    fine.exercises = [ex for ex in fine.exercises if ex.exercise != "ex3_qkv"]
    assert batch.status_of(report.record(fine)) == ("graded", "")


def test_symbolic_links_are_refused_and_never_graded(tmp_path):
    real = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "solutions", real)
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "linked").symlink_to(real, target_is_directory=True)
    inside = tmp_path / "class" / "inside"
    inside.mkdir()
    (inside / "ex1_embedding.py").symlink_to(real / "ex1_embedding.py")
    names = [p.name for p in batch.submissions_in(tmp_path / "class")]
    assert names == ["inside", "linked"]
    for name in names:  # no zygote: grading would need one
        record = batch.prepare(tmp_path / "class" / name, tmp_path)["record"]
        assert (record["status"], record["note"]) == ("refused", "a symbolic link")
        record = batch.grade_one(None, tmp_path / "class" / name, 1, None, 5.0)
        assert (record["status"], record["note"]) == ("refused", "a symbolic link")
        assert record["total"] == 0
    row = next(csv.DictReader(batch.csv_text({"linked": record}).splitlines()))
    assert row["status"] == "refused" and row["note"] == "a symbolic link" and row["total"] == "0"


def test_folder_names_are_shown_cleaned_and_never_as_a_formula(capsys):
    record = {"status": "graded", "exercises": {}, "total": 0, "seconds": 0}
    names = [f"bob{IN_A_NAME}", "=HYPERLINK(\"http://x\",\"y\")", "+1", "-1", "@SUM(A1)",
             "::add-mask::secret", "##[stop-commands]abc"]
    rows = list(csv.DictReader(batch.csv_text({n: record for n in names}).splitlines()))
    assert len(rows) == len(names)
    assert not [row["name"] for row in rows if controls(row["name"])]
    assert not [row["name"] for row in rows if row["name"][:1] in "=+-@"]
    progress = batch.Progress(len(names))  # a CI log: a line per submission
    for name in names:
        progress.step(name, record)
    log = capsys.readouterr().out
    assert len(log.splitlines()) == len(names) and not controls(log)
    assert runner_commands(log) == []


# The command line in Actions, on a hostile exercise: selftest/system/test_ci.py, in the same run as the
# results-file attack (one grading run for both).
