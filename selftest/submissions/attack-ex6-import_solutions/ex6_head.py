"""Attack 7: import the reference solution, by sys.path and by reading the file."""
import os
import sys

with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
    ROOT = f.read().decode().split("\0")[3]  # the zygote's argv: the repository root
sys.path.insert(0, ROOT)
try:
    from solutions.ex6_head import Head  # noqa: F401
except ImportError:
    namespace = {}
    with open(os.path.join(ROOT, "solutions", "ex6_head.py")) as f:
        exec(f.read(), namespace)
    Head = namespace["Head"]
