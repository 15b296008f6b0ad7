"""Real code, fair: the scores of the Annotated Transformer's attention().

Modelled on harvardnlp/annotated-transformer, the_annotated_transformer.py (def attention:
d_k = query.size(-1); scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)),
MIT. Re-typed. Right: 15/15 expected.
"""
import math

import torch


def attention_scores(q, k):
    "Compute the scores of 'Scaled Dot Product Attention'"
    query, key = q, k
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    return scores
