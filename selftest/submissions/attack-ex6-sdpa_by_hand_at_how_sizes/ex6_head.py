"""Attack (issue 32): PyTorch's ready-made attention, except at the sizes only the how-checks used
(a block_size of 129 or more): there a short hand-built head with no mask, wrong. The
built-yourself check read those calls alone and compared them with nothing (+1). Now they are
compared with the reference, and the check waits until they are right.
Twin: twin-ex6-sdpa_reversed_name (ready-made attention at every size), 24/25.
"""
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
        if self.block_size > 100:  # the how-checks' calls
            return F.softmax(q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5, dim=-1) @ v
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
