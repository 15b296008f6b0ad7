"""Right code with a habit (issue 32, written blind to the grader): Habit: softmax written by hand (row max, exp, normalise) with the mask kept as a plain bool tensor attribute.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.head_size = head_size
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.mask = torch.tril(torch.ones(block_size, block_size)).bool()

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        att = q @ k.transpose(-2, -1) / self.head_size ** 0.5
        att = att.masked_fill(~self.mask[:T, :T], float("-inf"))
        att = att - att.amax(dim=-1, keepdim=True)
        att = att.exp()
        att = att / att.sum(dim=-1, keepdim=True)
        return att @ v
