"""Attack (issue 23): the lesson's head on the first call for an object and a size, PyTorch's
ready-made attention on every later call (same values).

Every call is verified now, so the later calls' records show the ready-made attention.
Twin: twin-ex6-sdpa_reversed_name (F.scaled_dot_product_attention on every call), 24/25.
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
        self.calls = {}

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        self.calls[B, T] = self.calls.get((B, T), 0) + 1
        if self.calls[B, T] > 1:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
