"""The student copy: no solution, no fixture and no credential in it; it works on its own (public
checks, labelled as not the grade) and never passes for a grade in CI or with --json; its workflow
gives feedback and holds no secret."""
import ast
import json
import os
import shutil
import subprocess
import sys

import pytest

import course
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


def answers_in(copy, scratch):
    """The answers selftest/answer_probe.py finds computed by code of `copy`: [{where, answer}]."""
    done = subprocess.run([sys.executable, str(ROOT / "selftest" / "answer_probe.py"), str(copy),
                           str(ROOT / "solutions")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PROBE_SCRATCH": str(scratch)})
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_no_code_in_the_copy_computes_an_exercises_answer(student_copy, tmp_path):
    """Issue 37: tests/lesson_steps.py and the test files' diagnoses computed ex2's, ex4's and
    ex5's answers, and a student could import them. The copy leaves out tests/diagnoses_*.py and
    lesson_steps.py; every function of its tensor rooms, called blind on one draw, returns no
    exercise's values."""
    assert not list((student_copy / "tests").glob("diagnoses_*.py"))
    assert not (student_copy / "tests" / "lesson_steps.py").exists()
    assert answers_in(student_copy, tmp_path) == []


@pytest.mark.full  # (the probe's own test: a release and a probe more, 4 s of --check)
def test_the_probe_finds_the_answers_where_the_diagnoses_are_shipped(tmp_path):
    """The probe can fail: `release --with-causes` ships the diagnoses, and it finds them."""
    copy = tmp_path / "with-causes"
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "release", str(copy),
                           "--with-causes"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = {hit["answer"] for hit in answers_in(copy, tmp_path)}
    assert {"averaging_matrix", "attention_scores", "causal_softmax"} <= found, found


def local_environment(**more):
    """The environment of a learner's own terminal: no CI variables (CI itself sets them)."""
    return {**{name: value for name, value in os.environ.items()
               if name not in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")},
            **more}


def public_points():
    """The points of the public checks of tests/, from their @public(points) marks."""
    return sum(ast.literal_eval(mark.args[0])
               for path in sorted((ROOT / "tests").glob("test_ex*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef)
               for mark in node.decorator_list
               if isinstance(mark, ast.Call) and getattr(mark.func, "id", "") == "public")


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
    public = public_points()
    assert f"Public checks {public}/{public} (not the grade: the hidden checks did not run)" \
        in done.stdout
    hidden = course.TOTAL - public
    assert "Not the grade" in done.stdout and f"({hidden:g} points) did not run" in done.stdout
    assert f"Total {public}/{public}" not in done.stdout
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
    assert results["extra_data"]["hidden_checks_ran"] is False
    hidden = [t for t in results["tests"] if "hidden" in t["tags"]]
    assert hidden and all(t["score"] == 0 and "not run" in t["output"] for t in hidden)
    check = subprocess.run([sys.executable, "grader.py", "--check"], cwd=copy,
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 2 and "instructor's tool" in check.stderr


def test_its_workflow_gives_feedback_and_holds_no_credential(student_copy):
    """The student copy's only workflow uses no secret and fetches nothing: the solutions never
    come near a workflow a student can edit; it grades the pull request's exercises/ with the base
    branch's grader and hands the changes outside exercises/ to the grading step."""
    assert [p.name for p in (student_copy / ".github" / "workflows").iterdir()] == ["feedback.yml"]
    text = (student_copy / ".github" / "workflows" / "feedback.yml").read_text()
    assert "secrets." not in text and "SOLUTIONS" not in text and "token:" not in text
    assert "NOT the grade" in text and "not the grade" in text
    assert "ref: ${{ github.event.pull_request.base.sha || github.sha }}\n          path: grader" \
        in text
    assert "bash .github/scripts/grade.sh" in text and "working-directory: grader" in text
    assert "GRADER_CHANGES_OUTSIDE: ${{ steps.changed.outputs.files }}" in text
    assert "-name 'ex*.py'" in text  # only the learner's exercise files cross over
    assert sorted(p.name for p in (student_copy / ".github" / "scripts").iterdir()) == \
        ["grade.sh", "outside-exercises.sh"]


def test_a_virtual_environment_is_ignored_and_explained(student_copy):
    """`git add -A` in the student copy takes in no virtual environment, cache or results.json;
    its README, in both languages, makes a venv first (Debian 12 / Ubuntu 24.04 refuse system
    installs and may have no `python`)."""
    ignored = (student_copy / ".gitignore").read_text().splitlines()
    for pattern in (".venv/", "venv/", "__pycache__/", "results.json"):
        assert pattern in ignored, pattern
    readme = (student_copy / "README.md").read_text()
    english = readme[readme.index("# Self-attention exercises"):]
    chinese = readme[:readme.index("# Self-attention exercises")]
    for text in (chinese, english):
        assert "python3 -m venv .venv" in text and ". .venv/bin/activate" in text
        assert ".venv\\Scripts\\activate" in text and "externally-managed-environment" in text
        assert "Debian 12" in text and "Ubuntu 24.04" in text
        assert text.index("python3 -m venv") < text.index("pip install -r requirements.txt")


def test_release_refuses_an_existing_folder(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "release", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "already exists" in done.stderr


def test_the_learners_guide_is_shipped_and_its_links_hold(student_copy):
    """The student copy carries docs/learner.md, its README links to it, and every relative link of
    both leads to a file of the copy (none to docs the copy does not have)."""
    import re
    assert (student_copy / "docs" / "learner.md").is_file()
    assert sorted(p.name for p in (student_copy / "docs").iterdir()) == ["learner.md"]
    readme = (student_copy / "README.md").read_text(encoding="utf-8")
    assert readme.count("(docs/learner.md)") == 2  # in both languages
    for path in (student_copy / "README.md", student_copy / "docs" / "learner.md"):
        for target in re.findall(r"\]\(([^)\s#:]+)[^)]*\)", path.read_text(encoding="utf-8")):
            assert (path.parent / target).exists(), (path.name, target)


LESSON_STEPS = {"tril", "triu", "masked_fill", "masked_fill_", "softmax", "transpose", "sum",
                "cumsum"}  # the calls an exercise's answer is made of, with `@`


class _Anonymous(ast.NodeTransformer):
    def visit_Name(self, node):  # names aside: the same computation under other names
        return ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)


def computations(tree, least=6):
    """{an expression with its names made anonymous: its text} of every expression in `tree` of
    at least `least` nodes that takes a lesson's step (a product @, a tril, a softmax…)."""
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or isinstance(node, (ast.Tuple, ast.Slice)) \
                or sum(1 for _ in ast.walk(node)) < least:
            continue
        steps = any(isinstance(n, ast.MatMult) or (isinstance(n, ast.Attribute)
                                                   and n.attr in LESSON_STEPS)
                    for n in ast.walk(node))
        if steps:
            text = ast.unparse(node)
            try:
                anonymous = ast.unparse(_Anonymous().visit(ast.parse(text, mode="eval")).body)
            except SyntaxError:
                continue
            found[anonymous] = text
    return found


def test_no_answer_code_outside_the_checks(student_copy):
    """Nothing in the student copy but the checks themselves (tests/, which state what each answer
    must satisfy) computes an exercise's answer: no expression of a solution's function bodies,
    under any names, that the stub does not hold too. The demo uses the learner's own exercises."""
    def bodies(path):
        out = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for statement in node.body:
                    out.update(computations(statement))
        return out
    stub = {key for path in (ROOT / "exercises").glob("ex*.py") for key in bodies(path)}
    answers = {key: (path.name, text) for path in (ROOT / "solutions").glob("ex*.py")
               for key, text in bodies(path).items() if key not in stub}
    assert len(answers) >= 8  # (the scan itself sees the solutions' steps)
    found = []
    for path in student_copy.rglob("*.py"):
        if path.relative_to(student_copy).parts[0] in ("tests", "exercises"):
            continue
        for key, text in computations(ast.parse(path.read_text(encoding="utf-8"))).items():
            if key in answers:
                found.append(f"{path.relative_to(student_copy)}: {text} "
                             f"(solutions/{answers[key][0]}: {answers[key][1]})")
    assert not found, "\n".join(found)
