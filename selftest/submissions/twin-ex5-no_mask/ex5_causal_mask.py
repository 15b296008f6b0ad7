import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)

causal_softmax = _wrong
