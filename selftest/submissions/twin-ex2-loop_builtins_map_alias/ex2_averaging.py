# The twin of attack-ex2-loop_builtins_map_alias: the same loop over positions, map by its name.
import torch

def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    return tril / tril.sum(dim=1, keepdim=True)

def average_context(x):
    B, T, C = x.shape
    return torch.stack(tuple(map(lambda t: x[:, :t + 1].mean(dim=1), range(T))), dim=1)
