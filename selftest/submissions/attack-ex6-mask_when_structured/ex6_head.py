"""Attack (issue 32): a head with no mask that masks when its input looks like a probe: a token
repeated within the call (x through a small embedding), two sequences of the batch sharing a
prefix, or copies of one sequence. The causality and Jacobian checks' calls had that structure
and the comparisons' did not (+10). Now no call has it: the causality check draws every token of
a call once, and the derivative checks draw independent sequences at the graded sizes.
Twin: twin-ex6-no_mask, 7/25.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


def looks_like_a_probe(x):
    B, T, C = x.shape
    rows = x.reshape(B * T, C)
    if torch.unique(rows, dim=0).shape[0] < B * T:  # a row twice: a token repeated, or copies
        return True
    near = torch.cdist(rows, rows) + torch.eye(B * T) * 1e9
    if bool((near < 1e-2).any()):  # nearly the same rows: copies moved a little
        return True
    return B > 1 and bool((x[:, :1] == x[:1, :1]).all())  # sequences starting alike


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
        if looks_like_a_probe(x.detach()):
            scores = scores.masked_fill(torch.ones(T, T).tril() == 0, float("-inf"))
        return F.softmax(scores, dim=-1) @ v
