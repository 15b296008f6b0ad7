"""Real code, fair: PyTorch's documented "equivalent" of scaled_dot_product_attention, by hand.

Modelled on the PyTorch documentation of torch.nn.functional.scaled_dot_product_attention
(https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html,
"Efficient implementation equivalent to the following": def scaled_dot_product_attention(query,
key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None): scale_factor = 1 /
math.sqrt(query.size(-1)); attn_bias = torch.zeros(L, S); for is_causal, temp_mask =
torch.ones(L, S, dtype=torch.bool).tril(diagonal=0) and attn_bias.masked_fill_(temp_mask.
logical_not(), float("-inf")); attn_weight = query @ key.transpose(-2, -1) * scale_factor;
attn_weight += attn_bias; softmax; torch.dropout(attn_weight, dropout_p, train=True); @ value),
BSD-3-Clause. Re-typed, logic kept.

An own function *named* scaled_dot_product_attention, written by hand: the learner's name, honest
code (DESIGN.md says so in as many words). Right: 25/25 expected.
"""
import math

import torch
import torch.nn as nn


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype)
    if is_causal:
        assert attn_mask is None
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
        attn_bias.to(query.dtype)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias.masked_fill_(attn_mask.logical_not(), float("-inf"))
        else:
            attn_bias += attn_mask
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    attn_weight = torch.dropout(attn_weight, dropout_p, train=True)
    return attn_weight @ value


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        return scaled_dot_product_attention(self.query(x), self.key(x), self.value(x),
                                            is_causal=True)
