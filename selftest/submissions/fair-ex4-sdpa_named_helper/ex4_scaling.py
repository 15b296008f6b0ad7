"""Honest, fair: an own helper named sdpa_scores (sdpa = scaled dot-product attention).

The name is the learner's; the helper is q @ kᵀ · head_size^-0.5 by hand. Right: 15/15 expected.
"""
import torch


def sdpa_scores(q, k):
    """The scores of scaled dot-product attention (sdpa), by hand."""
    return q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5


def attention_scores(q, k):
    return sdpa_scores(q, k)
