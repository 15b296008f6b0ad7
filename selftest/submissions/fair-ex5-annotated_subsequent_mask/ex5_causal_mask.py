"""Real code, fair: the Annotated Transformer's subsequent_mask and its masked softmax.

Modelled on harvardnlp/annotated-transformer, the_annotated_transformer.py (def subsequent_mask:
attn_shape = (1, size, size); subsequent_mask = torch.triu(torch.ones(attn_shape),
diagonal=1).type(torch.uint8); return subsequent_mask == 0 — a local variable named like its
function, which is no recursion; and in attention(): scores.masked_fill(mask == 0, -1e9);
scores.softmax(dim=-1)), MIT. Re-typed, logic kept. Right: 20/20 expected.
"""
import torch


def subsequent_mask(size):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


def causal_softmax(scores):
    mask = subsequent_mask(scores.size(-1))
    scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return p_attn
