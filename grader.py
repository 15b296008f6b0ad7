#!/usr/bin/env python3
"""python grader.py --help: grade the self-attention exercises. 给注意力机制的练习打分。

The command line lives in grading/commands/cli.py; this file only starts it.
"""
import os
import sys
import time


# When the learner pressed Enter, near enough: the report's footer gives the time they waited,
# torch's import included (the grading alone is a fraction of it). Not in the judge that runs
# this file again once its zygote has imported torch (it finds its connections in this variable:
# grading.wire.ops.JUDGE_CONNECTIONS), which keeps the time of the process the learner started.
def _started():
    """When this process started: Linux knows its age (the interpreter's own start-up counts
    too, ~0.05 s); elsewhere, now."""
    try:
        with open("/proc/self/stat", "rb") as f:
            ticks = int(f.read().rsplit(b")", 1)[1].split()[19])  # field 22: starttime
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        age = uptime - ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - age if 0 <= age < 60 else time.time()
    except (OSError, ValueError, IndexError, AttributeError):
        return time.time()


if "GRADER_ZYGOTE_CONNECTIONS" not in os.environ:
    os.environ["GRADER_STARTED"] = repr(_started())

from grading.commands.cli import USAGE_ERROR, main  # noqa: E402, F401  (USAGE_ERROR: self-test)
from grading.output.terminal import PipeSafe  # noqa: E402

if __name__ == "__main__":
    sys.stdout, sys.stderr = PipeSafe(sys.stdout), PipeSafe(sys.stderr)
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # all is written; skipping torch's teardown saves a few tenths of a second
