#!/usr/bin/env bash
# Reports files a pull request changes outside exercises/: one failing annotation naming them, and
# outside=true in $GITHUB_OUTPUT. Run in the pull request's checkout, with the base commit as $1.
# Those changes are never graded: the grading code comes from the base branch.
set -euo pipefail
base=$1
outside=$(git diff --name-only "$base"...HEAD -- . ':(exclude)exercises/' | tr '\n' ' ')
if [ -n "${outside// /}" ]; then
  echo "::error title=Changes outside exercises/::This pull request changes ${outside% }. Only exercises/ is graded; these changes are ignored, and the check fails until they are removed."
  echo "outside=true" >> "${GITHUB_OUTPUT:-/dev/null}"
else
  echo "outside=false" >> "${GITHUB_OUTPUT:-/dev/null}"
fi
