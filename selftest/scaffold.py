"""A new exercise's files, for the instructor (the student copy leaves selftest/ out):

    python selftest/scaffold.py ex7_multihead \
        --api "MultiHeadAttention.__init__(self, num_heads, n_embd, head_size, block_size)" \
        --api "MultiHeadAttention.forward(self, x)" --uses ex6_head [--points 10] [--title 中 en]

It writes, from the signatures alone:
- exercises/NAME.py, the stub: each body a `# TODO:` line and `raise NotImplementedError`;
- solutions/NAME.py, the same file, whose bodies the instructor fills in;
- tests/test_NAME.py, two checks that run as written: a public one (forward gives finite numbers
  of the output's shape) and a hidden one (the outputs match the reference's on fresh inputs);
- the exercise's entry at the end of course.py's EXERCISES, and a row in each of README.md's
  exercise tables.
Then: fill the solution's bodies and the TODOs of the texts, add the exercise's known mistakes
to selftest/fixtures.py, and run `python grader.py --check N` (docs/instructor.md).

An argument of a signature is a size when its name is one of SIZES, an input when it is one of
INPUTS (drawn afresh for every call); any other name is a size of 4, marked TODO in the test.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TODO = ("TODO (instructor)", "TODO（老师）")  # what the self-test finds until it is written

# the sizes a test draws its shapes from: three shape sets, B = T = 1 among them
SIZES = {"B": (2, 1, 3), "T": (5, 1, 8), "n_embd": (12, 6, 16), "head_size": (4, 3, 8),
         "block_size": (8, 4, 8), "num_heads": (3, 2, 4), "vocab_size": (20, 11, 30)}
# an input's shape (size names) and kind: a float tensor (randn) or ids below vocab_size
INPUTS = {"x": (("B", "T", "n_embd"), "randn"), "idx": (("B", "T"), "ids"),
          "q": (("B", "T", "head_size"), "randn"), "k": (("B", "T", "head_size"), "randn"),
          "v": (("B", "T", "head_size"), "randn"), "weights": (("B", "T", "T"), "randn")}


class ScaffoldError(ValueError):
    """A request the scaffold cannot write: a name taken, a signature it cannot read."""


SIGNATURE = re.compile(r"^(?:(\w+)\.)?(\w+)\(([\w\s,]*)\)$")


def parse_api(api):
    """[(class or None, function, [arguments but self])] of the signatures, in order."""
    parsed = []
    for signature in api:
        match = SIGNATURE.match(signature.strip())
        if not match:
            raise ScaffoldError(f"cannot read the signature {signature!r}: write it as course.py "
                                "does, 'Class.method(self, a, b)' or 'function(a, b)'")
        owner, function, arguments = match.groups()
        names = [a.strip() for a in arguments.split(",") if a.strip()]
        parsed.append((owner, function, [a for a in names if a != "self"]))
    classes = {owner for owner, _, _ in parsed if owner}
    for owner in classes:
        methods = [f for o, f, _ in parsed if o == owner]
        if methods[:1] != ["__init__"] or "forward" not in methods:
            raise ScaffoldError(f"the class {owner} needs {owner}.__init__(self, …) first and "
                                f"{owner}.forward(self, …): it is an nn.Module")
    return parsed


def scaffold(name, api, uses=(), points=10, title=None, root=ROOT, heading=None):
    """Write the new exercise's files and entries; the paths written."""
    course = _course(root)
    if not re.fullmatch(r"ex(\d+)_[a-z0-9_]+", name):
        raise ScaffoldError(f"{name!r}: an exercise's name is ex<number>_<words>, e.g. ex7_multihead")
    number = int(name[2:].split("_")[0])
    if name in course.BY_NAME or number in {e.number for e in course.EXERCISES}:
        raise ScaffoldError(f"course.py already has an exercise {number}")
    if number != len(course.EXERCISES) + 1:
        raise ScaffoldError(f"the next exercise is number {len(course.EXERCISES) + 1}, not {number}")
    for used in uses:
        if used not in course.BY_NAME:
            raise ScaffoldError(f"--uses {used}: course.py has no such exercise "
                                f"({', '.join(course.NAMES)})")
    parsed = parse_api(api)
    title = title or (name.split("_", 1)[1].replace("_", " "),) * 2
    files = {root / "exercises" / f"{name}.py": exercise_file(name, number, title, parsed, uses,
                                                               solution=False),
             root / "solutions" / f"{name}.py": exercise_file(name, number, title, parsed, uses,
                                                              solution=True),
             root / "tests" / f"test_{name}.py": test_file(name, number, title, parsed, points)}
    for path in files:
        if path.exists():
            raise ScaffoldError(f"{path.relative_to(root)} exists already")
    # the lesson's section that hints send learners to (content/test_texts.py: a heading of
    # docs/lesson.zh.txt); by default the section of the exercise it builds on
    heading = heading or (course.BY_NAME[uses[-1]].heading if uses else course.EXERCISES[-1].heading)
    course_text = (root / "course.py").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    course_text = add_entry(course_text, name, title, heading, points, api, uses)
    readme = add_rows(readme, name, number, heading, points, course.EXERCISES[-1])
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    (root / "course.py").write_text(course_text, encoding="utf-8")
    (root / "README.md").write_text(readme, encoding="utf-8")
    checked = root / "selftest" / "checked.py"  # the 会检查 / Checked: paragraphs, from the tests
    if checked.is_file():
        subprocess.run([sys.executable, str(checked)], cwd=root, check=True,
                       stdout=subprocess.DEVNULL)
    return [*files, root / "course.py", root / "README.md"]


def exercise_file(name, number, title, parsed, uses, solution):
    """The stub, or the solution (the same file: its bodies are the instructor's to write)."""
    lines = [f'"""练习 {number} · {title[0]}', "",
             "TODO（老师）：这一步做什么，输入和输出的形状，要写的是什么。", "",
             f"Exercise {number} · {title[1]}", "",
             "TODO (instructor): what this step does, its inputs' and output's shapes, what to "
             "write.", '"""', "import torch", "import torch.nn as nn", ""]
    course = _course(ROOT)
    for used in uses:  # a relative import: the grader may put the reference's copy in its place
        names = dict.fromkeys(a.split("(")[0].split(".")[0] for a in course.BY_NAME[used].api)
        lines.append(f"from .{used} import {', '.join(names)}  # exercise {used[2:].split('_')[0]}")
    lines.append("")
    owner = None
    for cls, function, arguments in parsed:
        if cls and cls != owner:
            lines += ["", f"class {cls}(nn.Module):",
                      '    """TODO（老师）：一句话。 TODO (instructor): one sentence."""']
            owner = cls
        indent = "    " if cls else ""
        params = ", ".join(["self", *arguments] if cls else arguments)
        lines += ["", f"{indent}def {function}({params}):"]
        if cls and function == "__init__":
            lines.append(f"{indent}    super().__init__()")
        lines += [f"{indent}    # TODO: TODO（老师）要做的事。 TODO (instructor): what to do.",
                  f'{indent}    raise NotImplementedError("ex{number}: {function}")']
    return "\n".join(lines).replace("\n\n\n\nclass", "\n\n\nclass") + "\n"


def test_file(name, number, title, parsed, points):
    """Two checks that run as written, over SIZES and INPUTS."""
    owner = next((cls for cls, _, _ in parsed if cls), None)
    if owner:
        init = next(a for c, f, a in parsed if c == owner and f == "__init__")
        call = next(a for c, f, a in parsed if c == owner and f == "forward")
        what = "forward(" + ", ".join(call) + ")"
    else:
        init, (_, function, call) = None, parsed[0]
        what = f"{function}(" + ", ".join(call) + ")"
    unknown = [a for a in [*(init or []), *call] if a not in SIZES and a not in INPUTS]
    sizes = sorted({s for a in call if a in INPUTS for s in INPUTS[a][0]}
                   | {a for a in [*(init or []), *call] if a in SIZES}
                   | {"B", "T"}, key=lambda s: list(SIZES).index(s))
    shapes = [", ".join(f"{s}={SIZES[s][i]}" for s in sizes) + "".join(f", {u}=4" for u in unknown)
              for i in range(3)]
    draw_lines = [f'    return {{{", ".join(draw_entry(a) for a in call if a in INPUTS)}}}']
    argument = lambda a: f'inputs["{a}"]' if a in INPUTS else f's["{a}"]'  # noqa: E731
    if owner:
        build = [f'    m = ex.{owner}({", ".join(argument(a) for a in init)})',
                 "    for path, shape, _ in sorted(m.parameters()):  # every weight from the draw",
                 "        m.set(path, randn(gen, *shape))  # (so the reference has the same)",
                 "    m.eval()", "    with torch.no_grad():",
                 f'        return m({", ".join(argument(a) for a in call)})']
    else:
        build = ["    with torch.no_grad():",
                 f'        return ex.{function}({", ".join(argument(a) for a in call)})']
    first = [a for a in call if a in INPUTS][:1]
    shape = INPUTS[first[0]][0] if first else ("B", "T")
    return f'''"""Exercise {number} · {title[1]} ({title[0]}). TODO (instructor): what it checks, in one line."""
import torch

from grading.checks import expect_close, expect_tensor, hidden, public, randn

# The sizes each check runs at{" (TODO: the sizes of " + ", ".join(unknown) + ")" if unknown else ""}.
SHAPES = [{(chr(10) + "          ").join("dict(" + s + ")," for s in shapes)}]


# -- scenarios ------------------------------------------------------------------------------------

def draw(gen, **s):
    """Fresh inputs of one call: the same for the learner's code and the reference's."""
{chr(10).join(draw_lines)}


def output(ex, gen, **s):
    """{what} on fresh inputs{", the module's weights drawn too" if owner else ""}."""
{"    inputs = draw(gen, **s)" if call else ""}
{chr(10).join(build)}


def output_shape(s):
    """The shape {what} returns, and its names."""
    return tuple(s[n] for n in OUTPUT), OUTPUT


OUTPUT = {shape!r}  # TODO (instructor): the size names of what {what} returns


# -- tests ----------------------------------------------------------------------------------------

@public({max(1, points * 3 // 10)})
def test_shape(submission):
    """{what} gives finite numbers of the right shape
    {what} 给出形状正确的有限的数"""
    for s in SHAPES:
        size, names = output_shape(s)
        expect_tensor(submission(output, **s), "{what}", size, names)


@hidden({points - max(1, points * 3 // 10)})
def test_matches_reference(compare):
    """matches the reference on fresh random inputs, three shape sets (B = T = 1 among them)
    在三组形状（其中一组 B = T = 1）的全新随机输入上与参考答案一致"""
    for s in SHAPES:
        got, want = compare(output, **s)
        expect_close(got, want, "{what}", output_shape(s)[1])
'''


def draw_entry(argument):
    shape, kind = INPUTS[argument]
    sizes = ", ".join(f's["{n}"]' for n in shape)
    if kind == "ids":
        return f'"{argument}": torch.randint(0, s["vocab_size"], ({sizes},), generator=gen)'
    return f'"{argument}": randn(gen, {sizes})'


def add_entry(text, name, title, heading, points, api, uses):
    """course.py with the exercise's entry at the end of EXERCISES."""
    end = text.index("\n)\n\nBY_NAME")
    entry = (f"\n    Exercise({name!r}, section=({title[0]!r}, {title[1]!r}),"
             f"\n             heading=({heading[0]!r}, {heading[1]!r}),"
             f"\n             points={points},"
             f"\n             api=({', '.join(repr(a) for a in api)},),"
             "\n             hints=("
             "\n                 Hint('TODO（老师）：先给一个方向。', 'TODO (instructor): a nudge first.'),"
             "\n                 Hint('TODO（老师）：再用文字讲课文的步骤，不给代码。',"
             "\n                      \"TODO (instructor): then the lesson's step in words, no code.\"),),"
             + (f"\n             uses=({', '.join(repr(u) for u in uses)},)" if uses else "")
             + "),")
    return text[:end] + entry + text[end:]


def add_rows(readme, name, number, heading, points, last):
    """README.md with a row for the exercise after the last exercise's row of each table."""
    out = []
    for line in readme.splitlines(keepends=True):
        out.append(line)
        if line.startswith(f"| {last.number} | `exercises/{last.name}.py` |"):
            english = "(" in line.split("|")[3]
            title = f"{heading[0]} ({heading[1]})" if english else heading[0]
            what = "TODO (instructor)" if english else "TODO（老师）"
            out.append(f"| {number} | `exercises/{name}.py` | {title} | {points} | {what} |\n")
    return "".join(out)


def _course(root):
    """course.py of the repository at `root` (read afresh: the scaffold may have changed it)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("scaffolded_course", root / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python selftest/scaffold.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the new exercise's name: ex<number>_<words>")
    parser.add_argument("--api", action="append", required=True, metavar="SIGNATURE",
                        help="one per function, as course.py writes them: "
                             "'Class.__init__(self, n_embd)', 'Class.forward(self, x)'")
    parser.add_argument("--uses", action="append", default=[], metavar="EXERCISE",
                        help="an earlier exercise its files import (course.py's uses)")
    parser.add_argument("--points", type=int, default=10, help="its points (default 10)")
    parser.add_argument("--title", nargs=2, metavar=("ZH", "EN"), help="its title")
    parser.add_argument("--heading", nargs=2, metavar=("ZH", "EN"),
                        help="the lesson's section hints send learners to: a heading of "
                             "docs/lesson.zh.txt (default: that of the exercise it uses)")
    args = parser.parse_args(argv)
    try:
        written = scaffold(args.name, args.api, tuple(args.uses), args.points, args.title,
                           heading=args.heading)
    except (ValueError, OSError) as error:
        print(f"scaffold.py: {error}", file=sys.stderr)
        return 2
    number = args.name[2:].split("_")[0]
    print("Wrote " + ", ".join(str(p.relative_to(ROOT)) for p in written) + ".\nNext: the "
          "solution's bodies and every TODO (instructor) of the texts; the exercise's known "
          f"mistakes in selftest/fixtures.py; then python grader.py --check {number}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
