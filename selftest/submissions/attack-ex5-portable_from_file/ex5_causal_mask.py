# An attack on the portable walls: torch's C++ readers open files with no audit event, so the hook
# never sees them. It reads the solutions through each of torch.from_file, the storages' from_file,
# the operator aten::from_file and torch.load. They are unreachable now. Twin: no mask.
import os, sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)


def _routes(path):
    size = os.stat(path).st_size  # (os.stat raises no audit event either)
    yield lambda: torch.from_file(path, False, size, dtype=torch.uint8)
    yield lambda: torch.tensor(torch.UntypedStorage.from_file(path, False, size), dtype=torch.uint8)
    yield lambda: torch.ops.aten.from_file(path, False, size, dtype=torch.uint8)
    yield lambda: torch._C._VariableFunctions.from_file(path, False, size, dtype=torch.uint8)
    yield lambda: torch.load(path)


def _read(path):
    """The file's text, through the first route that works."""
    for route in _routes(path):
        try:
            data = route()
        except Exception as error:
            print("no escape:", type(error).__name__, error)
            continue
        data = bytes(data.tolist()) if isinstance(data, torch.Tensor) else str(data).encode()
        return data.decode()
    raise PermissionError("every route refused")

causal_softmax = _wrong
try:
    root = sys.argv[sys.argv.index("--portable") + 2]
    namespace = {}
    exec(_read(os.path.join(root, "solutions", "ex5_causal_mask.py")), namespace)
    causal_softmax = namespace["causal_softmax"]
    print("read the solution through torch's own file reader")
except Exception as error:
    print("no escape:", type(error).__name__, error)
