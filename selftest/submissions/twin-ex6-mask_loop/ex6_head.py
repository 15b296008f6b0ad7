"""Honest twin of attack-ex6-mask_hidden_dispatch: the causal mask built by a Python loop over
positions in forward, in plain sight. Right values; the number of torch operations grows with T.

Honest points: ex6 23/25 — everything but "no Python loop over positions" (2).
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        mask = torch.zeros(T, T, dtype=torch.bool)
        for t in range(T):  # row t: the positions after t
            mask[t, t + 1:] = True
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        weights = weights.masked_fill(mask, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
