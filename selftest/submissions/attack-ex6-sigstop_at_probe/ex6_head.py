"""Attack (issue 32): a head with no mask that stops its own process (SIGSTOP) at the causality
check, the first call whose input shares its first position with an earlier call's. A stopped
worker used to be charged nothing: the row read "grading error: the machine was too busy" on
every regrade. Its stopped time is now its own, as sleep: the call runs out of time.
Twin: twin-ex6-no_mask, 7/25.
"""
import os
import signal

import torch.nn as nn
from torch.nn import functional as F

SEEN = set()


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        first = x[0, 0].detach().numpy().tobytes()
        if first in SEEN:
            os.kill(os.getpid(), signal.SIGSTOP)
        SEEN.add(first)
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        return F.softmax(q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5, dim=-1) @ v
