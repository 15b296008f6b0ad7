"""Real code, fair: minGPT's CausalSelfAttention with one head.

Modelled on karpathy/minGPT, mingpt/model.py (class CausalSelfAttention, whose docstring says
"I believe I could have just used torch.nn.MultiheadAttention but ... rolling my own here"),
MIT. Kept: self.key/self.query/self.value Linears, a `mask` tril buffer viewed (1, 1, bs, bs),
k/q/v viewed (B, T, nh, hs) and transposed, att = (q @ kᵀ) * (1.0 / math.sqrt(k.size(-1))),
masked_fill(self.mask[:, :, :T, :T] == 0, float('-inf')), softmax, attn_drop, att @ v, and
re-assembled. Re-typed.

Adapter: n_head=1, the API's bias=False (minGPT's Linears have biases), views by the head size
(minGPT views by C = n_embd), no output projection, no @autocast(). Right: 25/25 expected.
"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    """
    A vanilla multi-head masked self-attention layer. One could have just used
    torch.nn.MultiheadAttention, but this one is rolled by hand.
    """

    def __init__(self, n_embd, head_size, block_size, n_head=1, attn_pdrop=0.0):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.attn_drop = nn.Dropout(attn_pdrop)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))
        self.n_head = n_head

    def forward(self, x, layer_past=None):
        B, T, C = x.size()
        hs = self.query.out_features
        k = self.key(x).view(B, T, self.n_head, hs // self.n_head).transpose(1, 2)
        q = self.query(x).view(B, T, self.n_head, hs // self.n_head).transpose(1, 2)
        v = self.value(x).view(B, T, self.n_head, hs // self.n_head).transpose(1, 2)

        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_drop(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, hs)
        return y


Head = CausalSelfAttention  # Head(n_embd, head_size, block_size)
