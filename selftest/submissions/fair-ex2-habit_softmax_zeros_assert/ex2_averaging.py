"""Right code with a habit (issue 32, written blind to the grader): Habit: Karpathy's "version 3" (zeros, masked_fill -inf, softmax) plus assert torch.allclose(row sums, ones).
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn.functional as F


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    wei = torch.zeros((T, T))
    wei = wei.masked_fill(tril == 0, float("-inf"))
    wei = F.softmax(wei, dim=-1)
    assert torch.allclose(wei.sum(-1), torch.ones(T)), "rows must sum to 1"
    return wei


def average_context(x):
    B, T, C = x.shape
    wei = averaging_matrix(T)
    out = wei @ x
    return out
