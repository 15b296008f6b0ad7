"""Real code, fair: the Annotated Transformer's attention() and subsequent_mask().

Modelled on harvardnlp/annotated-transformer, the_annotated_transformer.py (def subsequent_mask:
a local variable named like its function, `subsequent_mask = torch.triu(torch.ones(attn_shape),
diagonal=1).type(torch.uint8)`, `return subsequent_mask == 0`; def attention: scores =
torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k), masked_fill(mask == 0, -1e9),
scores.softmax(dim=-1), optional dropout, returns (torch.matmul(p_attn, value), p_attn)), MIT.
Logic and names kept, text re-typed; its docstring "Compute 'Scaled Dot Product Attention'" too.

Adapter: Head makes q, k, v from its three layers and calls attention with subsequent_mask(T).
Right: 25/25 expected.
"""
import math

import torch
import torch.nn as nn


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


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.dropout = nn.Dropout(p=0.0)
        self.attn = None

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        out, self.attn = attention(q, k, v, mask=subsequent_mask(T), dropout=self.dropout)
        return out
