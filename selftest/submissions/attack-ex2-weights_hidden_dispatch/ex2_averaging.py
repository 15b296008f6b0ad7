"""Attack (issue 23): the averaging weights built by a Python list comprehension, one row per
position, with the operations hidden from the record (torch._C._DisableTorchDispatch()); the
average itself one matrix product, in plain sight. The record used to show the weights as a fixed
tensor and no loop.
Twin: twin-ex2-weights_loop (the same comprehension, not hidden).
"""
import torch


def averaging_matrix(T):
    with torch._C._DisableTorchDispatch():
        rows = [torch.cat([torch.full((i + 1,), 1.0 / (i + 1)), torch.zeros(T - i - 1)])
                for i in range(T)]
        return torch.stack(rows)


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x  # (T, T) @ (B, T, C) -> (B, T, C)
