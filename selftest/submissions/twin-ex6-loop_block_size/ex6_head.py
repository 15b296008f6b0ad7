"""Honest twin of the hidden-loop attacks that keep their number of operations steady
(attack-ex6-loop_sorted_key, loop_method_via_tuple, loop_subpackage, loop_importlib,
loop_marshal_code): the same loop, written plainly in forward.

The loop runs block_size times whatever T is: step t computes the row of position min(t, T - 1)
(so the steps past T - 1 repeat the last row's work), and the first T rows are kept. Right values,
but one position at a time in a Python loop: it earns all but "no Python loop over positions".
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
        self.block_size = block_size

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        T = x.shape[1]
        scale = q.shape[-1] ** -0.5
        rows = []
        for t in range(self.block_size):  # as many steps at every T
            s = min(t, T - 1)  # position s sees positions 0..s
            scores = q[:, s:s + 1] @ k[:, :s + 1].transpose(-2, -1) * scale  # (B, 1, s + 1)
            rows.append(F.softmax(scores, dim=-1) @ v[:, :s + 1])  # (B, 1, head_size)
        return torch.cat(rows[:T], dim=1)  # (B, T, head_size)
