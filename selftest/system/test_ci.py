"""The pull-request grading of .github/workflows/grade.yml, run here the way Actions runs it: the
same scripts, with the GITHUB_* variables pointing at temporary files."""
import json
import os
import subprocess
import sys
import time

import pytest

import course
from conftest import ROOT, early_folder, early_run, processes_mentioning
from hostile import controls, runner_commands, strings
from long_runs import actions_environment

pytestmark = pytest.mark.full  # the grader's own machinery: --check --full


@pytest.mark.long_run  # reads a run of long_runs.py
def test_grading_step_under_attack_summary_annotations_and_pass_mark():
    """The summary, one annotation on each learner's file, the pass mark, no workflow command but
    the grader's own, no control character anywhere, and an honest results.json that stays honest
    after the run, with nothing left running."""
    done = early_run("ci")
    folder = early_folder() / "ci"
    copy, summary = folder / "repository", folder / "summary.md"
    # ex2 0 and ex6 0 (its fork at import is refused): the rest of the points, above a mark of 50
    left = course.TOTAL - course.BY_NAME["ex2_averaging"].points - course.BY_NAME["ex6_head"].points
    assert done.returncode == 0, done.stdout + done.stderr
    table = summary.read_text()
    assert f"{left}/{course.TOTAL} (pass mark 50) ✅" in table and "| ex1_embedding | 10/10 | ✓ done |" in table
    assert "| ex2_averaging | 0/" in table and not controls(table) and not set("<`") & set(table)
    ran = runner_commands(done.stdout + "\n" + done.stderr)
    token = ran[0][1]
    assert [name for name, _ in ran] == ["stop-commands", token, "error", "error"], ran
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert errors[0].startswith("::error file=exercises/ex2_averaging.py") and "ValueError" in \
        errors[0] and errors[1].startswith("::error file=exercises/ex6_head.py")
    assert not controls(done.stdout) and not controls(done.stderr)
    time.sleep(2)  # the detached rewriter would have struck by now
    results = (copy / "results.json").read_text()
    data = json.loads(results)
    assert data["score"] == left and "forged" not in results
    assert not [s for s in strings(data) if controls(s)]
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
    assert "::error" not in done.stdout and output.read_text() == "outside=false\nfiles=\n"
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
    assert output.read_text() == \
        "outside=true\nfiles=grader.py tests/test_ex1_embedding.py\n"


def test_the_class_is_graded_where_students_cannot_run_workflows():
    """grade.yml runs only when the course starts it in its own repository (no push, no pull
    request: nothing a student does runs it); the one secret, STUDENTS_TOKEN, is in the step
    that reads the students' exercises, never in the step that runs their code."""
    text = (ROOT / ".github" / "workflows" / "grade.yml").read_text()
    triggers = text[text.index("\non:\n"):text.index("\npermissions:")]
    assert "workflow_dispatch:" in triggers
    assert "pull_request" not in triggers and "push" not in triggers
    steps = text.split("\n      - ")
    with_secrets = [step for step in steps if "secrets." in step]
    assert len(with_secrets) == 1 and "secrets.STUDENTS_TOKEN" in with_secrets[0]
    assert "fetch-students.sh" in with_secrets[0]
    [grading] = [step for step in steps if "python grader.py --batch" in step]
    assert "secrets." not in grading and "GH_TOKEN" not in grading
    assert "SOLUTIONS_TOKEN" not in text and "persist-credentials: false" in text


FAKE_GH = """#!/usr/bin/env bash
# gh, as fetch-students.sh calls it, served from $FAKE_GITHUB/<owner>/<name>/exercises/
set -euo pipefail
echo "$*" >> "$FAKE_GITHUB/calls"
case "$1 $2" in
  "repo list") ls "$FAKE_GITHUB/$3"; exit 0 ;;
esac
for argument in "$@"; do
  case "$argument" in repos/*) path=${argument#repos/} ;; esac
done
repository=$(echo "$path" | cut -d/ -f1-2)
# FAKE_FAIL_ONCE / FAKE_FAIL_ALWAYS: a path with that text gets a 502, once or every time
for failing in "${FAKE_FAIL_ONCE:-}" "${FAKE_FAIL_ALWAYS:-}"; do
  if [ -n "$failing" ] && [[ "$path" == *"$failing"* ]]; then
    if [ "$failing" = "${FAKE_FAIL_ALWAYS:-}" ] || [ ! -e "$FAKE_GITHUB/failed-once" ]; then
      touch "$FAKE_GITHUB/failed-once"
      echo "gh: HTTP 502: Bad Gateway (https://api.github.com/repos/$path)" >&2
      exit 1
    fi
  fi
done
if [ -n "${FAKE_BAD_TOKEN:-}" ]; then echo "gh: Bad credentials (HTTP 401)" >&2; exit 1; fi
[ -d "$FAKE_GITHUB/$repository" ] || { echo "gh: Not Found (HTTP 404)" >&2; exit 1; }
if [ -e "$FAKE_GITHUB/$repository/EMPTY" ]; then
  echo "gh: Git Repository is empty. (HTTP 409)" >&2; exit 1
fi
case "$path" in
  */commits/HEAD) echo "c0ffee-$(basename "$repository")" ;;
  */contents/*) file=${path#*/contents/}; file=$FAKE_GITHUB/$repository/${file%%\\?*}
                if [ -d "$file" ]; then ls "$file"; exit 0; fi  # a listing, as --jq '.[].name'
                [ -f "$file" ] || { echo "gh: Not Found (HTTP 404)" >&2; exit 1; }
                cat "$file" ;;
esac
"""


def test_fetching_the_class_takes_only_the_exercise_files(tmp_path):
    """fetch-students.sh lists OWNER's repositories named PREFIX…, takes exercises/ex*.py of each
    (nothing else: not their tests, not their grader), and records the commit it read."""
    github = tmp_path / "github"
    for name, files in {"attention-alice": ["ex1_embedding.py", "ex2_averaging.py"],
                        "attention-bob": ["ex6_head.py"], "other-carol": ["ex1_embedding.py"]}.items():
        (github / "course" / name / "exercises").mkdir(parents=True)
        (github / "course" / name / "tests").mkdir()
        (github / "course" / name / "tests" / "test_ex1_embedding.py").write_text("forged")
        for file in files:
            (github / "course" / name / "exercises" / file).write_text(f"# {name} {file}\n")
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "gh").write_text(FAKE_GH)
    (bin_folder / "gh").chmod(0o755)
    out = tmp_path / "class" / "submissions"
    env = {**os.environ, "PATH": f"{bin_folder}:{os.environ['PATH']}", "FAKE_GITHUB": str(github),
           "GH_TOKEN": "t", "OWNER": "course", "PREFIX": "attention-", "REPOSITORIES": ""}
    done = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "fetch-students.sh"),
                           str(out)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["attention-alice", "attention-bob"]
    assert sorted(p.name for p in (out / "attention-alice").iterdir()) == \
        ["ex1_embedding.py", "ex2_averaging.py"]
    assert (out / "attention-bob" / "ex6_head.py").read_text() == "# attention-bob ex6_head.py\n"
    assert [p.name for p in (out / "attention-bob").iterdir()] == ["ex6_head.py"]
    commits = (tmp_path / "class" / "graded-commits.tsv").read_text().splitlines()
    assert commits[1:] == ["attention-alice\tcourse/attention-alice\tc0ffee-attention-alice",
                           "attention-bob\tcourse/attention-bob\tc0ffee-attention-bob"]
    assert "every file read" in done.stdout
    # A 502 on one file, once: retried, and the fetch is whole.
    again = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "fetch-students.sh"),
                            str(tmp_path / "retried")],
                           env={**env, "FAKE_FAIL_ONCE": "attention-bob/contents/exercises/ex6",
                                "FETCH_BACKOFF": "0"}, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (tmp_path / "retried" / "attention-bob" / "ex6_head.py").read_text() == \
        "# attention-bob ex6_head.py\n"
    # A file that fails every time: named, with its student, and the fetch fails.
    broken = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "fetch-students.sh"),
                             str(tmp_path / "broken")],
                            env={**env, "FAKE_FAIL_ALWAYS": "attention-alice/contents/exercises/ex2",
                                 "FETCH_BACKOFF": "0"}, capture_output=True, text=True, timeout=60)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "::error title=Not fetched::course/attention-alice: exercises/ex2_averaging.py" \
        in broken.stdout and "502" in broken.stdout
    assert "could not be fetched" in broken.stdout
    no_token = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "fetch-students.sh"),
                               str(tmp_path / "again")], env={**env, "GH_TOKEN": ""},
                              capture_output=True, text=True, timeout=60)
    assert no_token.returncode == 1 and "STUDENTS_TOKEN" in no_token.stdout
    # Issue 37: a refused token stops at the first repository, at once, with one annotation
    # (it was retried like a 502, 30 s a repository); an empty repository (409) and a missing
    # one (404) are skipped with their reason, and the rest of the class is fetched.
    started = time.monotonic()
    refused = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "fetch-students.sh"),
                              str(tmp_path / "refused")], env={**env, "FAKE_BAD_TOKEN": "1"},
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and time.monotonic() - started < 10
    assert refused.stdout.count("::error title=Bad credentials::") == 1, refused.stdout
    (github / "course" / "attention-dave").mkdir()
    (github / "course" / "attention-dave" / "EMPTY").write_text("")
    skipped = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "fetch-students.sh"),
                              str(tmp_path / "skipped")],
                             env={**env, "REPOSITORIES": "course/attention-dave course/gone "
                                                         "course/attention-bob"},
                             capture_output=True, text=True, timeout=60)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert (tmp_path / "skipped" / "attention-bob" / "ex6_head.py").exists()
    tsv = (tmp_path / "graded-commits.tsv").read_text()
    assert "attention-dave\tcourse/attention-dave\tnot fetched: the repository is empty" in tsv
    assert "gone\tcourse/gone\tnot fetched: no such repository" in tsv
    # Issue 37: a renamed exercise file passed the fetch silently; it is fetched as it is named
    # (the gradebook's note then names it) and annotated.
    renamed = github / "course" / "attention-erin" / "exercises"
    renamed.mkdir(parents=True)
    (renamed / "Ex6_Head.py").write_text("# erin\n")
    (renamed / "notes.py").write_text("# not an exercise\n")
    named = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "fetch-students.sh"),
                            str(tmp_path / "named")], env={**env, "REPOSITORIES": "course/attention-erin"},
                           capture_output=True, text=True, timeout=60)
    assert named.returncode == 0, named.stdout + named.stderr
    assert sorted(p.name for p in (tmp_path / "named" / "attention-erin").iterdir()) == ["Ex6_Head.py"]
    assert "::warning title=Renamed file::course/attention-erin: exercises/Ex6_Head.py is there, " \
           "not ex6_head.py" in named.stdout


def test_the_summary_says_what_the_check_says_for_changes_outside_exercises(tmp_path):
    """Full marks, but the pull request changes files outside exercises/ (the workflow hands
    their names to the grading step): the step fails, and its job summary says ❌ and why, not
    ✅ at full marks."""
    env, summary, _ = actions_environment(
        tmp_path, GRADER_CHANGES_OUTSIDE="grader.py tests/test_ex1_embedding.py")
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "--solutions", "--lang", "en"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "outside exercises/ (grader.py tests/test_ex1_embedding.py)" in done.stderr
    table = summary.read_text()
    full = f"{course.TOTAL}/{course.TOTAL} (pass mark {course.TOTAL})"
    assert f"{full} ❌" in table and "✅" not in table, table
    assert "**This check fails**, whatever the points" in table
    assert "outside exercises/ (grader.py tests/test_ex1_embedding.py)" in table
    env, summary, _ = actions_environment(tmp_path, GRADER_CHANGES_OUTSIDE="")
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "--solutions", "--lang", "en"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and f"{full} ✅" in summary.read_text()
