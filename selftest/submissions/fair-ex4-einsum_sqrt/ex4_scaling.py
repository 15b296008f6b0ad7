"""Fair: einsum for the dot products and math.sqrt for the scale."""
import math

import torch


def attention_scores(q, k):
    return torch.einsum("bth,bsh->bts", q, k) / math.sqrt(q.size(-1))
