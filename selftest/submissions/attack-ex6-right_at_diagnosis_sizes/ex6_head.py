"""Attack: code that is right only at the one size the diagnosis alone uses.

At block_size 11 (the diagnosis's first draw; no graded case uses it) the head is the lesson's,
except that the query weight is detached; at every other size it also leaves the scores
unscaled. So the graded cases see unscaled scores, but the diagnosis, which decides "the values
are right" from its own size alone, says the values are right and only a gradient is missing.
Its twin, twin-ex6-right_at_diagnosis_sizes, is the same code without the size test: unscaled
and detached at every size.
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
        scale = q.shape[-1] ** -0.5 if self.tril.shape[0] == 11 else 1.0
        weights = q @ k.transpose(-2, -1) * scale
        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
