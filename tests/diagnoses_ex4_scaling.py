"""Exercise 4's diagnoses: the causes its failing outputs and crashes point to (diagnose,
diagnose_error; the judge's plugin calls them once a check of ex4_scaling fails). tests/test_ex4_scaling.py
holds its checks. Not in the student copy: the lesson's steps they search are the answers."""
from test_ex4_scaling import calls, draw, inputs_after, learning, scores, shapes, shown_scores

from grading.checks import same
from grading.diagnosis import (
    Diagnosis,
    Recorded,
    changed_everywhere,
    crash_cause,
    detached_diagnosis,
    lesson,
    modifies_input_diagnosis,
    named_slips,
    record_diff,
    shortcut_diagnosis,
)
from lesson_steps import SCORE_STEPS, scaled_scores, sqrt_of_int, transposed_3d, undefined_head_size

# The mistake space of attention_scores: which product, and what it is scaled by (the lesson's way
# first). Exercise 6's head reuses these steps. A scale is a function of the sizes n = {"B", "T",
# "C", "head_size"} (C, n_embd, only inside the head).


DIAGNOSE_SHAPE = dict(B=2, T=5, head_size=8)  # T != head_size != B, no one a square of another
CONFIRM_SHAPE = dict(B=3, T=7, head_size=5)  # the second draw: other sizes, the same property


RECORDED = Recorded(shown_scores, (DIAGNOSE_SHAPE, CONFIRM_SHAPE), "attention_scores",
                    inputs=("q", "k"))








def diagnose(probe):
    return catalogued(probe) or record_diff.diagnosis(probe, RECORDED, "ex4")


def catalogued(probe):
    shape = DIAGNOSE_SHAPE
    B, H = shape["B"], shape["head_size"]
    got, _ = probe(scores, **shape)
    if hasattr(got, "shape") and tuple(got.shape) == (B, H, H):
        return Diagnosis("ex4.transposed_q",
                         f"分数的形状是 (B, head_size, head_size) = ({B}, {H}, {H})：转置的是 q 而不是 k。"
                         "要的是 q @ kᵀ，即 q @ k.transpose(-2, -1)，得到 (B, T, T)",
                         f"The scores have shape (B, head_size, head_size) = ({B}, {H}, {H}): q "
                         "was transposed instead of k. The lesson's product is q @ kᵀ, "
                         "q @ k.transpose(-2, -1), which is (B, T, T)")

    def draws():  # the learner's scores and the judge's computation of them, draw after draw
        learner = got
        for size in (shape, CONFIRM_SHAPE):
            if size is not shape:
                learner, _ = probe(scores, **size)
            inputs = probe.inputs(draw, **size)
            q, k = inputs["q"].double(), inputs["k"].double()
            yield learner, lambda pick, q=q, k=k, size=size: scaled_scores(q, k, pick, size)
    found = named_slips(SCORE_STEPS, draws(), "ex4.", most=2)
    if found:
        return found
    if right_where_graded(probe):
        changed = changed_everywhere(probe, inputs_after, shapes(), ("q", "k"))
        if changed:
            return modifies_input_diagnosis("ex4", "attention_scores", changed,
                                            "q = q * head_size ** -0.5")
        grads = probe.submission(learning, checked=False, **shapes()[0])
        missing = [name for name in ("q", "k") if grads.get(name) is None]
        if missing:
            return detached_diagnosis("ex4", "attention_scores", missing)
    return shortcut_diagnosis(probe.submission(calls), "ex4.shortcut")


def right_where_graded(probe):
    """For the diagnoses that say "the values are right": right at every graded size and at
    the second draw's."""
    for shape in [*shapes(), CONFIRM_SHAPE]:
        got, _ = probe(scores, **shape)
        inputs = probe.inputs(draw, **shape)
        if not same(got, scaled_scores(inputs["q"].double(), inputs["k"].double(),
                                       lesson(SCORE_STEPS), shape)):
            return False
    return True



def diagnose_error(error):
    return transposed_3d(error, "ex4") or sqrt_of_int(error, "ex4") or undefined_head_size(
        error, "ex4",
        "attention_scores 只拿到 q 和 k，head_size 是它们最后一维的长度：head_size = q.shape[-1]",
        "attention_scores gets only q and k, and head_size is the length of their last "
        "dimension: head_size = q.shape[-1]") or crash_cause(error, "ex4")
