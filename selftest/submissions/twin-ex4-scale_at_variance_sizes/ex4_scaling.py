"""Honest twin of attack-ex4-scale_at_variance_sizes: the scores are not scaled, at any size.

Honest points: the shape, the first row's independence of the batch and inputs left as they
are, 4/15 (variance, comparisons and gradients fail).
"""


def attention_scores(q, k):
    return q @ k.transpose(-2, -1)  # (B, T, T), not scaled
