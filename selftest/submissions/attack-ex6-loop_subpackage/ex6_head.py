"""Attack: the loop over positions in a module of a sub-package of the submission folder.

The folder holds helpers/ (a package) with rows.py; ex6_head imports it relatively, as a
submission's own package allows. rows.attend is the loop of twin-ex6-loop_block_size
(block_size steps at every T). Honest points: that twin's.
"""
import torch.nn as nn

from .helpers.rows import attend


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.block_size = block_size

    def forward(self, x):
        return attend(self.query(x), self.key(x), self.value(x), self.block_size)
