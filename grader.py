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
if "GRADER_ZYGOTE_CONNECTIONS" not in os.environ:
    os.environ["GRADER_STARTED"] = repr(time.time())

from grading.commands.cli import USAGE_ERROR, main  # noqa: F401  (USAGE_ERROR: for the self-test)
from grading.output.terminal import PipeSafe

if __name__ == "__main__":
    sys.stdout, sys.stderr = PipeSafe(sys.stdout), PipeSafe(sys.stderr)
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # all is written; skipping torch's teardown saves a few tenths of a second
