"""Real code, fair: labml.ai's annotated MultiHeadAttention, sequence-first, with einsum.

Modelled on labmlai/annotated_deep_learning_paper_implementations, labml_nn/transformers/mha.py
(class MultiHeadAttention: inputs [seq_len, batch_size, d_model]; get_scores = torch.einsum(
'ibhd,jbhd->ijbh', query, key); scale = 1 / math.sqrt(d_k); mask of shape [seq_len_q, seq_len_k,
batch] made by prepare_mask; scores.masked_fill(mask == 0, float('-inf')); self.softmax =
nn.Softmax(dim=1), over the keys; x = torch.einsum("ijbh,jbhd->ibhd", attn, value)) and its
subsequent_mask in labml_nn/transformers/utils.py (torch.tril(torch.ones(seq_len, seq_len))
.to(torch.bool).unsqueeze(-1)), MIT. Re-typed, logic kept.

Adapter: heads=1; x transposed to sequence-first and back; no output Linear. Softmax over dim=1
of an (i, j, b, h) table: the keys' axis, not the last. Right: 25/25 expected.
"""
import math

import torch
from torch import nn


def subsequent_mask(seq_len):
    """Mask for the future: [seq_len, seq_len, 1]."""
    mask = torch.tril(torch.ones(seq_len, seq_len)).to(torch.bool).unsqueeze(-1)
    return mask


class MultiHeadAttention(nn.Module):
    def __init__(self, heads, d_model, d_k):
        super().__init__()
        self.d_k = d_k
        self.heads = heads
        self.query = nn.Linear(d_model, heads * d_k, bias=False)
        self.key = nn.Linear(d_model, heads * d_k, bias=False)
        self.value = nn.Linear(d_model, heads * d_k, bias=False)
        self.softmax = nn.Softmax(dim=1)
        self.scale = 1 / math.sqrt(self.d_k)
        self.attn = None

    def prepare(self, x, layer):
        head_shape = x.shape[:-1]
        return layer(x).view(*head_shape, self.heads, self.d_k)  # [seq, batch, heads, d_k]

    def get_scores(self, query, key):
        return torch.einsum('ibhd,jbhd->ijbh', query, key)

    def prepare_mask(self, mask, query_shape, key_shape):
        assert mask.shape[0] == 1 or mask.shape[0] == query_shape[0]
        assert mask.shape[1] == key_shape[0]
        return mask.unsqueeze(-1)  # the same mask for every head: [seq_q, seq_k, batch, heads]

    def forward(self, *, query, key, value, mask=None):
        seq_len, batch_size, _ = query.shape
        if mask is not None:
            mask = self.prepare_mask(mask, query.shape, key.shape)
        query = self.prepare(query, self.query)
        key = self.prepare(key, self.key)
        value = self.prepare(value, self.value)
        scores = self.get_scores(query, key)
        scores *= self.scale
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))
        attn = self.softmax(scores)
        self.attn = attn.detach()
        x = torch.einsum("ijbh,jbhd->ibhd", attn, value)
        return x.reshape(seq_len, batch_size, -1)


class Head(MultiHeadAttention):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__(heads=1, d_model=n_embd, d_k=head_size)

    def forward(self, x):
        x = x.transpose(0, 1)  # [seq_len, batch_size, n_embd]
        out = super().forward(query=x, key=x, value=x, mask=subsequent_mask(x.shape[0]))
        return out.transpose(0, 1)
