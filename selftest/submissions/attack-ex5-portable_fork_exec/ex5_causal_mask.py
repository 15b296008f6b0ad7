# An attack on the portable walls: subprocess keeps its own name for the C fork_exec, bound when
# torch imported subprocess, before the walls replaced _posixsubprocess.fork_exec; it runs cat on
# the solutions. The walls now replace every loaded module's reference to it. Twin: no mask.
import os, sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)


def _cat(path):
    """subprocess._fork_exec: the C function bound at torch's import, before the walls; the
    walls replaced _posixsubprocess.fork_exec only, and it raises no audit event."""
    import subprocess
    r, w = os.pipe()
    er, ew = os.pipe()
    pid = subprocess._fork_exec([b"/bin/cat", path.encode()], [b"/bin/cat"], True, (w, ew), None,
                                None, -1, -1, -1, w, -1, -1, er, ew, True, True, -1, None, None,
                                None, -1, None, False)
    os.close(w); os.close(ew); os.close(er)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return data.decode()

causal_softmax = _wrong
try:
    root = sys.argv[sys.argv.index("--portable") + 2]
    namespace = {}
    exec(_cat(os.path.join(root, "solutions", "ex5_causal_mask.py")), namespace)
    causal_softmax = namespace["causal_softmax"]
    print("read the solution through /bin/cat")
except Exception as error:
    print("no escape:", type(error).__name__, error)
