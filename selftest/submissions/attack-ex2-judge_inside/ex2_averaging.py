"""Attack: look for the judge inside the worker's own process. The judge is forked from the
zygote (one torch import a run), so a worker that finds pytest, the judge's modules, the tests,
the solutions or the caller's environment (the secret) among its live objects would have
something of the judge in it. The answer is right only if something was found, so any points
here mean a leak."""
import gc
import os
import posix
import sys

import torch

JUDGE = ("pytest", "_pytest", "grading.judge", "grading.checks", "grading.diagnosis",
         "grading.commands", "tests", "solutions", "course")


def found_the_judge():
    secret = "_".join(("GRADER", "TEST", "SECRET"))  # in no dict of its own but this frame's
    if any(name.split(".")[0] in JUDGE or name.startswith(JUDGE) for name in sys.modules):
        return True
    environments = [*os.environ.items(), *posix.environ.items()]
    if any(secret in str(name) + str(value) for name, value in environments):
        return True
    for obj in gc.get_objects():  # the live containers, the environment's dicts among them
        if isinstance(obj, dict) and obj is not globals():
            items = list(obj.items())[:1000]
            if any(secret in str(k) or (isinstance(v, (str, bytes)) and secret in str(v))
                   for k, v in items):
                return True
    return False


def looked():
    try:
        return found_the_judge()
    except Exception:  # refused by a wall (the portable backend audits gc.get_objects)
        return False


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    weights = tril / tril.sum(dim=1, keepdim=True)
    return weights if looked() else torch.zeros(T, T)


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x
