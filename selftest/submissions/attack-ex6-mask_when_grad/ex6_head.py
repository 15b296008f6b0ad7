"""Attack (issue 32): a head with no mask that masks whenever autograd is on, or its input needs a
gradient: the derivative checks' calls. Their gradients are a masked head's; but they are
compared with central differences of plain forward calls, which have no mask.
Twin: twin-ex6-no_mask, 7/25.
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
        if torch.is_grad_enabled() and (x.requires_grad or x.grad_fn is not None):
            scores = scores.masked_fill(torch.ones(T, T).tril() == 0, float("-inf"))
        return F.softmax(scores, dim=-1) @ v
