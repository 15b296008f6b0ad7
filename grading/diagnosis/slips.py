"""The mistake space: which combination of known slips makes the learner's output.

A diagnosis by search. An exercise's computation is written as a few *steps* of the lesson (which
layer makes q, what the scores are scaled by, what the future is filled with, …); each step is a
list of *ways*, the lesson's own first, then the slips learners make. The test file gives a
`compute(pick)` that runs the lesson's computation in the judge, in float64, on the very inputs
the learner's code got, with `pick` = {step: the chosen way's value}. We try every combination of
up to `most` slips and keep those whose output is the learner's. A cause is named only when
exactly one combination is left: two different stories that give the same numbers say nothing.
"""
import itertools

import torch

from grading.checks.expect import same
from grading.diagnosis.causes import Diagnosis
from grading.i18n import Bi


class Way:
    """One way of doing one step: `key` names it in diagnosis keys, zh/en say what differs from
    the lesson (and what the lesson does), `value` is what compute() uses for it."""

    def __init__(self, key, value, zh="", en=""):
        self.key, self.value = key, value
        self.text = Bi(zh, en) if zh or en else None  # the lesson's own way has nothing to say

    def __repr__(self):
        return f"Way({self.key!r})"


def slips(steps, compute, got, most=2):
    """The smallest combinations of slips (tuples of Ways, in the steps' order) whose output is
    got; [] when the lesson's own way gives got. `steps` is {step: [lesson's Way, slip, …]}.
    A combination that holds a smaller matching one is skipped: its extra slip changes nothing
    here (the fill value when there is no mask), so it tells no different story."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: more threads only add waiting, on a busy machine much
    try:
        return _slips(steps, compute, got, most)
    finally:
        torch.set_num_threads(threads)


def _slips(steps, compute, got, most):
    lesson = {step: ways[0].value for step, ways in steps.items()}
    if _output(compute, lesson, got):
        return []
    found = []
    for n in range(1, most + 1):
        for chosen in itertools.combinations(steps, n):  # n different steps…
            for ways in itertools.product(*(steps[s][1:] for s in chosen)):  # …each one slipped
                if any(set(f) <= set(ways) for f in found):
                    continue
                pick = {**lesson, **{s: w.value for s, w in zip(chosen, ways)}}
                if _output(compute, pick, got):
                    found.append(ways)
    return found


def _output(compute, pick, got):
    try:
        want = compute(pick)
    except (RuntimeError, IndexError, ValueError):  # a slip that cannot run on these shapes
        return False
    if isinstance(want, torch.Tensor) and want.numel() > 1 and not bool(torch.isfinite(want).any()):
        return False  # nothing but NaN and ±∞ explains nothing: any broken output would match
    # (one NaN alone is a test file's sign for a call that raised: see tests/test_ex2_averaging.py)
    return same(got, want)


def named_slips(steps, draws, prefix, most=2):
    """The Diagnosis of the combination of slips behind the learner's outputs, or None.
    `draws` yields (got, compute) for one draw of inputs after another, best with other sizes:
    every draw must confirm a combination (so a constant that happens to equal a size in one
    draw, a hard-coded 8 for head_size, is no slip of the lesson's), and of those confirmed, the
    one with the fewest slips is named, when no other is as small (the simplest story: all three
    of q, k, v out of one layer, not two slips that add up to the same)."""
    found = None
    for got, compute in draws:
        if found is None:
            found = slips(steps, compute, got, most)
        else:
            found = [ways for ways in found if _output(compute, _pick(steps, ways), got)]
        if not found:
            return None
    fewest = [ways for ways in found if len(ways) == min(map(len, found))]
    return slip_diagnosis(prefix, fewest[0]) if len(fewest) == 1 else None


def _pick(steps, ways):
    chosen = {w: s for s, options in steps.items() for w in options if w in ways}
    return {s: next((w.value for w in ways if chosen[w] == s), options[0].value)
            for s, options in steps.items()}


COUNTS = {2: ("两", "Two"), 3: ("三", "Three")}


def slip_diagnosis(prefix, ways):
    """Diagnosis(prefix + the slips' keys sorted and joined by "+"), its text the slips' own: one
    slip's text as it is; several as "Two things differ from the lesson: (1) … (2) …"."""
    key = prefix + "+".join(sorted(w.key for w in ways))
    if len(ways) == 1:
        return Diagnosis(key, ways[0].text.zh, ways[0].text.en)
    zh_n, en_n = COUNTS.get(len(ways), (str(len(ways)), str(len(ways))))
    zh = f"有{zh_n}处和课文不同：" + "；".join(f"（{i}）{w.text.zh}" for i, w in enumerate(ways, 1))
    en = f"{en_n} things differ from the lesson: " + "; ".join(
        f"({i}) {w.text.en}" for i, w in enumerate(ways, 1))
    return Diagnosis(key, zh, en)


def lesson(steps):
    """The pick of the lesson's own way at every step."""
    return {step: ways[0].value for step, ways in steps.items()}
