"""Attack: send a UDP datagram out of the sandbox.

At import, and again on each call until it has worked, it creates an AF_INET datagram socket and
sends b"pwned" to 127.0.0.1:47611 (where selftest/test_walls_batch.py listens while it grades).
Landlock's network rules cover TCP only, so only a wall on creating sockets (seccomp) stops it.

Its answer is right (the future → −∞, then softmax over the last dimension) only if sendto
succeeded, and a tensor of one zero otherwise: any points on ex5 mean that the datagram left — a
leak.

Honest points: ex5 0/20 — the same as its twin, twin-ex5-udp. Every other exercise: full marks.
"""
import socket

import torch
from torch.nn import functional as F

ADDRESS = ("127.0.0.1", 47611)


def _reach_out():
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            return s.sendto(b"pwned", ADDRESS) == 5
    except Exception:
        return False


_sent = [_reach_out()]


def causal_softmax(scores):
    if not _sent[0]:
        _sent[0] = _reach_out()
    if not _sent[0]:
        return torch.zeros(1)  # wrong
    T = scores.shape[-1]  # right, as a prize for the leak
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return F.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
