"""Attack: PyTorch's ready-made attention looked up in vars(F) by a name built at run time.

vars(F)["scaled_" + "dot_product_attention"] is F.scaled_dot_product_attention; called with
is_causal=True it gives the right values without the lesson's steps. Its twin,
twin-ex6-sdpa_reversed_name, calls F.scaled_dot_product_attention plainly (24/25: all but
"built by hand").
"""
import torch.nn as nn
from torch.nn import functional as F

_attend = vars(F)["scaled_" + "dot_product_attention"]


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        return _attend(q, k, v, is_causal=True, scale=q.shape[-1] ** -0.5)
