"""The tests grade fairly: solutions full marks, stubs fail every test, each mistake costs its own exercise
and no other, fair variants full marks, broken code costs only its exercise with a clear message."""
import re

import pytest

import course
from conftest import BUSY, quick
from fixtures import MISTAKES, ONLY, exercise_of_fixture, fixture_dirs, mistake_id

POINTS = {exercise.name: exercise.points for exercise in course.EXERCISES}

# What a learner must read for each broken submission (a phrase of the first failure's message).
BROKEN_MESSAGES = {
    "broken-ex1-os_exit": "ended the Python process",
    "broken-ex2-import_raises": "No module named 'numpyy'",
    "broken-ex2-nan_returned": "must be finite",
    "broken-ex3-syntax_error": "SyntaxError",
    "broken-ex3-sys_exit_at_import": "sys.exit(0) was called",
    "broken-ex4-loop_at_import": "took more than",
    "broken-ex4-numpy_returned": "numpy.ndarray",
    "broken-ex5-segfault": "segmentation fault",
    "broken-ex5-two_dim": "should have shape (B, T, T)",
    "broken-ex6-bare_module_import": "import another exercise relatively",
    "broken-ex6-loop_in_forward": "was stopped",
    "broken-ex6-slow_forward": "used up this exercise's 8 s",
    "broken-ex6-two_dim": "should have shape (B, T, head_size)",
}


def scores(record):
    return {name: (ex["score"], ex["max"]) for name, ex in record["exercises"].items()}


def first_message(record, exercise):
    """The first failure's message, as the report shows it (a check that only waits comes
    last: grading.judge.session.ExerciseGrade.first_failure)."""
    unpassed = [t for t in record["exercises"][exercise]["tests"] if t["status"] != "passed"]
    return next((t for t in unpassed if t.get("cause") != "gate"), unpassed[0])["message"]["en"]


def assert_costs_only(record, exercise):
    got = scores(record)
    assert got[exercise][0] < got[exercise][1], f"{exercise} lost no points: {got[exercise]}"
    others = {name: s for name, s in got.items() if name != exercise and s[0] != s[1]}
    assert not others, f"other exercises lost points too: {others}"


def test_every_submission_is_graded_by_the_backend_asked_for(graded):
    """GRADER_BACKEND=portable python grader.py --check grades the fixtures in the portable
    backend; by default the machine chooses (here, with Landlock and seccomp, Linux's)."""
    from grading.backends.portable import PortableBackend, chosen_backend
    from grading.backends.zygote import Zygote
    backend = PortableBackend if chosen_backend() == "portable" else Zygote
    assert {record["isolation"] for record in graded.values()} == {backend.isolation[1]}


def test_solutions_score_full_marks(graded):
    record = graded["solutions"]
    assert {name: s[1] for name, s in scores(record).items()} == POINTS
    assert record["total"] == record["max"] == course.TOTAL, scores(record)


def test_stubs_fail_every_test(graded):
    passing = [(name, t["name"]) for name, ex in graded["stubs"]["exercises"].items()
               for t in ex["tests"] if t["status"] == "passed"]
    assert not passing, f"tests that pass on the untouched stubs: {passing}"
    assert all(ex["status"] == "todo" for ex in graded["stubs"]["exercises"].values())


@pytest.mark.parametrize("fixture", fixture_dirs("fair"), ids=lambda p: p.name)
def test_fair_variant_scores_full_marks(graded, fixture):
    record = graded[fixture.name]
    assert exercise_of_fixture(fixture) in record["exercises"]
    assert all(s[0] == s[1] for s in scores(record).values()), \
        {n: s for n, s in scores(record).items() if s[0] != s[1]}


@pytest.mark.parametrize("mistake", MISTAKES, ids=mistake_id)
def test_mistake_costs_its_exercise_only(graded, mistake):
    record = graded[mistake_id(mistake)]
    assert_costs_only(record, mistake.exercise)
    tests = {t["id"]: t for t in record["exercises"][mistake.exercise]["tests"]}
    missed = [name for name in mistake.caught_by if tests[name]["cause"] != "check"]
    assert not missed, f"{mistake.why}: not caught by its own assertion in {missed}"
    if mistake.says:
        assert mistake.says in first_message(record, mistake.exercise), \
            f"{mistake.why}: the first failure says {first_message(record, mistake.exercise)!r}"
    diagnosis = record["exercises"][mistake.exercise]["diagnosis"]
    if mistake.diagnosis is None:  # code that no slip of the lesson explains: nothing is named
        assert diagnosis is None, f"{mistake.why}: the learner sees diagnosis {diagnosis['key']}"
        return
    assert diagnosis and diagnosis["key"] == mistake.diagnosis, \
        f"{mistake.why}: the learner sees diagnosis {diagnosis and diagnosis['key']}, " \
        f"not {mistake.diagnosis}"
    assert re.search(r"[\u4e00-\u9fff]", diagnosis["zh"]), diagnosis  # both languages, filled
    assert re.search(r"[A-Za-z]{3}", diagnosis["en"]), diagnosis


def test_diagnoses_never_crash(graded):
    problems = {(name, exercise): ex["diagnosis_problem"] for name, record in graded.items()
                for exercise, ex in record["exercises"].items() if ex["diagnosis_problem"]}
    assert not problems


def test_right_answers_get_no_diagnosis(graded):
    """A diagnosis names a mistake: none for the solutions or the fair variants."""
    wrongly = {(name, exercise): ex["diagnosis"]["key"] for name, record in graded.items()
               if name == "solutions" or name.startswith("fair-")
               for exercise, ex in record["exercises"].items() if ex["diagnosis"]}
    assert not wrongly


@pytest.mark.parametrize("fixture", fixture_dirs("broken"), ids=lambda p: p.name)
def test_broken_code_costs_its_exercise_only(graded, fixture):
    record = graded[fixture.name]
    exercise = exercise_of_fixture(fixture)
    assert_costs_only(record, exercise)
    assert BROKEN_MESSAGES[fixture.name] in first_message(record, exercise)
    assert record["seconds"] < 60


def test_no_submission_makes_a_test_err(graded):
    """Whatever a submission returns costs points with a message, never "an error in the test
    itself" (a grading error, exit status 2, and in Gradescope the whole submission's 0)."""
    erred = {(name, exercise, t["id"]): t["message"]["en"] for name, record in graded.items()
             for exercise, ex in record["exercises"].items() for t in ex["tests"]
             if t["status"] == "error"}
    assert not erred


def test_every_check_catches_a_catalogued_mistake(graded):
    """No check that cannot fail: each one is named by a catalogued mistake that it must catch by
    its own assertion (test_mistake_costs_its_exercise_only holds it to that)."""
    named = {(m.exercise, test) for m in MISTAKES for test in m.caught_by}
    every = {(exercise, t["id"]) for exercise, ex in graded["solutions"]["exercises"].items()
             for t in ex["tests"] if ONLY is None or exercise == ONLY}
    assert not every - named, f"checks that no mistake is caught by: {sorted(every - named)}"


def test_same_seed_same_report(graded):
    if not MISTAKES:
        pytest.skip("no known mistake yet (a new exercise, under --check N)")
    assert graded["replay"]["exercises"] == graded[mistake_id(MISTAKES[0])]["exercises"]


def test_gradebook_rows_hold_each_expected_total(batch_records, gradebooks):
    import csv
    rows = [row for text in gradebooks for row in csv.DictReader(text.splitlines())]
    for text in gradebooks:
        names = [row["name"] for row in csv.DictReader(text.splitlines())]
        assert names == sorted(names)
    by_name = {row["name"]: row for row in rows}
    assert set(by_name) == set(batch_records)
    for name, record in batch_records.items():
        row = by_name[name]
        if isinstance(record, dict) and record.get("regraded"):  # busy in the batch, graded alone
            assert row["status"] == "grading error" and BUSY in row["note"], row
            continue
        assert float(row["total"]) == record["total"], row
        assert row["status"] == "graded" or (  # (under quick(), a row holds no exercise but its
            # fixtures' own)
            quick() and row["status"] == "incomplete" and name not in ("solutions", "stubs")), row
        assert sum(float(row[ex] or 0) for ex in POINTS) == record["total"]  # ("": not graded)
    assert float(by_name["solutions"]["total"]) == course.TOTAL and float(by_name["stubs"]["total"]) == 0
    assert all(float(row["total"]) == course.TOTAL for name, row in by_name.items()
               if name.startswith("fairs-") and not quick())
