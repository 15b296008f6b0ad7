"""Honest, fair: helpers with a local variable named like the function itself.

`def causal_mask(T): causal_mask = ...; return causal_mask` and `def scores(q, k): scores = ...`
name a value after its function, which calls nothing: no recursion, no loop. Right: 25/25.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


def causal_mask(T):
    causal_mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
    return causal_mask


def scores(q, k):
    scores = q @ k.transpose(-2, -1)
    scores = scores / q.shape[-1] ** 0.5
    return scores


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        weights = scores(q, k).masked_fill(causal_mask(x.shape[1]), float("-inf"))
        return F.softmax(weights, dim=-1) @ v
