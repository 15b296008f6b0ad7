#!/usr/bin/env bash
# The grading step of grade.yml, runnable anywhere: grades exercises/ of the checkout it sits in.
# In GitHub Actions (GITHUB_ACTIONS=true) the grader also writes the job summary and annotations,
# and prints its report between ::stop-commands::TOKEN and ::TOKEN:: (a fresh token each run), so
# no line the learner's code printed or raised acts as a workflow command (grading/output/report.py).
# PASS_MARK (default: full marks) and GRADER_LANG (default en) come from repository variables.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2  # (2: the grading could not run)
python grader.py --json results.json ${PASS_MARK:+--pass-mark "$PASS_MARK"} --lang "${GRADER_LANG:-en}"
