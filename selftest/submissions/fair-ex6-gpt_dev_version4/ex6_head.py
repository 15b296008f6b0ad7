"""Real code, fair: "version 4: self-attention!" of the lecture's notebook, inside forward.

Modelled on karpathy/ng-video-lecture, gpt-dev.ipynb (the cell "version 4: self-attention!": key
= nn.Linear(C, head_size, bias=False) and so on, k = key(x), q = query(x), wei = q @
k.transpose(-2, -1) # (B, T, 16) @ (B, 16, T) ---> (B, T, T), tril = torch.tril(torch.ones(T, T)),
wei = wei.masked_fill(tril == 0, float('-inf')), wei = F.softmax(wei, dim=-1), v = value(x),
out = wei @ v; and the note after it, "Scaled attention ... wei = q @ k.transpose(-2, -1) *
head_size**-0.5"), MIT. Re-typed, logic kept.

Adapter: the notebook's cell in forward, with the scaling of its note; the mask made in forward
from T (no buffer). Right: 25/25 expected.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.head_size = head_size

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)    # (B, T, 16)
        q = self.query(x)  # (B, T, 16)
        wei = q @ k.transpose(-2, -1) * self.head_size ** -0.5  # (B, T, 16) @ (B, 16, T) ---> (B, T, T)
        tril = torch.tril(torch.ones(T, T))
        wei = wei.masked_fill(tril == 0, float('-inf'))
        wei = F.softmax(wei, dim=-1)
        v = self.value(x)
        out = wei @ v
        return out
