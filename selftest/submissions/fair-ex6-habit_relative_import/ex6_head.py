"""Right code with a habit (issue 32, written blind to the grader): Habit: reusing earlier exercises through relative imports (attention_scores from ex4, causal_softmax from ex5).
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn

from .ex4_scaling import attention_scores
from .ex5_causal_mask import causal_softmax


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.block_size = block_size
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        weights = causal_softmax(attention_scores(q, k))
        return weights @ v
