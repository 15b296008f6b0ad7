"""Attack (issue 32): scores scaled only at the variance check's batch sizes (24 to 32), which no
other check used, and not scaled elsewhere (+5). The variance check now also looks at the graded
sizes, and the comparisons grade the variance check's sizes.
Twin: twin-ex4-scale_at_variance_sizes (never scaled).
"""


def attention_scores(q, k):
    scores = q @ k.transpose(-2, -1)  # (B, T, T)
    if q.shape[0] >= 24:  # the variance check's batches
        scores = scores * q.shape[-1] ** -0.5
    return scores
