"""Attack (issue 23): the causal mask built by a Python loop over positions, in forward, with its
operations hidden from the record (torch._C._DisableTorchDispatch()): the record used to show the
mask as a fixed tensor and no loop.

A tensor that no recorded operation made, and that is neither an input, a number, nor one of the
object's own tensors, is work outside torch: the checks that need the record fail.
Twin: twin-ex6-mask_loop (the same loop, not hidden).
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
        with torch._C._DisableTorchDispatch():
            mask = torch.zeros(T, T, dtype=torch.bool)
            for t in range(T):  # row t: the positions after t
                mask[t, t + 1:] = True
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        weights = weights.masked_fill(mask, float("-inf"))
        return F.softmax(weights, dim=-1) @ v
