"""Attack (issue 23, the same class as a custom backward, without one): the forward pass of a head
with no mask, the gradients of a masked head, by a detached difference:
    out = masked + (unmasked - masked).detach()
Plain autograd, in plain aten operations: autograd over the record gives the masked head's
gradients. The judge's gradients must agree with how the record's own output changes.
Twin: twin-ex6-no_mask.
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

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        unmasked = F.softmax(scores, dim=-1) @ v
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        masked = F.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
        return masked + (unmasked - masked).detach()
