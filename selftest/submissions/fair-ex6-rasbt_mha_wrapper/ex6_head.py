"""Real code, fair: Raschka's MultiHeadAttentionWrapper with one CausalAttention head.

Modelled on rasbt/LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (section 3.6.1,
MultiHeadAttentionWrapper: `torch.cat([head(x) for head in self.heads], dim=-1)` over an
nn.ModuleList of CausalAttention heads; CausalAttention as in ch03/02_bonus_efficient-multihead-
attention/ch03.py), Apache-2.0. Logic and names kept, text re-typed.

Adapter: Head is the wrapper with num_heads=1; the API's query/key/value are the one head's
W_query/W_key/W_value under a second name (self.query is self.heads[0].W_query). A list
comprehension over a ModuleList (of heads, not of positions). Right answer: 25/25 expected.
"""
import torch
import torch.nn as nn


class CausalAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values


class MultiHeadAttentionWrapper(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class Head(MultiHeadAttentionWrapper):
    """The exercise's API: one head in the wrapper, its layers under the API's names too."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, block_size, dropout=0.0, num_heads=1)
        self.query = self.heads[0].W_query
        self.key = self.heads[0].W_key
        self.value = self.heads[0].W_value
