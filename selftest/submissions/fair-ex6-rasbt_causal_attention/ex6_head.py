"""Real code, fair: Sebastian Raschka's CausalAttention (Build a Large Language Model From Scratch).

Modelled on rasbt/LLMs-from-scratch, ch03/02_bonus_efficient-multihead-attention/ch03.py
(class CausalAttention; the same class is in ch03/01_main-chapter-code/ch03.ipynb), Apache-2.0.
Its logic and names are kept (W_query/W_key/W_value, a triu(diagonal=1) `mask` buffer, an
in-place masked_fill_ with -torch.inf, softmax of the scores divided by keys.shape[-1]**0.5,
dropout on the weights); the text is re-typed, not copied.

Adapter: Head(n_embd, head_size, block_size) is CausalAttention(d_in=n_embd, d_out=head_size,
block_size, dropout=0.0), and the API's names are the same layers under a second name:
self.query = self.W_query (as when porting Raschka-style code). Right answer: 25/25 expected.
"""
import torch
import torch.nn as nn


class CausalAttention(nn.Module):

    def __init__(self, d_in, d_out, block_size, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(block_size, block_size), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # in place
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


class Head(CausalAttention):
    """The exercise's API over CausalAttention: the same layers, reachable under two names."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, block_size, dropout=0.0)
        self.query = self.W_query
        self.key = self.W_key
        self.value = self.W_value
