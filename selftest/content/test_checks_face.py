"""grading/checks/__init__.py is the one face the test files of tests/ check with: they import
their checks and tolerances from `grading.checks` alone, never from one of its modules, and every
name the face offers is there (as httpx guards its public names)."""
import ast

import grading.checks
from conftest import ROOT


def imports_from_checks(path):
    """[(module, name)] of every `from grading.checks… import name` in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and \
                (node.module == "grading.checks" or node.module.startswith("grading.checks.")):
            found += [(node.module, alias.name) for alias in node.names]
    return found


def test_the_face_offers_what_it_names():
    names = grading.checks.__all__
    assert len(names) == len(set(names)), "a name twice in __all__"
    missing = [name for name in names if not hasattr(grading.checks, name)]
    assert not missing, f"grading/checks/__init__.py names but does not import: {missing}"


def test_test_files_check_through_the_face_alone():
    wrong = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for module, name in imports_from_checks(path):
            if module != "grading.checks":
                wrong.append(f"{path.name}: from {module} import {name} (import it from "
                             "grading.checks, adding it to its __all__ if it is new)")
            elif name not in grading.checks.__all__:
                wrong.append(f"{path.name}: {name} is not in grading.checks.__all__")
    assert not wrong, "\n".join(wrong)
