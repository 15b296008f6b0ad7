"""Right code with a habit (issue 32, written blind to the grader): Habit: averaging matrix built with numpy (np.tril / row sums) and brought in with torch.from_numpy.
Values decide, the record only adds: full marks expected.
"""
import numpy as np
import torch


def averaging_matrix(T):
    tril = np.tril(np.ones((T, T), dtype=np.float32))
    weights = tril / tril.sum(axis=1, keepdims=True)
    return torch.from_numpy(weights)


def average_context(x):
    B, T, C = x.shape
    weights = averaging_matrix(T).to(x.dtype)
    return weights @ x
