"""Fair: the head reuses the learner's own exercise 5 by an absolute import from `exercises`.

A learner whose files live in exercises/ writes `from exercises.ex5_causal_mask import
causal_softmax`, as their editor suggests. Graded, `exercises` is the folder being graded (never
the repository's stubs), so the head is the lesson's, and its ex5 the solution's.
Right: 25/25 expected.
"""
import torch
import torch.nn as nn

from exercises.ex5_causal_mask import causal_softmax


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        if T > self.tril.shape[0]:
            raise ValueError(f"T={T} is longer than block_size={self.tril.shape[0]}")
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, T)
        return causal_softmax(scores) @ v  # ex5's own mask and softmax: (B, T, head_size)
