# An attack on the time budget (Linux backend): the worker's main thread exits, leaving its
# leader a zombie (state Z) while a thread serves the calls; the calls of the diagnosis then
# sleep 19 s each, once a tripwire of three counts has passed. Before the Meter charged every
# state but R, this slept uncharged and the diagnosis ran into the next exercise's first test.
import ctypes, sys, threading, time
_W = sys.modules.get("__main__")
if _W is not None and hasattr(_W, "_serve_requests") and "--portable" not in sys.argv:
    _serve = _W._serve_requests
    def _serve_from_a_thread(sock, module, package_dir, output):
        threading.Thread(target=_serve, args=(sock, module, package_dir, output)).start()
        ctypes.CDLL(None).pthread_exit(None)   # the leader exits: /proc/PID/stat says Z, never S
    _W._serve_requests = _serve_from_a_thread
SLEEP = True

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
