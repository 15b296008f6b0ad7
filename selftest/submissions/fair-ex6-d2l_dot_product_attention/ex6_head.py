"""Real code, fair: d2l's DotProductAttention with masked_softmax and causal valid lengths.

Modelled on d2l-ai/d2l-en, the attention-scoring-functions chapter (def sequence_mask: `X[~mask]
= value` in place; def masked_softmax(X, valid_lens): 2-D valid_lens reshaped to (-1,), masked
entries set to -1e6, then softmax; class DotProductAttention: torch.bmm(queries,
keys.transpose(1, 2)) / math.sqrt(d), self.attention_weights = masked_softmax(...),
torch.bmm(self.dropout(self.attention_weights), values)), and the transformer decoder's causal
`dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch_size, 1)`. MIT-0 (code). Logic
and names kept, text re-typed.

Adapter: Head makes q, k, v from its three layers and calls DotProductAttention with those
valid lengths. Right: 25/25 expected.
"""
import math

import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    """Mask irrelevant entries in sequences."""
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    # X: 3D tensor, valid_lens: 1D or 2D tensor
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # masked elements get a very large negative value: their exponential is 0
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    """Scaled dot product attention."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    # queries: (batch_size, no. of queries, d); keys: (batch_size, no. of key-value pairs, d)
    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.attention = DotProductAttention(dropout=0.0)

    def forward(self, x):
        batch_size, num_steps, _ = x.shape
        dec_valid_lens = torch.arange(1, num_steps + 1, device=x.device).repeat(batch_size, 1)
        return self.attention(self.query(x), self.key(x), self.value(x), dec_valid_lens)
