"""Attack 12: print 50 MB, then answer wrongly: the run survives and what is shown is cut."""
import sys

import torch.nn as nn

sys.stdout.write("x" * (50 * 1024 * 1024) + "\n")


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        print("y" * (50 * 1024 * 1024))
        return self.query(x), self.query(x), self.query(x)  # wrong: q three times
