"""Attack (issue 32): a loop over positions, except at the sizes only the how-checks used (a
block_size of 129 or more, or the long T): there, a short vectorised program with no mask, wrong
but loop-free. The no-loop check read those calls' records and compared them with nothing (+2).
Every call a how-check reads is now compared with the reference, and waits until it is right.
Twin: twin-ex6-loop (the loop at every size), 23/25.
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
        if self.block_size > 100 or x.shape[1] > 100:  # the how-checks' calls
            return F.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v
        rows = []
        for t in range(x.shape[1]):  # position t sees positions 0..t
            scores = q[:, t:t + 1] @ k[:, :t + 1].transpose(-2, -1) * scale  # (B, 1, t + 1)
            rows.append(F.softmax(scores, dim=-1) @ v[:, :t + 1])  # (B, 1, head_size)
        return torch.cat(rows, dim=1)  # (B, T, head_size)
