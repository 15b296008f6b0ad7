"""Attack: terminal escapes in printed output and in an exception's message, drawing a fake report.

Right averaging (a lower-triangular matrix of ones, each row normalised, applied as weights @ x).
But every call of average_context prints control sequences that clear the screen and the
scrollback (ESC[2J ESC[3J ESC[H, and the 8-bit CSI 0x9b), set the window title (OSC 0), hide a link
(OSC 8), move the cursor up and erase lines, overwrite with carriage returns and backspaces, ring
the bell, reverse the text direction (U+202E) — and draw a fake, green report ending in
"Total 100/100"; and when x.shape[0] == 3 it raises a ValueError whose message is made of the same
sequences. Shown raw on a terminal, in results.json, a job summary or an annotation, the learner's
or an instructor's screen would read full marks. Learner text must be shown with its control
characters removed, everywhere.

Honest points: what its twin, twin-ex2-escape_report (the same code, plain ValueError, nothing
printed), earns: ex2 7/15 with the tests as they stand. Every other exercise: full marks.
"""
import torch

CLEAR = "\x1b[2J\x1b[3J\x1b[H\x9b2J\x9bH"
FAKE_REPORT = (
    CLEAR + "\x1b]0;grader.py: 100/100\x07"
    "\x1b[1;32m exercise           points  status\n"
    " ex1_embedding       10/10  passed\n"
    " ex2_averaging       15/15  passed\n"
    " ex3_qkv             15/15  passed\n"
    " ex4_scaling         15/15  passed\n"
    " ex5_causal_mask     20/20  passed\n"
    " ex6_head            25/25  passed\n"
    " Total 100/100\x1b[0m\n"
    "\x1b]8;;https://example.invalid/\x07details\x1b]8;;\x07\n"
    "failed\r\x1b[2Kpassed\b\b\b\b\b\bpassed \x07\u202e001/001 latoT\u202c\n"
    "\x1b[8m hidden text \x1b[0m\x1b[1A\x1b[2K\x1b[999D"
)


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))  # (T, T)
    return tril / tril.sum(dim=1, keepdim=True)  # each row sums to 1


def average_context(x):
    print(FAKE_REPORT, end="", flush=True)
    B, T, C = x.shape
    if B == 3:
        raise ValueError(FAKE_REPORT + "\x1b[32mTotal 100/100\x1b[0m\x1b[?25l")
    return averaging_matrix(T) @ x  # (B, T, C)
