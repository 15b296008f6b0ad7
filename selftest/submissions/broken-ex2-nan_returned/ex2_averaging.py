"""Broken: NaN returned (0/0 in the normalisation)."""
import torch


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    return tril / (tril.sum(dim=1, keepdim=True) * 0)


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x
