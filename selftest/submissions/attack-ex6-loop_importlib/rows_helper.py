"""Part of attack-ex6-loop_importlib: the loop over positions, one row at a time."""
import torch
from torch.nn import functional as F


def attend(q, k, v, steps):
    T = q.shape[1]
    scale = q.shape[-1] ** -0.5
    rows = []
    for t in range(steps):  # as many steps at every T
        s = min(t, T - 1)  # position s sees positions 0..s
        scores = q[:, s:s + 1] @ k[:, :s + 1].transpose(-2, -1) * scale
        rows.append(F.softmax(scores, dim=-1) @ v[:, :s + 1])
    return torch.cat(rows[:T], dim=1)
