"""Fair: the mask filled in place with scores.masked_fill_(…), as inside a real model."""
import torch
from torch.nn import functional as F


def causal_softmax(scores):
    # scores: (B, T, T)
    T = scores.shape[-1]
    tril = torch.tril(torch.ones(T, T))  # (T, T)
    scores.masked_fill_(tril == 0, float("-inf"))  # in place: the future → -inf
    return F.softmax(scores, dim=-1)  # (B, T, T)
