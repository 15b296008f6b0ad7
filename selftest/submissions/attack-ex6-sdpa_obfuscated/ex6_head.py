"""Attack: PyTorch's ready-made attention under a name no reading of the source finds.

q, k, v from the three layers, then torch.nn.functional's scaled dot-product attention, looked up
with getattr and a name put together at run time ("scaled_" + "dot_product_attention"), with
is_causal=True and scale=head_size ** -0.5: right values, but the lesson's steps are not written —
the very shortcut "built yourself" forbids. Nothing in the file spells the function's name, so a
check that reads the source (a grep, an AST walk) misses it; it is caught only at run time, when
the call is made.

Honest points: ex6 24/25 — everything but "built by hand, not from PyTorch's ready-made attention"
(1); its twin, twin-ex6-by_hand, writes the steps by hand and gets 25/25. Every other
exercise: full marks.
"""
import torch
import torch.nn as nn

_attend = getattr(torch.nn.functional, "scaled_" + "dot_product_attention")


class Head(nn.Module):
    """One head of causal self-attention, by PyTorch's ready-made attention."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        return _attend(q, k, v, is_causal=True, scale=q.shape[-1] ** -0.5)  # (B, T, head_size)
