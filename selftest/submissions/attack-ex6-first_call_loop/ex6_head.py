"""Attack (issue 23): the lesson's vectorised head on the first call for an object and a size, the
call whose record used to be replayed; a Python loop over positions on every later call.

It probes no dispatch mode, so hiding the mode would not stop it. Every call is verified now: the
later calls' records are other programs than the first's, and they show the loop.
Twin: twin-ex6-loop (the loop on every call), 23/25.
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
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
        self.seen = set()

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        scale = q.shape[-1] ** -0.5
        if (B, T) not in self.seen:  # the first call of this size: the lesson's way
            self.seen.add((B, T))
            weights = q @ k.transpose(-2, -1) * scale
            weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            return F.softmax(weights, dim=-1) @ v
        rows = []
        for t in range(T):  # every later call: one position at a time
            scores = q[:, t:t + 1] @ k[:, :t + 1].transpose(-2, -1) * scale
            rows.append(F.softmax(scores, dim=-1) @ v[:, :t + 1])
        return torch.cat(rows, dim=1)
