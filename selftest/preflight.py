"""The first step of `python grader.py --check` (grading/commands/check.py runs it): the
solutions themselves, in a few seconds.

    python selftest/preflight.py SEED

They must get full marks (graded as `python grader.py --solutions` grades them), and every known
mistake of fixtures.py must still apply to them (its edit's text is in the solution exactly once:
a solution that lost its scaling, say, no longer holds the text that the mistake "unscaled"
removes). When either fails, it says which solution, which check and what it got, on its first
line, and exits 1: the rest of the self-test would only fail because of it.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
sys.path.insert(0, str(ROOT))  # course.py (fixtures.py, beside this file, is found as it is)

import course  # noqa: E402
from fixtures import stale_mistakes  # noqa: E402

SHOWN = 3  # failing checks of the solutions named before stopping


def solution_problems(seed):
    """Lines that name what is wrong with solutions/, worst first; [] when nothing is."""
    problems = graded_problems(seed)
    stale = stale_mistakes(SOLUTIONS)
    problems += [f"✗ {stale}" for stale in stale[:SHOWN]]
    if len(stale) > SHOWN:
        problems.append(f"  and {len(stale) - SHOWN} more known mistakes that no longer apply")
    return problems


def graded_problems(seed):
    """The solutions graded as `python grader.py --solutions --json` grades them: a line for each
    of the first failing checks, naming the solution's file, the check and what it got."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GRADER_CHANGES_OUTSIDE")}
    with tempfile.TemporaryDirectory(prefix="grader-check-") as folder:
        results = Path(folder) / "solutions.json"
        done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "--solutions", "--json",
                               str(results), "--seed", str(seed), "--lang", "en"],
                              cwd=ROOT, env=environment, capture_output=True, text=True,
                              errors="replace", timeout=600)
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
    if done.returncode == 0 and data is not None:
        return []
    if data is None or done.returncode == 2:
        tail = "\n".join(line.removeprefix("INTERNALERROR>") for line in
                         (done.stderr or done.stdout).strip().splitlines()[-5:])
        return [*broken_files(done.stderr + done.stdout),
                f"✗ python grader.py --solutions could not grade the solutions (exit status "
                f"{done.returncode}):", *("  " + line for line in tail.splitlines())]
    failing = [test for test in data.get("tests", []) if test.get("status") != "passed"]
    lines = []
    for test in failing[:SHOWN]:
        exercise, _, name = test["name"].partition(" · ")
        mine = [t for t in data["tests"] if t["name"].startswith(exercise + " · ")]
        got = sum(t["score"] for t in mine)
        total = sum(t["max_score"] for t in mine)
        message = (test.get("output") or "failed").strip().splitlines()[0]
        lines.append(f"✗ solutions/{exercise}.py ({got:g}/{total:g}): “{name}” fails: {message}")
    if len(failing) > SHOWN:
        lines.append(f"  and {len(failing) - SHOWN} more failing checks of the solutions")
    return lines or [f"✗ the solutions score {data.get('score')}/{course.TOTAL}"]


def broken_files(output):
    """A line naming each solution file that cannot be loaded: one that does not compile (its
    line and the error), then one the traceback in `output` (an import that raised) ends in."""
    lines = []
    for path in sorted(SOLUTIONS.glob("*.py")):
        try:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except SyntaxError as error:
            lines.append(f"✗ solutions/{path.name} line {error.lineno}: SyntaxError: {error.msg}")
        except (OSError, UnicodeDecodeError, ValueError) as error:
            lines.append(f"✗ solutions/{path.name} cannot be read: {error}")
    if not lines:
        named = re.findall(r'File "[^"]*?solutions[/\\](\w+\.py)", line (\d+)', output)
        error = next((line.strip().removeprefix("INTERNALERROR>").strip()
                      for line in reversed(output.splitlines())
                      if re.search(r"\w+(Error|Exception): ", line)), "")
        if named:
            name, line = named[-1]
            lines.append(f"✗ solutions/{name} line {line}: {error}".rstrip(": "))
    return lines


def main():
    seed = int(sys.argv[1])
    problems = solution_problems(seed)
    if problems:
        for line in problems:
            print(line)
        print("--check stopped here: the solutions come first (the rest would fail because of "
              f"them). python grader.py --solutions --seed {seed} shows the whole report.")
        return 1
    print(f"✓ solutions/ scores {course.TOTAL}/{course.TOTAL} (seed {seed}) and every known "
          "mistake still applies to it. Now the self-test:", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
