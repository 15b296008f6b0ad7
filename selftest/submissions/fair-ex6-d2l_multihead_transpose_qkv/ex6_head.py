"""Real code, fair: d2l's MultiHeadAttention (transpose_qkv, DotProductAttention), one head.

Modelled on d2l-ai/d2l-en, the multihead-attention chapter (class MultiHeadAttention: W_q, W_k,
W_v, W_o Linears, self.attention = DotProductAttention(dropout); forward: queries =
self.transpose_qkv(self.W_q(queries)) ...; valid_lens repeated num_heads times with
torch.repeat_interleave; output_concat = self.transpose_output(output); transpose_qkv:
reshape(X.shape[0], X.shape[1], num_heads, -1), permute(0, 2, 1, 3), reshape(-1, X.shape[2],
X.shape[3])), with DotProductAttention / masked_softmax / sequence_mask of the scoring chapter and
the decoder's causal dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch_size, 1).
MIT-0 (code). Re-typed, logic kept.

Adapter: num_heads=1, bias=False, the output layer W_o replaced by nn.Identity(); the API's
query/key/value are W_q/W_k/W_v under a second name. Right: 25/25 expected.
"""
import math

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(nn.Module):
    """Multi-head attention."""

    def __init__(self, num_in, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(num_in, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_in, num_hiddens, bias=bias)
        self.W_v = nn.Linear(num_in, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def transpose_qkv(self, X):
        """Transposition for parallel computation of multiple attention heads."""
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """Reverse the operation of transpose_qkv."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        X = X.permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    def forward(self, queries, keys, values, valid_lens):
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        output_concat = self.transpose_output(output)
        return self.W_o(output_concat)


class Head(MultiHeadAttention):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, num_heads=1, dropout=0.0)
        self.W_o = nn.Identity()
        self.query, self.key, self.value = self.W_q, self.W_k, self.W_v

    def forward(self, x):
        batch_size, num_steps, _ = x.shape
        dec_valid_lens = torch.arange(1, num_steps + 1, device=x.device).repeat(batch_size, 1)
        return super().forward(x, x, x, dec_valid_lens)
