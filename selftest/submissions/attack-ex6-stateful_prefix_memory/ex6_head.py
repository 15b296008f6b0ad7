"""Attack: a head with no mask that answers each row from its memory of earlier calls.

forward computes attention with no causal mask. It remembers every row it has answered, keyed by
the layers' weights and the row's prefix x[b, :t+1]; when a later call brings a prefix it has seen,
it answers that row from memory. A per-token causality check (run once, then again with the
tokens after t changed) then sees the rows up to t unchanged, though the head sees the future.
Its twin, twin-ex6-no_mask, is the same head without the memory (6/25).
"""
import hashlib

import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self._memory = {}  # (weights, prefix) → the row answered for it

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # (B, T, T)
        fresh = F.softmax(weights, dim=-1) @ v  # no mask: every position sees the future
        layers = hashlib.sha1(b"".join(
            layer.weight.detach().numpy().tobytes() for layer in (self.query, self.key, self.value)
        )).digest()
        xs, rows = x.detach().numpy(), fresh.detach()
        B, T = xs.shape[:2]
        known = torch.zeros(B, T, 1, dtype=torch.bool)
        remembered = torch.zeros_like(rows)
        for b in range(B):
            for t in range(T):
                key = (layers, xs[b, :t + 1].tobytes())
                if key in self._memory:
                    known[b, t] = True
                    remembered[b, t] = self._memory[key]
                else:
                    self._memory[key] = rows[b, t].clone()
        return torch.where(known, remembered, fresh)
