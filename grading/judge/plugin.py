"""The pytest plugin of the judge: fixtures that run scenarios, and a record of every graded test.

Tests use two fixtures:
    submission(scenario, **params) -> the submission's outputs        (public cases)
    compare(scenario, **params)    -> (submission's, reference's)     (hidden cases)
A scenario runs here in the judge, on the learner's module through its worker (grading.judge.remote) and
on the solution's in this process. Each call draws a fresh seed from the run's seed, the test's id
and the call's number, so a run is replayed exactly by --seed, and the submission and the
reference see the same inputs. After the
tests, a failing exercise's test module may name the likely mistake (diagnose, diagnose_error).
"""
import hashlib
import importlib
import importlib.util
import inspect
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

import course
from grading.config import SEALED
from grading.diagnosis import shared
from grading.diagnosis.crashes import crash_cause
from grading.errors import CheckFailed, GateFailed, GradingError, WallsRefused, WorkerFailure
from grading.i18n import Bi
from grading.judge import source_check, split
from grading.judge.remote import LocalChannel, Module, WorkerChannel
from grading.judge.worker_handle import ExerciseWorker

REFERENCE_PACKAGE = "reference_solutions"

# The contract of an exercise's two files in tests/, declared once (as pluggy declares its hook
# specifications) and checked when the tests are collected (_mark_problem, _module_problem):
# file -> {name: (its one argument, optional?, what the judge does with it)}. A graded test is
# any test_* function marked @public(points) or @hidden(points), with a two-line docstring.
CONTRACT = {
    "test_{exercise}.py": {
        "test_* @public": ("submission", True, "a public check: scenarios on the learner's code"),
        "test_* @hidden": ("compare", True, "a hidden check: the learner's beside the solution's"),
        "picture": ("probe", True, "what the learner built, shown beside the expected"),
    },
    "diagnoses_{exercise}.py": {
        "diagnose": ("probe", True, "the likely cause, from the failing exercise's outputs"),
        "diagnose_error": ("error", True, "the likely cause of a crash, from its report"),
    },
}
BUSY_RETRIES = 1  # a scenario graded again when the machine was too busy for one of its calls


@dataclass
class TestResult:
    exercise: str  # file stem, e.g. "ex5_causal_mask"
    number: int  # order within the exercise, from 1
    name: Bi  # the test's display name: its docstring's first line (en) and second line (zh)
    nodeid: str
    points: float
    kind: str  # public | hidden
    status: str = "failed"  # passed | failed | todo | skipped | error
    cause: str = ""  # why it failed: check, or a WorkerFailure's kind (raised, import, crash…)
    message: Bi = None
    frames: list = field(default_factory=list)  # the learner's own traceback lines
    output: str = ""  # what the learner's code printed, cut
    waits_for: Bi = None  # a check that waits (after=…): the name of the one it waits for
    key: str = None  # what failed, for the shared causes (CheckFailed.key, Mismatch's key)
    facts: dict = field(default_factory=dict)  # and its facts (CheckFailed.facts)

    @property
    def score(self):
        return self.points if self.status == "passed" else 0


def syntax_problem(nodeid):
    """For a test file that does not parse: its name, the line and Python's words (a few lines,
    where pytest's report is a traceback of its own import machinery); "" otherwise."""
    from grading.config import ROOT
    path = ROOT / str(nodeid or "")
    if not nodeid or not path.is_file() or path.suffix != ".py":
        return ""
    try:
        compile(path.read_bytes(), str(path), "exec")
    except SyntaxError as error:
        line = (error.text or "").rstrip()
        return (f"{nodeid}, line {error.lineno}: SyntaxError: {error.msg}"
                + (f"\n    {line}" if line else ""))
    except (OSError, ValueError):
        return ""
    return ""


def diagnoses_module(test_module, exercise):
    """diagnoses_<exercise>.py beside the exercise's test file, imported under that bare name (it
    imports the test file's scenarios and lesson_steps by theirs), or None where there is none."""
    folder = Path(test_module.__file__).resolve().parent
    path, name = folder / f"diagnoses_{exercise}.py", f"diagnoses_{exercise}"
    if not path.is_file():
        return None
    known = sys.modules.get(name)
    if known is not None and Path(getattr(known, "__file__", "")).resolve() == path:
        return known
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


COPIED = 1 << 20  # bytes of one file copy_over copies at most: a submission's files are KiB


def copy_over(folder, target, leave_out):
    """A copy of a submission's Python files in `target` (its packages too), without the files
    named in `leave_out`, caches, hidden entries or any file over COPIED bytes: bounded work for
    any folder. Links stay links (the walls answer them as in the folder)."""
    def ignored(where, names):
        return {name for name in names if name in leave_out or name.startswith(".")
                or name == "__pycache__" or _not_copied(Path(where) / name)}
    shutil.copytree(folder, target, symlinks=True, ignore=ignored)


def _not_copied(path):
    """A regular file that is no Python source, or too large (a folder or a link is copied)."""
    if path.is_symlink() or not path.is_file():
        return False
    return path.suffix != ".py" or path.stat().st_size > COPIED


def seed_for(base_seed, nodeid, index):
    digest = hashlib.sha256(f"{base_seed}/{nodeid}/{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def docstring_lines(item):
    """A test's docstring, line by line: its name in English, then in Chinese."""
    return [line.strip() for line in (item.obj.__doc__ or "").strip().splitlines()]


def exercise_of(item):
    return Path(item.path).stem.removeprefix("test_")


class GradingPlugin:
    def __init__(self, backend, submission_dir, reference_dir, seed, call_timeout, split=False):
        """split: share the exercises out with a second judge forked from this one (split.py)."""
        self.backend = backend
        self.sealed = os.environ.get(SEALED) == "1"  # public checks first, diagnoses last
        self.split = split and not self.sealed
        self.second_judge = []  # the exercises a second judge graded
        self.submission_dir = Path(submission_dir).resolve()
        self.reference_dir = Path(reference_dir).resolve() if reference_dir else None
        self.seed = seed
        self.call_timeout = call_timeout
        self.workers = {}
        self.elsewhere = {}  # exercise -> its second worker (see _elsewhere)
        self.results = []
        self.errors = []  # collection errors, problems of the tests themselves
        self.test_modules = {}  # exercise → its test module (its checks)
        # exercise → tests/diagnoses_<exercise>.py (diagnose, diagnose_error) or None:
        # the student copy ships none, since the lesson's steps they search are the answers
        self.diagnoses_modules = {}
        # exercise → (Diagnosis or None, a problem of the diagnosis or "", Picture or None)
        self.diagnoses = {}
        self.current = None  # the exercise whose tests are running
        self.walls_refused = False  # a worker said a wall could not be put up (WallsRefused)
        # exercise → the folder its workers import (see package_dir), and whose copies of the
        # exercises it uses ("reference" or "own"); the copies live under `overlays`, made here,
        # before a second judge is forked, and removed by close()
        self.packages, self.graded_over = {}, {}
        self.overlays = None
        self.started = time.monotonic()
        self.seconds = 0.0
        # The judge's tensors are tiny (the reference, replays, comparisons): more threads only add
        # waiting, and on a busy machine much of it.
        torch.set_num_threads(1)

    # -- collection -------------------------------------------------------------------------------
    def pytest_collection_modifyitems(self, items):
        """Every graded test is checked before anything runs; a test file that breaks a rule
        stops the session with a message that names the test and the fix (SessionError)."""
        counters, names, points = {}, {}, {}
        for item in items:
            exercise = exercise_of(item)
            mark = item.get_closest_marker("grade")
            problem = self._mark_problem(item, exercise, mark, names.get(item.path, set()))
            names.setdefault(item.path, set()).add(item.name)
            if problem:
                self.errors.append(f"{item.nodeid}: {problem}")
                continue
            counters[exercise] = counters.get(exercise, 0) + 1
            points[exercise] = points.get(exercise, 0) + mark.kwargs["points"]
            self.test_modules[exercise] = item.module
            lines = docstring_lines(item)
            item.stash[_RESULT] = TestResult(
                exercise=exercise, number=counters[exercise], name=Bi(lines[1], lines[0]),
                nodeid=item.nodeid,
                points=mark.kwargs["points"], kind=mark.kwargs["kind"])
        for exercise, test_module in list(self.test_modules.items()):
            moved = [n for n in CONTRACT["diagnoses_{exercise}.py"] if hasattr(test_module, n)]
            if moved:
                self.errors.append(
                    f"tests/test_{exercise}.py defines {', '.join(moved)}: an exercise's "
                    f"diagnoses live in tests/diagnoses_{exercise}.py, beside its test file (the "
                    "student copy ships without them: the lesson's steps they search are the "
                    "answers)")
                continue
            try:
                module = self.diagnoses_modules[exercise] = diagnoses_module(test_module, exercise)
            except Exception as error:  # noqa: BLE001  (a broken diagnoses file: the instructor's)
                self.errors.append(f"tests/diagnoses_{exercise}.py could not be imported: "
                                   f"{type(error).__name__}: {error}")
                continue
            for (path, contract), checked in zip(CONTRACT.items(), (test_module, module)):
                problem = self._module_problem(checked, contract) if checked is not None else ""
                if problem:
                    self.errors.append(f"tests/{path.format(exercise=exercise)}: {problem}")
        for exercise, total in points.items():
            if not self.errors and total != course.BY_NAME[exercise].points:
                self.errors.append(
                    f"tests/test_{exercise}.py: its checks' points add up to {total:g}, but "
                    f"course.py gives {exercise} {course.BY_NAME[exercise].points}: change the "
                    "points of its @public/@hidden marks, or the exercise's points in course.py")
        if self.errors:  # nothing runs on tests that break the rules
            items.clear()
            self.test_modules.clear()
        elif self.sealed:  # every public check first, then the hidden ones (config.SEALED)
            items.sort(key=lambda item: item.stash[_RESULT].kind == "hidden")

    @staticmethod
    def _mark_problem(item, exercise, mark, earlier):
        """What is wrong with a test's grade mark and docstring, or ""; `earlier`: the names of
        the tests before it in its file."""
        if exercise not in course.BY_NAME:
            return (f"{exercise} is no exercise of course.py: name the file tests/test_<exercise>.py "
                    "after one, or add the exercise to course.py")
        if mark is None:
            return "it has no @public(points) or @hidden(points)"
        kind, value = mark.kwargs.get("kind"), mark.kwargs.get("points")
        if kind not in ("public", "hidden"):
            return f"its grade mark has kind {kind!r}: use @public(points) or @hidden(points)"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            return f"its points are {value!r}: give a positive number, @{kind}(3)"
        for name in mark.kwargs.get("after", ()):
            if name not in earlier:
                return (f"after={name!r} names no test written before it in its file: a test "
                        "counts only after tests that have already run")
        lines = docstring_lines(item)
        if len(lines) < 2 or not lines[0] or not lines[1]:
            return "its docstring needs two lines, the check's name in English and then in Chinese"
        if ("compare" in item.fixturenames) != (kind == "hidden"):
            return "a hidden case must use `compare` and a public case must not"
        arguments = list(inspect.signature(item.function).parameters)
        if arguments not in (["submission"], ["compare"]):
            return (f"it takes ({', '.join(arguments)}): a graded test takes one argument, "
                    "`submission` (a public case) or `compare` (a hidden case), and nothing else "
                    "(the self-test calls each test with that one argument, on hostile replies)")
        return ""

    @staticmethod
    def _module_problem(module, contract):
        """What is wrong with a file's functions of CONTRACT (all optional), or ""."""
        for name, (takes, _, _) in contract.items():
            function = getattr(module, name, None) if name.isidentifier() else None
            if function is None:
                continue
            try:
                arguments = list(inspect.signature(function).parameters)
            except (TypeError, ValueError):
                arguments = None
            if not callable(function) or arguments is None or len(arguments) != 1:
                return (f"its {name} must be a function of one argument, def {name}({takes}): "
                        f"the judge calls it so when a check of the exercise fails (or leave "
                        f"{name} out: it is optional)")
        return ""

    def pytest_collection_finish(self, session):
        """The solutions are imported now, before any submission code runs; the folders the
        workers import are made now too, before a second judge can be forked."""
        for exercise in self.test_modules:
            self.reference_module(exercise)
            self.package_dir(exercise)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        """With `split` and two exercises or more: two judges share them (split.run_shared);
        else pytest's own loop (None)."""
        groups = {}
        for item in session.items:
            groups.setdefault(exercise_of(item), []).append(item)
        if not self.split or len(groups) < 2 or session.testsfailed \
                or session.config.option.collectonly:
            return None
        shared = split.run_shared(self, session, groups)
        if shared is None:  # no second judge: pytest's own loop runs them all
            return None
        self.second_judge = shared
        return True

    def pytest_runtest_setup(self, item):
        """A test marked after=(…) counts only once those tests of its file have passed."""
        if exercise_of(item) != self.current:
            self._finish_exercise(self.current)
            self.current = exercise_of(item)
        mark = item.get_closest_marker("grade")
        for name in (mark.kwargs.get("after", ()) if mark else ()):
            needed = next((r for r in self.results if r.nodeid == f"{item.parent.nodeid}::{name}"),
                          None)
            if needed is None or needed.status != "passed":
                what = needed.name if needed else Bi(name, name)
                raise GateFailed(Bi(f"这一项要在\u201c{what.zh}\u201d通过之后才计分",
                                    f"this counts once \u201c{what.en}\u201d passes"),
                                 todo=needed is not None and needed.status == "todo", needs=what)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item, nextitem):
        """After an exercise's last test, in that test's own time: its diagnosis and its worker's
        return. A diagnosis that is slow costs its own exercise, never the next one's first test."""
        if nextitem is None or exercise_of(nextitem) != exercise_of(item):
            self._finish_exercise(exercise_of(item))

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid or 'tests'} could not be collected:\n"
                               + (syntax_problem(report.nodeid) or report.longreprtext[-1500:]))

    # -- running ----------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        result = item.stash.get(_RESULT, None)
        if result is None or call.when == "teardown" or (call.when == "setup" and report.passed):
            return report
        worker = self.workers.get(result.exercise)
        result.output = worker.take_output() if worker else ""
        if report.passed:
            result.status = "passed"
        elif report.skipped:
            result.status = "skipped"
            result.message = HIDDEN_SKIPPED
        else:
            self._record_failure(result, call.excinfo)
        self.results.append(result)
        return report

    def _crash_explained(self, exercise, failure):
        """The test file's diagnose_error on a crash of the learner's code (a pure function of the
        worker's report and the judge's reading of the source), or None: the first failing check's
        message then says what to fix, not only what Python said."""
        explain = self._diagnose_error(exercise)
        if failure.kind != "raised" or failure.not_implemented \
                or not isinstance(failure.error, dict) or failure.error.get("type") == "Mismatch":
            return None
        try:
            return explain(with_body(failure.error, Source(self.submission_dir, exercise)))
        except Exception:  # noqa: BLE001  (an explanation must never cost a grade)
            return None

    def _diagnose_error(self, exercise):
        """The diagnoses file's diagnose_error, else the crash causes every exercise shares
        (grading.diagnosis.crashes: Python's words and the crashing line, no lesson step)."""
        explain = getattr(self.diagnoses_modules.get(exercise), "diagnose_error", None)
        return explain or (lambda error: crash_cause(error, exercise.split("_")[0]))

    def _record_failure(self, result, excinfo):
        error = excinfo.value
        if isinstance(error, WorkerFailure):
            result.status = "todo" if error.not_implemented else "failed"
            result.cause = error.kind
            result.message = error.text
            result.frames = error.error.get("frames", [])
            crash = self._crash_explained(result.exercise, error)
            if crash is not None:  # the crash in the lesson's words, right under Python's
                result.message = error.text + Bi("\n" + crash.text.zh, "\n" + crash.text.en)
            if isinstance(error.error, dict):  # a Mismatch's key and facts, for the causes
                result.key = error.error.get("key")
                result.facts = {k: v for k, v in error.error.items()
                                if k not in ("type", "message", "frames", "key")}
        elif isinstance(error, GateFailed):
            result.status = "todo" if error.todo else "failed"  # not started, like what it needs
            result.cause = "gate"
            result.message = error.text
            result.waits_for = error.needs
        elif isinstance(error, CheckFailed):
            result.cause = "check"
            result.message = error.text
            result.key, result.facts = error.key, error.facts
        elif isinstance(error, GradingError):
            if isinstance(error, WallsRefused):
                self.walls_refused = True
            result.status = "error"
            result.message = Bi(f"评分出错：{error}", f"grading error: {error}")
        elif excinfo.typename == "Failed" and "Timeout" in str(error):
            result.message = Bi("这个检查超过了时间限制，被停止了",
                                "the test ran over its time limit and was stopped")
        else:  # a plain assert in a test, or a bug in it: the instructor's to fix
            result.status = "error"
            text = f"{excinfo.typename}: {str(error).splitlines()[0] if str(error) else ''}"
            result.message = Bi(f"测试本身出错（请告诉老师）：{text}",
                                f"an error in the test itself (tell your instructor): {text}")

    def pytest_sessionfinish(self):
        for exercise in [self.current, *self.workers]:
            self._finish_exercise(exercise)
        if self.sealed:  # the diagnoses, once every check of every exercise has run
            for exercise in dict.fromkeys(r.exercise for r in self.results):
                self._finish_exercise(exercise, diagnose=True)
        self.seconds = time.monotonic() - self.started

    def _finish_exercise(self, exercise, diagnose=None):
        """An exercise's tests have run: its diagnosis, if a check failed (sealed: only when
        asked, at the session's end), then its worker goes back (the portable backend lends it
        to the submission's next exercise)."""
        if exercise is None:
            return
        diagnose = not self.sealed if diagnose is None else diagnose
        if diagnose and exercise not in self.diagnoses and any(
                r.status == "failed" for r in self.results if r.exercise == exercise):
            self.diagnoses[exercise] = self._diagnose(exercise)
        for worker in (self.workers.pop(exercise, None), self.elsewhere.pop(exercise, None)):
            if worker is not None:
                try:
                    worker.close()
                except GradingError:
                    pass

    def _diagnose(self, exercise):
        """(Diagnosis or None, "" or what went wrong in the diagnosis itself, the test file's
        picture of what the learner built or None)."""
        diagnosis, problem = self._cause(exercise)
        picture, trouble = self._picture(exercise)
        return diagnosis, problem or trouble, picture

    def _picture(self, exercise):
        """(the test file's picture(probe), a small matrix of the learner's beside the expected
        one (grading.diagnosis.pictures), shown only where a cell is wrong, or None; "" or what
        went wrong in the test file's picture itself). Feedback only: it never costs a point."""
        picture = getattr(self.test_modules.get(exercise), "picture", None)
        if picture is None:
            return None, ""
        probe = Probe(self, exercise)
        probe.key = f"{exercise}::picture"
        try:
            try:
                shown = picture(probe)
            except (WorkerFailure, CheckFailed):  # the learner's code raised, or was refused
                return None, ""
            return (shown if shown is not None and shown.first_wrong() is not None else None), ""
        except Exception as error:  # noqa: BLE001  (a picture must never cost a grade)
            return None, f"picture: {type(error).__name__}: {error}"

    def _cause(self, exercise):
        """(the cause: the test file's diagnose, else diagnose_error on its crash, else a cause
        the exercises share (grading.diagnosis.shared); "" or what went wrong in a diagnosis
        itself)."""
        module = self.diagnoses_modules.get(exercise)
        diagnose = getattr(module, "diagnose", None)
        diagnose_error = self._diagnose_error(exercise)
        results = [r for r in self.results if r.exercise == exercise]
        source = Source(self.submission_dir, exercise)
        try:
            found = shared.observed(exercise, results)  # what a check saw itself, first
            try:
                found = found or (diagnose(Probe(self, exercise)) if diagnose else None)
            except WorkerFailure as failure:
                if diagnose_error and failure.kind in ("raised", "import"):
                    found = diagnose_error(with_body(failure.error, source))
            except CheckFailed:  # a call the diagnosis made could not be verified: no cause
                pass
            return found or shared.cause(exercise, results, source), ""
        except Exception as error:  # noqa: BLE001  (a diagnosis must never cost a grade)
            return None, f"{type(error).__name__}: {error}"

    # -- the folder a worker imports ------------------------------------------------------------
    def package_dir(self, exercise):
        """The folder the exercise's workers import. The submission's, unless the exercise uses
        others (course.py's `uses`) and is graded over the reference: then a copy of the
        submission's folder with the solutions of the used exercises in their place, so that
        `from .ex6_head import Head` in the learner's ex7 reaches the reference's Head, and a
        mistake in ex6 costs ex6 alone. (The learner's ex7 can read that Head's code: it is the
        lesson's own, and it is only inside the walls.)"""
        if exercise in self.packages:
            return self.packages[exercise]
        used = course.needs(exercise) if exercise in course.BY_NAME else []
        over = course.BY_NAME[exercise].graded_over if used else None
        if over == "reference" and (self.reference_dir is None or self.submission_dir
                                    == self.reference_dir or not all(
                (self.reference_dir / f"{name}.py").is_file() for name in used)):
            over = "own"  # no solutions here (the student copy), or they are what is graded
        folder = self.submission_dir
        if over == "reference":
            if self.overlays is None:
                self.overlays = Path(tempfile.mkdtemp(prefix="grader-over-"))
            folder = self.overlays / exercise
            copy_over(self.submission_dir, folder, {f"{name}.py" for name in used})
            for name in used:
                shutil.copy(self.reference_dir / f"{name}.py", folder / f"{name}.py")
        self.packages[exercise], self.graded_over[exercise] = folder, over
        return folder

    def close(self):
        """Remove the copies package_dir made (session.grade calls it when pytest is done)."""
        if self.overlays is not None:
            shutil.rmtree(self.overlays, ignore_errors=True)

    # -- fixtures ---------------------------------------------------------------------------------
    def _worker(self, exercise):
        if exercise not in self.workers:
            self.workers[exercise] = ExerciseWorker(
                self.backend, self.package_dir(exercise), exercise, self.call_timeout)
        return self.workers[exercise]

    def _elsewhere(self, exercise):
        """A second worker of the exercise, in a process of its own: where a call is made again to
        see that its output does not depend on what earlier calls left behind."""
        if exercise not in self.elsewhere:
            self.elsewhere[exercise] = ExerciseWorker(
                self.backend, self.package_dir(exercise), exercise, self.call_timeout)
        return self.elsewhere[exercise]

    def reference_output(self, exercise, scenario, params, seed):
        """The solution's output for a scenario; the same for every submission of a batch (same
        seed, same test, same call), so it is kept for the life of the process."""
        reference = self.reference_module(exercise)
        if reference is None:
            pytest.skip("hidden case without the solutions")
        key = (exercise, scenario.__module__, scenario.__qualname__, repr(sorted(params.items())),
               seed)
        if key not in _REFERENCE_OUTPUTS:
            _REFERENCE_OUTPUTS[key] = scenario(Module(LocalChannel(reference)),
                                               torch.Generator().manual_seed(seed), **params)
        return _REFERENCE_OUTPUTS[key]

    def run_submission(self, exercise, scenario, params, seed):
        """The scenario, here, on the learner's module: each of its calls a request to the worker.
        When the machine was too busy for a call (a WorkerFailure "busy": the wall clock ran out
        while the worker's own time did not), the scenario runs again, with the same seed, in a
        new worker; twice busy is a grading error to regrade, never a point lost."""
        for attempt in range(BUSY_RETRIES + 1):
            channel = WorkerChannel(self._worker(exercise), seed=seed, elsewhere=(
                (lambda: self._elsewhere(exercise)) if getattr(self.backend, "forks_workers", False) else None))
            try:
                return scenario(Module(channel), torch.Generator().manual_seed(seed), **params)
            except WorkerFailure as failure:
                if failure.kind != "busy":
                    raise
        raise GradingError("the machine was too busy to grade this check in time (twice); "
                           "grade again when it is less loaded")

    def reference_module(self, exercise):
        """The solution's module for an exercise, or None in a copy without the solutions."""
        if self.reference_dir is None or not (self.reference_dir / f"{exercise}.py").exists():
            return None
        if REFERENCE_PACKAGE not in sys.modules:
            spec = importlib.util.spec_from_file_location(
                REFERENCE_PACKAGE, self.reference_dir / "__init__.py",
                submodule_search_locations=[str(self.reference_dir)])
            package = importlib.util.module_from_spec(spec)
            sys.modules[REFERENCE_PACKAGE] = package
            spec.loader.exec_module(package)
        return importlib.import_module(f"{REFERENCE_PACKAGE}.{exercise}")

    @pytest.fixture
    def submission(self, request):
        return SubmissionRunner(self, exercise_of(request.node), request.node.nodeid)

    @pytest.fixture
    def compare(self, request):
        exercise, counter = exercise_of(request.node), iter(range(1 << 30))

        def run(scenario, **params):
            seed = seed_for(self.seed, request.node.nodeid, next(counter))
            want = self.reference_output(exercise, scenario, params, seed)
            got = self.run_submission(exercise, scenario, params, seed)
            return got, want

        def recorded(scenario, **params):
            """(got, want) with the solution's calls recorded too (an untrusted LocalChannel):
            for a message that says where the work parts from the solution's."""
            seed = seed_for(self.seed, request.node.nodeid, next(counter))
            got = self.run_submission(exercise, scenario, params, seed)
            reference = Module(LocalChannel(self.reference_module(exercise), trusted=False))
            return got, scenario(reference, torch.Generator().manual_seed(seed), **params)
        run.recorded = recorded
        return run


class SubmissionRunner:
    """`submission(scenario, **params)`: a scenario's outputs on the learner's module (every call
    a request to the worker), with a generator seeded by the run's seed, `key` and a counter;
    `inputs(draw, **params)` replays what `draw` gave the last scenario (when the scenario draws
    first, as every scenario of tests/ does); `source` reads the learner's file."""

    def __init__(self, plugin, exercise, key):
        self.plugin, self.exercise, self.key = plugin, exercise, key
        self.calls, self.last_seed = 0, None
        self.source = Source(plugin.submission_dir, exercise)

    def submission(self, scenario, **params):
        self.last_seed = seed_for(self.plugin.seed, self.key, self.calls)
        self.calls += 1
        return self.plugin.run_submission(self.exercise, scenario, params, self.last_seed)

    __call__ = submission

    def with_reference(self, scenario, **params):
        """(the scenario's result on the learner's module, on the solution's with the same draws,
        or None where the solutions are absent): for a how-check, whose calls must compute the
        right values to count."""
        got = self.submission(scenario, **params)
        if self.plugin.reference_module(self.exercise) is None:
            return got, None
        return got, self.plugin.reference_output(self.exercise, scenario, params, self.last_seed)

    def inputs(self, draw, **params):
        return draw(torch.Generator().manual_seed(self.last_seed), **params)


class Probe(SubmissionRunner):
    """What a test file's diagnose(probe) uses: probe(scenario, **params) -> (got, want), want
    None where the solutions are absent; probe.submission(…) -> got alone (for what needs no
    comparison: operations, parameters)."""

    def __init__(self, plugin, exercise):
        super().__init__(plugin, exercise, f"{exercise}::diagnose")

    __call__ = SubmissionRunner.with_reference

    def recorded(self, scenario, **params):
        """For a record diff (grading.diagnosis.record_diff): the scenario's result on the
        learner's module and on the solution's, with the same draws, each call with its record
        (the solution's answered here by an Executor that records). None without the solutions."""
        got = self.submission(scenario, **params)
        reference = self.plugin.reference_module(self.exercise)
        if reference is None:
            return None
        return got, scenario(Module(LocalChannel(reference, trusted=False)),
                             torch.Generator().manual_seed(self.last_seed), **params)


def with_body(error, source):
    """The worker's report of a crash, with "body": the source of the learner's function that
    raised (from the judge's reading of the file, never from the worker)."""
    frames = error.get("frames") if isinstance(error, dict) else None
    if not frames or not isinstance(frames[-1], (list, tuple)) or len(frames[-1]) < 3:
        return error
    file, function = str(frames[-1][0]), str(frames[-1][2])
    if "/" in file or "\\" in file or not file.endswith(".py") or not function.isidentifier():
        return error
    return {**error, "body": source.function_text(file, function)}


class Source:
    """The learner's source of one exercise, read here in the judge (grading.judge.source_check):
    to point to the line of a loop that a verified record has shown, and for the words of a
    cause; never for a point."""

    def __init__(self, folder, exercise):
        self.folder, self.exercise = folder, exercise

    def line(self, file, number):
        """The text of line `number` of the submission's file `file` (a bare name), or None."""
        return source_check.line(self.folder, file, number)

    def function_text(self, file, name):
        """The source of the first function `name` in the submission's file (source_check)."""
        return source_check.function_text(self.folder, file, name)

    def functions(self, name):
        """How each function of the exercise's file named `name` is written, for a cause:
        source_check.functions_named."""
        return source_check.functions_named(self.folder, self.exercise, name)


_REFERENCE_OUTPUTS = {}  # see GradingPlugin.reference_output
HIDDEN_SKIPPED = Bi("隐藏检查，没有运行：它要与参考答案比较，而这里没有参考答案（只在课程评分的地方才有）",
                    "hidden check, not run: it compares with the solutions, which are not here "
                    "(only where the course grades)")
_RESULT = pytest.StashKey[TestResult]()
