"""Attack (issue 32): average_context loops over the positions, except at the long T that only
the no-loop check used: there it returns x itself, a short program, wrong. The no-loop check
read that call's record and compared its values with nothing (+2). Every call a how-check reads
is now compared with the reference, and the check waits until it is right.
Twin: twin-ex2-loop_short_at_long_t (the loop at every T), 13/15.
"""
import torch


def averaging_matrix(T):
    return torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).unsqueeze(1)


def average_context(x):
    if x.shape[1] > 100:  # the no-loop check's long T
        return x * 1.0
    rows = [x[:, :t + 1].mean(dim=1) for t in range(x.shape[1])]  # (B, C) each
    return torch.stack(rows, dim=1)  # (B, T, C)
