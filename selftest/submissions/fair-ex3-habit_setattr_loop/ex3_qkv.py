"""Right code with a habit (issue 32, written blind to the grader): Habit: the three layers created with setattr in a loop over their names; forward builds the tuple with a generator.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        for name in ("query", "key", "value"):
            setattr(self, name, nn.Linear(n_embd, head_size, bias=False))

    def forward(self, x):
        return tuple(layer(x) for layer in (self.query, self.key, self.value))
