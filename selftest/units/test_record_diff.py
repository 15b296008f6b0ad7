"""The record diff (grading.diagnosis.record_diff) on mutations of the solution's own record.

A generator mutates the record of the reference head — a number changed (a scale, the fill
value), a dim changed, a step taken out, a step added — and the record diff, given the mutated
record as the learner's and the solution's as the lesson's, must find the mend at the very step
mutated, of the kind that undoes it. The share it names right is printed; every mutation of the
kinds it covers must be named right, and none named at another step.
"""
import importlib.util
import types

import pytest
import torch

from grading.config import SOLUTIONS
from grading.diagnosis import record_diff
from grading.judge import replay
from grading.wire import protocol
from grading.wire.record import operator_name
from grading.worker.executor import Executor

PARAMS = ("query.weight", "key.weight", "value.weight")


def _solution_head():
    spec = importlib.util.spec_from_file_location("solution_ex6_head", SOLUTIONS / "ex6_head.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Head


def reference_call(B=2, T=5, n_embd=12, head_size=8, block_size=11, seed=0):
    """The solution head's call, as record_diff reads a Call: record, args, tensors."""
    gen = torch.Generator().manual_seed(seed)
    executor = Executor(types.SimpleNamespace(Head=_solution_head()))
    handle = executor.run({"op": "call", "target": {"name": "Head"},
                           "args": [n_embd, head_size, block_size]})["output"].number
    weights = {p: torch.randn(head_size, n_embd, generator=gen) * n_embd ** -0.5 for p in PARAMS}
    for path, weight in weights.items():
        executor.run({"op": "set", "handle": handle, "path": path, "value": weight})
    executor.objects[handle].eval()
    x = torch.randn(B, T, n_embd, generator=gen)
    reply = protocol.from_wire(protocol.to_wire(executor.run(
        {"op": "call", "target": {"handle": handle}, "args": [x]})))
    record = {**reply["record"], "ops": reply["record"]["ops"].value}
    tensors = {**weights, "tril": executor.objects[handle].tril.clone()}
    return types.SimpleNamespace(record=record, args=[x], tensors=tensors), reply["output"]


def mutations(ops):
    """(what, the mutated ops, the step mutated, the kind of edit that undoes it)."""
    for i, op in enumerate(ops):
        name = operator_name(op[0])
        for n, value in enumerate(op[1]):
            if type(value) is float:  # a scale, a fill value
                for other in (0.25, -1.0, 2.0):
                    if other != value:
                        yield (f"{name} {value:g} -> {other:g}",
                               _with(ops, i, n, other), i, "argument")
        if name == "_softmax":
            yield ("softmax dim -1 -> 1", _with(ops, i, 1, 1), i, "argument")
        if name in ("_softmax", "mul"):  # a step taken out: its users read its input
            yield (f"{name} left out", _without(ops, i), i, "insert")
        if name in ("_softmax", "bmm", "mul"):  # a step added after it
            for extra in ("aten.relu.default", "aten.tanh.default", "aten.abs.default"):
                yield (f"{extra} after {name}", _after(ops, i, [extra, [{"out": [i, 0]}], {},
                                                               False]), i + 1, "remove")


def _with(ops, i, n, value):
    ops = [list(op) for op in ops]
    ops[i] = [ops[i][0], list(ops[i][1]), dict(ops[i][2]), *ops[i][3:]]
    ops[i][1][n] = value
    return ops


def _without(ops, i):
    ops, output = record_diff._applied(("remove", i, ("args", 0)), ops, {"out": [len(ops) - 1, 0]},
                                       ops)
    return ops


def _after(ops, i, made):
    moved = {i: {"out": [i + 1, 0]}}
    later = [record_diff._renumbered(op, i, +1, moved) for op in ops[i + 1:]]
    return [list(op) for op in ops[:i + 1]] + [made] + later


def test_mutations_of_the_reference_record_are_named_at_the_step_mutated(capsys):
    theirs, want = reference_call()
    tried = named = 0
    wrong = []
    for what, ops, step, kind in mutations(theirs.record["ops"]):
        output = {"out": [len(ops) - 1, 0]}
        mine = types.SimpleNamespace(record={**theirs.record, "ops": ops, "output": output},
                                     args=theirs.args, tensors=theirs.tensors)
        got = replay.replay(mine.record, list(mine.args), mine.tensors)
        if replay.same(got, want):
            continue  # a mutation that changes nothing here (−1 for −∞ where nothing is masked)
        tried += 1
        edit = record_diff.first_mend(mine, theirs, want)
        if edit is not None and edit[0] == kind and edit[1] == (step if kind != "insert"
                                                                else step - 1):
            named += 1
        else:
            wrong.append((what, edit))
    with capsys.disabled():
        print(f"\nrecord diff: {named} of {tried} mutations of the reference head named at the "
              "step mutated")
    assert tried >= 15 and not wrong, wrong


@pytest.mark.parametrize("step", ["aten.relu.default", "aten.round.default"])
def test_a_step_added_at_the_end_is_taken_out(step):
    theirs, want = reference_call()
    ops = theirs.record["ops"]
    mine = types.SimpleNamespace(
        record={**theirs.record, "ops": _after(ops, len(ops) - 1,
                                                [step, [{"out": [len(ops) - 1, 0]}], {}, False]),
                "output": {"out": [len(ops), 0]}},
        args=theirs.args, tensors=theirs.tensors)
    assert record_diff.first_mend(mine, theirs, want) == ("remove", len(ops), ("args", 0))


def test_an_operand_swapped_for_another_tensor_is_rewired_at_that_step():
    """q, k or v given where another of them belongs (weights @ k, q @ qᵀ): the diff gives the
    step the tensor the solution's has there, found among the learner's by its value."""
    theirs, want = reference_call()
    ops = theirs.record["ops"]
    made = [k for k, op in enumerate(ops) if operator_name(op[0]) == "_unsafe_view"][:3]  # q k v
    tried = 0
    for i, op in enumerate(ops):
        if operator_name(op[0]) not in ("transpose", "expand"):  # kᵀ, and v for weights @ v
            continue
        for n, value in enumerate(op[1]):
            if not (isinstance(value, dict) and value.get("out", [None])[0] in made):
                continue
            for other in made:
                if other == value["out"][0]:
                    continue
                mutated = _with(ops, i, n, {"out": [other, 0]})
                mine = types.SimpleNamespace(record={**theirs.record, "ops": mutated},
                                             args=theirs.args, tensors=theirs.tensors)
                if replay.same(replay.replay(mine.record, list(mine.args), mine.tensors), want):
                    continue
                tried += 1
                edit = record_diff.first_mend(mine, theirs, want)
                assert edit is not None and edit[:3] == ("rewire", i, ("args", n)), \
                    (i, n, other, edit)
    assert tried >= 4
