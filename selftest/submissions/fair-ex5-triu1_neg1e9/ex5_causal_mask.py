"""Fair: the future picked with triu(diagonal=1) and filled with -1e9 instead of -inf."""
import torch


def causal_softmax(scores):
    T = scores.size(-1)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(scores.masked_fill(future, -1e9), dim=-1)
