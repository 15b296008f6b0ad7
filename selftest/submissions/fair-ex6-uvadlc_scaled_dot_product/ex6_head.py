"""Real code, fair: the UvA deep-learning tutorial's own scaled_dot_product() function.

Modelled on phlippe/uvadlc_notebooks, docs/tutorial_notebooks/tutorial6/Transformers_and_MHAttention
.ipynb (def scaled_dot_product(q, k, v, mask=None): attn_logits = torch.matmul(q, k.transpose(-2,
-1)) / math.sqrt(d_k), masked_fill(mask == 0, -9e15), F.softmax, values = torch.matmul(attention,
v), returns (values, attention); and class MultiheadAttention beside it, with a fused qkv_proj),
MIT (CC BY-SA for the text). Logic and names kept, text re-typed.

An own function named scaled_dot_product and an own class MultiheadAttention (defined, not used by
Head): the learner's names, honest code. Right: 25/25 expected.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size()[-1]
    attn_logits = torch.matmul(q, k.transpose(-2, -1))
    attn_logits = attn_logits / math.sqrt(d_k)
    if mask is not None:
        attn_logits = attn_logits.masked_fill(mask == 0, -9e15)
    attention = F.softmax(attn_logits, dim=-1)
    values = torch.matmul(attention, v)
    return values, attention


class MultiheadAttention(nn.Module):

    def __init__(self, input_dim, embed_dim, num_heads):
        super().__init__()
        assert embed_dim % num_heads == 0, "Embedding dimension must be 0 modulo number of heads."
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv_proj = nn.Linear(input_dim, 3 * embed_dim)
        self.o_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, mask=None, return_attention=False):
        batch_size, seq_length, _ = x.size()
        qkv = self.qkv_proj(x)
        qkv = qkv.reshape(batch_size, seq_length, self.num_heads, 3 * self.head_dim)
        qkv = qkv.permute(0, 2, 1, 3)  # [Batch, Head, SeqLen, Dims]
        q, k, v = qkv.chunk(3, dim=-1)
        values, attention = scaled_dot_product(q, k, v, mask=mask)
        values = values.permute(0, 2, 1, 3).reshape(batch_size, seq_length, self.embed_dim)
        o = self.o_proj(values)
        return (o, attention) if return_attention else o


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        T = x.size(1)
        values, _ = scaled_dot_product(self.query(x), self.key(x), self.value(x),
                                       mask=self.mask[:T, :T])
        return values
