"""Broken: another exercise imported as a top-level module, `from ex5_causal_mask import …`. In a
grader's worker no folder is on sys.path, so it resolves to nothing: the message says to use
`from .ex5…` (or `from exercises.ex5…`, which fair-ex6-reuses_ex5_absolute grades)."""
import torch.nn as nn

from ex5_causal_mask import causal_softmax


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k = self.query(x), self.key(x)
        return causal_softmax(q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5) @ self.value(x)
