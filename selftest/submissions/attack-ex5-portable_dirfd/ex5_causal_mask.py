# An attack on the portable walls: os.open(name, dir_fd=fd) of a directory's descriptor, which the
# audit event does not show (it resolved name against the working folder). No directory may be
# opened now. Twin: no mask.
import os, sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)


def _read_outside(target):
    """The hook checks realpath(path) against the cwd; os.open(dir_fd=) resolves against dir_fd."""
    here = os.path.realpath(os.getcwd())
    k = len([p for p in here.split(os.sep) if p])            # depth of the submission folder
    anchor = os.open(here, os.O_RDONLY)                       # its fd: depth k below /
    base = os.path.realpath(sys.prefix)
    depth = len([p for p in base.split(os.sep) if p])
    deep = None
    for folder, dirs, _ in os.walk(base):                     # a folder k levels below sys.prefix
        if len([p for p in folder.split(os.sep) if p]) - depth >= k:
            deep = folder
            break
    rel = "../" * k + target.lstrip("/")
    os.chdir(deep)   # rel from here stays inside sys.prefix, for the hook
    try:
        fd = os.open(rel, os.O_RDONLY, dir_fd=anchor)
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
        os.close(fd)
    finally:
        os.chdir(here)
        os.close(anchor)
    return data.decode()

causal_softmax = _wrong
try:
    root = sys.argv[sys.argv.index("--portable") + 2]
    namespace = {}
    exec(_read_outside(os.path.join(root, "solutions", "ex5_causal_mask.py")), namespace)
    causal_softmax = namespace["causal_softmax"]
except Exception as error:
    print("no escape:", type(error).__name__, error)
