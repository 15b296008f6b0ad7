# An attack on the portable walls: TorchScript compiled from a string calls torch.from_file by the
# operator's name, out of Python's sight (no audit event, no Python attribute to replace). The
# compilers and the operator's kernel are unreachable now. Twin: no mask.
import os, sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)

_SOURCE = """
def read(path: str, size: int):
    return torch.from_file(path, False, size, dtype=torch.uint8)
"""

causal_softmax = _wrong
try:
    root = sys.argv[sys.argv.index("--portable") + 2]
    path = os.path.join(root, "solutions", "ex5_causal_mask.py")
    unit = torch.jit.CompilationUnit(_SOURCE)
    namespace = {}
    exec(bytes(unit.read(path, os.stat(path).st_size).tolist()).decode(), namespace)
    causal_softmax = namespace["causal_softmax"]
    print("read the solution through TorchScript")
except Exception as error:
    print("no escape:", type(error).__name__, error)
