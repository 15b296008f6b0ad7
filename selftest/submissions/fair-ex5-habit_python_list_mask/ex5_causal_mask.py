"""Right code with a habit (issue 32, written blind to the grader): Habit: causal mask from a Python list comprehension, torch.tensor([[1 if j <= i else 0 ...]]).
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn.functional as F


def causal_softmax(scores):
    T = scores.size(-1)
    mask = torch.tensor([[1 if j <= i else 0 for j in range(T)] for i in range(T)])
    wei = scores.masked_fill(mask == 0, float("-inf"))
    wei = F.softmax(wei, dim=-1)
    return wei
