"""The "会检查：" and "Checked:" paragraphs of every exercise file say what the tests check: they
are made from the graded tests' names (selftest/checked.py), so a check added, renamed or dropped
the night before a deadline cannot leave a learner reading an old list."""
import pytest
from checked import paragraphs, written

from conftest import ROOT
from grading.config import EXERCISES


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_checked_paragraphs_are_the_tests_names(folder, exercise):
    path = ROOT / folder / f"{exercise}.py"
    zh, en = paragraphs(exercise)
    assert written(path) == (zh, en), (
        f"{folder}/{exercise}.py: its 会检查 / Checked: paragraphs are not the names of "
        f"tests/test_{exercise}.py's checks; python selftest/checked.py rewrites them, to:\n"
        f"{zh}\n\n{en}")


def test_a_renamed_check_shows(tmp_path):
    """The paragraphs follow the tests' docstrings: a renamed check changes them."""
    (tmp_path / "tests").mkdir()
    source = (ROOT / "tests" / "test_ex4_scaling.py").read_text(encoding="utf-8")
    first = source.index('"""', source.index("\ndef test_")) + 3
    (tmp_path / "tests" / "test_ex4_scaling.py").write_text(
        source[:first] + "a renamed check\n    改了名字的检查\n    " + source[first:],
        encoding="utf-8")
    zh, en = paragraphs("ex4_scaling", root=tmp_path)
    assert en.startswith("Checked: a renamed check; ") and zh.startswith("会检查：改了名字的检查；")
    assert (zh, en) != paragraphs("ex4_scaling")


def test_a_new_exercise_file_gets_its_paragraphs_written(tmp_path):
    """Issue 37: checked.py only rewrote paragraphs that existed, so a new exercise's file could
    not get them. It now adds them at the end of the docstring, once; a second run rewrites them."""
    import checked
    path = tmp_path / "ex2_averaging.py"
    path.write_text('"""练习 2 · 新写的\n\nExercise 2 · newly written\n"""\nimport torch\n',
                    encoding="utf-8")
    checked.rewrite(path, "ex2_averaging")
    once = path.read_text(encoding="utf-8")
    assert checked.written(path) == checked.paragraphs("ex2_averaging")
    checked.rewrite(path, "ex2_averaging")
    assert path.read_text(encoding="utf-8") == once and once.endswith('"""\nimport torch\n')
