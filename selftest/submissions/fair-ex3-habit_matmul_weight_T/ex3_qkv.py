"""Right code with a habit (issue 32, written blind to the grader): Habit: q = x @ self.query.weight.T written by hand, with float(...) of a statistic in a print.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q = x @ self.query.weight.T
        k = x @ self.key.weight.T
        v = x @ self.value.weight.T
        print(f"v std {float(v.std()) if v.numel() > 1 else 0.0:.3f}")
        return q, k, v
