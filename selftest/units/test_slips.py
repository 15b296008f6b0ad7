"""The search behind the diagnoses (grading.diagnosis.slips): a cause is named only when exactly one
combination of slips gives the learner's numbers."""
import torch

from grading.checks.expect import same
from grading.diagnosis.slips import Way, named_slips, slips

STEPS = {  # y = x * scale + shift, with two slips for the scale and one for the shift
    "scale": [Way("two", 2.0), Way("three", 3.0, "乘了 3", "times 3"),
              Way("also_three", 3.0, "也乘了 3", "also times 3")],
    "shift": [Way("none", 0.0), Way("one", 1.0, "加了 1", "plus 1")],
}
X = torch.arange(4.0)


def compute(pick):
    return X * pick["scale"] + pick["shift"]


def test_the_lessons_own_output_names_nothing():
    assert slips(STEPS, compute, X * 2) == []


def test_one_slip_and_two_are_named_by_their_keys_in_order():
    assert [w.key for w in slips(STEPS, compute, X * 2 + 1)[0]] == ["one"]
    two = named_slips({"scale": STEPS["scale"][:2], "shift": STEPS["shift"]},
                      [(X * 3 + 1, compute)], "t.")
    assert two.key == "t.one+three" and two.text.en.startswith("Two things differ")
    assert "（1）乘了 3；（2）加了 1" in two.text.zh


def test_two_stories_for_the_same_numbers_name_nothing():
    assert len(slips(STEPS, compute, X * 3)) == 2
    assert named_slips(STEPS, [(X * 3, compute)], "t.") is None


def test_numbers_no_combination_makes_name_nothing():
    assert named_slips(STEPS, [(X * 5, compute)], "t.") is None


def test_nan_matches_nan_and_inf_the_same_inf():
    nan, inf = float("nan"), float("inf")
    assert same(torch.tensor([nan, -inf, 1.0]), torch.tensor([nan, -inf, 1.0 + 1e-7]))
    assert not same(torch.tensor([nan, 1.0]), torch.tensor([0.0, 1.0]))
    assert not same(torch.tensor([-inf]), torch.tensor([inf]))
