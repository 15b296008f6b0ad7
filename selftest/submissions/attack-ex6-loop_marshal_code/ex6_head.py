"""Attack: the loop over positions in a marshalled code object, run with types.FunctionType.

The function's code is bytes in the file (marshal.dumps of a compiled `attend`, base64): no
source of it is there to read. types.FunctionType makes it a function again. It is the loop of
twin-ex6-loop_block_size (block_size steps at every T). Honest points: that twin's. (marshal's
format is CPython 3.11's, the grader's here; on another version the import fails, which costs
this exercise everything: still no more than the twin.)
"""
import base64
import marshal
import types

import torch
import torch.nn as nn
from torch.nn import functional as F

_CODE = (
    "4wQAAAAAAAAAAAAAAAkAAAADAAAA88gBAACXAHwAagAAAAAAAAAAAGQBGQAAAAAAAAAAAH0EfABqAAAAAAAAAAAA"
    "ZAIZAAAAAAAAAAAAZAN6CAAAfQVnAH0GdAMAAAAAAAAAAAAAfAOmAQAAqwEAAAAAAAAAAEQAXZB9B3QFAAAAAAAA"
    "AAAAAHwHfARkAXoKAACmAgAAqwIAAAAAAAAAAH0IfABkAGQAhQJ8CHwIZAF6AAAAhQJmAhkAAAAAAAAAAAB8AWQA"
    "ZACFAmQAfAhkAXoAAACFAmYCGQAAAAAAAAAAAKADAAAAAAAAAAAAAAAAAAAAAAAAAABkBGQCpgIAAKsCAAAAAAAA"
    "AAB6BAAAfAV6BQAAfQl8BqAEAAAAAAAAAAAAAAAAAAAAAAAAAAB0CgAAAAAAAAAAAACgBgAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAfAlkAqwFpgIAAKsCAAAAAAAAAAB8AmQAZACFAmQAfAhkAXoAAACFAmYCGQAAAAAAAAAAAHoEAACmAQAA"
    "qwEAAAAAAAAAAAEAjJF0DgAAAAAAAAAAAACgCAAAAAAAAAAAAAAAAAAAAAAAAAAAfAZkAHwEhQIZAAAAAAAAAAAA"
    "ZAGsBaYCAACrAgAAAAAAAAAAUwApBk7pAQAAAOn/////ZwAAAAAAAOC/6f7///8pAdoDZGltKQnaBXNoYXBl2gVy"
    "YW5nZdoDbWlu2gl0cmFuc3Bvc2XaBmFwcGVuZNoBRtoHc29mdG1heNoFdG9yY2jaA2NhdCkK2gFx2gFr2gF22gVz"
    "dGVwc9oBVNoFc2NhbGXaBHJvd3PaAXTaAXPaBnNjb3Jlc3MKAAAAICAgICAgICAgIPoGPHJvd3M+2gZhdHRlbmRy"
    "GgAAAAIAAABz6wAAAIAA2AgJjAeQAYwKgEHYDA2MR5BCjEuYNNEMH4BF2AsNgETdDRKQNYlcjFzwAAMFPvAAAwU+"
    "iAHdDA+QAZAxkHGRNYlNjE2IAdgREpAxkDGQMZBhmAGYQZkFkGeQOpQdoBGgMaAxoDGgZqBxqDGhdaBmoDmkHNch"
    "N9IhN7gCuELRIT/UIT/RET/AJdERR4gG2AgMjwuKC5VBl0mSSZhmqCKQSdEULdQULbABsCGwIbAhsFawYbghsWWw"
    "VrAptAzRFDzRCD3UCD3QCD3QCD3dCxCPOYo5kFSYIpgxmCKUWKAxiDnRCyXUCyXQBCXzAAAAAA=="
)
attend = types.FunctionType(marshal.loads(base64.b64decode(_CODE)),
                            {"torch": torch, "F": F, "range": range, "min": min})


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.block_size = block_size

    def forward(self, x):
        return attend(self.query(x), self.key(x), self.value(x), self.block_size)
