"""Broken: every forward takes 0.8 s, a call (made as in training and as in evaluation) 1.6 s, just
under the 2 s limit of one call that the self-test grades with (5 s by default): the exercise's
time budget of 8 s must stop it, or ex6's ~60 calls would take 96 s."""
import time

import torch.nn as nn


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        time.sleep(0.8)
        return self.value(x)  # the right shape; the values do not matter
