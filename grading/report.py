"""What a grade looks like: the terminal table, Gradescope's results.json, and a batch record."""
import json
import os
import tempfile
from pathlib import Path

from grading.session import SECTIONS

MARKS = {"done": "✓", "failing": "✗", "todo": "·"}
STATUS_TEXT = {"done": "done", "failing": "to fix", "todo": "not started"}


def display_path(path):
    """The folder as the learner would type it: relative to where they are, when it is below."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _failure_lines(result, folder):
    lines = [f"✗ {result.name}"]
    message = result.message.strip().splitlines() or ["failed"]
    lines += [f"  {line}" for line in message[:3]]
    for file, line, function, source in result.frames[-2:]:
        where = f"{folder}/{file}:{line}" + (f" in {function}" if function != "<module>" else "")
        lines.append(f"  {where}: {source}" if source else f"  {where}")
    printed = [line for line in result.output.strip().splitlines() if line.strip()]
    if printed:
        lines.append(f"  your code printed: {printed[0][:100]}" +
                     (f" (+{len(printed) - 1} more lines)" if len(printed) > 1 else ""))
    return lines


def text(grade, command="python grader.py"):
    folder = display_path(grade.submission)
    out = [f"Grading {folder}/ · seed {grade.seed}", ""]
    for ex in grade.exercises:
        mark = MARKS[ex.status]
        out.append(f" {mark} {ex.exercise:<16} {ex.score:>4g}/{ex.max_score:<3g} "
                   f"{STATUS_TEXT[ex.status]:<12} {SECTIONS.get(ex.exercise, '')}")
        failure = ex.first_failure
        if ex.status == "todo":
            frame = failure.frames[-1] if failure.frames else None
            where = f"{folder}/{frame[0]}:{frame[1]}" if frame else f"{folder}/{ex.exercise}.py"
            out.append(f"      {where} still raises NotImplementedError: replace the TODO there")
        elif failure is not None:
            out += ["      " + line for line in _failure_lines(failure, folder)]
            others = [r.name for r in ex.results
                      if r.status not in ("passed", "skipped") and r is not failure]
            if others:
                out.append("      also failing: " + "; ".join(others[:3]) +
                           (f"; and {len(others) - 3} more" if len(others) > 3 else ""))
        skipped = [r for r in ex.results if r.status == "skipped"]
        if skipped:
            out.append(f"      {len(skipped)} hidden check{'s' * (len(skipped) > 1)} "
                       f"({sum(r.points for r in skipped):g} points) run where the solutions are: "
                       "the course's CI")
    out.append("")
    out.append(f" Total {grade.score:g}/{grade.max_score:g} · seed {grade.seed} "
               f"(add --seed {grade.seed} to replay this run) · {grade.seconds:.1f} s")
    todo = next((ex for ex in grade.exercises if ex.score < ex.max_score), None)
    if todo is None and len(grade.exercises) < len(SECTIONS):
        out.append(f" Every check of {', '.join(e.exercise for e in grade.exercises)} passes. "
                   f"Run {command} to grade all {len(SECTIONS)} exercises.")
    elif todo is None:
        out.append(" Every check passes. 全部通过。")
    else:
        number = todo.exercise[2]
        out.append(f" Next: {todo.exercise} ({SECTIONS.get(todo.exercise, '')}) — edit "
                   f"{folder}/{todo.exercise}.py, then run {command} {number}")
    return "\n".join(out)


def gradescope(grade):
    """Gradescope's results.json: every test named after its exercise's file stem."""
    tests = []
    for ex in grade.exercises:
        for r in ex.results:
            output = r.message
            if r.frames:
                output += "\n" + "\n".join(f"{f}:{line}: {src}" for f, line, _, src in r.frames)
            if r.output and r.status != "passed":
                output += "\nYour code printed:\n" + r.output[:2000]
            tests.append({
                "name": f"{ex.exercise} · {r.name}", "number": f"{ex.exercise[2]}.{r.number}",
                "score": r.score, "max_score": r.points,
                "status": "passed" if r.status == "passed" else "failed",
                "output": output, "visibility": "visible", "tags": [r.kind]})
    return {"score": grade.score, "execution_time": round(grade.seconds, 2),
            "output": f"{grade.score:g}/{grade.max_score:g} · seed {grade.seed}",
            "tests": tests}


def record(grade):
    """A compact record of one submission, for batches and the grader's own tests."""
    return {
        "total": grade.score, "max": grade.max_score, "seed": grade.seed,
        "seconds": round(grade.seconds, 2),
        "exercises": {ex.exercise: {
            "score": ex.score, "max": ex.max_score, "status": ex.status,
            "tests": [{"id": r.nodeid.split("::")[-1], "name": r.name, "status": r.status,
                       "cause": r.cause, "score": r.score, "points": r.points,
                       "kind": r.kind, "message": r.message} for r in ex.results]}
            for ex in grade.exercises}}


def check_writable(path):
    """Raise OSError with a one-line reason when a results file could not be written there."""
    path = Path(path)
    if path.is_dir():
        raise OSError(f"{path} is a folder, not a file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OSError(f"the folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OSError(f"{path} is not writable")


def write_json(path, data):
    """Write atomically: a reader never sees half a file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".results-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=2)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
