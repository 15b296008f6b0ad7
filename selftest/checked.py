"""The "会检查：" and "Checked:" paragraphs of the exercise files, made from the tests' names.

Each file of exercises/ and solutions/ tells the learner, in its docstring, what is checked: one
paragraph in Chinese ("会检查：…") and one in English ("Checked: …"). They are made here from the
first two lines of the docstrings of the exercise's graded tests (tests/test_<exercise>.py), in
the file's order, so they stay true when a check is added, renamed or dropped;
content/test_checked.py requires it. After changing a test's name, rewrite them:

    python selftest/checked.py
"""
import ast
import re
import sys
import textwrap
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 100  # columns of a paragraph's lines; a Chinese character takes two
ZH_LEAD, EN_LEAD = "会检查：", "Checked: "


def check_names(exercise, root=ROOT):
    """[(English, Chinese)] of the exercise's graded tests, in their file's order."""
    tree = ast.parse((root / "tests" / f"test_{exercise}.py").read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        graded = isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and any(
            isinstance(d, ast.Call) and getattr(d.func, "id", None) in ("public", "hidden")
            for d in node.decorator_list)
        if graded:
            lines = [line.strip() for line in (ast.get_docstring(node) or "").splitlines()]
            names.append((lines[0], lines[1]))
    return names


def paragraphs(exercise, root=ROOT):
    """(the Chinese paragraph, the English one), each wrapped to WIDTH columns."""
    names = check_names(exercise, root)
    zh = ZH_LEAD + "；".join(name for _, name in names) + "。"
    en = EN_LEAD + "; ".join(name for name, _ in names) + "."
    return _wrap_wide(zh), textwrap.fill(en, WIDTH, break_on_hyphens=False,
                                          break_long_words=False)


def _width(text):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wrap_wide(text):
    """Greedy lines of at most WIDTH columns, broken between Chinese characters or at spaces,
    never inside a run of Latin letters, digits and code (a shape, a call)."""
    pieces = re.findall(r"[\x21-\x7e]+|\s+|.", text)
    lines, line = [], ""
    for piece in pieces:
        if line and _width(line + piece) > WIDTH:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    lines.append(line.rstrip())
    return "\n".join(lines)


_PARAGRAPH = {ZH_LEAD: re.compile(r"^会检查：.*?(?=\n\n|\n\"\"\")", re.S | re.M),
              EN_LEAD: re.compile(r"^Checked: .*?(?=\n\n|\n\"\"\")", re.S | re.M)}


def written(path):
    """(the Chinese paragraph, the English one) as the file holds them (None where missing)."""
    text = Path(path).read_text(encoding="utf-8")
    found = [_PARAGRAPH[lead].search(text) for lead in (ZH_LEAD, EN_LEAD)]
    return tuple(match.group(0) if match else None for match in found)


def rewrite(path, exercise, root=ROOT):
    """Put the made paragraphs in the file, in place of the ones it holds; a new exercise's file,
    which holds none yet, gets them at the end of its docstring."""
    text = Path(path).read_text(encoding="utf-8")
    for lead, made in zip((ZH_LEAD, EN_LEAD), paragraphs(exercise, root)):
        text, count = _PARAGRAPH[lead].subn(lambda _: made, text, count=1)
        if count != 1:
            if not text.startswith('"""') or '"""' not in text[3:]:
                raise ValueError(f"{path}: no docstring to hold the {lead.strip()} paragraph")
            end = text.index('"""', 3)
            text = text[:end].rstrip("\n") + "\n\n" + made + "\n" + text[end:]
    Path(path).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:]:  # (it takes no arguments: --help must not rewrite anything)
        print(__doc__.strip().splitlines()[0] + "\nusage: python selftest/checked.py")
        sys.exit(0 if sys.argv[1:] in (["-h"], ["--help"]) else 2)
    sys.path.insert(0, str(ROOT))
    from grading.config import EXERCISES
    for exercise in EXERCISES:
        for folder in ("exercises", "solutions"):
            if (ROOT / folder / f"{exercise}.py").exists():
                rewrite(ROOT / folder / f"{exercise}.py", exercise)
    print("rewrote the 会检查 / Checked: paragraphs of exercises/ and solutions/")
