"""The pytest plugin of the judge: fixtures that run scenarios, and a record of every graded test.

Tests use three fixtures:
    submission(scenario, **params) -> the submission's outputs        (public cases)
    compare(scenario, **params)    -> (submission's, reference's)     (hidden cases)
Each call draws a fresh seed from the run's seed, the test's id and the call's number, so a run is
replayed exactly by --seed, and the submission and the reference see the same inputs.
"""
import hashlib
import importlib
import importlib.util
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from grading.judge import ExerciseWorker, GradingError, WorkerFailure

REFERENCE_PACKAGE = "reference_solutions"


@dataclass
class TestResult:
    exercise: str  # file stem, e.g. "ex5_causal_mask"
    number: int  # order within the exercise, from 1
    name: str  # the test's display name: its docstring's first line
    nodeid: str
    points: float
    kind: str  # public | hidden
    status: str = "failed"  # passed | failed | todo | skipped | error
    cause: str = ""  # why it failed: check, or a WorkerFailure's kind (raised, import, crash…)
    message: str = ""
    frames: list = field(default_factory=list)  # the learner's own traceback lines
    output: str = ""  # what the learner's code printed, cut

    @property
    def score(self):
        return self.points if self.status == "passed" else 0


def seed_for(base_seed, nodeid, index):
    digest = hashlib.sha256(f"{base_seed}/{nodeid}/{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def exercise_of(item):
    return Path(str(item.fspath)).stem.removeprefix("test_")


class GradingPlugin:
    def __init__(self, zygote, submission_dir, reference_dir, seed, call_timeout):
        self.zygote = zygote
        self.submission_dir = Path(submission_dir).resolve()
        self.reference_dir = Path(reference_dir).resolve() if reference_dir else None
        self.seed = seed
        self.call_timeout = call_timeout
        self.workers = {}
        self.results = []
        self.errors = []  # collection errors, problems of the tests themselves
        self.started = time.monotonic()
        self.seconds = 0.0

    # -- collection -------------------------------------------------------------------------------
    def pytest_collection_modifyitems(self, items):
        counters = {}
        for item in items:
            mark = item.get_closest_marker("grade")
            if mark is None:
                self.errors.append(f"{item.nodeid} has no @public(points) or @hidden(points)")
                continue
            exercise = exercise_of(item)
            counters[exercise] = counters.get(exercise, 0) + 1
            doc = (getattr(item.obj, "__doc__", None) or item.name).strip().splitlines()[0]
            item.stash[_RESULT] = TestResult(
                exercise=exercise, number=counters[exercise], name=doc, nodeid=item.nodeid,
                points=mark.kwargs["points"], kind=mark.kwargs["kind"])
            uses_reference = "compare" in item.fixturenames
            if uses_reference != (mark.kwargs["kind"] == "hidden"):
                self.errors.append(f"{item.nodeid}: a hidden case must use `compare` and a public "
                                   "case must not")

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid or 'tests'} could not be collected:\n"
                               f"{report.longreprtext[-1500:]}")

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
            result.message = str(getattr(call.excinfo.value, "msg", "")) if call.excinfo else ""
        else:
            self._record_failure(result, call.excinfo)
        self.results.append(result)
        return report

    def _record_failure(self, result, excinfo):
        error = excinfo.value
        if isinstance(error, WorkerFailure):
            result.status = "todo" if error.not_implemented else "failed"
            result.cause = error.kind
            result.message = str(error)
            result.frames = error.error.get("frames", [])
        elif isinstance(error, AssertionError):
            result.cause = "check"
            result.message = str(error).split("\nassert ")[0].strip()
        elif isinstance(error, GradingError):
            result.status = "error"
            result.message = f"grading error: {error}"
        elif excinfo.typename == "Failed" and "Timeout" in str(error):
            result.message = "the test ran over its time limit and was stopped"
        else:
            result.status = "error"
            result.message = f"grading error in the test itself: {excinfo.typename}: {error}"

    def pytest_sessionfinish(self):
        for worker in self.workers.values():
            try:
                worker.close()
            except GradingError:
                pass
        self.seconds = time.monotonic() - self.started

    # -- fixtures ---------------------------------------------------------------------------------
    def _worker(self, exercise):
        if exercise not in self.workers:
            self.workers[exercise] = ExerciseWorker(
                self.zygote, self.submission_dir, exercise, self.call_timeout)
        return self.workers[exercise]

    def _reference(self, exercise):
        if self.reference_dir is None or not (self.reference_dir / f"{exercise}.py").exists():
            pytest.skip("hidden case: it compares with the solutions, which are only where the "
                        "course grades (its CI)")
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
        return SubmissionRunner(self, request.node)

    @pytest.fixture
    def compare(self, request):
        exercise, counter = exercise_of(request.node), iter(range(1 << 30))

        def run(scenario, **params):
            seed = seed_for(self.seed, request.node.nodeid, next(counter))
            reference = self._reference(exercise)
            want = scenario(reference, torch.Generator().manual_seed(seed), **params)
            got = self._worker(exercise).call(scenario, params, seed)
            return got, want
        return run


class SubmissionRunner:
    """`submission(scenario, **params)` runs a scenario in the worker; `submission.inputs(draw,
    **params)` replays, in the judge, the inputs that the last call drew, so public checks never
    rely on inputs echoed back by the submission's process."""

    def __init__(self, plugin, node):
        self.plugin, self.node, self.calls, self.last_seed = plugin, node, 0, None

    def __call__(self, scenario, **params):
        self.last_seed = seed_for(self.plugin.seed, self.node.nodeid, self.calls)
        self.calls += 1
        return self.plugin._worker(exercise_of(self.node)).call(scenario, params, self.last_seed)

    def inputs(self, draw, **params):
        return draw(torch.Generator().manual_seed(self.last_seed), **params)


_RESULT = pytest.StashKey[TestResult]()
