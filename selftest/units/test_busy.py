"""A busy machine never costs a point (issue 23): a scenario one of whose calls the machine kept
from finishing (WorkerFailure "busy", grading.judge.worker_handle) is graded again with the same
seed; twice busy is a grading error, to regrade, never a failed check."""
import pytest
import torch

from grading.errors import GradingError, WorkerFailure
from grading.i18n import Bi
from grading.judge.plugin import GradingPlugin


def plugin_whose_machine_is_busy(times):
    plugin = GradingPlugin(None, ".", None, 0, 5.0)
    plugin._worker = lambda exercise: object()
    seen = []

    def scenario(ex, gen, **params):
        seen.append(int(torch.randint(0, 1 << 30, (1,), generator=gen)))
        if len(seen) <= times:
            raise WorkerFailure("busy", Bi("忙", "busy"))
        return "graded"
    return plugin, scenario, seen


def test_a_busy_call_is_graded_again_with_the_same_inputs():
    plugin, scenario, seen = plugin_whose_machine_is_busy(1)
    assert plugin.run_submission("ex6_head", scenario, {}, seed=7) == "graded"
    assert len(seen) == 2 and seen[0] == seen[1]


def test_twice_busy_is_a_grading_error():
    plugin, scenario, seen = plugin_whose_machine_is_busy(2)
    with pytest.raises(GradingError):
        plugin.run_submission("ex6_head", scenario, {}, seed=7)
    assert len(seen) == 2


def test_the_learners_own_failures_are_not_retried():
    plugin = GradingPlugin(None, ".", None, 0, 5.0)
    plugin._worker = lambda exercise: object()
    calls = []

    def scenario(ex, gen):
        calls.append(1)
        raise WorkerFailure("timeout", Bi("超时", "timeout"))
    with pytest.raises(WorkerFailure):
        plugin.run_submission("ex6_head", scenario, {}, seed=7)
    assert calls == [1]
