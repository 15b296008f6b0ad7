# An attack on the source check: map imported from builtins under another name, beside a worker
# that reports a record as long at every size. Twin: the same loop, with map.
import sys
_EXECUTOR = getattr(sys.modules.get("grading.worker.executor"), "Executor", None)  # the worker's own class

import torch
from builtins import map as each     # map under another name: not a LOOPING_CALL

if _EXECUTOR is not None:
    _trace = _EXECUTOR.trace
    def _steady(self, request):
        found = _trace(self, request)
        found["ops"] = found["ops"][:40]  # a record as long at every T and B
        return found
    _EXECUTOR.trace = _steady


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    return tril / tril.sum(dim=1, keepdim=True)

def average_context(x):
    B, T, C = x.shape
    return torch.stack(tuple(each(lambda t: x[:, :t + 1].mean(dim=1), range(T))), dim=1)
