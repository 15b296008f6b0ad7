"""Attack: PyTorch's ready-made attention by its math kernel's private name.

q, k, v from the three layers, then torch._scaled_dot_product_attention_math(q, k, v,
is_causal=True, scale=head_size ** -0.5)[0] (the kernel returns the output and the weights): right
values, but the lesson's steps are not written — the very shortcut "built yourself" forbids. A
counter that looks for the public names (scaled_dot_product_attention,
multi_head_attention_forward) does not know this one.

Honest points: ex6 24/25 — everything but "built by hand, not from PyTorch's ready-made attention"
(1); its twin, twin-ex6-by_hand, writes the steps by hand and gets 25/25. Every other exercise:
full marks.
"""
import torch
import torch.nn as nn


class Head(nn.Module):
    """One head of causal self-attention, by PyTorch's ready-made attention."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        out, _ = torch._scaled_dot_product_attention_math(
            q, k, v, is_causal=True, scale=q.shape[-1] ** -0.5)
        return out  # (B, T, head_size)
