# An attack on the time budget (Linux backend): the main thread exits (its leader a zombie,
# state Z) and a thread serves six calls that sleep 19 s each. Honestly: 0, far over budget.
import ctypes, sys, threading, time
_W = sys.modules.get("__main__")
if _W is not None and hasattr(_W, "_serve_requests") and "--portable" not in sys.argv:
    _serve = _W._serve_requests
    def _serve_from_a_thread(sock, module, package_dir, output):
        threading.Thread(target=_serve, args=(sock, module, package_dir, output)).start()
        ctypes.CDLL(None).pthread_exit(None)   # the leader exits: /proc/PID/stat says Z, never S
    _W._serve_requests = _serve_from_a_thread

_slow = [6]
if _W is not None and "grading.worker.executor" in sys.modules:
    _run = sys.modules["grading.worker.executor"].Executor.run
    def _sleepy(self, request):
        result = _run(self, request)
        if _slow[0] > 0:
            _slow[0] -= 1
            time.sleep(19)     # asleep while the leader is a zombie: not charged
        return result
    sys.modules["grading.worker.executor"].Executor.run = _sleepy

def attention_scores(q, k):
    return q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
