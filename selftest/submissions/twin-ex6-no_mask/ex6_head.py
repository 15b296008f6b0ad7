"""Honest twin of attack-ex6-scenario_swap, jacobian_patch and randint_patch: the same head with
no causal mask, and no patching.

Every position attends to every position, the future included; everything else is the lesson's
head (q, k, v from nn.Linear(n_embd, head_size, bias=False), scores scaled by head_size ** -0.5,
softmax over the last dimension, weights @ v).

Honest points: ex6 6/25 — the shape (3), no bias (2), only the three layers are trained (1).
"""
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    """One head, but with no causal mask: the future is seen."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # (B, T, T)
        weights = F.softmax(weights, dim=-1)  # no mask: every position sees the future
        return weights @ v  # (B, T, head_size)
