"""Real code, fair: the scores of d2l's DotProductAttention.

Modelled on d2l-ai/d2l-en, the attention-scoring-functions chapter (DotProductAttention.forward:
d = queries.shape[-1]; scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)), MIT-0.
Re-typed. Right: 15/15 expected.
"""
import math

import torch


def attention_scores(q, k):
    queries, keys = q, k
    d = queries.shape[-1]
    # Swap the last two dimensions of keys with keys.transpose(1, 2)
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    return scores
