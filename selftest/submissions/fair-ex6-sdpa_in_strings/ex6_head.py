"""Honest, fair: strings that mention the ready-made attention, which is never called.

A module constant, an error message and a comment name F.scaled_dot_product_attention, sdpa and
flash attention — as learners write them to say what they did *not* use. The head itself is the
lesson's, by hand. Right: 25/25 expected, with no diagnosis.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F

NOTE = "we don't use F.scaled_dot_product_attention (sdpa) or flash attention: every step by hand"


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
        self.how = NOTE

    def forward(self, x):
        B, T, C = x.shape
        if T > self.tril.shape[0]:
            raise ValueError(f"T={T} > block_size; torch.nn.functional.scaled_dot_product_attention "
                             "would not care, this head does")
        q, k, v = self.query(x), self.key(x), self.value(x)
        # the same as scaled_dot_product_attention(q, k, v, is_causal=True), written out:
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
