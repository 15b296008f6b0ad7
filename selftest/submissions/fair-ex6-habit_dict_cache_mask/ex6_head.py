"""Right code with a habit (issue 32, written blind to the grader): Habit: a module-level dict cache of masks keyed by T.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

_mask_cache = {}


def get_mask(T):
    if T not in _mask_cache:
        _mask_cache[T] = torch.tril(torch.ones(T, T))
    return _mask_cache[T]


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q = self.query(x)
        k = self.key(x)
        wei = torch.matmul(q, k.transpose(1, 2)) * k.size(-1) ** -0.5
        wei = wei.masked_fill(get_mask(T) == 0, float("-inf"))
        wei = torch.softmax(wei, dim=-1)
        return torch.matmul(wei, self.value(x))
