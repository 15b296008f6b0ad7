"""Attack (issue 23): a loop of a fixed number of steps, as many as the longest T graded (the
attack of issue 23 took 40 steps against a cap of 150 operations), one operation a step: the mask
written row by row, whatever T is. Its record is as long at every T, so it does not grow.

A fixed loop that is right at T = LONG_T takes at least LONG_T steps, more operations than any
vectorised head needs: "no loop" is measured against the sizes, not a fixed cap.
Twin: twin-ex6-loop_block_size (a loop of a fixed number of steps, plainly), 23/25.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F

STEPS = 136  # the longest block_size graded (LONG_T + 8), whatever T is


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        for t in range(STEPS):  # one operation a step: row t's future to -inf (empty past T)
            weights[:, t:t + 1, t + 1:] = float("-inf")
        return F.softmax(weights, dim=-1) @ v
