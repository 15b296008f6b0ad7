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
# One API read, retried: a 502 or a rate limit passes, a file the student has not got (404) does
# not. Exit status 0 read, 4 not there, 6 an empty repository (409), 5 the token refused (401:
# no retry, the whole fetch stops), 1 failed every attempt (the error on stderr).
attempts=${FETCH_ATTEMPTS:-4}
fetch() {
  local target=$1 error attempt
  shift
  for attempt in $(seq 1 "$attempts"); do
    if error=$(gh api "$@" 2>&1 > "$target.part"); then
      mv "$target.part" "$target"
      return 0
    fi
    rm -f "$target.part"
    case $error in
      *"HTTP 404"*|*"Not Found"*) return 4 ;;
      *"HTTP 409"*|*"is empty"*) return 6 ;;
      *"HTTP 401"*|*"Bad credentials"*) echo "$error" | tail -n 1 >&2; return 5 ;;
    esac
    [ "$attempt" = "$attempts" ] || sleep $((attempt * ${FETCH_BACKOFF:-5}))
  done
  echo "$error" | tail -n 1 >&2
  return 1
}
count=0
failed=()
for repository in $repositories; do
  name=${repository#*/}
  folder="$out/$name"
  mkdir -p "$folder"
  status=0
  fetch "$folder/.commit" "repos/$repository/commits/HEAD" --jq .sha 2> "$folder/.error" || status=$?
  if [ "$status" = 5 ]; then  # the token itself: every repository would fail the same way
    echo "::error title=Bad credentials::GitHub refused the token STUDENTS_TOKEN ($(cat "$folder/.error")): renew it, with read access to the students' repositories, and run the job again."
    exit 1
  fi
  case $status in
    0) commit=$(cat "$folder/.commit") ;;
    4) commit="not fetched: no such repository (or the token cannot see it)" ;;
    6) commit="not fetched: the repository is empty (no commit yet)" ;;
    *) commit=unreadable ;;
  esac
  rm -f "$folder/.commit"
  printf '%s\t%s\t%s\n' "$name" "$repository" "$commit" >> "$commits"
  count=$((count + 1))
  if [ "$status" = 4 ] || [ "$status" = 6 ]; then  # the row grades as empty; the TSV says why
    echo "::warning title=Not fetched::$repository: ${commit#not fetched: }"
    rm -f "$folder/.error"
    continue
  fi
  if [ "$status" != 0 ]; then
    failed+=("$repository: its latest commit ($(cat "$folder/.error"))")
    rm -f "$folder/.error"
    continue
  fi
  missing=()
  for exercise in $exercises; do
    # A file the student has not got (404) is simply missing: --batch counts it as not started.
    status=0
    fetch "$folder/$exercise.py" -H "Accept: application/vnd.github.raw" \
      "repos/$repository/contents/exercises/$exercise.py?ref=$commit" 2> "$folder/.error" \
      || status=$?
    if [ "$status" = 5 ]; then
      echo "::error title=Bad credentials::GitHub refused the token STUDENTS_TOKEN ($(cat "$folder/.error")): renew it and run the job again."
      exit 1
    fi
    if [ "$status" = 1 ]; then
      failed+=("$repository: exercises/$exercise.py ($(cat "$folder/.error"))")
    fi
    [ "$status" = 4 ] && missing+=("$exercise")
  done
  # A missing file may be there under another name (Ex6_Head.py, "ex6_head (1).py"): fetched as
  # it is named, so that the gradebook's note names the file that is there.
  if [ "${#missing[@]}" != 0 ] && fetch "$folder/.listing" \
       "repos/$repository/contents/exercises?ref=$commit" --jq '.[].name' 2> "$folder/.error"; then
    while IFS= read -r file; do
      lower=$(printf '%s' "$file" | tr '[:upper:]' '[:lower:]')
      for exercise in "${missing[@]}"; do
        if [[ "$lower" == "$exercise"* && "$file" != "$exercise.py" && "$file" =~ ^[A-Za-z0-9_.\ \(\)-]+$ ]]; then
          if fetch "$folder/$file" -H "Accept: application/vnd.github.raw" \
               "repos/$repository/contents/exercises/$file?ref=$commit" 2> "$folder/.error"; then
            echo "::warning title=Renamed file::$repository: exercises/$file is there, not $exercise.py (graded as missing; the gradebook names it)"
          fi
        fi
      done
    done < "$folder/.listing"
  fi
  rm -f "$folder/.error" "$folder/.listing"
done
if [ "$count" = 0 ]; then
  echo "::error title=No repositories to grade::None matched."
  exit 1
fi
if [ "${#failed[@]}" != 0 ]; then
  for failure in "${failed[@]}"; do
    echo "::error title=Not fetched::$failure: not read after $attempts attempts; that student's row would be wrong."
  done
  echo "${#failed[@]} file(s) of $count repositories could not be fetched into $out: the class is not graded. Run the job again."
  exit 1
fi
echo "$count repositories fetched into $out, every file read (a file a student has not got is missing, and counts as not started)"
