"""`python grader.py hint N [LEVEL]`: the hints of an exercise, one level at a time.

Hints are course facts (course.py): a nudge first, then the lesson's step in words. Showing one
costs no torch import. The first level starts from the learner's own mistake: the likely cause
the last grading run named for the exercise (a learner's run keeps them in .grader-last.json).
With --remember the level shown last is kept in .grader-hints.json and the next call shows the
next one.
"""
import json

import course
from grading.config import ROOT
from grading.i18n import Bi

MEMORY = ROOT / ".grader-hints.json"
LAST_RUN = ROOT / ".grader-last.json"  # the last run's diagnoses: what hint N starts from


def remember_run(grade):
    """Keep, for each exercise just graded, the likely cause the report named (or none), so that
    `hint N` can start from the learner's own mistake. Best effort: a read-only copy keeps
    nothing, and says nothing (the report was the point)."""
    try:
        kept = json.loads(LAST_RUN.read_text(encoding="utf-8")) if LAST_RUN.exists() else {}
        kept = kept if isinstance(kept, dict) else {}
    except (OSError, ValueError):
        kept = {}
    for ex in grade.exercises:
        kept.pop(ex.exercise, None)
        if ex.diagnosis is not None and ex.status == "failing":
            kept[ex.exercise] = {"seed": grade.seed, **ex.diagnosis.text.as_dict()}
    try:
        LAST_RUN.write_text(json.dumps(kept, ensure_ascii=False, indent=1), encoding="utf-8")
    except OSError:
        pass


def last_cause(exercise):
    """(the last run's likely cause for exercise, as a Bi, its seed), or None."""
    try:
        found = json.loads(LAST_RUN.read_text(encoding="utf-8")).get(exercise)
        return Bi(found["zh"], found["en"]), int(found["seed"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def read_hints(exercise):
    """The hints of an exercise, as a list of Bi."""
    return [Bi(hint.zh, hint.en) for hint in course.BY_NAME[exercise].hints]


def show(exercise, level, remember, lang):
    """The text to print for `hint`; level None means 'the next one' (1 unless remembered)."""
    hints = read_hints(exercise)
    memory = {}
    if remember and MEMORY.exists():
        try:
            memory = json.loads(MEMORY.read_text(encoding="utf-8"))
        except ValueError:
            memory = {}
    if level is None:
        level = min(memory.get(exercise, 0) + 1, len(hints)) if remember else 1
    if not 1 <= level <= len(hints):
        raise ValueError(Bi(f"{exercise} 的提示只有 1 到 {len(hints)} 级",
                            f"{exercise} has hint levels 1 to {len(hints)}").render(lang))
    unremembered = None
    if remember:
        memory[exercise] = level
        try:
            MEMORY.write_text(json.dumps(memory, indent=1), encoding="utf-8")
        except OSError:  # a read-only checkout: the hint is shown all the same, and says so
            unremembered = Bi(f"（没能记住这一级：{MEMORY.name} 写不进去，这份拷贝是只读的？提示照样给出）",
                              f"(this level could not be remembered: {MEMORY.name} cannot be "
                              "written, a read-only copy? The hint is shown all the same)")
    number = course.BY_NAME[exercise].number
    lines = []
    cause = last_cause(exercise) if level == 1 else None
    if cause is not None:  # the learner's own mistake first, as the last run found it
        text, seed = cause
        lines += [Bi(f"你上一次运行（随机种子 {seed}）时 {exercise} 的问题：",
                     f"What the last run (seed {seed}) found in {exercise}:").render(lang), "",
                  text.render(lang), ""]
    lines += [Bi(f"{exercise} 的提示 {level}/{len(hints)}：", f"Hint {level}/{len(hints)} for {exercise}:")
              .render(lang), "", hints[level - 1].render(lang), ""]
    if level < len(hints):
        lines.append(Bi(f"还是卡住了？python grader.py hint {number} {level + 1}",
                        f"Still stuck? python grader.py hint {number} {level + 1}").render(lang))
    else:
        zh, en = course.BY_NAME[exercise].heading
        lines.append(Bi(f"这是最后一级提示：剩下的就是课文里的代码了，回去读\u201c{zh}\u201d那一节。",
                        "This is the last hint: what remains is the lesson's own code; reread "
                        f"its section \u201c{zh}\u201d ({en}).").render(lang))
    if unremembered is not None:
        lines.append(unremembered.render(lang))
    return "\n".join(lines)
