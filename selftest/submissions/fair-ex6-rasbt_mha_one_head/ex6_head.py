"""Real code, fair: Raschka's MultiHeadAttention (the efficient one) with num_heads=1.

Modelled on rasbt/LLMs-from-scratch, ch03/02_bonus_efficient-multihead-attention/ch03.py (class
MultiHeadAttention: W_query/W_key/W_value of d_out, split into heads with view + transpose(1, 2),
scores queries @ keys.transpose(2, 3), a boolean triu mask filled in place with -torch.inf,
softmax of scores / keys.shape[-1]**0.5, re-assembled with contiguous().view), Apache-2.0. Logic
and names kept, text re-typed.

Adapter: num_heads=1, dropout 0.0, and its optional output projection out_proj (a Linear with a
bias, outside the lesson's head) replaced by nn.Identity(); query/key/value are W_query/W_key/
W_value under a second name. Right answer: 25/25 expected.
"""
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, block_size, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(block_size, block_size), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class Head(MultiHeadAttention):
    """The exercise's API: one head, no output projection, the layers under two names."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, block_size, dropout=0.0, num_heads=1)
        self.out_proj = nn.Identity()
        self.query, self.key, self.value = self.W_query, self.W_key, self.W_value
