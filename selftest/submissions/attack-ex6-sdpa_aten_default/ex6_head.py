"""Attack: PyTorch's ready-made attention called as the ATen operator, out of a name check's sight.

q, k, v from the three layers, then torch.ops.aten.scaled_dot_product_attention.default(q, k, v,
is_causal=True, scale=head_size ** -0.5): right values, but the lesson's steps are not written —
the very shortcut "built yourself" forbids. A torch-function counter sees this call under the
operator overload's name, "scaled_dot_product_attention.default", which an exact-name check for
"scaled_dot_product_attention" misses; the operator itself (aten::scaled_dot_product_attention, and
the kernels it runs, _scaled_dot_product_flash_attention_for_cpu or
_scaled_dot_product_attention_math)
is still what runs.

Honest points: ex6 24/25 — everything but "built by hand, not from PyTorch's ready-made attention"
(1); its twin, twin-ex6-by_hand, writes the steps by hand and gets 25/25. Every other
exercise: full marks.
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
        return torch.ops.aten.scaled_dot_product_attention.default(
            q, k, v, is_causal=True, scale=q.shape[-1] ** -0.5)  # (B, T, head_size)
