"""Grade one submission folder: a pytest session over tests/ in this process (the judge).

The zygote is started by the caller before anything else, so that it imports torch while the judge
does the same; one zygote serves any number of sessions (a batch).
"""
import contextlib
import io
import os
import time
from dataclasses import dataclass
from pathlib import Path

from grading.config import CALL_TIMEOUT, EXERCISES, ROOT, SOLUTIONS, TEST_TIMEOUT, TESTS
from grading.errors import SessionError

# The isolation line when a worker's walls were refused (grading.errors.WallsRefused): from the
# workers' own word, not the backend's promise.
REFUSED = ("没有隔离：这台机器拒绝了 Linux 的隔离墙（见上面的评分错误），学员的代码一行也没有运行",
           "none: this machine refused the Linux walls (see the grading errors above), and none "
           "of the submission's code ran")


@dataclass
class ExerciseGrade:
    exercise: str
    results: list  # TestResult, in the order the tests are written
    diagnosis: object = None  # diagnosis.causes.Diagnosis: the likely mistake, when the outputs show one
    diagnosis_problem: str = ""  # an exception in the diagnosis itself (never costs points)
    picture: object = None  # diagnosis.pictures.Picture: what the learner built, beside the expected
    graded_over: str = None  # for an exercise that uses others: "reference" or "own" (whose copy)

    @property
    def score(self):
        return sum(r.score for r in self.results)

    @property
    def max_score(self):
        """Points of the checks that ran: a copy without the solutions runs no hidden check."""
        return sum(r.points for r in self.results if r.status != "skipped")

    @property
    def hidden_points(self):
        return sum(r.points for r in self.results if r.status == "skipped")

    @property
    def status(self):
        graded = [r for r in self.results if r.status != "skipped"]
        if graded and all(r.status == "passed" for r in graded):
            return "done"
        if graded and all(r.status == "todo" for r in graded):
            return "todo"
        return "failing"

    @property
    def first_failure(self):
        """The first check that failed; one that only waits for others (after=…, or a how-check
        waiting for right values) only when nothing else failed."""
        unpassed = [r for r in self.results if r.status not in ("passed", "skipped")]
        return next((r for r in unpassed if r.cause != "gate"), unpassed[0] if unpassed else None)


@dataclass
class Grade:
    submission: Path
    seed: int
    exercises: list  # ExerciseGrade, in exercise order
    seconds: float
    isolation: tuple = ()  # (中文, English): the walls the backend put around the workers
    second_judge: tuple = ()  # the exercises a second judge graded (grading/judge/split.py)

    @property
    def score(self):
        return sum(e.score for e in self.exercises)

    @property
    def max_score(self):
        return sum(e.max_score for e in self.exercises)

    @property
    def hidden_points(self):
        return sum(e.hidden_points for e in self.exercises)

    @property
    def grading_errors(self):
        return [r for e in self.exercises for r in e.results if r.status == "error"]


def grade(backend, submission_dir, seed, exercises=None, reference_dir=SOLUTIONS,
          call_timeout=CALL_TIMEOUT, split=False):
    """The Grade of one folder. split: two judges share the exercises (judge/split.py), where
    the backend forks judges and the machine has two cores or more: not in a batch, whose judges
    already fill them."""
    import pytest

    from grading.judge.plugin import GradingPlugin
    from grading.judge.split import cores

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only our plugins: fast and predictable
    exercises = exercises or EXERCISES
    started = time.monotonic()
    plugin = GradingPlugin(backend, submission_dir,
                           reference_dir if Path(reference_dir).is_dir() else None,
                           seed, call_timeout,
                           split=split and backend.can_fork_judges and cores() > 1)
    args = [str(TESTS / f"test_{name}.py") for name in exercises]
    args += ["-c", str(ROOT / "pytest.ini"), "--rootdir", str(ROOT), "-p", "pytest_timeout",
             # no cache files; no gc passes after each test (0.4 s a session with torch loaded)
             "-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception",
             "-o", f"timeout={TEST_TIMEOUT}", "-q", "-s", "--tb=no",
             "-W", "ignore::pytest.PytestAssertRewriteWarning"]
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            code = pytest.main(args, plugins=[plugin])
    finally:
        plugin.close()
    if plugin.errors:
        raise SessionError("\n".join(plugin.errors))
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        if code == pytest.ExitCode.INTERRUPTED:
            raise KeyboardInterrupt
        raise SessionError(f"pytest ended with {code!r}:\n{captured.getvalue()[-2000:]}")
    by_exercise = {name: [] for name in exercises}
    for result in plugin.results:
        by_exercise.setdefault(result.exercise, []).append(result)
    return Grade(submission=Path(submission_dir), seed=seed,
                 exercises=[ExerciseGrade(name, sorted(rs, key=lambda r: r.number),
                                          *plugin.diagnoses.get(name, (None, "", None)),
                                          graded_over=plugin.graded_over.get(name))
                            for name, rs in by_exercise.items()],
                 seconds=time.monotonic() - started,
                 isolation=REFUSED if plugin.walls_refused else getattr(backend, "isolation", ()),
                 second_judge=tuple(plugin.second_judge))
