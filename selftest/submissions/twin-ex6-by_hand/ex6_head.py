"""Honest twin of attack-ex6-sdpa_aten_default, sdpa_disable_torch_function, sdpa_math and
sdpa_obfuscated: the same head with the lesson's steps written by hand.

q, k, v from nn.Linear(n_embd, head_size, bias=False); scores q @ kᵀ scaled by head_size ** -0.5;
the future filled with −∞ (a mask made in forward); softmax over the last dimension; weights @ v.
No ready-made attention anywhere.

Honest points: ex6 25/25.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    """One head of causal self-attention, step by step."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # (B, T, T)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)
        weights = weights.masked_fill(future, float("-inf"))
        weights = F.softmax(weights, dim=-1)  # (B, T, T)
        return weights @ v  # (B, T, head_size)
