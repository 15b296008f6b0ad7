"""The student copy: no solution and no fixture in it, it works on its own (public checks locally,
the hidden ones explained), and its workflow fetches the solutions from the private repository."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def student_copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "copy"
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "release", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return out


def test_no_solution_and_no_fixture_is_shipped(student_copy):
    assert not (student_copy / "solutions").exists() and not (student_copy / "selftest").exists()
    secret = {p.read_bytes() for folder in ("solutions", "selftest")
              for p in (ROOT / folder).rglob("*.py") if p.name != "__init__.py"}
    leaked = [str(p) for p in student_copy.rglob("*") if p.is_file() and p.read_bytes() in secret]
    assert not leaked


def local_environment(**more):
    """The environment of a learner's own terminal: no CI variables (CI itself sets them)."""
    return {**{name: value for name, value in os.environ.items()
               if name not in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")},
            **more}


@pytest.mark.full
def test_it_grades_the_public_checks_and_explains_the_hidden_ones(student_copy, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(student_copy, copy)
    for exercise in (ROOT / "solutions").glob("ex*.py"):
        shutil.copy(exercise, copy / "exercises")
    done = subprocess.run([sys.executable, "grader.py", "--lang", "en"], cwd=copy,
                          capture_output=True, text=True, timeout=120, env=local_environment())
    assert done.returncode == 0, done.stdout + done.stderr  # a learner's own run: feedback
    assert "Every public check passes" in done.stdout and "Every check passes" not in done.stdout
    assert "Public checks 68/68 (not the grade: the hidden checks did not run)" in done.stdout
    assert "Not the grade" in done.stdout and "(32 points) did not run" in done.stdout
    assert "Total 68/68" not in done.stdout
    check = subprocess.run([sys.executable, "grader.py", "--check"], cwd=copy,
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 2 and "instructor's tool" in check.stderr


@pytest.mark.full
@pytest.mark.timeout(240)
def test_without_the_solutions_no_grading_mode_exits_0(student_copy, tmp_path):
    """A wrong ex3 (k, q, v for q, k, v) passes every public check: in GitHub Actions (as
    Classroom's autograding runs `python grader.py 3`), in any CI, or writing results.json, the
    student copy's grader exits 1 and says that the hidden checks did not run; the job summary
    says ❌, as the step's status does."""
    copy = tmp_path / "copy"
    shutil.copytree(student_copy, copy)
    shutil.copy(ROOT / "solutions" / "ex3_qkv.py", copy / "exercises")
    wrong = copy / "exercises" / "ex3_qkv.py"
    wrong.write_text(wrong.read_text().replace("return q, k, v", "return k, q, v"))
    assert "return k, q, v" in wrong.read_text()
    summary = tmp_path / "summary.md"
    summary.write_text("")
    runs = {"actions": (["3"], {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}),
            "ci": (["3"], {"CI": "true"}),
            "json": (["3", "--json", str(tmp_path / "results.json")], {}),
            "pass mark": (["--pass-mark", "1", "--json", str(tmp_path / "all.json")], {}),
            "local": (["3"], {})}
    started = {name: subprocess.Popen([sys.executable, "grader.py", *args, "--lang", "en"],
                                      cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=local_environment(**env))
               for name, (args, env) in runs.items()}
    done = {}
    for name, run in started.items():
        stdout, stderr = run.communicate(timeout=200)
        done[name] = subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)
    for name in ("actions", "ci", "json", "pass mark"):
        run = done[name]
        assert run.returncode == 1, (name, run.stdout, run.stderr)
        assert "the hidden checks of ex" in run.stderr and "points) did not run" in run.stderr
        assert "never exits 0" in run.stderr, name
    assert "the hidden checks of ex3_qkv (8 points) did not run" in done["actions"].stderr
    assert done["local"].returncode == 0 and "Not the grade" in done["local"].stdout
    table = summary.read_text()
    assert "public checks 7/7, not the grade (pass mark 7) ❌" in table, table
    assert "✅" not in table and "did not run" in table
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["output"].startswith("Not the grade") and "7/15" in results["output"]
    assert results["extra_data"] == {"hidden_checks_ran": False}
    hidden = [t for t in results["tests"] if "hidden" in t["tags"]]
    assert hidden and all(t["score"] == 0 and "not run" in t["output"] for t in hidden)
    check = subprocess.run([sys.executable, "grader.py", "--check"], cwd=copy,
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 2 and "instructor's tool" in check.stderr


def test_its_workflow_fetches_the_solutions_and_names_what_is_missing(student_copy):
    text = (student_copy / ".github" / "workflows" / "grade.yml").read_text()
    assert "repository: ${{ vars.SOLUTIONS_REPO }}" in text
    assert "token: ${{ secrets.SOLUTIONS_TOKEN }}" in text
    assert "Missing $missing" in text
    assert text.index("The solutions, from") < text.index("name: Grade")
    assert not (student_copy / ".github" / "workflows" / "check.yml").exists()


def test_release_refuses_an_existing_folder(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "release", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "already exists" in done.stderr
