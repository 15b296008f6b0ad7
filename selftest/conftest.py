"""One grading of every fixture, shared by the grader's own tests.

All the submissions (solutions, stubs, and every mistake, fair, broken and attack fixture laid over
a copy of the solutions) are graded by `grader.py --batch` in a temporary copy of the repository,
as a course would grade a class: one torch import, the default limits but 2 s a call (the
loops for ever stop sooner), a fixed seed. An attack that
writes to disk can only harm the copy, and the tests then check that it did not even do that.

The batch starts once the tests are collected and selected, before the first one runs, and only
when a selected test reads it (through the fixtures of BATCH_FIXTURES and PORTABLE_FIXTURES, or
the mark long_run for the runs of long_runs.py): `pytest selftest/units` grades nothing.

The tests, by concern: units/ (functions and parts of the judge, in this process), content/ (the
course's own files), graded/ (what the batch gave every fixture), system/ (processes, the walls
and the command line; mostly marked full). Test files never import each other (pytest puts each
one's folder on sys.path, and two test files of one name would clash): what several share lives
beside this file (fixtures.py, hostile.py, long_runs.py).
"""
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# Reports unwrapped, here and in every grader this starts: the tests read their words, and where a
# line breaks is the business of the one test that checks that lines fit the terminal.
os.environ["GRADER_COLUMNS"] = "100000"

from fixtures import (  # noqa: E402
    MISTAKES,
    SOLUTIONS,
    StaleMistake,
    exercise_of_fixture,
    fixture_dirs,
    materialise_together,
    mistake_id,
    one_per_exercise,
)
from grading import config

ROOT = Path(__file__).resolve().parents[1]
SEED = random.randrange(1, 1 << 31)  # fresh inputs every check, printed for replay
DEMO_SEED = int(os.environ["SELFTEST_DEMO_SEED"]) if os.environ.get("SELFTEST_DEMO_SEED") else None
CALL_TIMEOUT = 2  # seconds for one call: the fixtures that loop for ever burn less of --check
SECRET = "GRADER_TEST_SECRET"  # put in the grader's environment; no worker may see it
GRADER_FILES = (*config.GRADER_FILES, "solutions", "exercises")  # a copy of the repository's grader


def run_grader(*args, cwd=ROOT, timeout=300, lang="en"):
    """grader.py in a subprocess, in a fixed language whatever the instructor's locale."""
    return subprocess.run([sys.executable, str(Path(cwd) / "grader.py"), *map(str, args),
                           "--lang", lang], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


_early = {}  # long grader runs started before the tests (see early_run), by name


def start_early(name, *args, lang="en", command=None, **popen):
    """Start a long grader run now, beside the fixture batch, so that both cores stay busy; a
    test gets its result with early_run(name). `command` replaces `grader.py *args`."""
    command = command or [sys.executable, str(ROOT / "grader.py"), *map(str, args), "--lang", lang]
    _early[name] = subprocess.Popen(command, **{"cwd": ROOT, **popen}, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)


def early_folder():
    """The folder in which the early runs' submissions and results are."""
    return started("base")


def early_run(name, timeout=300):
    """A CompletedProcess for a run that start_early began (for a test marked long_run)."""
    if name not in _early:
        raise LookupError(f"the long run {name!r} was not started: a test that reads it is "
                          f"marked @pytest.mark.long_run (see conftest.needed_by)")
    run = _early[name]
    stdout, stderr = run.communicate(timeout=timeout)
    return subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)


def copy_repository(target):
    """The parts of the repository that grade, copied to `target` (made if missing)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in GRADER_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target / name)
    return target


def fingerprint(folder):
    """Every file of the grading code, by content."""
    digests = {}
    for name in GRADER_FILES:
        for path in sorted([folder / name] if (folder / name).is_file()
                           else (folder / name).rglob("*.py")):
            digests[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def processes_mentioning(text):
    """Pids of live processes whose command line mentions text. A folder is matched as a path,
    whole or followed by a separator: /tmp/x/repository is not mentioned by /tmp/x/repository-2."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    arguments = f.read().split(b"\0")
            except OSError:
                continue
            if any(_mentions(argument, text) for argument in arguments):
                found.append(int(entry))
    return found


def _mentions(argument, text):
    if not os.path.isabs(text):
        return text.encode() in argument
    path = text.encode()
    at = argument.find(path)
    while at >= 0:
        end = at + len(path)
        if end == len(argument) or argument[end:end + 1] in (b"/", os.sep.encode()):
            return True
        at = argument.find(path, at + 1)
    return False


_batch = {}  # started before the first test, so that the other tests run while it grades


def started(name):
    """_batch[name], or a LookupError that says why it is missing."""
    if name not in _batch:
        raise LookupError(f"selftest: {name} was not started for this session: a test reads the "
                          f"batches through the fixtures {sorted(BATCH_FIXTURES | PORTABLE_FIXTURES)}"
                          f" (see conftest.needed_by)")
    return _batch[name]


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true",
                     help="also the grader's own machinery (tests marked full): the walls, the "
                          "portable backend on every fixture, the command line, the demo, the CI "
                          "step, Gradescope")


def pytest_configure(config):
    """Without --full, the right answers with habits (fair-*-habit_*, issue 32) are left to
    --check --full: 51 more rows would take --check past an instructor's minute."""
    if not config.getoption("full"):
        os.environ["SELFTEST_QUICK"] = "1"


# What a test reads decides what is started for it: a fixture below for the batches, the mark
# long_run for the runs of long_runs.py.
BATCH_FIXTURES = {"graded", "batch_records", "gradebooks", "repository"}
PORTABLE_FIXTURES = {"portable_graded", "portable_repository"}


def needed_by(items):
    """What the selected tests read: {"batch", "portable", "long runs"}, or fewer."""
    needed = set()
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & BATCH_FIXTURES:
            needed.add("batch")
        if names & PORTABLE_FIXTURES:
            needed.add("portable")
        if item.get_closest_marker("long_run"):
            needed.add("long runs")
    return needed


def pytest_collection_finish(session):
    """Once the tests are collected and selected (after -k, -m, and the machinery left out
    without --full), and before the first one runs: lay out and start grading what they read,
    so that it grades while the other tests run. Nothing when no selected test reads a grading
    (`pytest selftest/units` starts nothing). A known mistake that no longer applies to its
    solution stops the session with one message that names both (not a pytest INTERNALERROR)."""
    needed = needed_by(session.items)
    stopping = session.testsfailed and not session.config.option.continue_on_collection_errors
    if session.config.option.collectonly or stopping or not needed:
        return  # (a collection error stops the session before any test)
    try:
        start_runs(needed)
    except StaleMistake as stale:
        pytest.exit(f"selftest: {stale}", returncode=pytest.ExitCode.USAGE_ERROR)


def start_runs(needed):
    base = Path(tempfile.mkdtemp(prefix="grader-selftest-"))
    _batch["base"] = base  # removed at the end of the session, whatever happens
    if needed & {"batch", "portable"}:
        folder, views = lay_out(base)
        if "batch" in needed:
            start_batch(base, folder, views)
        if "portable" in needed:
            start_portable_batch(base, folder, views)
    if "long runs" in needed:  # after the batches: they are the longest
        import long_runs  # noqa: PLC0415  (it imports this module: not before it is loaded)
        long_runs.start(base)


def lay_out(base):
    """Every submission in base/submissions: (that folder, {fixture name: (the submission that
    holds it, the fixtures of that submission, its own exercise)})."""
    folder = base / "submissions"
    folder.mkdir()
    shutil.copytree(SOLUTIONS, folder / "solutions")
    shutil.copytree(ROOT / "exercises", folder / "stubs")
    # Mistakes, twins and fair variants change one exercise each, and each exercise is graded
    # apart: they share submissions, one fixture per exercise, so that --check grades fewer.
    views = {}
    # (under quick(), a shared submission holds only its fixtures' exercises: the others would be
    # the solutions, graded again and again; that a fixture costs no other exercise is --full's)
    for number, group in enumerate(one_per_exercise(MISTAKES, lambda m: m.exercise)):
        materialise_together(group.values(), [], folder / f"mistakes-{number}",
                             only=set(group) if quick() else None)
        views.update({mistake_id(m): (f"mistakes-{number}", set(group), m.exercise)
                      for m in group.values()})
    for kind in ("twin", "fair"):
        for number, group in enumerate(one_per_exercise(fixture_dirs(kind), exercise_of_fixture)):
            materialise_together([], group.values(), folder / f"{kind}s-{number}",
                                 only=set(group) if quick() else None)
            views.update({f.name: (f"{kind}s-{number}", set(group), ex) for ex, f in group.items()})
    if MISTAKES:  # (none yet, for a new exercise under --check N)
        first = views[mistake_id(MISTAKES[0])]
        shutil.copytree(folder / first[0], folder / "replay")  # graded twice: the same messages
        views["replay"] = ("replay", *first[1:])
    # Fixtures that attack or break things stay alone: no other exercise or row may suffer. Under
    # quick() each holds its own exercise alone (and what it imports): that it costs no other
    # exercise is --full's to show.
    for kind in ("broken", "attack"):
        for fixture in fixture_dirs(kind):
            own = exercise_of_fixture(fixture)
            materialise_together([], [fixture], folder / fixture.name,
                                 only={own} if quick() else None)
            if quick():
                views[fixture.name] = (fixture.name, {own}, own)
    return folder, views


def quick():
    """--check without --full (pytest_configure)."""
    return os.environ.get("SELFTEST_QUICK") == "1"


def start_batch(base, folder, views):
    """Every submission graded in a temporary copy of the repository, as a course grades a class.
    One batch, torch imported once, three judges (the fixtures that sleep or loop leave a core
    idle for the third); in the backend the caller chose
    (GRADER_BACKEND=portable python grader.py --check grades every fixture in that one)."""
    copy = copy_repository(base / "repository")
    environment = {**os.environ, SECRET: "hunter2",
                   "GRADER_BACKEND": os.environ.get("GRADER_BACKEND", "auto")}
    _batch.update(base=base, copy=copy, before=fingerprint(copy), folder=folder, views=views,
                  run=subprocess.Popen(
                      [sys.executable, str(copy / "grader.py"), "--batch", str(folder),
                       "--json", str(base / "batch.json"), "--seed", str(SEED),
                       "--csv", str(base / "grades.csv"), "--jobs", "3",
                       "--timeout", str(CALL_TIMEOUT)],
                      cwd=copy, env=environment, stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT, text=True, start_new_session=True))


def start_portable_batch(base, folder, views):
    """Every fixture graded a second time, by the portable backend (GRADER_BACKEND=portable, with
    the Linux-only calls made to raise), in a copy of its own. A portable worker costs a torch
    import, so here the attacks and broken fixtures share submissions too, one per exercise; each
    fixture's own exercise is compared with the first batch (test_portable.py)."""
    copy = copy_repository(base / "repository-portable")
    portable = base / "portable-submissions"
    portable.mkdir()
    shared = {view[0] for view in views.values()} | {"solutions", "stubs"}
    for name in shared:
        shutil.copytree(folder / name, portable / name)
    portable_views = {name: view for name, view in views.items()}
    alone = fixture_dirs("broken") + fixture_dirs("attack")
    for number, group in enumerate(one_per_exercise(alone, exercise_of_fixture)):
        materialise_together([], group.values(), portable / f"alone-{number}")
        portable_views.update({f.name: (f"alone-{number}", set(group), ex)
                               for ex, f in group.items()})
    environment = {**os.environ, SECRET: "hunter2", "GRADER_BACKEND": "portable"}
    _batch.update(portable_copy=copy, portable_before=fingerprint(copy),
                  portable_views=portable_views, portable_run=subprocess.Popen(
                      [sys.executable, str(copy / "grader.py"), "--batch", str(portable),
                       "--json", str(base / "portable.json"), "--seed", str(SEED),
                       "--jobs", "2", "--timeout", str(CALL_TIMEOUT)],
                      cwd=copy, env=environment, stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT, text=True, start_new_session=True))


def pytest_sessionfinish(session):
    """A session cut short (a -k, a failure with -x, Ctrl-C) leaves no run behind: each was
    started in a session of its own, and its whole process group is killed."""
    runs = [*_early.values(), *(_batch[name] for name in ("run", "portable_run") if name in _batch)]
    for run in runs:
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # over already, group and all
        run.wait()
    if "base" in _batch:
        shutil.rmtree(_batch["base"], ignore_errors=True)


LEFT_OUT = pytest.StashKey[int]()  # tests of the grader's own machinery left out without --full


def pytest_collection_modifyitems(config, items):
    """Without --full, the tests of the grader's own machinery are left out (and counted as
    deselected). Tests that need the batch's results last: the rest run while it grades (the
    batches start after this, in pytest_collection_finish, once -k and -m have chosen too)."""
    if not config.getoption("full"):
        machinery = [item for item in items if item.get_closest_marker("full")]
        config.stash[LEFT_OUT] = len(machinery)
        if machinery:
            config.hook.pytest_deselected(items=machinery)
            items[:] = [item for item in items if not item.get_closest_marker("full")]
    items.sort(key=lambda item: (item.get_closest_marker("under_load") is not None,
                                 bool(PORTABLE_FIXTURES & set(item.fixturenames)),
                                 bool(BATCH_FIXTURES & set(item.fixturenames))))


@pytest.fixture(scope="session")
def repository():
    """The temporary copy of the repository, and its fingerprint before any grading."""
    return started("copy"), started("before")


@pytest.fixture(scope="session")
def gradebooks(graded):
    """The CSV gradebook the batch wrote, as text (in a list: a batch may be split)."""
    return [(started("base") / "grades.csv").read_text(encoding="utf-8-sig")]


@pytest.fixture(scope="session")
def batch_records():
    """{submission name: record} for every submission the batches graded."""
    # a wait that scales with the work: a course with more fixtures (an ex7) waits longer
    submissions = len(list((started("base") / "submissions").iterdir()))
    output = started("run").communicate(timeout=120 + 10 * submissions)[0]
    assert started("run").returncode in (0, 1), f"the batch run failed (seed {SEED}):\n{output}"
    records = json.loads((started("base") / "batch.json").read_text())["submissions"]
    return settled(records, started("copy"), started("base") / "submissions", "auto", output)


BUSY = "the machine was too busy"  # the words of a grading error no submission caused


class BusyRow(dict):
    """The record of a row the machine was too busy to grade, in the batch and alone after it:
    every test that reads it is skipped, with that reason, and counted in pytest's summary. A busy
    machine makes the self-test amber, never red (issue 34)."""

    def __getitem__(self, key):
        pytest.skip(f"{self.get('name', 'a row')}: {BUSY} (in the batch, then alone)")


def settled(records, copy, folder, backend, output):
    """The batch's records, each row that met a grading error because the machine was too busy
    graded again alone (a batch of one, the same seed), and if busy again a BusyRow; any other
    grading error is the self-test's failure, as before."""
    for name, record in list(records.items()):
        if record.get("status") != "grading error":
            continue
        assert BUSY in str(record.get("note", "")), \
            f"the batch run failed (seed {SEED}): {name}: {record.get('note')}\n{output}"
        alone = folder.parent / f"alone-{name}"
        shutil.copytree(folder / name, alone / name)
        environment = {**os.environ, SECRET: "hunter2", "GRADER_BACKEND": backend}
        subprocess.run([sys.executable, str(copy / "grader.py"), "--batch", str(alone), "--json",
                        str(alone / "batch.json"), "--seed", str(SEED), "--jobs", "1",
                        "--timeout", str(CALL_TIMEOUT)], cwd=copy, env=environment,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        try:
            again = json.loads((alone / "batch.json").read_text())["submissions"][name]
        except (OSError, ValueError, KeyError):
            again = {"status": "grading error", "note": BUSY}
        records[name] = {**again, "regraded": BUSY} if again.get("status") != "grading error" \
            else BusyRow(name=name, status="busy")
    return records


def views_of(records, views):
    """{fixture name: its record, with only its own exercise and those holding no fixture}."""
    graded = dict(records)
    for name, (submission, fixtures, own) in views.items():
        record = records[submission]
        if isinstance(record, BusyRow):
            graded[name] = record
            continue
        graded[name] = {**record, "exercises": {  # (under quick(), the row holds no others)
            ex: result for ex, result in record["exercises"].items()
            if ex == own or (ex not in fixtures and not quick())}}
    return graded


@pytest.fixture(scope="session")
def portable_graded():
    """{name: record} for every fixture, graded by the portable backend (see
    start_portable_batch); a fixture's record holds its own exercise and, in a shared submission,
    the exercises that hold no other fixture."""
    run = started("portable_run")
    output = run.communicate(timeout=900)[0]
    assert run.returncode in (0, 1), f"the portable batch failed (seed {SEED}):\n{output[-3000:]}"
    records = json.loads((started("base") / "portable.json").read_text())["submissions"]
    records = settled(records, started("portable_copy"), started("base") / "portable-submissions",
                      "portable", output[-3000:])
    return views_of(records, started("portable_views"))


@pytest.fixture(scope="session")
def portable_repository():
    """The portable batch's copy of the repository, and its fingerprint before grading."""
    return started("portable_copy"), started("portable_before")


@pytest.fixture(scope="session")
def graded(batch_records):
    """{name: record} for every fixture, plus 'solutions', 'stubs' and 'replay'. A mistake or twin
    graded in a shared submission sees its own exercise and the exercises that hold no other
    fixture (the solutions')."""
    return views_of(batch_records, started("views"))


def pytest_report_header():
    return f"grading fixtures with seed {SEED}"


def pytest_terminal_summary(terminalreporter, config):
    left_out = config.stash.get(LEFT_OUT, 0)  # not the tests a -k or -m left out
    if left_out and not config.getoption("full"):
        terminalreporter.write_line(
            f"{left_out} tests of the grader's own machinery (walls, portable backend, command "
            f"line, demo, CI step, Gradescope) were left out: python grader.py --check --full "
            f"runs them (CI does).")
