"""Attack (issue 23): the causal mask built by a loop of a fixed 48 steps (past the longest T graded
then), one operation a step, whatever T is: about 70 operations in all, under the record's fixed
cap of 150, and as many at every T, so the record did not grow (25/25 against its twin's 23).

"No loop" is measured against the sizes now: at T = LONG_T a 48-step loop is wrong (its mask is
too small), and one long enough to be right makes more operations than a vectorised head.
Twin: twin-ex6-loop_block_size (a loop of a fixed number of steps, plainly), 23/25.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F

STEPS = 48  # the longest block_size graded then (LONG_T + 8), so T never reaches it


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        position = torch.arange(STEPS)
        future = torch.stack([position > t for t in range(STEPS)])  # row t: positions after t
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        weights = weights.masked_fill(future[:T, :T], float("-inf"))
        return F.softmax(weights, dim=-1) @ v
