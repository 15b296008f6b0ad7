"""Real code, fair: the causal bias of PyTorch's documented scaled_dot_product_attention equivalent.

Modelled on the PyTorch documentation of torch.nn.functional.scaled_dot_product_attention ("Efficient
implementation equivalent to the following": attn_bias = torch.zeros(L, S, dtype=query.dtype);
temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0); attn_bias.masked_fill_(temp_mask
.logical_not(), float("-inf")); attn_weight += attn_bias; attn_weight = torch.softmax(attn_weight,
dim=-1)), BSD-3-Clause. Re-typed, logic kept.

We don't use F.scaled_dot_product_attention: this is the bias it documents, added by hand (a
string that mentions the ready-made attention is not a call of it). Right: 20/20 expected.
"""
import torch


def causal_softmax(scores):
    L, S = scores.size(-2), scores.size(-1)
    attn_bias = torch.zeros(L, S, dtype=scores.dtype)
    temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
    attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
    attn_weight = scores.clone()
    attn_weight += attn_bias
    return torch.softmax(attn_weight, dim=-1)
