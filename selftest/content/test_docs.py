"""The README is a learner's two minutes; the rest lives in docs/. Every relative link there leads to
a file that exists, and no figure is tied to one machine."""
import re

import pytest

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
MACHINE = ("这台机器", "这台两核机器", "on this machine")


def relative_links(path):
    """The relative targets of the file's Markdown links, without their #anchors."""
    targets = [m.group(1) for m in LINK.finditer(path.read_text(encoding="utf-8"))]
    return [t.split("#")[0] for t in targets
            if not re.match(r"[a-z][a-z0-9+.-]*:", t) and t.split("#")[0]]


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the rest into docs/"


def test_the_docs_are_there():
    for name in ("learner", "instructor", "security", "design"):
        assert (ROOT / "docs" / f"{name}.md").is_file(), name


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(path):
    missing = [t for t in relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.name} links to missing files: {missing}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_no_figure_is_tied_to_this_machine(path):
    found = [(n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if any(word in line for word in MACHINE)]
    assert not found, f"{path.name}: {found}"


def test_the_readme_gives_the_test_command_and_its_quick_start_no_check():
    """.ci/run runs "the README's test command"; the learner's quick start never sends to --check."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python grader.py --check --full" in readme
    for heading in ("## 开始\n", "## Start\n"):
        section = readme[readme.index(heading) + len(heading):].split("\n## ")[0]
        assert "pip install -r requirements.txt && python grader.py" in section
        assert "--check" not in section, heading


def exercise_rows(text):
    """The rows of the README's exercise tables: (number, file, section, points) per row."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) >= 4 and cells[0].isdigit() and "exercises/" in cells[1]:
            rows.append((int(cells[0]), cells[1].strip("`"), cells[2], cells[3]))
    return rows


def test_the_readmes_exercise_tables_are_course_pys():
    """Both languages' tables list every exercise of course.py, in its order, with its file,
    the heading of the lesson's section and points: course.py is where they are changed."""
    import course
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    english = text.index("\n# ", 1)  # the English half starts at the second top heading
    zh_rows, en_rows = exercise_rows(text[:english]), exercise_rows(text[english:])
    for rows, lang in ((zh_rows, "中文"), (en_rows, "English")):
        want = [(e.number, f"exercises/{e.name}.py",
                 e.heading[0] if lang == "中文" else f"{e.heading[0]} ({e.heading[1]})", str(e.points))
                for e in course.EXERCISES]
        assert rows == want, (
            f"README.md's {lang} exercise table is not course.py's: its rows should read "
            f"{want} (number, file, the lesson's heading, points; the last column is free)")
