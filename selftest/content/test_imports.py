"""The import graph of the project, read from the files' syntax trees (imports inside functions
count: they only move a circle from import time to run time).

- no circle among the project's modules;
- the worker side (what runs in the learner's process) imports nothing of the judge side;
- no test file imports another: what several exercises share lives outside tests/test_*.py;
- the leaves (course, config, errors, i18n, inert) import nothing of the project but course;
- the self-test's files have names of their own and import no test file (pytest imports each under
  its bare name, its folder on sys.path).
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What runs in the learner's process: grading/worker/main.py and everything it may import.
WORKER_SIDE = ("grading.worker", "grading.wire", "grading.walls", "grading.inert",
               "grading.errors")
LEAVES = {"course": set(), "grading.config": {"course"}, "grading.errors": set(),
          "grading.i18n": set(), "grading.inert": set()}


def project_modules(root=ROOT):
    """{dotted name: path} for course.py, grader.py, grading/**, tests/*.py (tests under their
    bare names too, as pytest's rootdir-relative imports see them), exercises/ and solutions/."""
    modules = {"course": root / "course.py", "grader": root / "grader.py"}
    for path in sorted((root / "grading").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    for folder in ("tests", "exercises", "solutions"):
        for path in sorted((root / folder).glob("*.py")):
            if folder == "tests":  # first: the name the graph reports it under
                modules[path.stem] = path
            modules[f"{folder}.{path.stem}"] = path
    return modules


def imports_of(path, modules):
    """The project modules a file imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            # `from a.b import c`: the module a.b.c when there is one, else a.b
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules
                     else node.module for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:  # `import grading.judge.plugin` when x.y.z
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def graph(root=ROOT):
    modules = project_modules(root)
    edges = {}
    for name, path in modules.items():
        edges.setdefault(path, set()).update(modules[m] for m in imports_of(path, modules))
    by_path = {}
    for name, path in modules.items():
        by_path.setdefault(path, name)
    return {by_path[p]: {by_path[q] for q in targets if q != p} for p, targets in edges.items()}


def circles(edges):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def reached_from(edges, start):
    reached, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo += sorted(edges.get(module, ()))
    return reached


def test_no_circle_among_the_projects_modules():
    found = circles(graph())
    assert not found, "import circles (break each by moving what both need into a leaf): " + \
        "; ".join(" ↔ ".join(c) for c in found)


def test_the_worker_side_imports_nothing_of_the_judge_side():
    reached = reached_from(graph(), "grading.worker.main")
    outside = sorted(m for m in reached if not m.startswith(WORKER_SIDE) and m != "grading")
    assert not outside, f"the worker side imports {outside}: they belong to the judge side"


def test_no_test_file_imports_another():
    edges = graph()
    tests = {name for name in edges if name.startswith("test_")}
    found = sorted((t, u) for t in tests for u in edges[t] if u in tests or u.startswith("tests."))
    assert not found, f"test files importing test files: {found}; move what they share into " \
        "tests/lesson_steps.py"


def test_the_leaves_import_only_leaves():
    edges = graph()
    for leaf, allowed in LEAVES.items():
        assert edges[leaf] <= allowed, f"{leaf} imports {sorted(edges[leaf] - allowed)}"


def test_the_checker_finds_a_circle_and_a_worker_import(tmp_path):
    """The graph is read right: a circle through an import inside a function is found, and so is a
    worker module that imports the judge's plugin."""
    for folder in ("grading/worker", "grading/judge", "tests"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "course.py").write_text("")
    (tmp_path / "grader.py").write_text("")
    (tmp_path / "grading/__init__.py").write_text("")
    (tmp_path / "grading/judge/plugin.py").write_text("def f():\n    from grading.judge import a\n")
    (tmp_path / "grading/judge/a.py").write_text("import grading.judge.plugin\n")
    (tmp_path / "grading/worker/main.py").write_text("def g():\n    from grading.judge.plugin import X\n")
    (tmp_path / "tests/test_ex2.py").write_text("from test_ex1 import y\n")
    (tmp_path / "tests/test_ex1.py").write_text("")
    edges = graph(tmp_path)
    assert circles(edges) == [["grading.judge.a", "grading.judge.plugin"]]
    assert "grading.judge.plugin" in reached_from(edges, "grading.worker.main")
    assert edges["test_ex2"] == {"test_ex1"}


def selftest_problems(root=ROOT):
    """What breaks pytest's imports of selftest/ (its default mode puts each test file's own folder
    on sys.path under the file's bare name): two test files of one name, and a test file that
    imports another (which is found only when the other's folder was collected first)."""
    files = sorted((root / "selftest").rglob("test_*.py"))
    files = [path for path in files if "submissions" not in path.relative_to(root).parts]
    problems, seen = [], {}
    for path in files:
        where = str(path.relative_to(root))
        if path.stem in seen:
            problems.append(f"{where} and {seen[path.stem]} share a name: rename one")
        seen.setdefault(path.stem, where)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            problems += [f"{where} imports {name}: move what they share beside conftest.py"
                         for name in names if name.split(".")[0].startswith("test_")]
    return problems


def test_selftest_files_have_their_own_names_and_import_no_test_file():
    assert not selftest_problems(), "\n".join(selftest_problems())


def test_the_selftest_checker_finds_a_clash_and_a_test_import(tmp_path):
    for folder in ("units", "system", "submissions/fair-x"):
        (tmp_path / "selftest" / folder).mkdir(parents=True)
    (tmp_path / "selftest/units/test_a.py").write_text("X = 1\n")
    (tmp_path / "selftest/system/test_a.py").write_text("")
    (tmp_path / "selftest/system/test_b.py").write_text("def f():\n    from test_a import X\n")
    (tmp_path / "selftest/submissions/fair-x/test_b.py").write_text("import test_a\n")  # a fixture
    assert selftest_problems(tmp_path) == [
        "selftest/system/test_b.py imports test_a: move what they share beside conftest.py",
        "selftest/units/test_a.py and selftest/system/test_a.py share a name: rename one"]
