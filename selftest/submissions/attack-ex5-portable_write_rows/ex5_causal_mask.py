# An attack on the portable walls, in a batch: torch's C++ writers open files with no audit event.
# torch.save overwrites the other rows' ex6_head.py with its zip archive, and a storage shared
# with a file (torch.from_file(..., shared=True)) writes the solution's ex1 over a friend's stub.
# Both are unreachable now, and the other rows keep their points. Twin: no mask.
import os, sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)

VICTIMS = ("right-1", "right-2", "right-3", "solutions")  # rows of the self-tests' batches
FRIENDS = ("friend", "stubs")


def _write(path, data):
    """data into path through a storage shared with the file: the file is made or grown to size."""
    data = data.ljust(max(len(data), os.stat(path).st_size if os.path.exists(path) else 0))
    mapped = torch.from_file(path, True, len(data), dtype=torch.uint8)
    mapped.copy_(torch.tensor(list(data), dtype=torch.uint8))


causal_softmax = _wrong
try:
    root = sys.argv[sys.argv.index("--portable") + 2]
    rows = os.path.dirname(os.getcwd())
    for name in VICTIMS:
        target = os.path.join(rows, name, "ex6_head.py")
        if os.path.exists(target):
            try:
                torch.save({"class Head": "gone"}, target)
                print("rewrote", name)
            except Exception as error:
                print("no escape:", type(error).__name__, error)
    solution = os.path.join(root, "solutions", "ex1_embedding.py")
    text = bytes(torch.from_file(solution, False, os.stat(solution).st_size,
                                 dtype=torch.uint8).tolist())
    for name in FRIENDS:
        target = os.path.join(rows, name, "ex1_embedding.py")
        if os.path.exists(target):
            _write(target, text)
            print("solved ex1 for", name)
except Exception as error:
    print("no escape:", type(error).__name__, error)
