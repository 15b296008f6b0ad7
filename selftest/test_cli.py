"""grader.py as a learner and a CI meet it: exit codes, one-line errors, the report, the JSON."""
import json

from conftest import run_grader


def test_untouched_stubs_report_zero_and_point_to_ex1():
    done = run_grader()
    assert done.returncode == 1, done.stderr
    assert "Total 0/100" in done.stdout
    assert "Next: ex1_embedding" in done.stdout
    assert "not started" in done.stdout


def test_solutions_write_gradescope_results(tmp_path):
    path = tmp_path / "results.json"
    done = run_grader("--solutions", "--json", path, "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Total 20/20" in done.stdout
    results = json.loads(path.read_text())
    assert results["score"] == 20 and results["execution_time"] > 0
    assert results["tests"] and all(t["name"].startswith("ex5_causal_mask · ")
                                    for t in results["tests"])
    assert all({"name", "number", "score", "max_score", "status", "output", "visibility"} <= set(t)
               for t in results["tests"])
    assert sum(t["max_score"] for t in results["tests"]) == 20


def one_line_error(done):
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def test_bad_exercise_is_a_one_line_error():
    assert "there is no exercise '9'" in one_line_error(run_grader("9"))


def test_unknown_option_is_a_one_line_error():
    assert "unrecognized arguments" in one_line_error(run_grader("--bogus"))


def test_unwritable_results_path_is_a_one_line_error(tmp_path):
    assert "does not exist" in one_line_error(run_grader("--json", tmp_path / "no" / "r.json"))


def test_missing_submission_folder_is_a_one_line_error(tmp_path):
    assert "is not a folder" in one_line_error(run_grader("--submission", tmp_path / "none"))
