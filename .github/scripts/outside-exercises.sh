#!/usr/bin/env bash
# Reports files a pull request changes outside exercises/: one failing annotation naming them, and
# outside=true and files=<the paths> in $GITHUB_OUTPUT. Run in the pull request's checkout, with
# the base commit as $1. Those changes are never graded: the grading code comes from the base
# branch. The grading step gets the paths (GRADER_CHANGES_OUTSIDE), so that its job summary says
# ❌ and why, as the check's conclusion does, whatever the points.
set -euo pipefail
base=$1
outside=$(git diff --name-only "$base"...HEAD -- . ':(exclude)exercises/' | tr '\n' ' ')
if [ -n "${outside// /}" ]; then
  echo "::error title=Changes outside exercises/::This pull request changes ${outside% }. Only exercises/ is graded; these changes are ignored, and the check fails until they are removed."
  printf 'outside=true\nfiles=%s\n' "${outside% }" >> "${GITHUB_OUTPUT:-/dev/null}"
else
  printf 'outside=false\nfiles=\n' >> "${GITHUB_OUTPUT:-/dev/null}"
fi
