"""Honest, fair: the three layers in an nn.ModuleList, applied by a list comprehension.

`self.projections = nn.ModuleList([...])` holds the query, key and value layers, which are also
self.query, self.key and self.value (two names for each); `q, k, v = [layer(x) for layer in
self.projections]` loops over three layers, not over positions. Right: 25/25 expected.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.projections = nn.ModuleList(
            [nn.Linear(n_embd, head_size, bias=False) for _ in range(3)])
        self.query, self.key, self.value = self.projections
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = [layer(x) for layer in self.projections]  # (B, T, head_size) each
        weights = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
