"""Attack: PyTorch's ready-made attention called where a torch-function counter cannot see it.

q, k, v from the three layers, then F.scaled_dot_product_attention(q, k, v, is_causal=True,
scale=head_size ** -0.5) inside `torch._C.DisableTorchFunction()`, which switches off every
torch-function mode, a TorchFunctionMode call counter included: right values, but the lesson's
steps are not written — the very shortcut "built yourself" forbids — and a counter built on
torch-function modes sees only the three projections. The operators that run
(aten::scaled_dot_product_attention and its kernels) are still visible below that level.

Honest points: ex6 24/25 — everything but "built by hand, not from PyTorch's ready-made attention"
(1); its twin, twin-ex6-by_hand, writes the steps by hand and gets 25/25.
Every other exercise: full marks.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    """One head of causal self-attention, by PyTorch's ready-made attention."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        with torch._C.DisableTorchFunction():
            return F.scaled_dot_product_attention(
                q, k, v, is_causal=True, scale=q.shape[-1] ** -0.5)  # (B, T, head_size)
