# An attack on the judge: the worker's own Executor answers trace with an int, which the judge
# indexed as the dict it expects (an error in the test itself, exit 2). Replies are now checked
# against their op's shape: a malformed one costs this exercise alone. Twin: the solution.
import sys
_EXECUTOR = getattr(sys.modules.get("grading.worker.executor"), "Executor", None)  # the worker's own class

import torch
from torch.nn import functional as F
if _EXECUTOR is not None:
    _EXECUTOR.trace = lambda self, request: 0   # a valid reply (an int), not the dict the judge indexes

def causal_softmax(scores):
    T = scores.shape[-1]
    tril = torch.tril(torch.ones(T, T))
    return F.softmax(scores.masked_fill(tril == 0, float("-inf")), dim=-1)
