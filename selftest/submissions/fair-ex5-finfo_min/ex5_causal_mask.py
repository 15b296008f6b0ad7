"""Fair: torch.where with the dtype's most negative number instead of -inf."""
import torch
import torch.nn.functional as F


def causal_softmax(scores):
    T = scores.shape[-1]
    keep = torch.ones(T, T).tril().bool()
    lowest = torch.finfo(scores.dtype).min
    return F.softmax(torch.where(keep, scores, torch.full_like(scores, lowest)), dim=-1)
