"""Right code with a habit (issue 32, written blind to the grader): Habit: the mask is cached on the object inside forward and rebuilt when T changes.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.block_size = block_size
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self._mask = None

    def forward(self, x):
        B, T, C = x.shape
        if self._mask is None or self._mask.shape[0] != T:
            self._mask = torch.tril(torch.ones(T, T))
        q, k, v = self.query(x), self.key(x), self.value(x)
        att = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
        att = att.masked_fill(self._mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return att @ v
