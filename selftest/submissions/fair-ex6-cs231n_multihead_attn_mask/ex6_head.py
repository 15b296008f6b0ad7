"""Course homework, fair: a CS231n-style MultiHeadAttention filled in, with one head.

Modelled on the Stanford CS231n assignment 3 (2022+), cs231n/transformer_layers.py (class
MultiHeadAttention(embed_dim, num_heads, dropout): self.key, self.query, self.value and self.proj
Linears, self.attn_drop, self.n_head, self.head_dim; forward(query, key, value, attn_mask) where
attn_mask[i, j] == 0 hides j from i, the captioning decoder passing torch.tril(torch.ones(T, T)))
and the students' usual solution: view (N, S, H, E/H) + transpose(1, 2); torch.matmul(Q,
K.transpose(2, 3)) / math.sqrt(self.head_dim); masked_fill(attn_mask == 0, float('-inf'));
attn_drop(softmax); matmul with V; transpose(1, 2).reshape. Re-typed, logic kept.

Adapter: num_heads=1, bias=False (the assignment's Linears have biases), embed_dim split into
n_embd → head_size, no output projection self.proj. Right: 25/25 expected.
"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class MultiHeadAttention(nn.Module):
    """
    A model layer which implements a simplified version of masked attention, as introduced by
    "Attention Is All You Need" (https://arxiv.org/abs/1706.03762).
    """

    def __init__(self, input_dim, embed_dim, num_heads=1, dropout=0.0):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.key = nn.Linear(input_dim, embed_dim, bias=False)
        self.query = nn.Linear(input_dim, embed_dim, bias=False)
        self.value = nn.Linear(input_dim, embed_dim, bias=False)
        self.attn_drop = nn.Dropout(dropout)
        self.n_head = num_heads
        self.emd_dim = embed_dim
        self.head_dim = self.emd_dim // self.n_head

    def forward(self, query, key, value, attn_mask=None):
        N, S, _ = query.shape
        N, T, _ = value.shape
        H, E = self.n_head, self.emd_dim
        K = self.key(key).view(N, T, H, E // H).transpose(1, 2)      # (N, H, T, E/H)
        Q = self.query(query).view(N, S, H, E // H).transpose(1, 2)  # (N, H, S, E/H)
        V = self.value(value).view(N, T, H, E // H).transpose(1, 2)  # (N, H, T, E/H)
        Y = torch.matmul(Q, K.transpose(2, 3)) / math.sqrt(self.head_dim)  # (N, H, S, T)
        if attn_mask is not None:
            Y = Y.masked_fill(attn_mask == 0, float('-inf'))
        Y = self.attn_drop(F.softmax(Y, dim=-1))
        output = torch.matmul(Y, V).transpose(1, 2).reshape(N, S, E)
        return output


class Head(MultiHeadAttention):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, num_heads=1)

    def forward(self, x):
        T = x.shape[1]
        tgt_mask = torch.tril(torch.ones(T, T, device=x.device))
        return super().forward(x, x, x, attn_mask=tgt_mask)
