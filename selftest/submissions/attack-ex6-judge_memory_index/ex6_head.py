"""Attack (issue 23): make the judge's replay take memory where the worker's run takes none. The
value the replay used to fill torch.empty with made a nonzero() long only in the judge; indexing
with three broadcast index vectors of that length then made 1024**3 floats (the judge at 4.3 GiB;
here 128**3, 8 MiB, which the worker now pays itself within its own limits: small enough that
the 150 calls of a grade stay far inside the exercise's time in both backends).

Both sides fill uninitialised memory alike now, and the bound of an indexing operation is the
broadcast size of its indices, known before it runs.
Twin: twin-ex6-by_hand (25/25): the attack may get at most that, with the judge within its limits.
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
        probe = torch.empty(128)
        picked = probe.isnan().nonzero()[:, 0]  # 128 long where empty reads NaN, else short
        table = torch.zeros(1, 1, 1)
        zero = table[picked.view(-1, 1, 1) * 0, picked.view(1, -1, 1) * 0,
                     picked.view(1, 1, -1) * 0].sum() * 0
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5 + zero
        weights = weights.masked_fill(torch.ones(T, T).tril() == 0, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
