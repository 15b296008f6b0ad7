#!/usr/bin/env python3
"""Grade the self-attention exercises. 给注意力机制的练习打分。

    python grader.py                 grade exercises/ (all six)
    python grader.py 3               grade one exercise (3, ex3 or ex3_qkv)
    python grader.py --solutions     grade solutions/ (should be 100/100)
    python grader.py --seed N        replay a run with the same random inputs
    python grader.py --json PATH     also write Gradescope's results.json
    python grader.py --check         the repository's own test, for instructors

Exit status: 0 at full marks, 1 otherwise, 2 when grading could not run.
"""
import argparse
import os
import random
import re
import sys
from pathlib import Path

from grading.session import EXERCISE_BUDGET, EXERCISES, EXERCISES_DIR, ROOT, SOLUTIONS, TESTS

USAGE_ERROR = 2


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise SystemExit(f"grader.py: {message} (python grader.py --help shows the options)")


def parse(argv):
    parser = Parser(prog="python grader.py", description=__doc__.split("\n\n")[0],
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exercise", nargs="?", help="grade one exercise: 1-6, ex3 or ex3_qkv")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--solutions", action="store_true", help="grade solutions/")
    where.add_argument("--submission", metavar="DIR", help="grade another folder of ex*.py files")
    where.add_argument("--batch", metavar="DIR", help="grade every subfolder of DIR (needs --json)")
    where.add_argument("--check", action="store_true",
                       help="instructors: prove the solutions pass, the stubs fail, and the "
                            "grader's own tests pass")
    parser.add_argument("--seed", type=int, help="replay the random inputs of an earlier run")
    parser.add_argument("--json", metavar="PATH", help="write results (Gradescope's format) here")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit for one import or one call of your code (default 5)")
    return parser.parse_args(argv)


def exercise_names(text):
    if text is None:
        return EXERCISES
    match = re.fullmatch(r"(?:ex)?([1-9])(?:_\w+)?(?:\.py)?", Path(text).name)
    names = [name for name in EXERCISES if match and name.startswith(f"ex{match.group(1)}_")]
    if not names:
        raise ValueError(f"there is no exercise {text!r}: choose 1-{len(EXERCISES)} "
                         f"({EXERCISES[0]} … {EXERCISES[-1]})")
    return names


def main(argv=None):
    try:
        args = parse(argv)
    except SystemExit as stop:
        if stop.code not in (0, None):
            print(stop.code if isinstance(stop.code, str) else "grader.py: bad arguments",
                  file=sys.stderr)
            return USAGE_ERROR
        return 0
    if args.check:
        from grading.check import check
        return check()
    try:
        exercises = exercise_names(args.exercise)
        folder = Path(args.submission or args.batch or EXERCISES_DIR)
        if args.solutions:
            folder = SOLUTIONS
            if not folder.is_dir():
                raise ValueError("this copy has no solutions/ folder: the solutions stay with the "
                                 "course")
        if not folder.is_dir():
            raise ValueError(f"{folder} is not a folder")
        if args.batch and not args.json:
            raise ValueError("--batch needs --json PATH for the results")
        if args.timeout is not None and not 0 < args.timeout <= EXERCISE_BUDGET:
            raise ValueError(f"--timeout must be more than 0 and at most {EXERCISE_BUDGET:g} "
                             "seconds, the time budget of one exercise")
        if args.json:
            from grading.report import check_writable
            check_writable(args.json)
    except (ValueError, OSError) as error:
        print(f"grader.py: {error}", file=sys.stderr)
        return USAGE_ERROR

    from grading.zygote import GradingError, Zygote
    zygote = Zygote(ROOT, TESTS)  # first: it imports torch while this process does the same
    try:
        return run(args, folder, exercises, zygote)
    except KeyboardInterrupt:
        print("\ngrader.py: interrupted", file=sys.stderr)
        return 130
    except GradingError as error:
        print(f"grader.py: grading could not run: {error}", file=sys.stderr)
        return USAGE_ERROR
    finally:
        zygote.close()


def run(args, folder, exercises, zygote):
    from grading import report
    from grading.session import CALL_TIMEOUT, SessionError, grade

    seed = args.seed if args.seed is not None else random.randrange(1, 1 << 31)
    timeout = args.timeout or CALL_TIMEOUT
    try:
        if args.batch:
            records = {}
            for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
                records[sub.name] = report.record(grade(zygote, sub, seed, exercises,
                                                        call_timeout=timeout))
                print(f"{sub.name}: {records[sub.name]['total']:g}/{records[sub.name]['max']:g}")
            report.write_json(args.json, {"seed": seed, "submissions": records})
            return 0
        result = grade(zygote, folder, seed, exercises, call_timeout=timeout)
    except SessionError as error:
        print(f"grader.py: the tests could not run — a problem of the grader, not of your code:\n"
              f"{error}", file=sys.stderr)
        return USAGE_ERROR
    command = "python grader.py" + (" --solutions" if args.solutions else "") + \
        (f" --submission {args.submission}" if args.submission else "")
    print(report.text(result, command))
    if args.json:
        report.write_json(args.json, report.gradescope(result))
    if result.grading_errors:
        return USAGE_ERROR
    return 0 if result.score == result.max_score else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # all is written; skipping torch's teardown saves a few tenths of a second
