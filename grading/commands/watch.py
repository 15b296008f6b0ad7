"""`python grader.py --watch`: the grade on screen, regraded whenever an exercise file changes."""
import time

from grading.config import EXERCISES
from grading.i18n import Bi


def watch(backend, folder, seed, timeout, result, command, lang, poll=0.3):
    """Show the grade; whenever ex*.py files change, regrade every one of them (however many
    changed within one poll: an editor's Save All, git checkout) and show it again."""
    from grading.judge.session import grade
    from grading.output import report

    def stamps():  # size and mtime in ns: two saves within a second differ, a rewrite too
        found = {}
        for path in folder.glob("ex*.py"):
            try:
                info = path.stat()
            except OSError:  # gone between the listing and the look
                continue
            if path.stem in EXERCISES:
                found[path.stem] = (info.st_mtime_ns, info.st_size)
        return found

    seen = stamps()
    while True:
        print("\033[2J\033[H", end="")  # clear the screen
        print(report.text(result, command, lang, watching=True))
        print(Bi("\n 正在监视 {0}/：保存文件就会重新打分；按 Ctrl-C 退出".format(folder),
                 f"\n Watching {folder}/: save a file to regrade it; Ctrl-C to quit").render(lang),
              flush=True)  # a whole screen, even into a pipe
        while True:
            time.sleep(poll)
            now = stamps()
            # every exercise whose file changed, appeared or went since the last grade
            changed = [name for name in EXERCISES if now.get(name) != seen.get(name)]
            if changed:
                seen = now  # taken before grading: a save during grading shows on the next poll
                break
        regraded = grade(backend, folder, seed, changed, call_timeout=timeout, split=True)
        fresh = {ex.exercise: ex for ex in regraded.exercises}
        result.exercises = [fresh.get(ex.exercise, ex) for ex in result.exercises]
        result.seconds = regraded.seconds
