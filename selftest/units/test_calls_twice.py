"""A learner's call is made twice (grading/worker/executor.py, Executor.call): as in evaluation,
recorded, and as in training, unrecorded and unheard; values that differ are said in the reply.
And a constant too large for a record to show, sliced to what a call uses, is shown by value."""
import contextlib
import tempfile
import types

import torch
import torch.nn.functional as F

from grading.judge import replay
from grading.wire import protocol
from grading.worker.executor import Executor
from grading.worker.serve import _Output


def called(module, name, *args, executor=None):
    """The reply to one call of module.name, through the wire as a worker's would come."""
    executor = executor or Executor(module)
    request = {"op": "call", "target": {"name": name}, "args": list(args)}
    return protocol.from_wire(protocol.to_wire(executor.run(request)))


def test_other_values_under_autograd_are_said_and_the_same_are_not():
    def scaled_in_evaluation_only(q):  # the attack: right wherever no gradient can be taken
        return q if torch.is_grad_enabled() and q.requires_grad else q * 0.5

    module = types.SimpleNamespace(attack=scaled_in_evaluation_only, right=lambda q: q * 0.5)
    q = torch.randn(2, 3)
    attack, right = called(module, "attack", q), called(module, "right", q)
    assert attack["modes_differ"] is True and right["modes_differ"] is False
    assert torch.equal(attack["output"], q * 0.5)  # the reply's values are evaluation's


def test_code_that_cannot_run_in_training_keeps_its_values():
    def through_numpy(x):  # .numpy() of a tensor that requires a gradient raises in training
        return torch.from_numpy(x.numpy() * 2)

    reply = called(types.SimpleNamespace(f=through_numpy), "f", torch.ones(2))
    assert reply["modes_differ"] is False and torch.equal(reply["output"], torch.full((2,), 2.0))


def test_the_call_as_in_training_is_unheard_and_sees_the_inputs_as_they_came():
    heard, inside = [], [False]

    @contextlib.contextmanager
    def unheard():
        inside[0] = True
        yield
        inside[0] = False

    def adds_in_place(x):  # prints once each time, and writes into its input
        heard.append(inside[0])
        return x.add_(1) if not x.requires_grad else x + 1

    x = torch.zeros(2)
    executor = Executor(types.SimpleNamespace(f=adds_in_place), unheard=unheard)
    reply = called(None, "f", x, executor=executor)
    assert heard == [False, True]  # evaluation's call is heard, then training's is not
    assert reply["modes_differ"] is False and reply["written"] == [True]


def test_what_is_printed_while_unheard_is_dropped_and_the_rest_kept():
    with tempfile.NamedTemporaryFile() as file, open(file.name, "rb") as reader:
        output = _Output(reader)
        file.write(b"evaluation\n")
        file.flush()
        with output.unheard():
            file.write(b"training\n")
            file.flush()
        assert output.read_new() == "evaluation\n"
        file.write(b"next call\n")
        file.flush()
        assert output.read_new() == "next call\n"


BIG = torch.triu(torch.ones(1024, 1024, dtype=torch.bool), diagonal=1)  # GPT-2's context


def masked_by_a_big_constant(scores):
    T = scores.shape[-1]
    return F.softmax(scores.masked_fill(BIG[:T, :T], float("-inf")), dim=-1)


def test_a_slice_of_a_constant_too_large_to_show_is_a_constant_shown():
    reply = called(types.SimpleNamespace(f=masked_by_a_big_constant), "f", torch.randn(2, 5, 5))
    record = {**reply["record"], "ops": reply["record"]["ops"].value}
    assert "outside" not in repr(record["ops"])  # the (5, 5) slice is shown, not the whole
    scores = torch.randn(2, 5, 5)
    assert replay.same(replay.replay(record, [scores]), masked_by_a_big_constant(scores))
