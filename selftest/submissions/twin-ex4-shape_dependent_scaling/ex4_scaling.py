"""Honest twin of attack-ex4-shape_dependent_scaling: the scores are never scaled.

q @ kᵀ, shape (B, T, T), without the factor head_size ** -0.5.

Honest points: ex4 3/15 — the shape (3); not the variance, not the reference.
"""


def attention_scores(q, k):
    return q @ k.transpose(-2, -1)  # (B, T, T), not scaled
