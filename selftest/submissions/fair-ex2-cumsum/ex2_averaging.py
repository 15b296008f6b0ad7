"""Fair: averaging by cumulative sums instead of a matrix product."""
import torch


def averaging_matrix(T):
    counts = torch.arange(1, T + 1, dtype=torch.float32)
    return torch.ones(T, T).tril() / counts.unsqueeze(1)


def average_context(x):
    counts = torch.arange(1, x.shape[1] + 1, dtype=x.dtype).view(1, -1, 1)
    return x.cumsum(dim=1) / counts
