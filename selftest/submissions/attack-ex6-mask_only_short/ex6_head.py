"""Attack (a blind set): a head that masks the future only for sequences of up to 16 positions.

As attack-ex5-mask_only_short: every check of a property now runs at the long T (128) too,
causality and the row gradients at a sample of its positions (grading.checks.positions).

Honest points: ex6 7, those of twin-ex6-no_mask (10 when the row gradients were taken at the
first shape alone).
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

    def forward(self, x):
        T = x.shape[1]  # x: (B, T, n_embd)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, T)
        if T <= 16:
            scores = scores.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return F.softmax(scores, dim=-1) @ v  # long sequences go unmasked
