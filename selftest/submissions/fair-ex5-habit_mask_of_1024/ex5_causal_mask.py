"""Fair: one mask for every length, built once at import for a context of 1024 (GPT-2's), sliced
to [:T, :T] on each call (from a blind set of right code with habits).

The module-level mask has 1024 × 1024 entries, more than a record shows by value; the slice a
call takes is an operation on that constant alone, so it is a constant too, shown by value
(grading.worker.executor: _Recording.dispatch). Full marks.
"""
import torch
from torch.nn import functional as F

BLOCK = 1024
_FUTURE = torch.triu(torch.ones(BLOCK, BLOCK, dtype=torch.bool), diagonal=1)  # built once


def causal_softmax(scores):
    T = scores.shape[-1]  # scores: (B, T, T)
    return F.softmax(scores.masked_fill(_FUTURE[:T, :T], float("-inf")), dim=-1)
