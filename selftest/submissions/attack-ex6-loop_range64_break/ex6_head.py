"""Attack: a loop over positions the source reader cannot see, `for t in range(64)` with a break.

The loop runs over a literal range(64) and stops with `if t >= T: break`: no range(T), no
x.shape in the loop's header. It computes what twin-ex6-loop computes, one position at a time.
Honest points: those of its twin, twin-ex6-loop (23/25: all but "no Python loop over positions").
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
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        scale = q.shape[-1] ** -0.5
        T = x.shape[1]
        rows = []
        for t in range(64):  # a constant bound, not T
            if t >= T:
                break
            scores = q[:, t:t + 1] @ k[:, :t + 1].transpose(-2, -1) * scale  # (B, 1, t + 1)
            rows.append(F.softmax(scores, dim=-1) @ v[:, :t + 1])  # (B, 1, head_size)
        return torch.cat(rows, dim=1)  # (B, T, head_size)
