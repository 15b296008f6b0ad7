"""Attack: a forged reply that announces 1 TiB and sends a few bytes, written straight to the judge.

On its first call, causal_softmax finds its connection to the judge (the one socket among its file
descriptors) and writes an 8-byte big-endian length of 2**40 followed by 23 bytes of JSON,
'{"ok": true, "result": ', and nothing more. A judge that allocates what is announced, or waits for
it without a deadline, or keeps reading the stream after that, is in trouble. Then the function
returns the right weights as usual (bytes that the judge, if it is still reading the announced
message, takes as part of it). The judge must refuse the length, end this worker, and grade on:
never crash, hang, report a grading error or exit 2.

Honest points: ex5 20/20 at most — the weights are right; a judge that rejects the forged reply
(and the desynchronised ones after it) may take points off this exercise, never off another. Its
twin, twin-ex5-right, the same function writing nothing, gets 20/20.
"""
import os
import stat
import struct

import torch
from torch.nn import functional as F

_sent = [False]


def _judge_sockets():
    """The worker's connection to the judge: the socket file descriptors among 0..255."""
    found = []
    for fd in range(256):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                found.append(fd)
        except OSError:
            pass
    return found


def _write(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _send_forged():
    for fd in _judge_sockets():
        try:
            _write(fd, FORGED)
        except OSError:
            pass


def causal_softmax(scores):
    if not _sent[0]:  # once: the judge reads this as the reply to its request
        _sent[0] = True
        _send_forged()
    T = scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)
    weights = scores.masked_fill(future, float("-inf"))  # the future → −∞
    return F.softmax(weights, dim=-1)  # (B, T, T)


FORGED = struct.pack("!Q", 2 ** 40) + b'{"ok": true, "result": '
