"""Issue 34: an exercise that builds on another, added with the scaffold (docs/instructor.md).

In a copy of the repository, `python selftest/scaffold.py` adds ex7 (multi-head attention over
ex6's Head, course.py's `uses`); the instructor's part is one body each. Then a submission whose
ex6 is wrong and whose ex7 is right: graded over the reference ex6 (the default), ex7 keeps its
points; with graded_over="own", ex7 loses them and the report says why; in the student copy (no
solutions) ex7 runs over the learner's own ex6, with that note.
"""
import json
import re
import shutil
import subprocess
import sys

import pytest
from scaffold import ScaffoldError, scaffold

import course
from conftest import ROOT, copy_repository

API = ("MultiHeadAttention.__init__(self, num_heads, n_embd, head_size, block_size)",
       "MultiHeadAttention.forward(self, x)")
INIT = "self.heads = nn.ModuleList([Head(n_embd, head_size, block_size) for _ in range(num_heads)])"
FORWARD = "return torch.cat([h(x) for h in self.heads], dim=-1)"


def grader(copy, *args):
    done = subprocess.run([sys.executable, str(copy / "grader.py"), *args, "--lang", "en"],
                          cwd=copy, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done


def points(copy, folder, *args):
    """{exercise: score} of the folder, and the report."""
    result = copy / "r.json"
    done = grader(copy, "--submission", str(folder), "--json", str(result), *args)
    scores = {}
    for test in json.loads(result.read_text(encoding="utf-8"))["tests"]:  # Gradescope's format
        exercise = test["name"].split(" · ")[0]
        scores[exercise] = scores.get(exercise, 0) + test["score"]
    return scores, done.stdout


@pytest.fixture(scope="module")
def course_with_ex7(tmp_path_factory):
    """A copy of the repository with ex7 scaffolded over ex6, its solution's two bodies written."""
    copy = copy_repository(tmp_path_factory.mktemp("scaffold") / "repo")
    shutil.copy(ROOT / "README.md", copy / "README.md")
    (copy / "selftest").mkdir()  # the private repository's: the scaffold, the paragraphs' writer
    for tool in ("scaffold.py", "checked.py"):
        shutil.copy(ROOT / "selftest" / tool, copy / "selftest" / tool)
    done = subprocess.run([sys.executable, str(copy / "selftest" / "scaffold.py"), "ex7_multihead",
                           *(f"--api={a}" for a in API), "--uses", "ex6_head",
                           "--title", "多头注意力", "multi-head attention"],
                          cwd=copy, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--check 7" in done.stdout, done.stdout + done.stderr
    solution = copy / "solutions" / "ex7_multihead.py"
    text = re.sub(r"(super\(\).__init__\(\)\n)\s*# TODO.*\n.*\n", rf"\g<1>        {INIT}\n",
                  solution.read_text(encoding="utf-8"))
    text = re.sub(r"\n\s*# TODO.*\n.*ex7: forward.*\n", f"\n        {FORWARD}\n", text)
    solution.write_text(text, encoding="utf-8")
    test = copy / "tests" / "test_ex7_multihead.py"
    test.write_text(test.read_text(encoding="utf-8").replace(
        "return tuple(s[n] for n in OUTPUT), OUTPUT",
        'return (s["B"], s["T"], s["num_heads"] * s["head_size"]), ("B", "T", "H")'),
        encoding="utf-8")
    return copy


@pytest.fixture(scope="module")
def wrong_ex6(course_with_ex7, tmp_path_factory):
    """The solutions, with ex6's scores left unscaled (a mistake ex6's checks catch)."""
    folder = tmp_path_factory.mktemp("wrong_ex6") / "submission"
    shutil.copytree(course_with_ex7 / "solutions", folder)
    head = folder / "ex6_head.py"
    text = head.read_text(encoding="utf-8")
    assert text.count(" * head_size ** -0.5") == 1
    head.write_text(text.replace(" * head_size ** -0.5", ""), encoding="utf-8")
    return folder


@pytest.mark.full
def test_the_scaffold_writes_a_course_entry_files_and_rows(course_with_ex7):
    copy = course_with_ex7
    for path in ("exercises/ex7_multihead.py", "solutions/ex7_multihead.py",
                 "tests/test_ex7_multihead.py"):
        assert (copy / path).is_file(), path
    stub = (copy / "exercises" / "ex7_multihead.py").read_text(encoding="utf-8")
    assert "from .ex6_head import Head" in stub and 'NotImplementedError("ex7: forward")' in stub
    assert "会检查：" in stub and "Checked: " in stub  # written by selftest/checked.py
    entry = (copy / "course.py").read_text(encoding="utf-8")
    assert "Exercise('ex7_multihead'" in entry and "uses=('ex6_head',)" in entry
    readme = (copy / "README.md").read_text(encoding="utf-8")
    assert readme.count("`exercises/ex7_multihead.py`") == 2
    solved, _ = points(copy, copy / "solutions", "7")
    assert solved == {"ex7_multihead": 10}
    stubs, report = points(copy, copy / "exercises", "7")
    assert stubs == {"ex7_multihead": 0} and "NotImplementedError" in report


@pytest.mark.full
def test_a_wrong_ex6_costs_ex7_nothing_over_the_reference(course_with_ex7, wrong_ex6):
    got, report = points(course_with_ex7, wrong_ex6)
    assert got["ex6_head"] < 25 and got["ex7_multihead"] == 10, report
    assert "your own ex6_head.py" not in report


@pytest.mark.full
def test_graded_over_own_a_wrong_ex6_costs_ex7_too_and_says_so(course_with_ex7, wrong_ex6,
                                                               tmp_path):
    copy = tmp_path / "own"
    shutil.copytree(course_with_ex7, copy, ignore=shutil.ignore_patterns("__pycache__"))
    entry = copy / "course.py"
    text = entry.read_text(encoding="utf-8")
    entry.write_text(text.replace("uses=('ex6_head',)", "uses=('ex6_head',), graded_over='own'"),
                     encoding="utf-8")
    got, report = points(copy, wrong_ex6)
    assert got["ex6_head"] < 25 and got["ex7_multihead"] < 10, report
    assert "this exercise runs with your own ex6_head.py, which does not pass yet" in " ".join(
        report.split())


@pytest.mark.full
def test_without_the_solutions_ex7_runs_over_the_learners_ex6(course_with_ex7, wrong_ex6,
                                                              tmp_path):
    copy = tmp_path / "student"
    shutil.copytree(course_with_ex7, copy, ignore=shutil.ignore_patterns("__pycache__",
                                                                         "solutions"))
    folder = shutil.copytree(wrong_ex6, tmp_path / "submission")
    head = folder / "ex6_head.py"  # ex6's output cut to one column: a shape ex7 shows
    head.write_text(head.read_text(encoding="utf-8").replace("return out", "return out[..., :1]"),
                    encoding="utf-8")
    got, report = points(copy, folder, "7")
    assert got == {"ex7_multihead": 0}, report  # the public check alone, on the learner's ex6
    assert "this exercise runs with your own ex6_head.py: if that does not pass, fix it first" \
        in " ".join(report.split())


def test_the_scaffold_refuses_what_it_cannot_write(tmp_path):
    """Each refusal names what to change, and nothing is written."""
    shutil.copy(ROOT / "course.py", tmp_path / "course.py")
    next_name = f"ex{len(course.EXERCISES) + 1}_next"
    for name, api, uses, says in (
            ("ex6_head", API, (), "already has"),
            (f"ex{len(course.EXERCISES) + 2}_far", API, (), "the next exercise is number"),
            ("seven", API, (), "ex<number>_<words>"),
            (next_name, ("MultiHeadAttention.forward(self, x)",), (), "__init__"),
            (next_name, ("not a signature",), (), "cannot read"),
            (next_name, API, ("ex9_none",), "no such exercise")):
        with pytest.raises(ScaffoldError, match=re.escape(says)):
            scaffold(name, api, uses, root=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["course.py"]
    assert (tmp_path / "course.py").read_bytes() == (ROOT / "course.py").read_bytes()
