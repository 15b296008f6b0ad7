"""Right code with a habit (issue 32, written blind to the grader): Habit: assert q.shape == k.shape, and float(...) of the mean score in a print.
Values decide, the record only adds: full marks expected.
"""
import math

import torch


def attention_scores(q, k):
    assert q.shape == k.shape, (q.shape, k.shape)
    head_size = k.shape[-1]
    weights = q @ k.transpose(-2, -1) * (1 / math.sqrt(head_size))
    print("mean score", round(float(weights.mean()), 3))
    return weights
