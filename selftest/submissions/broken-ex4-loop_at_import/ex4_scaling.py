"""Broken: an endless loop at the top level, which ignores SIGTERM and SIGINT."""
import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass


def attention_scores(q, k):
    return q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
