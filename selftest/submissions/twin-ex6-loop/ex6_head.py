"""Honest twin of attack-ex6-loop_if_no_mode and loop_disable_torch_function.

The same loop over positions, not hidden from anything.

Right values — each position t attends to positions 0..t, scores scaled by head_size ** -0.5,
softmax, a weighted sum of the values — but computed one position at a time in a Python loop, so
the number of torch calls grows with T.

Honest points: ex6 23/25 — everything but "no Python loop over positions" (2).
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    """One causal head, one position at a time."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        scale = q.shape[-1] ** -0.5
        rows = []
        for t in range(x.shape[1]):  # position t sees positions 0..t
            scores = q[:, t:t + 1] @ k[:, :t + 1].transpose(-2, -1) * scale  # (B, 1, t + 1)
            rows.append(F.softmax(scores, dim=-1) @ v[:, :t + 1])  # (B, 1, head_size)
        return torch.cat(rows, dim=1)  # (B, T, head_size)
