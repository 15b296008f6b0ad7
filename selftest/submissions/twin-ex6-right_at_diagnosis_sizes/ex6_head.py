"""Honest twin of attack-ex6-right_at_diagnosis_sizes: the same head at every size.

The query weight detached and the scores unscaled, whatever the block size: two slips, made
plainly.
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
        T = x.shape[1]
        q = x @ self.query.weight.detach().T  # (B, T, head_size), no gradient to the query
        k, v = self.key(x), self.value(x)
        scale = 1.0
        weights = q @ k.transpose(-2, -1) * scale
        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
