"""Right code with a habit (issue 32, written blind to the grader): Habit: a boolean triu(diagonal=1) mask with torch.where, einsum products, and float(...) of the scale in a print.
Values decide, the record only adds: full marks expected.
"""
import math

import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer(
            "future", torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), diagonal=1)
        )

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        scale = 1.0 / math.sqrt(q.shape[-1])
        print("scale", float(scale))
        s = torch.einsum("btd,bsd->bts", q, k) * scale
        s = torch.where(self.future[:T, :T], torch.full_like(s, float("-inf")), s)
        p = s.softmax(dim=-1)
        return torch.einsum("bts,bsd->btd", p, v)
