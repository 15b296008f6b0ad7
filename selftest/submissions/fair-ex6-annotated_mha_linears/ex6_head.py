"""Real code, fair: the Annotated Transformer's MultiHeadedAttention, h=1, over a ModuleList.

Modelled on harvardnlp/annotated-transformer, the_annotated_transformer.py (class
MultiHeadedAttention: `self.linears = clones(nn.Linear(d_model, d_model), 4)` and
`query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2) for lin, x in
zip(self.linears, (query, key, value))]`, then attention() with the mask unsqueezed for the heads,
then transpose + contiguous + view; clones = nn.ModuleList of deep copies; subsequent_mask and
attention as in the file), MIT. Logic and names kept, text re-typed.

Adapter: h=1; three layers in the ModuleList (n_embd → head_size, no bias) instead of four (the
fourth, the output Linear, is outside the lesson's head); the API's query/key/value are
self.linears[0], [1], [2] under a second name. A list comprehension over the ModuleList of
the three layers. Right: 25/25 expected.
"""
import copy
import math

import torch
import torch.nn as nn


def clones(module, N):
    "Produce N identical layers."
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def subsequent_mask(size):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    def __init__(self, h, d_in, d_model, dropout=0.0):
        super().__init__()
        assert d_model % h == 0
        self.d_k = d_model // h
        self.h = h
        self.linears = clones(nn.Linear(d_in, d_model, bias=False), 3)
        self.attn = None
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)  # the same mask for all h heads
        nbatches = query.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip(self.linears, (query, key, value))
        ]
        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return x


class Head(MultiHeadedAttention):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__(1, n_embd, head_size)
        for layer in self.linears:  # clones: fresh weights for each, not the one deep-copied
            layer.reset_parameters()
        self.query, self.key, self.value = self.linears

    def forward(self, x):
        return super().forward(x, x, x, mask=subsequent_mask(x.size(1)))
