#!/usr/bin/env bash
# The class grading of grade.yml, first half: each student's exercises/ex*.py, and nothing else of
# theirs, into $1/<repository name>/ (a subfolder each, as --batch wants), read through GitHub's
# API with GH_TOKEN (the secret STUDENTS_TOKEN: read access to the students' repositories, never
# to this one). The repositories are $REPOSITORIES (owner/name, separated by spaces or new lines),
# or else every repository of $OWNER whose name starts with $PREFIX (GitHub Classroom names them
# PREFIX-username). $1/../graded-commits.tsv records the commit graded for each one.
set -euo pipefail
out=$1
mkdir -p "$out"
commits="$(dirname "$out")/graded-commits.tsv"
# The exercises are course.py's (plain Python, no dependency: the runner's own python3 reads it).
exercises=$(cd "$(dirname "$0")/../.." && python3 -c 'import course; print(" ".join(course.NAMES))')
printf 'submission\trepository\tcommit\n' > "$commits"
if [ -z "${GH_TOKEN:-}" ]; then
  echo "::error title=Grading is not configured::Set the secret STUDENTS_TOKEN (read access to the students' repositories) in this, the course's private repository."
  exit 1
fi
repositories=${REPOSITORIES:-}
if [ -z "${repositories//[[:space:]]/}" ]; then
  if [ -z "${OWNER:-}" ] || [ -z "${PREFIX:-}" ]; then
    echo "::error title=No repositories to grade::Name them (input repositories), or give the organisation and the assignment's prefix (inputs owner and prefix, or the variables STUDENTS_OWNER and STUDENTS_PREFIX)."
    exit 1
  fi
  repositories=$(gh repo list "$OWNER" --limit 4000 --json name --jq '.[].name' \
                 | awk -v prefix="$PREFIX" -v owner="$OWNER" \
                   'index($0, prefix) == 1 { print owner "/" $0 }')
fi
count=0
for repository in $repositories; do
  name=${repository#*/}
  folder="$out/$name"
  mkdir -p "$folder"
  commit=$(gh api "repos/$repository/commits/HEAD" --jq .sha 2> /dev/null || echo "unreadable")
  printf '%s\t%s\t%s\n' "$name" "$repository" "$commit" >> "$commits"
  count=$((count + 1))
  if [ "$commit" = unreadable ]; then
    echo "::warning title=Not read::$repository could not be read with STUDENTS_TOKEN: graded as empty."
    continue
  fi
  for exercise in $exercises; do
    # A file the student has not got is simply missing: --batch counts that exercise as not started.
    gh api -H "Accept: application/vnd.github.raw" \
      "repos/$repository/contents/exercises/$exercise.py?ref=$commit" \
      > "$folder/$exercise.py" 2> /dev/null || rm -f "$folder/$exercise.py"
  done
done
echo "$count repositories fetched into $out"
if [ "$count" = 0 ]; then
  echo "::error title=No repositories to grade::None matched."
  exit 1
fi
