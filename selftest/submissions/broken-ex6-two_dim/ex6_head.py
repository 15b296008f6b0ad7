"""Broken: forward returns a 2-D tensor, (B, T), each position's output summed over head_size. The
derivative check sends T copies of one sequence: the (T, T) answer then has the first two sizes it
expects, and the judge must not take it for (T, T, head_size)."""
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
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        out = F.softmax(weights, dim=-1) @ v  # (B, T, head_size)
        return out.sum(dim=-1)  # (B, T): one number per position
