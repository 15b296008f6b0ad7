"""Grade the self-attention exercises. 给注意力机制的练习打分。

    python grader.py                 grade exercises/ (every exercise)
    python grader.py 3               grade one exercise (3, ex3 or ex3_qkv)
    python grader.py --solutions     grade solutions/ (full marks, or something is wrong)
    python grader.py --seed N        replay a run with the same random inputs
    python grader.py --json PATH     also write Gradescope's results.json
    python grader.py --watch         regrade the exercise you are editing each time you save it
    python grader.py hint 5 [LEVEL]  a hint for exercise 5 (a nudge, then the lesson's step)
    python grader.py --lang zh|en    the report's language (default: from LC_ALL / LANG)
    python grader.py --check         the repository's own test, for instructors (about a minute)
    python grader.py --check 5       the same for exercise 5 alone: the instructor's inner loop
    python grader.py --check --full  also the grader's own machinery, as CI runs it (a few minutes)
    python grader.py --batch DIR --csv grades.csv   a class's gradebook: one row per folder or .zip
                                     (--report class.md: what the class got wrong, as Markdown)
    python grader.py release OUT     the student copy: no solutions, no fixtures
    python grader.py gradescope OUT.zip [--lang en] [--hidden-visibility after_due_date]
                                     the Gradescope autograder (holds the solutions)
    python grader.py demo            train a tiny model with your head and see where it attends

Exit status: 0 at full marks, 1 otherwise, 2 when grading could not run. A batch: 0 when every
row got a grade (whatever its points), 1 when a row met a grading error (the gradebook is written;
regrade those rows), 2 when it could not run at all.

Commands: grade (the one when none is named), demo, hint, release, gradescope; each has its own
options: python grader.py demo --help.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import course
from grading.config import EXERCISE_BUDGET, EXERCISES, EXERCISES_DIR, ROOT, SOLUTIONS
from grading.errors import GradingError, SessionError, WallsMissing
from grading.i18n import LANGUAGES, Bi, default_language
from grading.inert import inert, inert_line

USAGE_ERROR = 2


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump; main() renders it in the chosen language
        raise SystemExit(self.message(message if isinstance(message, Bi) else argparse_text(message)))

    @staticmethod
    def message(text):
        return (Bi("grader.py: ", "grader.py: ") + text
                + Bi("（python grader.py --help 列出全部选项）",
                     " (python grader.py --help shows the options)"))


# argparse's own messages (Python 3.10 to 3.13), in Chinese; one it words otherwise is shown as
# it is, after a Chinese lead.
ARGPARSE = [
    (r"unrecognized arguments: (.+)", "无法识别的参数：{0}"),
    (r"argument (\S+?): invalid (int|float) value: (.+)",
     lambda m: f"{m[1]} 的值应当是{'整数' if m[2] == 'int' else '数'}，而 {m[3]} 不是"),
    (r"argument (\S+?): invalid choice: (\S+) \(choose from (.+)\)",
     lambda m: f"{m[1]} 不能取 {m[2]}，可选的值是 {m[3].replace(', ', '、')}"),
    (r"argument (\S+?): expected one argument", "{0} 后面要跟一个值"),
    (r"argument (\S+?): not allowed with argument (\S+)", "{0} 不能和 {1} 一起用"),
    (r"argument (\S+?): ignored explicit argument (.+)", "{0} 不带值，而这里给了 {1}"),
    (r"ambiguous option: (\S+) could match (.+)",
     lambda m: f"选项 {m[1]} 有歧义，可能是 {m[2].replace(', ', '、')}"),
    (r"the following arguments are required: (.+)", "缺少参数：{0}"),
]


def argparse_text(message):
    """An argparse error message as a Bi: its English, and a Chinese line that says the same."""
    for pattern, zh in ARGPARSE:
        match = re.fullmatch(pattern, message)
        if match:
            return Bi(zh(match) if callable(zh) else zh.format(*match.groups()), message)
    return Bi(f"命令行参数有误：{message}", message)


def error_text(error, lang):
    """What to print of a usage error: its Bi in the chosen language, else its own words."""
    first = error.args[0] if getattr(error, "args", None) else None
    return first.render(lang) if isinstance(first, Bi) else str(error)


def wanted_language(argv):
    """The language that --lang asks for in argv, read before argv is parsed (an error in it is
    told in that language), else the locale's."""
    for i, word in enumerate(argv):
        value = argv[i + 1] if word == "--lang" and i + 1 < len(argv) else \
            word.partition("=")[2] if word.startswith("--lang=") else None
        if value in LANGUAGES:
            return value
    return default_language()


COMMANDS = ("grade", "demo", "hint", "release", "gradescope")  # grade: when no other is named


def grading_options():
    """The options of grade (and of demo, which grades a folder's head the same way)."""
    options = argparse.ArgumentParser(add_help=False, parents=[language_option()])
    where = options.add_mutually_exclusive_group()
    where.add_argument("--solutions", action="store_true", help="grade solutions/")
    where.add_argument("--submission", metavar="DIR", help="grade another folder of ex*.py files")
    where.add_argument("--batch", metavar="DIR",
                       help="grade every subfolder and .zip of DIR (with --csv and/or --json)")
    where.add_argument("--check", action="store_true",
                       help="instructors: prove the solutions pass, the stubs fail, and the "
                            "grader's own tests pass")
    options.add_argument("--full", action="store_true",
                         help="with --check: also test the grader's own machinery (walls, both "
                              "backends on every fixture, command line, demo, CI step, Gradescope)")
    options.add_argument("--seed", type=int, help="replay the random inputs of an earlier run")
    options.add_argument("--json", metavar="PATH", help="write results (Gradescope's format) here")
    options.add_argument("--csv", metavar="PATH", help="with --batch: the gradebook, one row each")
    options.add_argument("--report", metavar="PATH",
                         help="with --batch: what the class got wrong, as Markdown")
    options.add_argument("--resume", action="store_true",
                         help="with --batch: grade only the rows an interrupted batch left")
    options.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                         help="with --batch: submissions graded at once (default: the cores)")
    options.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                         help="time limit for one import or one call of your code (default 5)")
    options.add_argument("--pass-mark", type=float, default=None, metavar="POINTS",
                         help="exit 0 from this many points on (default: full marks)")
    options.add_argument("--memory", type=float, default=4.0, metavar="GIB",
                         help="memory one worker may take, in GiB (default 4)")
    options.add_argument("--watch", action="store_true",
                         help="regrade the exercise being edited each time a file is saved")
    return options


def language_option():
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--lang", choices=LANGUAGES, default=default_language(),
                         help="language of the report and messages: zh or en (default: from "
                              "LC_ALL / LANG)")
    return options


def parser():
    """The command line: a command (subparser) each; `grade` is the one when argv names none,
    so `python grader.py 3 --seed 7` is `python grader.py grade 3 --seed 7`."""
    top = Parser(prog="python grader.py", description=__doc__,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    grade = commands.add_parser("grade", parents=[grading_options()], prog="python grader.py",
                                description=__doc__, help="grade (the command when none is named)",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    grade.add_argument("exercise", nargs="?",
                       help=f"grade one exercise: 1-{len(EXERCISES)}, ex3 or ex3_qkv")
    demo = commands.add_parser("demo", parents=[language_option()], prog="python grader.py demo",
                               help="train a tiny model with your head and see where it attends")
    where = demo.add_mutually_exclusive_group()
    where.add_argument("--solutions", action="store_true", help="the solutions' head")
    where.add_argument("--submission", metavar="DIR", help="the head of another folder")
    demo.add_argument("--seed", type=int, help="the same training again")
    demo.add_argument("--json", metavar="PATH", help="also write the figures here")
    demo.add_argument("--memory", type=float, default=4.0, metavar="GIB",
                      help="memory the worker may take, in GiB (default 4)")
    demo.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                      help="time limit for one import or one call of your code (default 5)")
    demo.set_defaults(batch=None, check=False, full=False, csv=None, report=None, resume=False,
                      jobs=1, pass_mark=None, watch=False)  # what grading_request reads
    hint = commands.add_parser("hint", parents=[language_option()], prog="python grader.py hint",
                               help="a hint for one exercise: a nudge, then the lesson's step")
    hint.add_argument("exercise", nargs="?", help=f"1-{len(EXERCISES)}, ex3 or ex3_qkv")
    hint.add_argument("level", nargs="?", type=int, help="which hint (default: the next one)")
    hint.add_argument("--remember", action="store_true",
                      help="remember the level shown, so the next call goes on")
    release = commands.add_parser("release", parents=[language_option()],
                                  prog="python grader.py release",
                                  help="the student copy: no solutions, no fixtures")
    release.add_argument("out", metavar="OUT", nargs="?", help="the folder to write it to (new)")
    release.add_argument("--with-causes", action="store_true",
                         help="ship the exercises' diagnoses too (they hold the lesson's steps, "
                              "the answers): the likely causes in the learner's own runs")
    # its options are its own: grading/commands/gradescope.py parses them (see parse)
    commands.add_parser("gradescope", add_help=False, prog="python grader.py gradescope",
                        help="the Gradescope autograder (holds the solutions)")
    return top


def parse(argv):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:  # python grader.py [exercise] [options]
        argv = ["grade", *argv]
    if argv[0] == "gradescope":  # every word after it is its own parser's, --help too
        return argparse.Namespace(command="gradescope", options=argv[1:], check=False)
    args = parser().parse_args(argv)
    if args.command == "grade" and args.full and not args.check:
        raise SystemExit(Parser.message(Bi("--full 要和 --check 一起用：python grader.py --check --full",
                                           "--full goes with --check: python grader.py --check --full")))
    if args.command == "release" and args.out is None:
        raise SystemExit(Parser.message(Bi("release 要一个文件夹：python grader.py release OUT",
                                           "release needs one folder: python grader.py release OUT")))
    if args.command == "hint" and args.exercise is None:
        raise SystemExit(Parser.message(Bi("hint 要一个练习编号：python grader.py hint 5",
                                           "hint needs an exercise: python grader.py hint 5")))
    return args


def exercise_names(text):
    if text is None:
        return EXERCISES
    match = re.fullmatch(r"(?:ex)?(\d+)(?:_\w+)?(?:\.py)?", Path(text).name)
    names = [e.name for e in course.EXERCISES if match and e.number == int(match.group(1))]
    if not names:
        raise ValueError(Bi(f"没有练习 {text!r}：请选 1-{len(EXERCISES)}（{EXERCISES[0]} … "
                            f"{EXERCISES[-1]}）",
                            f"there is no exercise {text!r}: choose 1-{len(EXERCISES)} "
                            f"({EXERCISES[0]} … {EXERCISES[-1]})"))
    return names


def torch_problem(version=None):
    """What is wrong with this Python's torch for grading (a Bi), or None: missing, or older than
    OLDEST_TORCH, whose operations the checks were proven on. Read from torch/version.py (else
    the package's metadata), without importing torch: the zygote imports it."""
    from importlib import util

    from grading.config import OLDEST_TORCH
    if version is None:
        spec = util.find_spec("torch")
        version = spec and installed_version(spec)
        if spec is None:
            return Bi("没有找到 torch：先在这个环境里运行 pip install -r requirements.txt",
                      "torch is not installed: run pip install -r requirements.txt in this "
                      "environment first")
        if not version:
            return None
    try:
        release = tuple(int(part) for part in version.split("+")[0].split(".")[:2])
    except ValueError:
        return None
    oldest = ".".join(map(str, OLDEST_TORCH))
    if release < OLDEST_TORCH:
        return Bi(f"这里的 torch 是 {version}，评分至少需要 torch {oldest}：运行 pip install -r requirements.txt"
                  "（装上 torch 2.13.0）",
                  f"this torch is {version}, and grading needs torch {oldest} or later: run "
                  "pip install -r requirements.txt (torch 2.13.0)")
    return None


def installed_version(spec):
    """torch's release as its version.py states it (`__version__ = '2.13.0+cpu'`: importlib's
    metadata costs more than the rest of the start), else its metadata's; None if neither says."""
    for folder in spec.submodule_search_locations or ():
        try:
            text = Path(folder, "version.py").read_text(encoding="utf-8")
        except OSError:
            continue
        match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        if match:
            return match.group(1)
    from importlib import metadata
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None  # a torch without its metadata: nothing to read its release from


def main(argv=None):
    from grading.walls.audit import install_tripwire, tripwire_wanted
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse(argv)
    except SystemExit as stop:
        if stop.code not in (0, None):
            lang = wanted_language(argv)
            print(stop.code.render(lang) if isinstance(stop.code, Bi) else stop.code
                  if isinstance(stop.code, str) else
                  Bi("grader.py: 参数有误", "grader.py: bad arguments").render(lang),
                  file=sys.stderr)
            return USAGE_ERROR
        return 0
    # GRADER_BACKEND=portable on Linux: Linux-only calls raise (--check's own runs of grader.py
    # put it up themselves), until this command is done: a caller in the same process (the
    # self-test's) goes on without it.
    checking = getattr(args, "check", False)  # (--check: an option of grade and demo alone)
    stand_down = install_tripwire() if tripwire_wanted() and not checking else None
    try:
        return command(args, argv)
    finally:
        if stand_down is not None:
            stand_down()


def command(args, argv):
    """The command the arguments name, run (see main): one small function each."""
    if args.command == "gradescope":
        from grading.commands.gradescope import main as gradescope
        return gradescope(args.options)
    if args.command == "release":
        return release_command(args)
    if args.command == "hint":
        return hint_command(args)
    if args.check:  # grade or demo from here on
        return check_command(args)
    try:
        folder, exercises = grading_request(args)
    except (ValueError, OSError) as error:
        print(f"grader.py: {error_text(error, args.lang)}", file=sys.stderr)
        return USAGE_ERROR
    try:
        return grade_command(args, argv, folder, exercises)
    finally:
        if getattr(args, "unpacked", None) is not None:  # a .zip given to --submission
            shutil.rmtree(args.unpacked, ignore_errors=True)


def check_command(args):
    """--check: the instructor's self-test (grading/commands/check.py)."""
    if not (ROOT / "selftest").is_dir():
        print(Bi("grader.py: --check 是给老师用的；这份拷贝里没有 selftest/",
                 "grader.py: --check is the instructor's tool; this copy has no selftest/")
              .render(args.lang), file=sys.stderr)
        return USAGE_ERROR
    from grading.commands.check import check
    exercise = getattr(args, "exercise", None)
    try:
        only = exercise_names(exercise)[0] if exercise is not None else None
    except ValueError as error:
        print(f"grader.py: {error_text(error, args.lang)}", file=sys.stderr)
        return USAGE_ERROR
    return check(full=args.full, exercise=only)


def release_command(args):
    """release OUT: the student copy (grading/commands/release.py)."""
    from grading.commands.release import release
    try:
        out = release(args.out, args.with_causes)
    except (ValueError, OSError) as error:
        print(f"grader.py: {error_text(error, args.lang)}", file=sys.stderr)
        return USAGE_ERROR
    print(f"Student copy written to {out}: no solutions/, no selftest/, no secret. Publish it "
          "(e.g. as a GitHub Classroom template); its CI gives feedback on the public checks "
          "only. Grade in this, the course's private repository (.github/workflows/grade.yml) "
          "or on Gradescope: docs/instructor.md, 'The course, end to end'.")
    return 0


def hint_command(args):
    """hint N [LEVEL]: a hint for one exercise (grading/commands/hints.py)."""
    from grading.commands.hints import show
    try:
        from grading.output import terminal
        shown = show(exercise_names(args.exercise)[0], args.level, args.remember, args.lang)
        print("\n".join(part for line in shown.splitlines()
                        for part in terminal.fit(line, terminal.width())))
    except (ValueError, OSError) as error:
        print(f"grader.py: {error_text(error, args.lang)}", file=sys.stderr)
        return USAGE_ERROR
    return 0


BOM = "\ufeff"  # first in every CSV the grader writes


def waited(seconds):
    """The seconds since grader.py started (GRADER_STARTED, set by grader.py itself), torch's
    import included: what the learner waited. `seconds`, the grading alone, where it is unset
    or makes no sense."""
    try:
        since = time.time() - float(os.environ.get("GRADER_STARTED", ""))
    except ValueError:
        return seconds
    return since if seconds <= since < 3600 else seconds


def grading_request(args):
    """(the folder to grade, its exercises), the options checked together; ValueError or OSError
    (with a Bi) for options that do not go together or a file that could not be written."""
    exercises = exercise_names(getattr(args, "exercise", None))  # (demo: no exercise)
    folder = Path(args.submission or args.batch or EXERCISES_DIR)
    if args.solutions:
        folder = SOLUTIONS
        if not folder.is_dir():
            raise ValueError(Bi("这份拷贝里没有 solutions/ 文件夹：参考答案留在课程那里",
                                "this copy has no solutions/ folder: the solutions stay with "
                                "the course"))
    if args.submission and not args.solutions:
        folder = submission_folder(args, folder)
    if not folder.is_dir():
        raise ValueError(Bi(f"{folder} 不是一个文件夹", f"{folder} is not a folder"))
    if args.batch and not (args.json or args.csv):
        raise ValueError(Bi("--batch 要用 --csv PATH（或 --json PATH）写出结果",
                            "--batch needs --csv PATH (or --json PATH) for the results"))
    if (args.csv or args.report or args.resume) and not args.batch:
        raise ValueError(Bi("--csv、--report 和 --resume 要和 --batch DIR 一起用",
                            "--csv, --report and --resume go with --batch DIR"))
    args.resumed = None
    if args.resume:  # the rows an interrupted batch saved, and its seed
        from grading.commands.batch import read_saved, saved_path
        args.seed, args.resumed = read_saved(saved_path(args.csv or args.json), args.seed)
    from grading.output.report import check_writable
    for path in (args.report, args.csv):
        if path:
            check_writable(path)
    if args.watch and (args.batch or args.json):
        raise ValueError(Bi("--watch 在屏幕上给一个文件夹打分：不能和 --batch 或 --json 一起用",
                            "--watch grades one folder on the screen: no --batch or --json"))
    if args.pass_mark is not None and not 0 <= args.pass_mark <= course.TOTAL:
        raise ValueError(Bi(f"--pass-mark 要在 0 到 {course.TOTAL} 分之间",
                            f"--pass-mark must be between 0 and {course.TOTAL} points"))
    if not 0 < args.memory <= 64:
        raise ValueError(Bi("--memory 要大于 0，最多 64 GiB",
                            "--memory must be more than 0 and at most 64 GiB"))
    if args.timeout is not None and not 0 < args.timeout <= EXERCISE_BUDGET:
        raise ValueError(Bi(f"--timeout 要大于 0，最多 {EXERCISE_BUDGET:g} 秒（一个练习的时间预算）",
                            f"--timeout must be more than 0 and at most {EXERCISE_BUDGET:g} "
                            "seconds, the time budget of one exercise"))
    if args.json:
        check_writable(args.json)
    return folder, exercises


def submission_folder(args, given):
    """The folder --submission grades: as a batch finds a row's files in it (the folder, its
    exercises/, one place further down; a .zip unpacked first), so that a row of a gradebook is
    graded again, exactly, by --submission with that row's entry and seed."""
    from grading.commands.batch import extract_zip, find_exercises
    if given.is_file() and given.suffix.lower() == ".zip":
        args.unpacked = Path(tempfile.mkdtemp(prefix="grader-submission-"))
        why = extract_zip(given, args.unpacked)
        if why:
            raise ValueError(Bi(f"{given}：{why}", f"{given}: {why}"))
        given = args.unpacked
    if not given.is_dir() or any(given.glob("ex*.py")):
        return given
    found, _, _ = find_exercises(given)
    return given if found is None else found  # (the report's first line names it)


def grade_command(args, argv, folder, exercises):
    """Grading, --watch, --batch or the demo, with the backend started (or the run handed over
    to a judge forked from the zygote); the results written once every worker is gone."""
    problem = torch_problem()
    if problem:
        print(f"grader.py: {problem.render(args.lang)}", file=sys.stderr)
        return USAGE_ERROR
    backend, code = started_backend(args, argv)
    if backend is None:
        return code
    try:
        if args.command == "demo":
            from grading.demo.report import main as demo
            return demo(backend, folder, args.seed, args.lang, args.json)
        code, results = run(args, folder, exercises, backend)
        backend.close()  # every worker, and all they started, is gone before results are written
        if results is not None:
            try:
                write_results(args, results)
            except OSError as error:  # checked writable before grading; a disk full since?
                from grading.output.report import os_reason
                why = os_reason(error)
                print(Bi(f"grader.py: 结果没能写出（{getattr(error, 'filename', '') or ''}：{why.zh}）",
                         f"grader.py: the results could not be written "
                         f"({getattr(error, 'filename', '') or ''}: {why.en})").render(args.lang),
                      file=sys.stderr)
                return USAGE_ERROR
        return code
    except KeyboardInterrupt:
        if args.watch:
            print()
            return 0  # Ctrl-C is how watching ends
        print(Bi("\ngrader.py: 已中断", "\ngrader.py: interrupted").render(args.lang), file=sys.stderr)
        return 130
    except GradingError as error:
        print(Bi(f"grader.py: 无法评分：{inert(str(error))}",
                 f"grader.py: grading could not run: {inert(str(error))}").render(args.lang),
              file=sys.stderr)
        return USAGE_ERROR
    finally:
        backend.close()


def started_backend(args, argv):
    """(the backend, None), or (None, the exit status) when this process is done: it handed the
    run over to a judge forked from the zygote and waited for it, or no backend could start."""
    from grading.backends.portable import start
    from grading.backends.zygote import HandedOver
    # Grades that count: a batch, and a results.json (what CI's grade.sh and the Gradescope bundle
    # write). These refuse the portable backend unless it is chosen by name (portable.start).
    counts = bool(args.batch or args.json) and args.command != "demo"
    clients = 1
    if args.batch:  # each judge needs a zygote connection, one started for a dead one too
        from grading.commands.batch import judges_for
        clients = judges_for(args.jobs)
    try:
        backend = start(ROOT, memory=int(args.memory * 1024 ** 3), clients=clients,
                        batch=bool(args.batch), counts=counts, hand_over=handed_over(argv))
        if isinstance(backend, HandedOver):  # a judge forked from the zygote runs the command
            try:
                return None, backend.wait()
            except KeyboardInterrupt:
                print(Bi("\ngrader.py: 已中断", "\ngrader.py: interrupted").render(args.lang),
                      file=sys.stderr)
                return None, 130
        return backend, None
    except WallsMissing as error:
        print(f"grader.py: {error.text.render(args.lang)}", file=sys.stderr)
    except GradingError as error:
        print(Bi(f"grader.py: 无法评分：{error}", f"grader.py: grading could not run: {error}")
              .render(args.lang), file=sys.stderr)
    return None, USAGE_ERROR


def write_results(args, results):
    """--json, and for a batch --csv (with the causes and every check beside it) and --report."""
    from grading.output.report import write_json, write_text
    if args.json:
        write_json(args.json, results)
    if args.csv:  # the gradebook, what the class got wrong and every check beside it
        from grading.commands.batch import beside, causes, causes_csv, causes_path, checks_csv, csv_text
        # UTF-8 with a byte-order mark: Excel on Windows then reads Chinese names as Chinese
        # (LibreOffice, Google Sheets and Python's utf-8-sig read it too)
        write_text(args.csv, BOM + csv_text(results["submissions"]))
        write_text(causes_path(args.csv),
                   BOM + causes_csv(causes(results["submissions"], args.lang)))
        write_text(beside(args.csv, "checks"), BOM + checks_csv(results["submissions"]))
    if args.report:
        from grading.commands.batch import class_report
        write_text(args.report, class_report(results["submissions"], args.lang,
                                             results.get("interrupted", False)))
    if args.batch and not results.get("interrupted"):  # a whole batch: nothing to resume
        from grading.commands.batch import saved_path
        saved_path(args.csv or args.json).unlink(missing_ok=True)


def handed_over(argv):
    """(grader.py, argv) when this process runs grader.py as a script: its grading is then handed
    over to a judge forked from the zygote, so that the run imports torch once
    (backends.zygote.HandedOver); None when main() is called otherwise (the self-test's)."""
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if script and os.path.realpath(script) == str((ROOT / "grader.py").resolve()):
        return script, list(argv)
    return None


def run(args, folder, exercises, backend):
    """Grade; returns (exit status, what to write to --json or None)."""
    from grading.config import CALL_TIMEOUT
    from grading.judge.session import grade
    from grading.output import report  # imported before any submission code runs, like everything else

    seed = args.seed if args.seed is not None else random.randrange(1, 1 << 31)
    timeout = args.timeout or CALL_TIMEOUT
    try:
        if args.batch:
            return run_batch(args, backend, folder, seed, exercises, timeout)
        from grading.judge.limits import JUDGE_MEMORY, limit_judge_cpu, limit_judge_memory, restore
        limits = {**limit_judge_memory(JUDGE_MEMORY, torch_first=backend.reads_proc),
                  **limit_judge_cpu()}
        try:
            result = grade(backend, folder, seed, exercises, call_timeout=timeout, split=True)
        finally:
            restore(limits)
        result.seconds = waited(result.seconds)
    except SessionError as error:
        print(Bi("grader.py: 测试没能运行——这是评分程序的问题，不是你代码的问题：\n",
                 "grader.py: the tests could not run — a problem of the grader, not of your "
                 "code:\n").render(args.lang)
              + report.no_commands(inert(str(error))), file=sys.stderr)
        return USAGE_ERROR, None
    command = "python grader.py" + (" --solutions" if args.solutions else "") + \
        (f" --submission {args.submission}" if args.submission else "")
    if args.watch:
        from grading.commands.watch import watch
        return watch(backend, folder, seed, timeout, result, command, args.lang), None
    actions = os.environ.get("GITHUB_ACTIONS") == "true"
    if not args.solutions and not actions and not args.json:  # a learner's run: hint N reads it
        from grading.commands.hints import remember_run
        remember_run(result)
    shown = report.text(result, command, args.lang)
    # In Actions, the report is printed with workflow commands stopped (report.github_log), so no
    # line of the learner's can act as one; the grader's own annotations come after the resume.
    print(report.github_log(shown) if actions else shown)
    results = report.gradescope(result, args.lang) if args.json else None
    pass_mark = result.max_score if args.pass_mark is None else args.pass_mark
    blockers = not_a_pass(result, args, actions)
    if actions:  # a job summary and annotations
        print("\n".join(report.github_annotations(result, args.lang)))
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(report.github_summary(result, pass_mark, args.lang, blockers))
    for blocker in blockers:  # why the exit status is not 0, whatever the points
        print("grader.py:" + blocker.render(args.lang), file=sys.stderr)
    if result.grading_errors:
        return USAGE_ERROR, results
    return (0 if result.score >= pass_mark and not blockers else 1), results


def run_batch(args, backend, folder, seed, exercises, timeout):
    """--batch: (exit status, results). Each row is saved as it is graded (batch.saved_path), so
    that Ctrl-C or SIGTERM, which stop every judge at once, leave a gradebook marked partial and
    --resume grades only what is left. Exit 0 only for a whole gradebook: every row graded, by
    the hidden checks too, no grading error."""
    from grading.commands.batch import (
        causes,
        caveats,
        grade_all,
        grading_errors,
        public_only,
        saved_path,
        summary,
    )
    saved = saved_path(args.csv or args.json)
    previous = signal.signal(signal.SIGTERM, _interrupt) if hasattr(signal, "SIGTERM") else None
    try:
        with open(saved, "a" if args.resumed is not None else "w", encoding="utf-8") as out:
            if args.resumed is None:
                out.write(json.dumps({"seed": seed, "batch": str(folder)}) + "\n")
            records, interrupted = grade_all(backend, folder, seed, exercises, timeout,
                                             args.jobs, saved=out, done=args.resumed)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    print(summary(records, args.lang, interrupted), flush=True)
    results = {"seed": seed, "submissions": records, "causes": causes(records, args.lang),
               "interrupted": interrupted, "public_only": public_only(records)}
    for line in caveats(records, interrupted, args.lang):
        print("grader.py:" + line, file=sys.stderr)
    if interrupted:
        return 130, results
    # 1, not 2: the gradebook is written and every other row holds; and 2 is never because of
    # what a submission did (a judge may die of one), DESIGN's exit statuses.
    return (1 if grading_errors(records) or results["public_only"] else 0), results


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # SIGTERM stops a batch as Ctrl-C does: judges killed, rows kept


def grading_mode(args, actions):
    """Whether this run may be taken for a grade: in CI (GitHub Actions, or any CI that sets
    CI=true) or when it writes results.json (Gradescope's format, what a course imports)."""
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    return actions or ci or bool(args.json)


def not_a_pass(result, args, actions):
    """Why this run must not exit 0 whatever its points (Bi texts, each starting with a space):
    the hidden checks did not run (no solutions here) in a run that may be taken for a grade;
    the workflow reports changes outside exercises/ (GRADER_CHANGES_OUTSIDE, set by the CI step
    from .github/scripts/outside-exercises.sh)."""
    from grading.output import report
    blockers = []
    if result.hidden_points and grading_mode(args, actions):
        blockers.append(report.not_graded(result) + Bi(
            " 在 CI 里、或写出 results.json 时，这样的运行不会以 0 退出。",
            " In CI, or writing results.json, such a run never exits 0."))
    outside = inert_line(os.environ.get("GRADER_CHANGES_OUTSIDE", "")).strip()
    if outside:
        blockers.append(Bi(f" 这次改动了 exercises/ 以外的文件（{outside}）：它们不会被评分，去掉之前检查不会通过。",
                           f" This change touches files outside exercises/ ({outside}): they are "
                           "not graded, and the check fails until they are removed."))
    return blockers
