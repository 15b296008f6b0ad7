"""grading/checks/__init__.py is the one face the test files of tests/ check with, and
grading/diagnosis/__init__.py the one face their diagnoses explain with: the files of tests/
import from `grading.checks` and `grading.diagnosis` alone, never from one of their modules, and
every name a face offers is there (as httpx guards its public names)."""
import ast

import pytest

import grading.checks
import grading.diagnosis
from conftest import ROOT

FACES = [grading.checks, grading.diagnosis]


def imports_from(path, face):
    """[(module, name)] of every `from <face>… import name` in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and \
                (node.module == face or node.module.startswith(face + ".")):
            found += [(node.module, alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize("face", FACES, ids=lambda f: f.__name__)
def test_the_face_offers_what_it_names(face):
    names = face.__all__
    assert len(names) == len(set(names)), "a name twice in __all__"
    missing = [name for name in names if not hasattr(face, name)]
    assert not missing, f"{face.__name__}'s __init__.py names but does not import: {missing}"


@pytest.mark.parametrize("face", FACES, ids=lambda f: f.__name__)
def test_test_files_check_through_the_face_alone(face):
    wrong = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for module, name in imports_from(path, face.__name__):
            if module != face.__name__:
                wrong.append(f"{path.name}: from {module} import {name} (import it from "
                             f"{face.__name__}, adding it to its __all__ if it is new)")
            elif name not in face.__all__:
                wrong.append(f"{path.name}: {name} is not in {face.__name__}.__all__")
    assert not wrong, "\n".join(wrong)
