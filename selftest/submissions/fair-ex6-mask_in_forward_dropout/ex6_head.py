"""Fair: the mask built inside forward (no buffer, any T), math.sqrt, an unused Dropout(0.0)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.mT / math.sqrt(k.shape[-1])
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        weights = self.dropout(F.softmax(scores.masked_fill(future, float("-inf")), dim=-1))
        return weights @ v
