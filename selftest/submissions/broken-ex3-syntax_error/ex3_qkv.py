"""Broken: a syntax error (a missing closing parenthesis)."""
import torch.nn as nn


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        return self.query(x), self.key(x), self.value(x)
