"""Real code, fair: an own class named ScaledDotProductAttention (attention-is-all-you-need-pytorch).

Modelled on jadore801120/attention-is-all-you-need-pytorch, transformer/Modules.py (class
ScaledDotProductAttention(temperature, attn_dropout=0.1): attn = torch.matmul(q /
self.temperature, k.transpose(2, 3)); masked_fill(mask == 0, -1e9); F.softmax(attn, dim=-1);
dropout; output = torch.matmul(attn, v); returns (output, attn)), MIT. Re-typed, logic kept.

Adapter: temperature = head_size ** 0.5 (as its MultiHeadAttention passes d_k ** 0.5); q, k, v
given a heads dimension of 1 (its layout is (B, heads, T, d)); dropout 0.0; a tril mask. The
query is divided before the product, not the scores after. Right: 25/25 expected.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledDotProductAttention(nn.Module):
    ''' Scaled Dot-Product Attention '''

    def __init__(self, temperature, attn_dropout=0.1):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(attn_dropout)

    def forward(self, q, k, v, mask=None):
        attn = torch.matmul(q / self.temperature, k.transpose(2, 3))
        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e9)
        attn = self.dropout(F.softmax(attn, dim=-1))
        output = torch.matmul(attn, v)
        return output, attn


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.attention = ScaledDotProductAttention(temperature=head_size ** 0.5, attn_dropout=0.0)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        T = x.size(1)
        q = self.query(x).unsqueeze(1)  # (B, 1, T, head_size)
        k = self.key(x).unsqueeze(1)
        v = self.value(x).unsqueeze(1)
        mask = self.tril[:T, :T].unsqueeze(0).unsqueeze(0)  # (1, 1, T, T)
        out, _ = self.attention(q, k, v, mask=mask)
        return out.squeeze(1)
