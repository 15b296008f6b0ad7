"""What a grade looks like: the terminal table, Gradescope's results.json, and a batch record.

Every text is rendered at the end in the learner's language ("zh" or "en"); records keep both.
Text that comes from the learner's code (what it printed or raised, its traceback, a folder's name)
is made inert here, wherever it is shown, whatever cleaned it before (grading/inert.py).
"""
import errno
import json
import os
import re
import secrets
import tempfile
from pathlib import Path

import course
from grading.config import SECTIONS
from grading.i18n import Bi
from grading.inert import inert, inert_line
from grading.output import terminal

MARKS = {"done": "✓", "failing": "✗", "todo": "·"}
STATUS = {"done": Bi("完成", "done"), "failing": Bi("待修正", "to fix"),
          "todo": Bi("未开始", "not started")}


def display_path(path):
    """The folder as the learner would type it: relative to where they are, when it is below."""
    path = Path(path).resolve()
    try:
        return inert_line(path.relative_to(Path.cwd()))
    except ValueError:
        return inert_line(path)


def pad(text, width):
    """Left-justify for the terminal, where a CJK character takes two columns."""
    columns = sum(2 if "\u2e80" <= ch <= "\uffef" else 1 for ch in text)
    return text + " " * max(0, width - columns)


def section(exercise, lang):
    zh, en = SECTIONS.get(exercise, ("", ""))
    return zh if lang == "zh" else f"{zh} · {en}"


def progress_line(grade, folder, lang):
    """rustlings-style: a bar of exercises done out of all, and the next file to open."""
    done = sum(ex.status == "done" for ex in grade.exercises)
    total = len(grade.exercises)
    bar = "█" * done + "░" * (total - done)
    todo = next((ex for ex in grade.exercises if ex.status != "done"), None)
    head = Bi(f" 进度 {bar} {done}/{total} 个练习完成", f" Progress {bar} {done}/{total} exercises done")
    if todo is None:
        return head.render(lang)
    nxt = Bi(f" · 下一个：{folder}/{todo.exercise}.py", f" · next: {folder}/{todo.exercise}.py")
    return (head + nxt).render(lang)


def _message(result, lang):
    """A result's message, inert, or "" (it embeds the learner's exception text)."""
    return inert(result.message.render(lang)) if result.message else ""


def _frames(result):
    """The learner's traceback lines, each field one inert line (the worker sent them)."""
    return [[inert_line(field) for field in frame] for frame in result.frames]


# A warning as the worker writes it (grading/worker/serve.py, _show_warning): "UserWarning: … [file:line]"
WARNING_LINE = re.compile(r"^\w*Warning: ")


def _warnings(exercise):
    """The warnings the exercise's code raised, each once, whole: PyTorch's often name the fix."""
    found = []
    for result in exercise.results:
        for line in inert(result.output).splitlines():
            if WARNING_LINE.match(line) and line not in found:
                found.append(line)
    return found


def _failure_lines(result, folder, lang):
    lines = [f"✗ {inert_line(result.name.render(lang))}"]
    message = _message(result, lang).strip().splitlines()
    lines += [f"  {line}" for line in (message or ["failed"])[:3]]
    for file, line, function, source in _frames(result)[-2:]:
        where = f"{folder}/{file}:{line}" + (f" in {function}" if function != "<module>" else "")
        lines.append(f"  {where}: {source}" if source else f"  {where}")
    printed = [line for line in inert(result.output).strip().splitlines()
               if line.strip() and not WARNING_LINE.match(line)]
    if printed:
        more = Bi(f"（另有 {len(printed) - 1} 行）", f" (+{len(printed) - 1} more lines)")
        lines.append("  " + Bi("你的代码打印了：", "your code printed: ").render(lang) + printed[0][:100]
                     + (more.render(lang) if len(printed) > 1 else ""))
    return lines


def said(failure, diagnosis):
    """The first failure's message already holds the cause (a crash explained under Python's
    words): one explanation per failure."""
    return failure is not None and failure.message is not None \
        and diagnosis.text.en in failure.message.en


def built_on_line(ex, grade):
    """For a failing exercise graded over the learner's own copies of the exercises it uses
    (course.py's uses: no solutions here, or graded_over="own"): which of them it ran with, and
    that a mistake of theirs shows here too. None otherwise."""
    if ex.graded_over != "own":
        return None
    graded = {e.exercise: e for e in grade.exercises}
    used = course.needs(ex.exercise)
    failing = [name for name in used if name in graded and graded[name].status != "done"]
    names = "、".join(f"{n}.py" for n in failing or used)
    en = ", ".join(f"{n}.py" for n in failing or used)
    if failing:
        return Bi(f"这个练习用的是你自己的 {names}，而它还没有通过：先改好它，它的错误也会在这里出现",
                  f"this exercise runs with your own {en}, which does not pass yet: fix it "
                  "first, as its mistakes show here too")
    if all(name in graded for name in used):
        return None
    return Bi(f"这个练习用的是你自己的 {names}：它若没有通过，先改好它，它的错误也会在这里出现",
              f"this exercise runs with your own {en}: if that does not pass, fix it first, "
              "as its mistakes show here too")


def waiting_line(waiting):
    """The checks that wait for others (after=…), in one short line: how many, and what for."""
    needs = []
    for r in waiting:
        if r.waits_for is not None and r.waits_for not in needs:
            needs.append(r.waits_for)
    count = len(waiting)
    checks = "checks count" if count > 1 else "check counts"
    zh_needs = "、".join(f"\u201c{inert_line(n.zh)}\u201d" for n in needs)
    en_needs = " and ".join(f"\u201c{inert_line(n.en)}\u201d" for n in needs)
    if not needs:
        return Bi(f"还有 {count} 项检查要等别的检查通过后才计分",
                  f"waiting: {count} more {checks} once others pass")
    return Bi(f"还有 {count} 项检查要等{zh_needs}通过后才计分",
              f"waiting: {count} more {checks} once "
              f"{en_needs} {'pass' if len(needs) > 1 else 'passes'}")


def text(grade, command="python grader.py", lang="en", watching=False, most=None):
    """The report on a terminal; `watching`: under --watch, where saving a file regrades it;
    `most`: the columns a line may take (default: the terminal's width, 80 for a pipe)."""
    folder = display_path(grade.submission)
    most = most or terminal.width()
    out = [Bi(f"给 {folder}/ 打分 · 随机种子 {grade.seed}",
              f"Grading {folder}/ · seed {grade.seed}").render(lang), ""]
    for ex in grade.exercises:
        out.append(f" {MARKS[ex.status]} {ex.exercise:<15} {ex.score:>4g}/{ex.max_score:<3g} "
                   f"{pad(STATUS[ex.status].render(lang), 11)} {section(ex.exercise, lang)}")
        out += ["      " + line for line in _exercise_lines(ex, grade, folder, lang, most)]
    out.append("")
    out += _footer(grade, folder, command, lang, watching)
    # nothing above may move the cursor or recolour; every line fits the terminal
    return "\n".join(part for line in out for part in terminal.fit(inert(line), most))


def _exercise_lines(ex, grade, folder, lang, most):
    """What a row of the report says under its exercise: the first failure, what the learner
    built, warnings, the likely cause, and what else fails or waits (indented by the caller)."""
    failure = ex.first_failure
    if ex.status == "todo":
        frame = _frames(failure)[-1] if failure.frames else None
        where = f"{folder}/{frame[0]}:{frame[1]}" if frame else f"{folder}/{ex.exercise}.py"
        return [Bi(f"{where} 仍然抛出 NotImplementedError：把那里的 TODO 换成你的代码",
                   f"{where} still raises NotImplementedError: replace the TODO there")
                .render(lang)]
    if failure is None:
        return []
    out = _failure_lines(failure, folder, lang)
    if ex.picture is not None:
        out += ["  " + inert_line(line) for line in ex.picture.lines(lang, most)]
    out += [Bi("警告：", "warning: ").render(lang) + warning[:500] for warning in _warnings(ex)[:3]]
    if ex.diagnosis is not None and not said(failure, ex.diagnosis):
        out.append("→ " + (Bi("可能的原因：", "Likely cause: ") + ex.diagnosis.text).render(lang))
    built_on = built_on_line(ex, grade)
    if built_on is not None:
        out.append(built_on.render(lang))
    others = [inert_line(r.name.render(lang)) for r in ex.results
              if r.status not in ("passed", "skipped") and r is not failure and r.cause != "gate"]
    waiting = [r for r in ex.results if r.cause == "gate" and r is not failure]
    if failure.cause == "import":  # nothing of the file ran: no list of what failed
        unrun = len(others) + len(waiting)
        if unrun:
            out.append(Bi(f"其余 {unrun} 项检查也没能运行：文件要先能导入",
                          f"the other {unrun} check{'s' if unrun > 1 else ''} could not run "
                          "either: the file must import first").render(lang))
        return out
    if others:
        rest = len(others) - 3
        out.append(Bi("另外没通过：", "also failing: ").render(lang)
                   + ("；" if lang == "zh" else "; ").join(others[:3])
                   + (Bi(f"；另有 {rest} 项", f"; and {rest} more").render(lang) if rest > 0 else ""))
    if waiting:
        out.append(waiting_line(waiting).render(lang))
    return out


def _footer(grade, folder, command, lang, watching):
    """The lines after the table: progress, the total and seed, isolation, what is not graded,
    the next step, and the lesson's notes once an exercise they speak of is done."""
    out = [progress_line(grade, folder, lang)] if len(grade.exercises) == len(SECTIONS) else []
    total = Bi(f" 总分 {grade.score:g}/{grade.max_score:g}", f" Total {grade.score:g}/{grade.max_score:g}")
    if grade.hidden_points:  # a copy without the solutions: the public checks alone, no grade
        total = Bi(f" 公开检查 {grade.score:g}/{grade.max_score:g}（不是成绩：隐藏检查没有运行）",
                   f" Public checks {grade.score:g}/{grade.max_score:g} (not the grade: the hidden "
                   "checks did not run)")
    out.append((total + Bi(f" · 随机种子 {grade.seed}（--seed {grade.seed} 可复现这次的输入）· "
                           f"{grade.seconds:.1f}\u00a0秒",  # (no line break inside "1.3 s")
                           f" · seed {grade.seed} (--seed {grade.seed} replays this run) · "
                           f"{grade.seconds:.1f}\u00a0s")).render(lang))
    if grade.isolation:
        out.append(Bi(f" 隔离：{grade.isolation[0]}", f" Isolation: {grade.isolation[1]}")
                   .render(lang))
    if grade.hidden_points:
        out.append(not_graded(grade).render(lang))
    out += [line.render(lang) for line in _next_step(grade, folder, command, watching)]
    if any(ex.exercise == "ex5_causal_mask" and ex.status == "done" for ex in grade.exercises):
        out.append(Bi(" 顺便看一眼：分数全为 0 时，causal_softmax 给出的正是练习 2 的平均矩阵。注意力所做的，"
                      "只是把这一组权重换得更为合理。",
                      " Notice: for scores that are all 0, causal_softmax gives exercise 2's "
                      "averaging matrix. Attention only replaces that set of weights with better "
                      "ones (把这一组权重换得更为合理).").render(lang))
    if any(ex.exercise == "ex6_head" and ex.status == "done" for ex in grade.exercises):
        out.append(Bi(" 看它工作：python grader.py demo 用你的注意力头训练一个小模型，并画出它在看哪里。",
                      " See it work: python grader.py demo trains a tiny model with your head and "
                      "shows where it looks.").render(lang))
    return out


def _next_step(grade, folder, command, watching):
    """[Bi]: what to do next: the first exercise short of full marks, else the lesson's next."""
    todo = next((ex for ex in grade.exercises if ex.score < ex.max_score), None)
    if todo is not None:
        number = course.BY_NAME[todo.exercise].number
        return [next_line(todo.exercise, folder, command, watching) + Bi(
            f"；卡住了就运行 python grader.py hint {number}", f"; stuck? python grader.py hint {number}")]
    if len(grade.exercises) == len(SECTIONS):
        if grade.hidden_points:
            return [Bi(" 公开检查全部通过。", " Every public check passes.")]
        return [Bi(" 全部检查通过。", " Every check passes. 全部通过。")]
    public = ("公开", "public ") if grade.hidden_points else ("", "")
    graded = Bi("、".join(e.exercise for e in grade.exercises),
                ", ".join(e.exercise for e in grade.exercises))
    passed = Bi(f" {graded.zh} 的{public[0]}检查全部通过。",
                f" Every {public[1]}check of {graded.en} passes.")
    names = list(SECTIONS)
    later = names[names.index(grade.exercises[-1].exercise) + 1:] if grade.exercises else []
    if later:  # the next step of the lesson
        return [passed, next_line(later[0], folder, command, watching)]
    return [passed, Bi(f" 运行 {command} 给全部 {len(SECTIONS)} 个练习打分。",
                       f" Run {command} to grade all {len(SECTIONS)} exercises.")]


def next_line(exercise, folder, command, watching):
    """" Next: ex3_qkv (查询、键、值 · query, key, value) — edit …/ex3_qkv.py, then run … 3"."""
    number = course.BY_NAME[exercise].number
    zh, en = SECTIONS.get(exercise, ("", ""))
    then = Bi("，保存后会自动重新打分", ", and save: it is regraded at once") if watching else \
        Bi(f"，然后运行 {command} {number}", f", then run {command} {number}")
    return Bi(f" 下一步：{exercise}（{zh}）——编辑 {folder}/{exercise}.py{then.zh}",
              f" Next: {exercise} ({zh} · {en}) — edit {folder}/{exercise}.py{then.en}")


GRADING_ERROR_TAG = "grading-error"  # a test that met an error of the grader, not of the code


def hidden_exercises(grade):
    """The exercises whose hidden checks did not run (no solution for them here)."""
    return [ex.exercise for ex in grade.exercises if ex.hidden_points]


def not_graded(grade):
    """Why a run without the solutions is not a grade, in one line."""
    hidden, public = f"{grade.hidden_points:g}", f"{grade.max_score:g}"
    names = ", ".join(hidden_exercises(grade))
    return Bi(f" 这不是成绩：这里没有参考答案（学员版不带 solutions/），所以 {'、'.join(hidden_exercises(grade))} 的隐藏检查（{hidden} 分）没有运行，"
              f"只运行了 {public} 分的公开检查。成绩只在课程评分的地方（有参考答案的地方）给出。",
              f" Not the grade: there are no solutions here (a student copy has no solutions/), so "
              f"the hidden checks of {names} ({hidden} points) did not run, only {public} points of "
              "public checks. Grades come only from where the course grades, with the solutions.")


def diagnosis_test(exercise):
    """The test whose output carries the exercise's diagnosis in results.json: a hidden one (its
    first failing hidden check, else its first hidden check), since a diagnosis is found by
    comparing outputs with the solution's, and Gradescope shows hidden tests only when the course
    says so; an exercise without hidden checks, its first failure."""
    hidden = [r for r in exercise.results if r.kind == "hidden"]
    return next((r for r in hidden if r.status not in ("passed", "skipped")),
                hidden[0] if hidden else exercise.first_failure)


def gradescope(grade, lang="en"):
    """Gradescope's results.json: every test named after its exercise's file stem."""
    tests = []
    for ex in grade.exercises:
        told = diagnosis_test(ex)
        for r in ex.results:
            output = _message(r, lang)
            if r.frames:
                output += "\n" + "\n".join(f"{f}:{line}: {src}" for f, line, _, src in _frames(r))
            if ex.picture is not None and r is told:
                output += "\n" + "\n".join(inert_line(line) for line in ex.picture.lines(lang))
            if ex.diagnosis is not None and r is told and not said(r, ex.diagnosis):
                output += "\n→ " + inert(ex.diagnosis.text.render(lang))
            if r.output and r.status != "passed":
                output += "\n" + Bi("你的代码打印了：", "Your code printed:").render(lang) + "\n" \
                    + inert(r.output[:2000])
            tests.append({
                "name": f"{ex.exercise} · {inert_line(r.name.render(lang))}",
                "number": f"{course.BY_NAME[ex.exercise].number}.{r.number}",
                "score": r.score, "max_score": r.points,
                "status": "passed" if r.status == "passed" else "failed",
                "output": output, "visibility": "visible",
                "tags": [r.kind] + ([GRADING_ERROR_TAG] if r.status == "error" else [])})
    output = f"{grade.score:g}/{grade.max_score + grade.hidden_points:g} · seed {grade.seed}" + (
        f" · {grade.isolation[1 if lang == 'en' else 0]}" if grade.isolation else "")
    if grade.hidden_points:
        output = not_graded(grade).render(lang).strip() + "\n" + output
    return {"score": grade.score, "execution_time": round(grade.seconds, 2), "output": output,
            "tests": tests,
            # which walls graded, and whether the hidden checks ran (Gradescope keeps extra_data)
            "extra_data": {"isolation": grade.isolation[1] if grade.isolation else "",
                           "hidden_checks_ran": not grade.hidden_points}}


def record(grade):
    """A compact record of one submission, in both languages, for batches and the self-test."""
    def both(text):
        return {lang: inert(value) for lang, value in text.as_dict().items()} if text else None

    def diagnosis(ex):
        if ex.diagnosis is None:
            return None
        return {"key": ex.diagnosis.key, **both(ex.diagnosis.text)}

    return {
        "total": grade.score, "max": grade.max_score, "seed": grade.seed,
        "seconds": round(grade.seconds, 2),
        "isolation": grade.isolation[1] if grade.isolation else "",
        "exercises": {ex.exercise: {
            "score": ex.score, "max": ex.max_score, "status": ex.status,
            "diagnosis": diagnosis(ex), "diagnosis_problem": inert(ex.diagnosis_problem),
            "tests": [{"id": r.nodeid.split("::")[-1], "name": both(r.name),
                       "status": r.status, "cause": r.cause, "score": r.score,
                       "points": r.points, "kind": r.kind, "message": both(r.message)}
                      for r in ex.results]}
            for ex in grade.exercises}}


def check_writable(path):
    """Raise OSError with a one-line reason (a Bi) when a results file could not be written
    there: tried by writing a file beside it (root passes os.access where it cannot write)."""
    path = Path(path)
    if path.is_dir():
        raise OSError(Bi(f"{path} 是一个文件夹，不是文件", f"{path} is a folder, not a file"))
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OSError(Bi(f"文件夹 {parent} 不存在", f"the folder {parent} does not exist"))
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".grader-probe-")
        os.close(fd)
        os.unlink(probe)
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError
    except OSError as error:
        why = os_reason(error)
        raise OSError(Bi(f"{path} 写不进去（{why.zh}）", f"{path} cannot be written ({why.en})")) \
            from None


def os_reason(error):
    """An OSError's reason in both languages, for the commonest ones (else the system's words)."""
    reasons = {errno.EACCES: ("没有写的权限", "permission denied"),
               errno.EPERM: ("没有写的权限", "permission denied"),
               errno.EROFS: ("文件系统是只读的", "a read-only file system"),
               errno.ENOSPC: ("磁盘满了", "the disk is full"),
               errno.EDQUOT: ("超出了磁盘配额", "the disk quota is used up"),
               errno.ENOENT: ("那里不能新建文件", "no file can be made there")}
    zh, en = reasons.get(getattr(error, "errno", None),
                         (error.strerror or str(error),) * 2 if isinstance(error, OSError)
                         else (str(error),) * 2)
    return Bi(zh, en)


def write_json(path, data):
    write_text(path, json.dumps(data, ensure_ascii=False, indent=2))


def write_text(path, text):
    """Write atomically: a reader never sees half a file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".results-")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


# -- GitHub Actions -------------------------------------------------------------------------------
# The runner reads every line of a step's output as a possible workflow command: `::name …::value`
# at its start (after leading whitespace), or the legacy `##[name …]value` anywhere in it. So in
# the Actions log the report is printed with command processing stopped (github_log), and the
# grader's own `::error` annotations come after the line that resumes it.

MARKER = "⁝"  # not whitespace: the runner does not trim it, so `⁝::x` is not a command


def no_commands(text):
    """Inert text in which no line reads as a workflow command: a line that starts (after
    whitespace) with `::` gets MARKER before it, and every `##[` becomes `##⁝[`."""
    lines = []
    for line in inert(text).split("\n"):
        line = line.replace("##[", "##" + MARKER + "[")
        start = line.lstrip()
        if start.startswith("::"):
            line = line[:len(line) - len(start)] + MARKER + start
        lines.append(line)
    return "\n".join(lines)


def github_log(text):
    """`text` for the Actions log: between `::stop-commands::TOKEN` and `::TOKEN::`, the runner
    processes no command but the resume; TOKEN is drawn now, after the learner's code has run, and
    is in no file or process it could read."""
    token = secrets.token_hex(16)
    return f"::stop-commands::{token}\n{no_commands(text)}\n::{token}::"


def _escape(text, property_value=False):
    """GitHub workflow-command escaping (data, or a property value)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def github_annotations(grade, lang="en"):
    """One ::error per failing exercise, on the learner's own line where their code raised."""
    folder = display_path(grade.submission)
    lines = []
    for ex in grade.exercises:
        failure = ex.first_failure
        if failure is None:
            continue
        file, line = f"{folder}/{ex.exercise}.py", ""
        if failure.frames:
            frame = _frames(failure)[-1]
            file, line = f"{folder}/{frame[0]}", frame[1]
        where = f"file={_escape(file, True)}"
        if line.isascii() and line.isdigit():  # the worker sent it: a number, or no line at all
            where += f",line={line}"
        title = _escape(inert_line(f"{ex.exercise} · {failure.name.render(lang)}"), True)
        message = _message(failure, lang)
        if ex.diagnosis is not None and not said(failure, ex.diagnosis):
            message += "\n→ " + (Bi("可能的原因：", "Likely cause: ") + ex.diagnosis.text).render(lang)
        lines.append(f"::error {where},title={title}::{_escape(no_commands(message))}")
    return lines


def _markdown(text, limit=200):
    """Learner text for a markdown table cell: one line, no markup, no HTML, no new cell."""
    text = inert_line(text)[:limit]
    for char, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "&#124;"),
                         ("`", "&#96;"), ("[", "&#91;"), ("]", "&#93;")):
        text = text.replace(char, entity)
    return text


def github_summary(grade, pass_mark, lang="en", blockers=()):
    """The job summary: a verdict that agrees with the step's exit status (✅ only when the grader
    exits 0: the points reach the pass mark and nothing in `blockers`, the reasons that fail the
    check whatever the points), then a markdown table of the exercises."""
    passed = grade.score >= pass_mark and not blockers and not grade.grading_errors
    points = Bi(f"{grade.score:g}/{grade.max_score:g}", f"{grade.score:g}/{grade.max_score:g}")
    if grade.hidden_points:
        points = Bi(f"公开检查 {grade.score:g}/{grade.max_score:g}，不是成绩",
                    f"public checks {grade.score:g}/{grade.max_score:g}, not the grade")
    head = Bi(f"## 自注意力练习：{points.zh}（及格线 {pass_mark:g}）" + ("✅" if passed else "❌"),
              f"## Self-attention exercises: {points.en} (pass mark {pass_mark:g}) "
              + ("✅" if passed else "❌"))
    columns = Bi("| 练习 | 得分 | 状态 | 第一个没通过的检查 |", "| exercise | points | status | first failing check |")
    rows = [head.render(lang), ""]
    if blockers:
        rows += [Bi("**这个检查没有通过**，不论得分：", "**This check fails**, whatever the points:")
                 .render(lang), ""]
        rows += [f"- {_markdown(blocker.render(lang).strip(), 1000)}" for blocker in blockers]
        rows.append("")
    rows += [columns.render(lang), "|---|---|---|---|"]
    for ex in grade.exercises:
        failure = ex.first_failure
        check = failure.name.render(lang) if failure is not None else ""
        if failure is not None and failure.message:
            check += ": " + (_message(failure, lang).strip().split("\n") + [""])[0]
        rows.append(f"| {ex.exercise} | {ex.score:g}/{ex.max_score:g} | {MARKS[ex.status]} "
                    f"{STATUS[ex.status].render(lang)} | {_markdown(check)} |")
    rows += ["", f"seed {grade.seed}", ""]
    return "\n".join(rows)
