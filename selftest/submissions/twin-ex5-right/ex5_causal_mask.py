"""Honest twin of attack-ex5-forged_deep, forged_frames, forged_huge, forged_internal and
sdpa_weights: the same right causal_softmax, with the lesson's steps written by hand and nothing
written to the judge.

The future (above the diagonal) filled with −∞, then softmax over the last dimension.

Honest points: ex5 20/20.
"""
import torch
from torch.nn import functional as F


def causal_softmax(scores):
    """Mask the future, then softmax."""
    T = scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)
    weights = scores.masked_fill(future, float("-inf"))  # the future → −∞
    return F.softmax(weights, dim=-1)  # (B, T, T)
