"""Attack: the averages computed position by position by numpy's apply_along_axis.

average_context converts x to numpy, lets np.apply_along_axis call a function once per position
(the mean of x[:, :t+1]), and converts back: a loop over positions that happens in numpy, where
no torch operation is counted and no `for` is written. Its twin, twin-ex2-loop_numpy, does the
same conversion with a plain for loop. Honest points: the twin's.
"""
import numpy as np
import torch


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    return tril / tril.sum(dim=1, keepdim=True)


def average_context(x):
    xn = x.detach().numpy()  # (B, T, C)
    T = xn.shape[1]
    means = np.apply_along_axis(lambda t: xn[:, :t[0] + 1].mean(axis=1), 1,
                                np.arange(T)[:, None])  # (T, B, C), one call per position
    return torch.from_numpy(np.ascontiguousarray(means.transpose(1, 0, 2))).to(x.dtype)
