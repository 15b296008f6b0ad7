"""Right code with a habit (issue 32, written blind to the grader): Habit: forward calls F.linear with each layer's weight explicitly (and reads head_size into Python for a print).
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q = F.linear(x, self.query.weight)
        k = F.linear(x, self.key.weight)
        v = F.linear(x, self.value.weight)
        head_size = int(q.shape[-1])
        print("head_size", head_size)
        return q, k, v
