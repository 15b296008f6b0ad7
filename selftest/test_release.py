"""The student copy: no solution and no fixture in it, it works on its own (public checks locally,
the hidden ones explained), and its workflow fetches the solutions from the private repository."""
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
    public = {p.read_bytes() for p in (ROOT / "exercises").rglob("*.py")}  # a fixture's stub
    secret = {p.read_bytes() for folder in ("solutions", "selftest")
              for p in (ROOT / folder).rglob("*.py") if p.name != "__init__.py"} - public
    leaked = [str(p) for p in student_copy.rglob("*") if p.is_file() and p.read_bytes() in secret]
    assert not leaked


@pytest.mark.full
def test_it_grades_the_public_checks_and_explains_the_hidden_ones(student_copy, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(student_copy, copy)
    for exercise in (ROOT / "solutions").glob("ex*.py"):
        shutil.copy(exercise, copy / "exercises")
    done = subprocess.run([sys.executable, "grader.py", "--lang", "en"], cwd=copy,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Every check passes" in done.stdout and "68/68" in done.stdout
    assert "32 more points of hidden checks compare your outputs" in done.stdout
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
