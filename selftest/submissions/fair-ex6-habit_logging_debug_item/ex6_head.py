"""Right code with a habit (issue 32, written blind to the grader): Habit: logging.debug with .item() of the attention weights (max weight, mean score).
Values decide, the record only adds: full marks expected.
"""
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q = self.query(x)
        k = self.key(x)
        scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        logger.debug("mean score %.3f", scores.mean().item())
        scores = scores.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(scores, dim=-1)
        logger.debug("max weight %.3f", wei.max().item())
        return wei @ self.value(x)
