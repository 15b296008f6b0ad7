"""Attack: GitHub Actions workflow commands in printed output and in an exception's message.

Right layers and projections (three nn.Linear(n_embd, head_size, bias=False), (q, k, v) in order).
But every call of forward prints lines that a GitHub Actions runner would obey if they reached the
job's log raw: ::add-mask:: (hide text of the log), ::stop-commands:: and ##[stop-commands] (switch
off the grader's own annotations), a forged ::error file=grader.py,line=1:: annotation,
::set-output name=score::100, an indented ::warning::, a ::notice:: with "100/100", ::group::,
one after a carriage return; and the first call raises a RuntimeError whose message is made of the
same lines. In CI, learner text must never be able to issue workflow commands.

Honest points: what its twin, twin-ex3-workflow_commands (the same code, a plain message, nothing
printed), earns: ex3 12/15 with the tests as they stand. Every other exercise: full marks.
"""
import torch.nn as nn

LINES = [
    "::add-mask::abc",
    "::stop-commands::pwned",
    "##[stop-commands]pwned",
    "::error file=grader.py,line=1::forged",
    "::set-output name=score::100",
    "  ::warning::x",
    "::notice title=Total::100/100",
    "::group::forged",
    "::endgroup::",
    "%0A::error::encoded",
    "\r::error file=tests/test_ex3_qkv.py,line=1::after a carriage return",
]
_calls = [0]


class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        print("\n".join(LINES), flush=True)
        _calls[0] += 1
        if _calls[0] == 1:
            raise RuntimeError("\n".join(LINES))
        return self.query(x), self.key(x), self.value(x)  # each (B, T, head_size)
