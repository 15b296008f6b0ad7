# An attack on the portable backend's reuse of a worker: a finder put first on sys.meta_path stays
# there for the next exercise the same worker imports, and decides what `submission.ex6_head` is
# (here: nothing, so ex6 fails; as easily, code other than the file the judge reads). The reuse
# check compared the list's identity, not its items; it compares the items now, and a worker left
# changed is replaced. Twin: no mask.
import sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)


class _Hijack:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.startswith("submission.") and not name.endswith("ex5_causal_mask"):
            raise ImportError(f"{name} hijacked by the finder ex5 left behind")
        return None


causal_softmax = _wrong
sys.meta_path.insert(0, _Hijack())
