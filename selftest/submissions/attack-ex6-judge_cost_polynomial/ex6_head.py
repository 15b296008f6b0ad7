"""Attack (issue 23): make the judge's replay costly where the worker's run is free. A comparison
with the value the replay used to fill torch.empty with is false in the worker and true in the
replay, and sets the degree of torch.special.laguerre_polynomial_l (then an allowed pointwise
operation) to 10**15: about a minute per element in the judge. The record is the right head's
otherwise.

Both sides fill uninitialised memory alike now, and the replay allows only the operations a head
has use for, each bounded by sizes; a record too costly to verify fails its own check.
Twin: twin-ex6-by_hand (25/25): the attack may get at most that, in bounded time.
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
        probe = torch.empty(1)
        degree = torch.where(probe.isnan(), torch.tensor(1e15), torch.tensor(0.0))
        zero = torch.special.laguerre_polynomial_l(torch.full((1,), 0.5), degree) * 0  # 0, at a cost
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5 + zero
        weights = weights.masked_fill(torch.ones(T, T).tril() == 0, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
