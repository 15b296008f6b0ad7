# An attack on the portable walls: it replaces the names grading.walls.audit' audit hook used
# to look up at each event (_inside, _WRITE_FLAGS), then reads the solutions and writes a file.
# The hook now holds all it uses in its closure. Twin: no mask.
import os, sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)

causal_softmax = _wrong
_walls = sys.modules.get("grading.walls.audit")
try:
    if _walls is not None:
        # the audit hook's closure looks these module globals up at each event
        _walls._inside = lambda path, roots: True
        _walls._WRITE_FLAGS = 0
    root = sys.argv[sys.argv.index("--portable") + 2]
    with open(os.path.join(root, "solutions", "ex5_causal_mask.py")) as f:
        namespace = {}
        exec(f.read(), namespace)
    causal_softmax = namespace["causal_softmax"]
    with open(os.path.join(root, "tests", "test_ex5_causal_mask.py")) as f:
        tests_head = f.readline()
    fd = os.open("/tmp/rt-attack/markers/walls_global_wrote", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.write(fd, ("written by a walled worker; tests start: " + tests_head).encode())
    os.close(fd)
except Exception as error:
    print("no escape:", type(error).__name__, error)
