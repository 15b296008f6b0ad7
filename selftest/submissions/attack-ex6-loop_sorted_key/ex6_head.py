"""Attack: per-position work driven by sorted(range(T), key=...): a loop with no for or while.

sorted() calls its key once for each of block_size steps, in order; the key computes the row of
position min(t, T - 1) and appends it, and the first T rows are kept: as many torch operations at
every T. The loop of twin-ex6-loop_block_size, driven by sorted. Honest points: that twin's.
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
        self.block_size = block_size

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        scale = q.shape[-1] ** -0.5
        rows = []

        T = x.shape[1]

        def row(t):  # step t: the row of position s = min(t, T - 1), which sees 0..s
            s = min(t, T - 1)
            scores = q[:, s:s + 1] @ k[:, :s + 1].transpose(-2, -1) * scale
            rows.append(F.softmax(scores, dim=-1) @ v[:, :s + 1])
            return t

        sorted(range(self.block_size), key=row)
        return torch.cat(rows[:T], dim=1)  # (B, T, head_size)
