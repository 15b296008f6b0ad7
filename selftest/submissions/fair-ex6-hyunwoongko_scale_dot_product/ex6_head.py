"""Real code, fair: an own class ScaleDotProductAttention (hyunwoongko/transformer).

Modelled on hyunwoongko/transformer, models/layers/scale_dot_product_attention.py (class
ScaleDotProductAttention: self.softmax = nn.Softmax(dim=-1); in forward(q, k, v, mask=None,
e=1e-12): batch_size, head, length, d_tensor = k.size(); k_t = k.transpose(2, 3); score = (q @
k_t) / math.sqrt(d_tensor); masked_fill(mask == 0, -10000); softmax; v = score @ v; returns
(v, score)), Apache-2.0. Re-typed, logic kept.

Adapter: a heads dimension of 1 and a tril mask; the future gets -10000 (not −∞), which softmax
still sends to 0 in float32 at these score sizes. Right: 25/25 expected.
"""
import math

import torch
from torch import nn


class ScaleDotProductAttention(nn.Module):
    """
    compute scale dot product attention

    Query : given sentence that we focused on (decoder)
    Key : every sentence to check relationship with Query (encoder)
    Value : every sentence same with Key (encoder)
    """

    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, q, k, v, mask=None, e=1e-12):
        # input is a 4 dimension tensor [batch_size, head, length, d_tensor]
        batch_size, head, length, d_tensor = k.size()
        k_t = k.transpose(2, 3)
        score = (q @ k_t) / math.sqrt(d_tensor)
        if mask is not None:
            score = score.masked_fill(mask == 0, -10000)
        score = self.softmax(score)
        v = score @ v
        return v, score


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.attention = ScaleDotProductAttention()
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = (layer(x)[:, None] for layer in (self.query, self.key, self.value))
        out, _ = self.attention(q, k, v, mask=self.tril[:T, :T])
        return out[:, 0]
