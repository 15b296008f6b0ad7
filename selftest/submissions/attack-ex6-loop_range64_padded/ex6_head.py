"""Attack: a loop over positions with a literal bound, range(64), and no break.

Every call makes 64 steps whatever T is (step t computes the row of position min(t, T - 1)), so
the number of torch operations does not change with T or B; the loop's header names no T. The
same rows as twin-ex6-loop_block_size, whose loop runs block_size times. Honest points: the
twin's (all but "no Python loop over positions").
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
        T = x.shape[1]
        scale = q.shape[-1] ** -0.5
        rows = []
        for t in range(64):  # a constant bound: 64 steps at every T
            s = min(t, T - 1)
            scores = q[:, s:s + 1] @ k[:, :s + 1].transpose(-2, -1) * scale
            rows.append(F.softmax(scores, dim=-1) @ v[:, :s + 1])
        return torch.cat(rows[:T], dim=1)  # (B, T, head_size)
