"""Exercise 5's diagnoses: the causes its failing outputs and crashes point to (diagnose,
diagnose_error; the judge's plugin calls them once a check of ex5_causal_mask fails). tests/test_ex5_causal_mask.py
holds its checks. Not in the student copy: the lesson's steps they search are the answers."""
import re

import torch
from test_ex5_causal_mask import calls, draw, gradients, inputs_after, shapes, shown_weights, weights

from grading.checks import LONG_T, SHAPES, same
from grading.diagnosis import (
    Diagnosis,
    Recorded,
    changed_everywhere,
    crash_cause,
    lesson,
    modifies_input_diagnosis,
    named_slips,
    record_diff,
    shortcut_diagnosis,
)
from grading.errors import WorkerFailure
from lesson_steps import MASK_STEPS, fixed_size_mask, inf_into_integers, mask_sized_by_batch, masked_weights

# The mistake space of causal_softmax: the lesson's five choices, each with the slips learners make
# (the lesson's way first). Exercise 6's head reuses these steps for its own mask and softmax.


DIAGNOSE_SHAPE = dict(B=2, T=5)  # B != T: a mask sized by B, or a softmax over B, shows
CONFIRM_SHAPE = dict(B=3, T=7)  # the second draw, with other sizes


def right_where_graded(probe):
    """For the diagnoses that say "the values are right": right at every graded size too."""
    for shape in shapes():
        got, _ = probe(weights, **shape)
        if not same(got, masked_weights(probe.inputs(draw, **shape).double(), lesson(MASK_STEPS))):
            return False
    return True


def mask_of_one_size(probe, error):
    """A mask made for one fixed length N (torch.ones(8, 8): the lesson's T = 8) and not cut to T:
    the call at T = 5 crashes where the mask meets the scores, naming N; so does the call at
    another T, naming the same N; and at T = N the weights are right."""
    def fixed(error, B, T):
        message, frames = error.get("message", ""), error.get("frames", [])
        line = frames[-1][3] if frames and len(frames[-1]) > 3 else ""
        named = {int(n) for n in re.findall(r"\((\d+)\)", message)}
        if "must match the size" in message and re.search(r"tril|mask|masked_fill|where", line) \
                and len(named) == 2 and T in named:
            (n,) = named - {T}
            return n if n != B and 1 < n <= LONG_T else None
        return None
    n = fixed(error, DIAGNOSE_SHAPE["B"], DIAGNOSE_SHAPE["T"])
    other = CONFIRM_SHAPE if n != CONFIRM_SHAPE["T"] else dict(B=3, T=3)
    if n is None:
        return None
    try:
        probe(weights, **other)
        return None
    except WorkerFailure as failure:
        if failure.kind != "raised" or fixed(failure.error, other["B"], other["T"]) != n:
            return None
    got, _ = probe(weights, B=2, T=n)
    if not same(got, masked_weights(probe.inputs(draw, B=2, T=n).double(), lesson(MASK_STEPS))):
        return None
    T = DIAGNOSE_SHAPE["T"]
    return Diagnosis("ex5.mask_of_one_size",
                     f"掩码只按一个固定的长度 {n} 建（例如 torch.ones({n}, {n})），没有按这一次的 T 来建：T = {n} 时结果是对的，"
                     f"而这次 T = {T}，{n} × {n} 的掩码就和 (T, T) 的分数对不上了。掩码要按分数的长度来建："
                     "T = scores.shape[-1]，torch.tril(torch.ones(T, T))",
                     f"The mask is built for one fixed length, {n} (torch.ones({n}, {n}), say), not "
                     f"for this call's T: at T = {n} the weights are right, but here T = {T}, and a "
                     f"{n} × {n} mask does not fit the (T, T) scores. Build it from the scores' "
                     "length: T = scores.shape[-1], torch.tril(torch.ones(T, T))")


RECORDED = Recorded(shown_weights, (DIAGNOSE_SHAPE, CONFIRM_SHAPE), "causal_softmax",
                    inputs=("scores",))




def diagnose(probe):
    return catalogued(probe) or record_diff.diagnosis(probe, RECORDED, "ex5")


def catalogued(probe):
    shape = DIAGNOSE_SHAPE
    try:
        got, _ = probe(weights, **shape)
    except WorkerFailure as failure:  # the crash first: a cause of it that the outputs confirm
        found = failure.kind == "raised" and isinstance(failure.error, dict) \
            and mask_of_one_size(probe, failure.error)
        if found:
            return found
        raise
    if hasattr(got, "shape") and tuple(got.shape) == (shape["T"], shape["B"], shape["T"]):
        return Diagnosis("ex5.batch_axis",
                         "输出的形状是 (T, B, T)：批量那一维跑到了中间。权重要保持分数的形状 (B, T, T)，"
                         "整批一起处理就不需要对样本循环",
                         "The output has shape (T, B, T): the batch dimension moved to the middle. "
                         "The weights keep the scores' shape (B, T, T); working on the whole batch "
                         "at once needs no loop over samples")
    scores = probe.inputs(draw, **shape).double()

    def draws():  # the learner's weights and the judge's computation of them, draw after draw
        yield got, lambda pick: masked_weights(scores, pick)
        again, _ = probe(weights, **CONFIRM_SHAPE)
        other = probe.inputs(draw, **CONFIRM_SHAPE).double()
        yield again, lambda pick: masked_weights(other, pick)
    found = named_slips(MASK_STEPS, draws(), "ex5.", most=3)
    if found:
        return found
    found = zero_times_inf(probe, got)
    if found:
        return found
    right = same(got, masked_weights(scores, lesson(MASK_STEPS))) and right_where_graded(probe)
    if right and changed_everywhere(probe, inputs_after, shapes(), ("scores",)):
        return modifies_input_diagnosis(
            "ex5", "causal_softmax", ["scores"],
            'weights = scores.masked_fill(tril == 0, float("-inf"))')
    if right and probe.submission(gradients, B=shape["B"], T=shape["T"])["grad"] is None:
        return Diagnosis("ex5.detached",
                         "数值是对的，但权重不带梯度：causal_softmax 里用了 torch.no_grad()、.detach() 或 .data。"
                         "在模型里，梯度要穿过 softmax 传回分数，查询和键才能学习",
                         "The values are right, but the weights carry no gradient: torch.no_grad(), "
                         ".detach() or .data inside causal_softmax. In a model the gradient must "
                         "flow through the softmax back to the scores, or the queries and keys "
                         "cannot learn")
    try:
        shown = probe.submission(calls)
    except WorkerFailure as failure:  # right at every graded size, and a crash at a longer T
        if right and failure.kind == "raised":
            return fixed_size_mask(failure.error, "ex5", "scores.shape[-1]",
                                   max(s["T"] for s in SHAPES + [CONFIRM_SHAPE]))
        raise
    return shortcut_diagnosis(shown, "ex5.shortcut")



def zero_times_inf(probe, got):
    """NaN in every row, and the work multiplies by −∞: 0 × −∞ is NaN (an additive mask made as
    (tril == 0) * float('-inf') holds NaN where tril is 1)."""
    if not isinstance(got, torch.Tensor) or not got.is_floating_point() \
            or not torch.isnan(got).any(dim=-1).all():
        return None
    _, call = probe.submission(shown_weights, **DIAGNOSE_SHAPE)
    ops = call.record.get("ops") if isinstance(getattr(call, "record", None), dict) else None
    if not isinstance(ops, list) or not any(
            isinstance(op, list) and op and "mul" in str(op[0]) and any(
                isinstance(a, float) and a == float("-inf") for a in op[1] if type(a) is float)
            for op in ops[:200]):
        return None
    return Diagnosis("ex5.zero_times_inf",
                     "掩码是用乘以 −∞ 做出来的（例如 (tril == 0) * float('-inf')）：0 × −∞ 不是 0，而是 NaN，"
                     "于是过去的位置也成了 NaN，softmax 之后整行都是 NaN。用 masked_fill 只填未来："
                     "scores.masked_fill(tril == 0, float('-inf'))",
                     "The mask was made by multiplying by −∞ ((tril == 0) * float('-inf'), say): "
                     "0 × −∞ is not 0 but NaN, so the past turns into NaN too, and after softmax "
                     "every row is NaN. Fill only the future, with masked_fill: "
                     "scores.masked_fill(tril == 0, float('-inf'))")


def diagnose_error(error):
    return mask_sized_by_batch(error, DIAGNOSE_SHAPE["B"], DIAGNOSE_SHAPE["T"], "ex5") \
        or inf_into_integers(error, "ex5") or crash_cause(error, "ex5")
