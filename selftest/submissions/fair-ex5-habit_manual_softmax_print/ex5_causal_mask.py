"""Right code with a habit (issue 32, written blind to the grader): Habit: softmax written by hand (subtract row max, exp, normalise), with a short print of a weight via .item().
Values decide, the record only adds: full marks expected.
"""
import torch


def causal_softmax(scores):
    T = scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    s = scores.masked_fill(future, float("-inf"))
    s = s - s.max(dim=-1, keepdim=True).values
    e = torch.exp(s)
    w = e / e.sum(dim=-1, keepdim=True)
    print(f"w[0,0,0]={w[0, 0, 0].item():.2f}")
    return w
