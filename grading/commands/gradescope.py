"""`python grader.py gradescope OUT.zip`: this grader as a Gradescope autograder.

The zip holds, at its top level, what Gradescope's autograder specification asks for:

    setup.sh         run once, as root, while Gradescope builds the image (Ubuntu): Python
                     3.10 to 3.13 with venv and pip (apt-get when missing), then
                     $AUTOGRADER_ROOT/venv with torch's CPU build, from PyTorch's CPU index
                     alone (when that index cannot be reached, setup.sh stops with a message
                     rather than take PyPI's CUDA build), then the rest of requirements.txt
    run_autograder   run for every submission: `python3 -m grading.commands.gradescope run` in grader/
    settings.json    what was chosen when the bundle was made: {"lang": "zh" | "en",
                     "hidden_visibility": "after_published" | "after_due_date" | "hidden"}
    grader/          the grading repository: grader.py, pytest.ini, requirements.txt, grading/,
                     tests/, solutions/ and exercises/ (no selftest/, no .git, no __pycache__);
                     with the solutions in it, the zip stays with the course staff

Gradescope unpacks the zip into /autograder/source, puts the submission in /autograder/submission
and reads /autograder/results/results.json. Every one of these paths is under $AUTOGRADER_ROOT
(default /autograder), so that the bundle can be tried in a temporary folder; $AUTOGRADER_PYTHON
names the Python run_autograder uses (default: the venv setup.sh made, else python3).

`run` gathers the six exercise files from anywhere in the submission (learners upload the files,
or a folder such as exercises/; when a name is there twice the shallowest copy counts), grades them
with `grader.py --submission TMP --json …/results.json` and the solutions of this copy, and adds to
results.json a top-level "output" naming the files that were missing (their exercise scores 0, with
the grader's own "… is missing from the submission") and the files that were ignored. The report's
language is the bundle's (`--lang`, default zh, the lesson's; $GRADER_LANG overrides it, for
trying a bundle by hand: Gradescope sets none). The hidden checks compare with the solutions: their
tests get the bundle's visibility (`--hidden-visibility`, default after_published: shown once the
grades are published), and the likely cause of a mistake, found by those comparisons, is told in
a hidden test's output, never in a visible one. When grading could not run (grader exit
status 2, or no results.json), results.json still says so: score 0, and an output that asks the
learner to contact the course staff, with the end of the grader's stderr. When only some tests met
an error of the grader itself (exit status 2 with a results.json whose tests say so), those tests
score 0 and the rest of the submission is graded: an error in one check never costs the whole
submission.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path

from grading.config import EXERCISES, GRADER_FILES, ROOT, SEALED
from grading.i18n import LANGUAGES, Bi
from grading.inert import inert, inert_line

FOLDER = "grader"  # the repository's copy inside the zip, so /autograder/source/grader
SHIPPED = (*GRADER_FILES, "solutions", "exercises")
DEFAULT_ROOT = "/autograder"
DEFAULT_LANG = "zh"  # the lesson's language; `--lang en` when making the bundle for English
SETTINGS = "settings.json"  # beside setup.sh: the bundle's choices (see the docstring)
# Gradescope's test visibilities that keep a test from students until then (never "visible").
HIDDEN_VISIBILITIES = ("after_published", "after_due_date", "hidden")
DEFAULT_HIDDEN_VISIBILITY = "after_published"
GRADER_TIMEOUT = 480  # seconds for the whole grading: below Gradescope's default limit of 10 min
LISTED = 20  # ignored files named in the output; the rest are counted
STDERR_TAIL = 3000  # characters of the grader's stderr shown when grading failed
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
USAGE_ERROR = 2

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu): Python
# 3.10 to 3.13 (what requirements.txt supports) with venv and pip, then a virtual environment
# with the grader's requirements, torch's CPU build. Everything goes under $AUTOGRADER_ROOT
# (default /autograder).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
here="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
root="${{AUTOGRADER_ROOT:-{DEFAULT_ROOT}}}"

recent_python() {{  # the first of these that is Python 3.10 to 3.13, as requirements.txt asks
  local name
  for name in python3 python3.13 python3.12 python3.11 python3.10; do
    if command -v "$name" > /dev/null \\
        && "$name" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info < (3, 14))' \\
          2> /dev/null; then
      echo "$name"
      return 0
    fi
  done
  return 1
}}

python="$(recent_python || true)"
if [ -z "$python" ]; then
  apt-get update
  apt-get install -y --no-install-recommends python3 python3-venv python3-pip
  python="$(recent_python || true)"
fi
if ! "$python" -c 'import ensurepip, venv' 2> /dev/null; then
  apt-get update
  apt-get install -y --no-install-recommends "$python-venv" python3-pip
fi

"$python" -m venv "$root/venv"
"$root/venv/bin/python" -m pip install --no-cache-dir --upgrade pip
# torch first, from PyTorch's CPU index alone: with PyPI beside it, an unreachable CPU index would
# make pip take PyPI's torch, the CUDA build (several GB), without a word.
torch_pin="$(grep -E '^torch==' "$here/{FOLDER}/requirements.txt")"
if ! "$root/venv/bin/python" -m pip install --no-cache-dir --index-url {CPU_INDEX} "$torch_pin"; then
  echo "setup.sh: could not install $torch_pin, the CPU build, from {CPU_INDEX}" >&2
  echo "setup.sh: (is the index reachable from here?). Stopping rather than installing PyPI's" >&2
  echo "setup.sh: CUDA build. Try again (Update Autograder), or check the network." >&2
  exit 1
fi
"$root/venv/bin/python" -m pip install --no-cache-dir -r "$here/{FOLDER}/requirements.txt" \\
  --extra-index-url {CPU_INDEX}
if ! "$root/venv/bin/python" -c 'import sys, torch; sys.exit(torch.version.cuda is not None)'; then
  echo "setup.sh: the torch installed is a CUDA build, not the CPU build: stopping." >&2
  exit 1
fi
"$root/venv/bin/python" -c 'import numpy, pytest, torch; print("torch", torch.__version__)'
"""

RUN_AUTOGRADER = f"""#!/usr/bin/env bash
# Gradescope runs this for every submission: grade $AUTOGRADER_ROOT/submission into
# $AUTOGRADER_ROOT/results/results.json (see grading/commands/gradescope.py). A results.json is written
# even when Python cannot start.
set -uo pipefail
root="${{AUTOGRADER_ROOT:-{DEFAULT_ROOT}}}"
export AUTOGRADER_ROOT="$root"
python="${{AUTOGRADER_PYTHON:-}}"
if [ -z "$python" ]; then
  if [ -x "$root/venv/bin/python" ]; then python="$root/venv/bin/python"; else python=python3; fi
fi
mkdir -p "$root/results"
rm -f "$root/results/results.json"
cd "$root/source/{FOLDER}" && "$python" -m grading.commands.gradescope run
status=$?
if [ ! -s "$root/results/results.json" ]; then
  {{
    printf '{{"score": 0, "output": "评分没能运行，请联系课程工作人员。'
    printf 'Grading could not run: please contact the course staff '
    printf '(run_autograder: the grader wrote no results.json)."}}\\n'
  }} > "$root/results/results.json"
fi
exit "$status"
"""


# -- the bundle -----------------------------------------------------------------------------------

def _shipped_files():
    """(path in the zip, file) for the repository's copy, sorted, without caches."""
    files = []
    for name in SHIPPED:
        source = ROOT / name
        if source.is_file():
            files.append((f"{FOLDER}/{name}", source))
            continue
        if not source.is_dir():
            raise ValueError(f"{source} is missing: the bundle needs it")
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(ROOT)
            if (path.is_file() and not path.is_symlink() and "__pycache__" not in relative.parts
                    and path.suffix not in (".pyc", ".pyo")):
                files.append((f"{FOLDER}/{relative.as_posix()}", path))
    return files


def _entry(name, mode):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the same bytes every time
    info.external_attr = (0o100000 | mode) << 16  # a regular file with these permissions
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix: unzip then honours the permissions
    return info


def write_bundle(out_zip, lang=DEFAULT_LANG, hidden_visibility=DEFAULT_HIDDEN_VISIBILITY):
    """Write the autograder zip to `out_zip` (replacing it) and return its path."""
    if lang not in LANGUAGES or hidden_visibility not in HIDDEN_VISIBILITIES:
        raise ValueError(f"no such setting: lang {lang!r}, hidden visibility {hidden_visibility!r}")
    settings = json.dumps({"lang": lang, "hidden_visibility": hidden_visibility}, indent=2) + "\n"
    out = Path(out_zip)
    files = [(name, path) for name, path in _shipped_files()
             if path.resolve() != out.resolve()]
    fd, tmp = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=".gradescope-",
                               suffix=".zip")
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w") as bundle:
            bundle.writestr(_entry("setup.sh", 0o755), SETUP_SH)
            bundle.writestr(_entry("run_autograder", 0o755), RUN_AUTOGRADER)
            bundle.writestr(_entry(SETTINGS, 0o644), settings)
            for name, path in files:
                bundle.writestr(_entry(name, 0o755 if os.access(path, os.X_OK) else 0o644),
                                path.read_bytes())
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def parse(argv):
    """`OUT.zip [--lang zh|en] [--hidden-visibility V]` → (out, lang, visibility), or a problem."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise ValueError(message)

    parser = Parser(prog="python grader.py gradescope", add_help=False)
    parser.add_argument("out")
    parser.add_argument("--lang", choices=LANGUAGES, default=DEFAULT_LANG)
    parser.add_argument("--hidden-visibility", choices=HIDDEN_VISIBILITIES,
                        default=DEFAULT_HIDDEN_VISIBILITY)
    args = parser.parse_args(argv)
    return Path(args.out), args.lang, args.hidden_visibility


USAGE = ("usage: python grader.py gradescope OUT.zip [--lang zh|en] "
         "[--hidden-visibility after_published|after_due_date|hidden]")


def main(argv):
    """`python grader.py gradescope OUT.zip [--lang L] [--hidden-visibility V]`, with argv the
    arguments after `gradescope`: 0 when the zip was written, 2 (one line on stderr) when OUT or
    an option will not do."""
    try:
        out, lang, visibility = parse(argv)
    except ValueError as error:
        print(f"grader.py: {USAGE} ({inert_line(str(error))})", file=sys.stderr)
        return USAGE_ERROR
    parent = out.parent if str(out.parent) else Path(".")
    problem = None
    if out.suffix.lower() != ".zip":
        problem = f"{out} does not end with .zip: name the zip to write, e.g. autograder.zip"
    elif out.is_dir():
        problem = f"{out} is a folder: name the zip to write inside it, e.g. {out}/autograder.zip"
    elif not parent.is_dir():
        problem = f"the folder {parent} does not exist"
    elif not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        problem = f"{out} is not writable"
    if problem is None:
        try:
            written = write_bundle(out, lang, visibility)
        except (ValueError, OSError) as error:
            problem = str(error)
    if problem is not None:
        print(f"grader.py: {inert_line(problem)}", file=sys.stderr)
        return USAGE_ERROR
    print(f"Gradescope autograder written to {written}: setup.sh, run_autograder, {SETTINGS} "
          f"(report in {lang}; hidden checks shown to students: {visibility}) and this grader "
          "with its solutions/ (keep the zip private).")
    print("Upload it in Gradescope: the Programming Assignment → Configure Autograder → Zip file "
          "upload (Ubuntu base image) → Update Autograder; learners submit ex1_embedding.py … "
          "ex6_head.py.")
    return 0


# -- grading one submission on Gradescope ---------------------------------------------------------

def settings(source=None):
    """The bundle's settings.json (beside setup.sh, one folder above this copy), with defaults."""
    chosen = {"lang": DEFAULT_LANG, "hidden_visibility": DEFAULT_HIDDEN_VISIBILITY}
    path = Path(source) if source else ROOT.parent / SETTINGS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return chosen
    if isinstance(data, dict):
        if data.get("lang") in LANGUAGES:
            chosen["lang"] = data["lang"]
        if data.get("hidden_visibility") in HIDDEN_VISIBILITIES:
            chosen["hidden_visibility"] = data["hidden_visibility"]
    return chosen


def language(environ=None, chosen=None):
    """The bundle's language, unless GRADER_LANG names another of LANGUAGES."""
    value = (os.environ if environ is None else environ).get("GRADER_LANG", "").strip().lower()
    return value if value in LANGUAGES else (chosen or settings())["lang"]


def seal(data, visibility, lang="en"):
    """The hidden checks' tests (tag "hidden") get `visibility`: students see them, their
    messages and the reference's values in them, only then. Until then nothing else a student
    reads depends on them either: the top-level output's score line gives the public checks'
    points alone (the total with the hidden checks would let a student probe them by
    resubmitting)."""
    tests = [t for t in data.get("tests", []) if isinstance(t, dict)] \
        if isinstance(data.get("tests"), list) else []
    for test in tests:
        hidden = "hidden" in (test.get("tags") or [])
        test["visibility"] = visibility if hidden else test.get("visibility", "visible")
    if visibility != "visible" and isinstance(data.get("output"), str):
        public = [t for t in tests if "hidden" not in (t.get("tags") or [])]
        score = sum(t.get("score", 0) for t in public)
        most = sum(t.get("max_score", 0) for t in public)
        said = Bi(f"{score:g}/{most:g}（公开检查；隐藏检查在成绩公布后显示）· seed",
                  f"{score:g}/{most:g} (public checks; the hidden checks are shown when grades "
                  "are published) · seed").render(lang)
        data["output"] = _SCORE_LINE.sub(lambda _: said, data["output"])
    return data


_SCORE_LINE = re.compile(r"^\d+(?:\.\d+)?/\d+(?:\.\d+)? · seed", re.MULTILINE)


def gather(submission, target):
    """Copy the exercise files found anywhere under `submission` into `target`; the shallowest
    copy of a name wins (then the first in path order). Returns (graded, missing, ignored): the
    paths graded and the paths ignored, relative to `submission`, and the missing file names."""
    wanted = {f"{name}.py" for name in EXERCISES}
    found = []
    if submission.is_dir():
        for folder, dirs, names in os.walk(submission):  # symbolic links to folders not followed
            dirs.sort()
            found += [Path(folder, name).relative_to(submission) for name in sorted(names)]
    chosen = {}
    for path in sorted(found, key=lambda p: (len(p.parts), p.as_posix())):
        full = submission / path
        # A regular file only: a symbolic link could point at this copy's solutions.
        if (path.name in wanted and path.name not in chosen and full.is_file()
                and not full.is_symlink()):
            chosen[path.name] = path
    for name, path in chosen.items():
        (target / name).write_bytes((submission / path).read_bytes())
    graded = [chosen[f"{name}.py"] for name in EXERCISES if f"{name}.py" in chosen]
    missing = [f"{name}.py" for name in EXERCISES if f"{name}.py" not in chosen]
    ignored = sorted(set(found) - set(graded), key=lambda p: p.as_posix())
    return graded, missing, ignored


def files_note(graded, missing, ignored, lang):
    """What the learner reads first: which files were graded, missing and ignored."""
    def names(paths, limit=None):
        shown = ", ".join(inert_line(p.as_posix() if isinstance(p, Path) else p)
                          for p in paths[:limit])
        more = len(paths) - len(paths[:limit])
        return shown + (Bi(f" 等，另有 {more} 个", f" and {more} more").render(lang)
                        if more else "")

    lines = []
    if graded:
        lines.append(Bi(f"已打分的文件：{names(graded)}",
                        f"Graded files: {names(graded)}").render(lang))
    if missing:
        lines.append(Bi(f"缺少的文件（对应的练习得 0 分）：{names(missing)}",
                        f"Missing files (those exercises score 0): {names(missing)}").render(lang))
    if ignored:
        lines.append(Bi(f"已忽略的文件（不打分）：{names(ignored, LISTED)}",
                        f"Ignored files (not graded): {names(ignored, LISTED)}").render(lang))
    if missing or ignored:
        lines.append(Bi(f"请提交这 {len(EXERCISES)} 个文件：",
                        f"Submit these {len(EXERCISES)} files: ").render(lang)
                     + ", ".join(f"{name}.py" for name in EXERCISES))
    return "\n".join(lines)


def graded_with_errors(data):
    """results.json of a grading that ran, in which some tests met an error of the grader itself
    (grader.py then exits 2): each such test scores 0, the others count as graded."""
    from grading.output.report import GRADING_ERROR_TAG
    tests = data.get("tests") if isinstance(data, dict) else None
    return isinstance(tests, list) and bool(tests) and all(isinstance(t, dict) for t in tests) \
        and any(GRADING_ERROR_TAG in (t.get("tags") or []) for t in tests)


def errors_note(data, lang):
    """What the learner reads first when some checks met an error of the grader itself."""
    from grading.output.report import GRADING_ERROR_TAG
    names = [inert_line(str(t.get("name", ""))) for t in data["tests"]
             if GRADING_ERROR_TAG in (t.get("tags") or [])]
    shown = ", ".join(names[:LISTED]) + (f" (+{len(names) - LISTED})" if len(names) > LISTED
                                         else "")
    return Bi(f"有 {len(names)} 项检查因为评分程序自身的错误没能完成（不是你的代码的问题），这几项暂记 0 分，"
              f"其余各项照常计分。请告诉课程工作人员：{shown}",
              f"{len(names)} check(s) could not be completed because of an error in the grader "
              "itself (not a problem of your code): they score 0 for now, every other check is "
              f"graded as usual. Please tell the course staff: {shown}").render(lang)


def failure(lang, detail):
    """results.json when grading could not run: score 0, and what the learner should do."""
    head = Bi("评分没能运行——这不是你的代码的问题。请联系课程工作人员，并附上下面的信息。",
              "Grading could not run — this is not a problem of your code. Please contact the "
              "course staff and include what follows.").render(lang)
    detail = inert(detail).strip()[-STDERR_TAIL:]
    return {"score": 0, "output": head + ("\n\n" + detail if detail else ""), "tests": []}


def grade(folder, results, lang, environ=None):
    """grader.py on `folder` into `results`: (exit status, stdout, stderr); -9 when it took too
    long (its whole process group is then killed)."""
    command = [sys.executable, str(ROOT / "grader.py"), "--submission", str(folder),
               "--json", str(results), "--lang", lang]
    # sealed: every exercise's visible checks before any hidden check or diagnosis (config.SEALED)
    environ = {**(os.environ if environ is None else environ), SEALED: "1"}
    process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors="replace",
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=GRADER_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return -9, stdout, stderr + f"\ngrader.py took more than {GRADER_TIMEOUT} s and was stopped"
    return process.returncode, stdout, stderr


def run(root=None, environ=None):
    """Grade $AUTOGRADER_ROOT/submission into $AUTOGRADER_ROOT/results/results.json; 0 once a
    results.json is written (Gradescope reads the grade from it), 1 if even that failed."""
    environ = dict(os.environ if environ is None else environ)
    root = Path(root or environ.get("AUTOGRADER_ROOT") or DEFAULT_ROOT)
    chosen = settings(root / "source" / SETTINGS)
    lang = language(environ, chosen)
    results = root / "results" / "results.json"
    from grading.output.report import write_json
    try:
        results.parent.mkdir(parents=True, exist_ok=True)
        results.unlink(missing_ok=True)  # a results.json now is one this grading wrote
        folder = Path(tempfile.mkdtemp(prefix="gradescope-submission-"))
        try:
            graded, missing, ignored = gather(root / "submission", folder)
            code, stdout, stderr = grade(folder, results, lang, environ)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        print(stdout, end="")  # to /autograder/results/stdout, which the instructor sees
        print(stderr, end="", file=sys.stderr)
        data = None
        if code >= 0 and results.is_file():  # written by this grading (unlinked before it)
            try:
                data = json.loads(results.read_text(encoding="utf-8"))
            except ValueError:
                stderr += "\nresults.json is not JSON"
        if code == USAGE_ERROR and not graded_with_errors(data):
            data = None  # grading itself could not run
        note = files_note(graded, missing, ignored, lang)
        if code == USAGE_ERROR and data is not None:  # some checks erred: they alone cost points
            note = "\n\n".join(part for part in (errors_note(data, lang), note) if part)
        if isinstance(data, dict):
            data["output"] = "\n\n".join(part for part in (note, data.get("output")) if part)
            seal(data, chosen["hidden_visibility"], lang)
        else:  # what went wrong first, then the files
            data = failure(lang, f"grader.py exit status {code}\n{stderr}")
            data["output"] += ("\n\n" + note) if note else ""
        data["extra_data"] = {**data.get("extra_data", {}),
                              "graded": [p.as_posix() for p in graded], "missing": missing,
                              "ignored": [p.as_posix() for p in ignored]}
        write_json(results, data)
        return 0
    except BaseException:  # noqa: BLE001 (whatever went wrong: a results.json all the same)
        detail = traceback.format_exc()
        print(detail, file=sys.stderr)
        try:
            results.parent.mkdir(parents=True, exist_ok=True)
            write_json(results, failure(lang, detail))
            return 0
        except OSError:
            return 1


if __name__ == "__main__":
    arguments = sys.argv[1:]
    sys.exit(run() if arguments == ["run"] else main(arguments))
