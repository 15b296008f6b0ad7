"""The pull-request grading of .github/workflows/grade.yml, run here the way Actions runs it: the
same scripts, with the GITHUB_* variables pointing at temporary files."""
import json
import os
import shutil
import subprocess
import time

from conftest import ROOT, SOLUTIONS, copy_repository, processes_mentioning
from fixtures import SUBMISSIONS


def actions_environment(tmp_path, **more):
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("")
    output.write_text("")
    return {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output), **more}, summary, output


def test_grading_step_under_attack_summary_annotations_and_pass_mark(tmp_path):
    """The step as CI runs it, on a submission whose ex6 forges results.json every way it can:
    the summary, the annotation on the learner's file, the pass mark, and an honest results.json
    that stays honest after the run, with nothing left running."""
    copy = copy_repository(tmp_path / "repository")
    shutil.copytree(ROOT / ".github", copy / ".github")
    shutil.rmtree(copy / "exercises")
    shutil.copytree(SOLUTIONS, copy / "exercises")
    shutil.copy(SUBMISSIONS / "attack-ex6-results_file" / "ex6_head.py", copy / "exercises")
    env, summary, _ = actions_environment(tmp_path, PASS_MARK="80", GRADER_TEST_SECRET="x")
    done = subprocess.run(["bash", str(copy / ".github" / "scripts" / "grade.sh")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # 75 points: below a mark of 80
    table = summary.read_text()
    assert "75/100 (pass mark 80) ❌" in table and "| ex1_embedding | 10/10 | ✓ done |" in table
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and errors[0].startswith("::error file=exercises/ex6_head.py")
    time.sleep(2)  # the detached rewriter would have struck by now
    results = (copy / "results.json").read_text()
    assert json.loads(results)["score"] == 75 and "forged" not in results
    assert not processes_mentioning(str(copy))


def git(folder, *args):
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def test_changes_outside_exercises_are_reported(tmp_path):
    repo = tmp_path / "pr"
    (repo / "exercises").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "exercises" / "ex1_embedding.py").write_text("a = 1\n")
    (repo / "tests" / "test_ex1_embedding.py").write_text("b = 1\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    script = ROOT / ".github" / "scripts" / "outside-exercises.sh"
    (repo / "exercises" / "ex1_embedding.py").write_text("a = 2\n")
    git(repo, "commit", "-q", "-am", "only exercises")
    env, _, output = actions_environment(tmp_path)
    done = subprocess.run(["bash", str(script), base], cwd=repo, env=env, capture_output=True,
                          text=True, check=True)
    assert "::error" not in done.stdout and output.read_text() == "outside=false\n"
    (repo / "tests" / "test_ex1_embedding.py").write_text("b = 2\n")
    (repo / "grader.py").write_text("print('full marks')\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "and the tests")
    env, _, output = actions_environment(tmp_path)
    done = subprocess.run(["bash", str(script), base], cwd=repo, env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.startswith("::error title=Changes outside exercises/::")
    assert "grader.py" in done.stdout and "tests/test_ex1_embedding.py" in done.stdout
    assert "ex1_embedding" not in done.stdout.replace("tests/test_ex1_embedding.py", "")
    assert output.read_text() == "outside=true\n"


def test_grade_workflow_takes_the_grading_code_from_the_base_branch():
    text = (ROOT / ".github" / "workflows" / "grade.yml").read_text()
    assert "ref: ${{ github.event.pull_request.base.sha }}\n          path: grader" in text
    assert "bash .github/scripts/grade.sh" in text and "working-directory: grader" in text
    assert "bash ../grader/.github/scripts/outside-exercises.sh" in text
    assert "-name 'ex*.py'" in text  # only the learner's exercise files cross over
