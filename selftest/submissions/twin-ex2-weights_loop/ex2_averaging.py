"""Honest twin of attack-ex2-weights_hidden_dispatch: the averaging weights built by a Python list
comprehension, one row per position, in plain sight; the average one matrix product.
Right values; the number of torch operations grows with T: all but "no Python loop".
"""
import torch


def averaging_matrix(T):
    rows = [torch.cat([torch.full((i + 1,), 1.0 / (i + 1)), torch.zeros(T - i - 1)])
            for i in range(T)]
    return torch.stack(rows)


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x  # (T, T) @ (B, T, C) -> (B, T, C)
