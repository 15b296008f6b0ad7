# The twin of attack-ex5-zombie_leader: the same forged operator names (one point lost), no
# zombie leader and no sleep. Its diagnosis runs, quickly.
import sys, time
_W = sys.modules.get('__main__')
SLEEP = False

_state = {"counts": 0, "calls_after": 0}
if _W is not None and "grading.worker.executor" in sys.modules:
    _run = sys.modules["grading.worker.executor"].Executor.run
    def _run2(self, request):
        op = request["op"]
        slow = SLEEP and _state["counts"] >= 3 and _state["calls_after"] >= 3   # the diagnosis
        if op == "count":
            _state["counts"] += 1
        elif op == "call" and _state["counts"] >= 3:
            _state["calls_after"] += 1
        result = _run(self, request)
        if op == "count":   # fail "built yourself" cheaply, so that a diagnosis runs
            result["names"] = result["names"] + ["aten::scaled_dot_product_attention"]
        if slow:
            time.sleep(19)
        return result
    sys.modules["grading.worker.executor"].Executor.run = _run2

import torch
from torch.nn import functional as F

def causal_softmax(scores):
    T = scores.shape[-1]
    tril = torch.tril(torch.ones(T, T))
    return F.softmax(scores.masked_fill(tril == 0, float("-inf")), dim=-1)
