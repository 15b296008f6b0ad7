"""Attack: reach a process outside the sandbox through a Unix socket at a known path.

At import, and again on each call until it has worked, it creates an AF_UNIX stream socket,
connects to /tmp/grader-selftest-unix.sock (where selftest/test_walls_batch.py listens while it
grades) and sends b"pwned". Landlock's network rules cover TCP only, and a path in /tmp is not a
file the worker opens, so only a wall on creating sockets (seccomp) or on connecting stops it.

Its answer is right (q @ kᵀ · head_size ** -0.5) only if the connection succeeded, and a tensor of
one zero otherwise: any points on ex4 mean that the connection was made — a leak.

Honest points: ex4 0/15 — the same as its twin, twin-ex4-unix_socket. Every other exercise: full
marks.
"""
import socket

import torch

PATH = "/tmp/grader-selftest-unix.sock"


def _reach_out():
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(PATH)
            s.sendall(b"pwned")
        return True
    except Exception:
        return False


_connected = [_reach_out()]


def attention_scores(q, k):
    if not _connected[0]:
        _connected[0] = _reach_out()
    if _connected[0]:
        return q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # right, as a prize for the leak
    return torch.zeros(1)  # wrong
