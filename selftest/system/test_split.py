"""Two judges share one grading run's exercises (grading/judge/split.py): the grade is the one a
judge alone gives, whichever judge grades which exercise, and a second judge that dies loses
nothing. Graded here, in this process, as grader.py grades (session.grade), on a zygote of its own.
"""
import os

import pytest

from fixtures import MISTAKES, materialise_together
from grading.backends.zygote import Zygote
from grading.config import ROOT
from grading.judge import session, split

pytestmark = pytest.mark.full
SEED = 20261202


@pytest.fixture(scope="module")
def backend():
    zygote = Zygote(ROOT)
    yield zygote
    zygote.close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A mistake in every exercise, each with a cause: every exercise's grade has something to
    lose in the journey back from the second judge (failures, messages, output, its diagnosis)."""
    chosen = {}
    for mistake in MISTAKES:
        if mistake.diagnosis and not isinstance(mistake.old, tuple):
            chosen.setdefault(mistake.exercise, mistake)
    target = tmp_path_factory.mktemp("split") / "submission"
    materialise_together(list(chosen.values()), [], target)
    return target


def seen(grade):
    """Everything of a grade a report shows, but its time."""
    return [(e.exercise, [(r.nodeid, r.number, r.status, r.cause, r.message, r.frames, r.output,
                           r.waits_for) for r in e.results],
             e.diagnosis and (e.diagnosis.key, e.diagnosis.text), e.diagnosis_problem)
            for e in grade.exercises]


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(split, "cores", lambda: 2)  # a one-CPU runner splits nothing on its own


def test_two_judges_give_the_grade_one_judge_gives(backend, folder, two_cores):
    alone = session.grade(backend, folder, SEED)
    shared = session.grade(backend, folder, SEED, split=True)
    assert alone.second_judge == ()
    assert shared.second_judge, "the second judge graded no exercise"
    assert len(shared.second_judge) < len(shared.exercises)  # ...and this one some, too
    assert all(e.diagnosis for e in alone.exercises), "a mistake without its cause: choose again"
    assert seen(shared) == seen(alone)


def _dies(plugin, exercise):  # in the second judge, once it has graded its first exercise
    os._exit(1)


def _garbles(plugin, exercise):  # ...or it sends what is no exercise's results (a bug of ours)
    return "not (exercise, results, diagnosis)"


@pytest.mark.parametrize("end", [_dies, _garbles], ids=["dies", "garbles"])
def test_what_a_dead_second_judge_took_is_graded_here(backend, folder, two_cores, monkeypatch,
                                                      end):
    monkeypatch.setattr(split, "_results_of", end)
    alone = session.grade(backend, folder, SEED)
    shared = session.grade(backend, folder, SEED, split=True)
    assert shared.second_judge == ()
    assert seen(shared) == seen(alone)


def test_one_cpu_or_a_batch_splits_nothing(backend, folder, monkeypatch):
    monkeypatch.setattr(split, "cores", lambda: 1)
    assert session.grade(backend, folder, SEED, split=True).second_judge == ()


def test_without_a_second_judge_this_one_grades_all(backend, folder, two_cores, monkeypatch):
    """No second judge can start (the zygote refuses a connection, or no process is left): the
    run is graded by one judge, as on one CPU, never lost."""
    from grading.errors import GradingError

    def refused():
        raise GradingError("no connection")
    alone = session.grade(backend, folder, SEED)
    monkeypatch.setattr(backend, "connection", refused)
    assert seen(session.grade(backend, folder, SEED, split=True)) == seen(alone)
    monkeypatch.undo()
    monkeypatch.setattr(split, "cores", lambda: 2)

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")
    monkeypatch.setattr(os, "fork", no_fork)
    shared = session.grade(backend, folder, SEED, split=True)
    assert shared.second_judge == () and seen(shared) == seen(alone)


def test_a_sealed_grading_runs_every_public_check_before_any_hidden_one(backend, folder,
                                                                        monkeypatch):
    """Issue 34: on Gradescope (config.SEALED) a later exercise's code could learn, while its
    public checks ran, whether an earlier exercise's hidden checks had failed: a diagnosis calls
    the learner's code only after a failure. Sealed, every public check of every exercise runs
    first, then the hidden ones, then the diagnoses; the grade is the same."""
    from grading.config import SEALED
    from grading.judge import plugin
    order = []
    setup, diagnose = plugin.GradingPlugin.pytest_runtest_setup, plugin.GradingPlugin._diagnose
    monkeypatch.setattr(plugin.GradingPlugin, "pytest_runtest_setup", lambda self, item: (
        order.append(item.get_closest_marker("grade").kwargs["kind"]), setup(self, item))[1])
    monkeypatch.setattr(plugin.GradingPlugin, "_diagnose", lambda self, exercise: (
        order.append("diagnosis"), diagnose(self, exercise))[1])
    alone = session.grade(backend, folder, SEED)
    assert "diagnosis" in order[:-1] and "public" in order[order.index("hidden"):]  # interleaved
    order.clear()
    monkeypatch.setenv(SEALED, "1")
    sealed = session.grade(backend, folder, SEED, split=True)
    assert sealed.second_judge == ()  # (no second judge: it would grade by exercise)
    assert seen(sealed) == seen(alone)
    kinds = "".join(kind[0] for kind in order)  # p…ph…hd…d
    assert kinds == "p" * kinds.count("p") + "h" * kinds.count("h") + "d" * 6, kinds
