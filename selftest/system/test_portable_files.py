"""The portable backend against what its audit hook cannot see, graded with GRADER_BACKEND=portable.

- torch's own file I/O (C++: no audit event): each entry point refuses behind the walls, and the
  rest of torch works; in a batch of one attacker, a friend's stubs and three
  right answers, where the attacker rewrites the other rows' files with torch.save and a storage
  shared with a file; each row keeps its points and every file of the batch is as it was.
- a `.pth` written into site-packages, which would run in every later Python: in a venv of this
  test's (its site-packages a temporary folder, never the real one), the attack writes nothing.
- workers start with -I -S: a `.pth` and a sitecustomize planted in that venv's site-packages run
  in the judge (they are live) but in no worker, in either backend.
- the reuse of a worker for the next exercise compares what decides imports item by item.
The attacks on torch's readers (attack-ex5-portable_from_file, _torchscript) are graded with every
fixture, in both backends (test_portable.py, test_attacks.py).
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import course
from fixtures import SOLUTIONS, SUBMISSIONS, materialise_files

pytestmark = [pytest.mark.full,  # the grader's own machinery: --check --full
              pytest.mark.skipif(sys.platform == "win32", reason="a POSIX venv layout")]

ROOT = Path(__file__).resolve().parents[2]


def grader(*args, python=sys.executable, backend="portable"):
    return subprocess.run([python, str(ROOT / "grader.py"), *map(str, args), "--lang", "en"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GRADER_BACKEND": backend})


def contents(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.timeout(300)
def test_a_batch_attacker_rewrites_no_other_rows_files(tmp_path):
    batch = tmp_path / "batch"
    materialise_files(SUBMISSIONS / "attack-ex5-portable_write_rows", batch / "attacker")
    materialise_files(SUBMISSIONS / "twin-ex5-no_mask", batch / "twin")
    shutil.copytree(ROOT / "exercises", batch / "friend")
    for name in ("right-1", "right-2", "right-3"):
        shutil.copytree(SOLUTIONS, batch / name)
    before = contents(batch)
    # One judge: the attacker (first by name) is graded before every row it attacks.
    done = grader("--batch", batch, "--json", tmp_path / "out.json", "--jobs", "1", "--seed", "7")
    assert done.returncode == 0, done.stdout + done.stderr
    records = json.loads((tmp_path / "out.json").read_text())["submissions"]
    totals = {name: record["total"] for name, record in records.items()}
    assert totals == {**totals, "right-1": course.TOTAL, "right-2": course.TOTAL, "right-3": course.TOTAL, "friend": 0}
    attacker, twin = records["attacker"]["exercises"], records["twin"]["exercises"]
    assert attacker["ex5_causal_mask"]["score"] <= twin["ex5_causal_mask"]["score"]
    assert all(ex["score"] == ex["max"] for name, ex in attacker.items() if name != "ex5_causal_mask")
    assert contents(batch) == before  # nothing rewritten, nothing added


@pytest.fixture()
def venv(tmp_path):
    """A venv over this Python's packages: (its python, its own site-packages, a temporary folder
    that Python treats as a site folder, .pth files included)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    tmp_path / "venv"], check=True, timeout=120)
    python = tmp_path / "venv" / "bin" / "python"
    site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert Path(site).is_relative_to(tmp_path), site
    # This Python may itself be a venv (the README's): its packages (torch) are in its own
    # site-packages, which --system-site-packages does not reach. A path file names them.
    import site as this_site
    outer = [p for p in [*this_site.getsitepackages(), this_site.getusersitepackages()]
             if Path(p).is_dir()]
    (Path(site) / "_outer_site_packages.pth").write_text("".join(f"{p}\n" for p in outer))
    yield python, Path(site)
    shutil.rmtree(tmp_path / "venv", ignore_errors=True)


@pytest.mark.timeout(120)
def test_a_pth_attack_writes_nothing_into_site_packages(venv, tmp_path):
    python, site = venv
    (site / "GRADER_ATTACK_TARGET").touch()  # the only folder the fixture attacks
    before = contents(site)
    materialise_files(SUBMISSIONS / "attack-ex5-portable_pth", tmp_path / "attacker")
    done = grader("--submission", tmp_path / "attacker", "5", python=python)
    assert done.returncode == 1, done.stdout + done.stderr  # graded: no mask, a few points
    assert contents(site) == before, sorted(contents(site).keys() - before.keys())


@pytest.mark.timeout(120)
@pytest.mark.parametrize("backend", ["auto", "portable"])
def test_workers_run_no_pth_file_or_sitecustomize(venv, tmp_path, backend):
    python, site = venv
    markers = tmp_path / "markers"
    markers.mkdir()
    def recorder(kind):  # a line that leaves a file naming the process it ran in
        return (f"import os, sys; open(os.path.join({str(markers)!r}, '{kind}-' + str(os.getpid()))"
                ", 'w').write(' '.join(sys.argv))\n")

    (site / "grader_planted.pth").write_text(recorder("pth"))
    (site / "sitecustomize.py").write_text(recorder("sitecustomize"))
    done = grader("--solutions", "1", python=python, backend=backend)
    assert done.returncode == 0, done.stdout + done.stderr
    ran = {path.name: path.read_text() for path in markers.iterdir()}
    judge = [name for name, argv in ran.items() if "grader.py" in argv]
    assert {name.split("-")[0] for name in judge} == {"pth", "sitecustomize"}, ran  # live
    assert not [argv for argv in ran.values() if "worker/main.py" in argv], ran


def test_the_reuse_check_compares_what_decides_imports_item_by_item():
    """Each change to sys.meta_path, sys.path_hooks, sys.path or sys.path_importer_cache that keeps
    the list or dict itself changes the interpreter's state (grading.worker.portable._interpreter_state)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys
        import grading.worker.portable as worker
        before = worker._interpreter_state()
        finder = type("Finder", (), {"find_spec": staticmethod(lambda *a: None)})()
        changes = {
            "meta_path": (lambda: sys.meta_path.insert(0, finder), lambda: sys.meta_path.pop(0)),
            "path_hooks": (lambda: sys.path_hooks.insert(0, finder), lambda: sys.path_hooks.pop(0)),
            "path": (lambda: sys.path.append("/nowhere"), lambda: sys.path.pop()),
            "importer cache": (lambda: sys.path_importer_cache.__setitem__(sys.path[1], finder),
                               None),
        }
        for name, (change, undo) in changes.items():
            saved = dict(sys.path_importer_cache)
            change()
            print(name, worker._interpreter_state() != before)
            undo() if undo else (sys.path_importer_cache.clear(),
                                 sys.path_importer_cache.update(saved))
        print("undone", worker._interpreter_state() == before)
    """)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert dict(line.rsplit(" ", 1) for line in done.stdout.splitlines()) == {
        "meta_path": "True", "path_hooks": "True", "path": "True", "importer cache": "True",
        "undone": "True"}, done.stdout


def test_the_reuse_check_sees_the_graders_own_classes_patched():
    """An exercise that patches a method of the worker's own classes (Executor.run answers the
    judge) changes the interpreter's state: the portable worker is not lent to the next one."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import grading.worker.portable as worker
        from grading.worker import executor
        before = worker._interpreter_state()
        run = executor.Executor.run
        executor.Executor.run = lambda self, request: run(self, request)
        print("patched", worker._interpreter_state() != before)
        executor.Executor.run = run
        print("undone", worker._interpreter_state() == before)
    """)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["patched", "True", "undone", "True"], done.stdout


@pytest.mark.timeout(120)
def test_a_finder_left_by_one_exercise_does_not_decide_the_next(tmp_path):
    materialise_files(SUBMISSIONS / "attack-ex5-portable_meta_path", tmp_path / "attacker")
    done = grader("--submission", tmp_path / "attacker", "--json", tmp_path / "out.json")
    assert done.returncode == 1, done.stdout + done.stderr
    scores = {}
    for test in json.loads((tmp_path / "out.json").read_text())["tests"]:
        exercise = test["name"].split(" · ")[0]
        scores[exercise] = scores.get(exercise, 0) + test["score"]
    assert scores["ex6_head"] == 25, scores  # imported as it is on disk


def test_torchs_file_entry_points_are_unreachable_behind_the_walls(tmp_path):
    """After audit.put_up, each of torch's ways to a file refuses (EPERM, as seccomp), those
    already loaded and those reached by name; numpy's reach files through Python's open, which the
    hook refuses (EACCES, as Landlock); the rest of torch works as before."""
    solution = ROOT / "solutions" / "ex5_causal_mask.py"
    package = tmp_path / "submission"
    package.mkdir()
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import os, sys, warnings
        import numpy as np, torch
        warnings.simplefilter("ignore")
        scripted = torch.jit.script(torch.nn.Linear(2, 2))
        from grading.walls import audit
        audit.put_up({str(package)!r})
        path, out, size = {str(solution)!r}, {str(tmp_path / "out")!r}, 100
        source = "def f(x: Tensor):\\n    torch.save(x, " + repr(out) + ")\\n    return x\\n"
        attempts = {{
            "torch.from_file": lambda: torch.from_file(path, False, size),
            "torch.from_file shared": lambda: torch.from_file(out, True, size),
            "VariableFunctions": lambda: torch._C._VariableFunctions.from_file(path, False, size),
            "UntypedStorage.from_file": lambda: torch.UntypedStorage.from_file(path, False, size),
            "StorageBase.from_file": lambda: torch._C.StorageBase.from_file(path, False, size),
            "TypedStorage.from_file": lambda: torch.FloatStorage.from_file(path, False, size),
            "aten.from_file": lambda: torch.ops.aten.from_file(path, False, size),
            "boxed from_file": lambda: torch._C._dispatch_call_boxed(
                torch._C._dispatch_find_schema_or_throw("aten::from_file", ""), path, False, size),
            "torch.save": lambda: torch.save(torch.ones(2), out),
            "torch.load": lambda: torch.load(path),
            "open_zipfile_writer": lambda: torch.serialization._open_zipfile_writer(out),
            "PyTorchFileReader": lambda: torch._C.PyTorchFileReader(path),
            "share_memory_": lambda: torch.ones(2).share_memory_(),
            "_share_filename_cpu_": lambda: torch.ones(2).untyped_storage()._share_filename_cpu_(),
            "_share_fd_cpu_": lambda: torch._C.StorageBase._share_fd_cpu_(
                torch.ones(2).untyped_storage()),
            "jit.save": lambda: torch.jit.save(scripted, out),
            "ScriptModule.save": lambda: scripted.save(out),
            "jit.load": lambda: torch.jit.load(path),
            "lite interpreter": lambda: torch._C._load_for_lite_interpreter(path),
            "CompilationUnit": lambda: torch.jit.CompilationUnit(source),
            "a CompilationUnit held": lambda: torch.jit._state._python_cu.define(source, None),
            "np.fromfile": lambda: np.fromfile(path),
            "np.tofile": lambda: np.ones(2).tofile(out),
            "np.memmap": lambda: np.memmap(path, mode="r"),
            "np.load": lambda: np.load(path),
            "np.save": lambda: np.save(out, np.ones(2)),
            "still: a layer": lambda: torch.nn.Linear(2, 2)(torch.ones(2)),
            "still: torch.ops": lambda: torch.ops.aten.mul.Tensor(torch.ones(2), 2),
        }}
        for name, attempt in attempts.items():
            try:
                attempt()
            except PermissionError as error:
                print(name, error.errno)
            except Exception as error:
                print(name, type(error).__name__)
            else:
                print(name, "ran")
        print("wrote", os.path.exists(out))
    """)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    eperm, eacces = "1", "13"
    assert results == {**{name: eperm for name in results if not name.startswith(("np.", "still",
                                                                                 "wrote"))},
                       **{name: eacces for name in results if name.startswith("np.")},
                       "still: a layer": "ran", "still: torch.ops": "ran", "wrote": "False"}
    assert len(results) == 29
