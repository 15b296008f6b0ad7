"""Broken: an import that raises (a module that does not exist)."""
import torch
import numpyy  # noqa: F401


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    return tril / tril.sum(dim=1, keepdim=True)


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x
