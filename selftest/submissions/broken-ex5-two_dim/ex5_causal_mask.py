"""Broken: a 2-D tensor returned, the weights of the first sample only. The derivative check sends
T copies of a (T, T) table: the (T, T) answer then has the first two sizes it expects, and the
judge must not take it for (T, T, T)."""
import torch
from torch.nn import functional as F


def causal_softmax(scores):
    T = scores.shape[-1]
    tril = torch.tril(torch.ones(T, T))
    weights = F.softmax(scores.masked_fill(tril == 0, float("-inf")), dim=-1)
    return weights[0]  # (T, T): the first sample alone
