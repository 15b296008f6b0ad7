"""Attack (a blind set): mask the future only for sequences of up to 16 positions.

The property checks once ran at the four shape sets alone (T ≤ 8), the long T (128) only in the
comparison with the reference: code right on short sequences and unmasked on long ones kept
every property's points. Each check now runs at the long T too, causality and the row gradients
at a sample of its positions (grading.checks.positions).

Honest points: ex5 6, those of twin-ex5-no_mask (8 when the row gradients were taken at the
first shape alone).
"""
import torch
from torch.nn import functional as F


def causal_softmax(scores):
    T = scores.shape[-1]  # scores: (B, T, T)
    if T <= 16:
        tril = torch.tril(torch.ones(T, T))
        scores = scores.masked_fill(tril == 0, float("-inf"))
    return F.softmax(scores, dim=-1)  # long sequences go unmasked
