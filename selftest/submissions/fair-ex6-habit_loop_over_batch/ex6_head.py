"""Fair: a head that attends one sequence at a time, looping over the batch (from a blind set of
right code with habits): each sequence's positions are all computed at once.

The check is of a loop over positions ("forward works on all positions at once, with no Python
loop over them"); its record grows with B, not with T. It read a loop over positions and cost
2 points (grading.checks.shown_work._loop compared sizes of other B). Full marks.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    """一个因果自注意力头。 One head of causal self-attention."""

    def __init__(self, n_embd, head_size, block_size):
        super(Head, self).__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def _attend(self, xb):
        # xb: (T, n_embd), one sequence; all T positions at once
        T = xb.shape[0]
        q, k, v = self.query(xb), self.key(xb), self.value(xb)
        wei = q @ k.t() * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ v

    def forward(self, x):
        # the batch is handled sequence by sequence
        return torch.stack([self._attend(x[b]) for b in range(x.shape[0])], dim=0)
