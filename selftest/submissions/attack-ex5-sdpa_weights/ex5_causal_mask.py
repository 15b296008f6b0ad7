"""Attack: the causal softmax computed by PyTorch's ready-made attention, out of a counter's sight.

scaled_dot_product_attention(q, k, v, is_causal=True, scale=1) is softmax(q @ kᵀ + causal mask) @ v.
With q = scores, k = the identity (so q @ kᵀ = scores) and v = the identity (so the weights come
out unchanged), it returns exactly causal_softmax(scores). The call runs inside
`torch._C.DisableTorchFunction()`, so a torch-function call counter does not see it: right values,
but the mask and softmax are not written by hand — the very shortcut "built yourself" forbids.

Honest points: ex5 19/20 — everything but "the mask and softmax are written by hand" (1); its twin,
twin-ex5-right, writes them by hand and gets 20/20. Every other exercise: full marks.
"""
import torch
from torch.nn import functional as F


def causal_softmax(scores):
    B, T, _ = scores.shape
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)  # k = v = I
    with torch._C.DisableTorchFunction():
        return F.scaled_dot_product_attention(scores, eye, eye, is_causal=True, scale=1.0)
