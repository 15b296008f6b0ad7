"""The self-test's longest single runs, started with the fixture batch when a selected test reads
one (a test marked long_run; see conftest.start_runs), so that both cores stay busy: the demo's
trainings, the stubs, a report in Chinese, the grading step of CI (system/test_ci.py) and a batch
of a class laid out every way (system/test_batch.py). Here and not in those test files: conftest
starts them before any test module is imported, and the tests import what they need from here."""
import os
import shutil
import stat
import zipfile

from conftest import DEMO_SEED, ROOT, copy_repository, start_early
from fixtures import ALL_MISTAKES, SOLUTIONS, SUBMISSIONS, materialise_together, mistake_id
from grading.commands import batch
from hostile import COMMAND_LINES, ESCAPES, MARKUP


def start(base):
    """The self-test's longest single runs: the demo's three trainings and its stubs, the stubs, a
    report in Chinese, the grading step of CI, and a batch of every layout (see the tests that
    read them)."""
    for name, mistake in (("leaky", "no_mask"), ("detached", "detached_weights")):
        ex6 = next(m for m in ALL_MISTAKES if mistake_id(m) == f"mistake-ex6-{mistake}")
        materialise_together([ex6], [], base / name)
    # The default seed, as a learner runs it, unless SELFTEST_DEMO_SEED names another (the
    # thresholds of test_demo.py hold across seeds and thread counts: OMP_NUM_THREADS); the
    # figures in base/.
    demo = ("demo", "--json")
    if DEMO_SEED is not None:
        demo = ("demo", "--seed", str(DEMO_SEED), "--json")
    start_early("demo solutions", *demo, base / "demo.json", "--solutions")
    start_early("demo leaky", *demo, base / "demo-leaky.json", "--submission", base / "leaky")
    start_early("demo detached", *demo, base / "demo-detached.json",
                "--submission", base / "detached")
    shutil.copytree(ROOT / "exercises", base / "stubs")
    start_early("demo stubs", *demo, base / "demo-stubs.json", "--submission", base / "stubs")
    start_early("stubs")  # python grader.py, as a learner starts out
    zh = next(m for m in ALL_MISTAKES if mistake_id(m) == "mistake-ex5-mask_with_zero")
    materialise_together([zh], [], base / "zh")
    start_early("zh", "--submission", base / "zh", "5", "--json", base / "zh.json",
                "--pass-mark", "5", lang="zh")
    start_early("ci", **start_grading_step(base / "ci"))
    start_class_batch(base / "batch-flows")  # a class laid out every way, a judge killed part-way


# -- the CI step (system/test_ci.py) --------------------------------------------------------------

def actions_environment(tmp_path, **more):
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("")
    output.write_text("")
    return {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output), **more}, summary, output


HOSTILE_EX2 = '''import sys

LINES = {lines!r}


def averaging_matrix(T):
    print("\\n".join(LINES))
    sys.stderr.write("::set-output name=x::y\\n")
    raise ValueError("\\x1b[2J::add-mask::x\\n::error file=a::b")


average_context = averaging_matrix
'''


def start_grading_step(folder):
    """The step as CI runs it (started by conftest with the session), on a submission whose ex6
    forges results.json every way it can and whose ex2 prints and raises workflow commands and
    terminal escapes; returns how to start it."""
    copy = copy_repository(folder / "repository")
    shutil.copytree(ROOT / ".github", copy / ".github")
    shutil.rmtree(copy / "exercises")
    shutil.copytree(SOLUTIONS, copy / "exercises")
    shutil.copy(SUBMISSIONS / "attack-ex6-results_file" / "ex6_head.py", copy / "exercises")
    (copy / "exercises" / "ex2_averaging.py").write_text(
        HOSTILE_EX2.format(lines=[MARKUP + ESCAPES, *COMMAND_LINES]), encoding="utf-8")
    env, _, _ = actions_environment(folder, PASS_MARK="50", GRADER_TEST_SECRET="x")
    return {"command": ["bash", str(copy / ".github" / "scripts" / "grade.sh")], "env": env}


# -- a class, every layout (system/test_batch.py) ------------------------------------------------

ZERO_WIDTH = "alice\u200b"


def solutions_in(folder):
    shutil.copytree(SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def zip_of(path, entries):
    """A .zip of {name: text}; a name ending in '@' is stored as a symbolic link to its text."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in entries.items():
            if name.endswith("@"):
                info = zipfile.ZipInfo(name[:-1])
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                archive.writestr(info, text)
            else:
                archive.writestr(name, text)
    return path


KILLED = "m-killed"  # graded on a judge that the hook kills as it starts this row


def lay_out_class(folder):
    """A class of 13 rows, laid out every way, with a judge that dies at KILLED."""
    for name in ("a-right", "b-right", ZERO_WIDTH, "alice", "=SUM(1)", "z-right", KILLED,
                 "n-after-1", "o-after-2", "p-after-3"):
        solutions_in(folder / name)
    solutions_in(folder / "clone" / "exercises")
    solutions_in(folder / "nested" / "inner")
    (folder / "empty").mkdir()
    shutil.copytree(ROOT / "exercises", folder / "stubs")
    partial = folder / "partial"
    partial.mkdir()
    shutil.copy(SOLUTIONS / "ex1_embedding.py", partial)
    zip_of(folder / "zipped.zip",
           {f"sub/{p.name}": p.read_text() for p in SOLUTIONS.glob("ex*.py")})
    zip_of(folder / "evil.zip", {"../../evil.py": "x = 1\n"})
    materialise_together([MISTAKE], [], folder / "q-mistake")  # what the class got wrong


MISTAKE = next(m for m in ALL_MISTAKES if mistake_id(m) == "mistake-ex5-mask_with_zero")


def start_class_batch(base):
    """Lay out the class in base and start grading it (read by system/test_batch.py)."""
    folder = base / "class"
    folder.mkdir(parents=True)
    lay_out_class(folder)
    start_early("batch flows", "--batch", folder, "--csv", base / "class.csv", "--json",
                base / "class.json", "--jobs", "2", "--seed", "5",
                env={**os.environ, batch.KILL_HOOK: KILLED})
