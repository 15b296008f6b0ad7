"""The portable backend (grading/backends/portable.py), tested on Linux.

The whole fixture set is graded a second time with GRADER_BACKEND=portable (conftest's
start_portable_batch), where every Linux-only call raises (grading/walls/audit.py's tripwire):
every fixture must get the same points, statuses, messages and diagnosis as in the Linux backend.
The walls of the portable backend must refuse what the kernel's walls refuse, with the kernel's
own errors, and the tripwire must really trip.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from conftest import fingerprint

pytestmark = pytest.mark.full  # the grader's own machinery: --check --full

ROOT = Path(__file__).resolve().parents[2]


def comparable(test):
    """A test's result as both backends must give it; a process id in a path may differ."""
    message = json.dumps(test["message"], ensure_ascii=False)
    return (test["id"], test["status"], test["score"], re.sub(r"/proc/\d+", "/proc/N", message))


def test_every_fixture_gets_the_same_grade_in_both_backends(graded, portable_graded):
    differences, compared = [], 0
    for name, portable in sorted(portable_graded.items()):
        if name not in graded or name.startswith("alone-"):
            continue  # a shared submission: its fixtures are compared one by one
        linux = graded[name]
        for exercise, result in portable["exercises"].items():
            if exercise not in linux["exercises"]:
                continue
            other = linux["exercises"][exercise]
            compared += 1
            for mine, theirs in zip(result["tests"], other["tests"], strict=True):
                if comparable(mine) != comparable(theirs):
                    differences.append(f"{name} {exercise} {mine['id']}: portable "
                                       f"{comparable(mine)[1:]} ≠ linux {comparable(theirs)[1:]}")
            if (result["diagnosis"] or {}).get("key") != (other["diagnosis"] or {}).get("key"):
                differences.append(f"{name} {exercise}: diagnosis {result['diagnosis']} ≠ "
                                   f"{other['diagnosis']}")
    assert compared > 100, f"only {compared} exercises compared"
    assert not differences, "\n".join(differences[:30])


def test_the_portable_batch_leaves_the_repository_as_it_was(portable_graded, portable_repository):
    copy, before = portable_repository
    assert fingerprint(copy) == before


def run_python(code, **env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_the_tripwire_makes_every_linux_only_call_raise():
    done = run_python("""
        import ctypes, os, socket, sys
        from grading.walls import audit
        audit.install_tripwire()
        def attempt(name, call):
            try:
                call()
            except audit.LinuxOnlyCall:
                print(name, "tripped")
            except Exception as error:
                print(name, type(error).__name__)
            else:
                print(name, "ran")
        attempt("fork", os.fork)
        attempt("proc", lambda: open("/proc/self/stat").read())
        attempt("listdir proc", lambda: os.listdir("/proc"))
        attempt("seqpacket", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
        attempt("prctl", lambda: ctypes.CDLL(None).prctl)
        attempt("landlock", lambda: __import__("grading.walls.kernel").sandbox.landlock_abi())
        attempt("stream pair", lambda: socket.socketpair())
        attempt("read a file", lambda: open(sys.executable, "rb").close())
    """)
    assert done.returncode == 0, done.stderr
    results = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    assert results == {"fork": "tripped", "proc": "tripped", "listdir proc": "tripped",
                       "seqpacket": "tripped", "prctl": "tripped", "landlock": "tripped",
                       "stream pair": "ran", "read a file": "ran"}


def test_the_judge_puts_the_tripwire_up_when_portable_is_forced():
    """While its command runs (here one that tries to fork); once it is done, the tripwire is
    down again (a caller in the same process goes on: see selftest/units/test_tripwire.py)."""
    code = """
        import os, grader
        from grading.commands import cli

        def fork(args, argv):
            try:
                pid = os.fork()
            except Exception as error:
                print("refused:", type(error).__name__)
            else:
                if pid == 0:
                    os._exit(0)
                os.waitpid(pid, 0)
                print("forked")
            return 0
        cli.command = fork
        grader.main(["hint", "1"])
    """
    forced = run_python(code, GRADER_BACKEND="portable")
    assert "refused: LinuxOnlyCall" in forced.stdout, forced.stdout + forced.stderr
    chosen = run_python(code, GRADER_BACKEND="auto")
    assert "forked" in chosen.stdout, chosen.stdout + chosen.stderr


def test_the_portable_walls_refuse_with_the_kernels_errors():
    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "submission"
        package.mkdir()
        (package / "ex1_embedding.py").write_text("x = 1\n")
        done = run_python(f"""
            import ctypes, os, socket, subprocess, sys
            import _posixsubprocess, _posixshmem, gc, sqlite3  # loaded before the walls
            from grading.walls import audit
            audit.put_up({str(package)!r})
            def attempt(name, call):
                try:
                    call()
                except PermissionError as error:
                    print(name, error.errno)
                except Exception as error:
                    print(name, type(error).__name__)
                else:
                    print(name, "ran")
            attempt("read own", lambda: open({str(package / "ex1_embedding.py")!r}).read())
            attempt("list own", lambda: os.listdir({str(package)!r}))
            attempt("read python", lambda: open(os.__file__).read())
            attempt("read outside", lambda: open({str(ROOT / "grader.py")!r}).read())
            attempt("list outside", lambda: os.listdir({str(ROOT)!r}))
            attempt("write own", lambda: open({str(package / "new.py")!r}, "w"))
            attempt("write tmp", lambda: open({str(Path(tmp) / "x")!r}, "w"))
            attempt("remove", lambda: os.remove({str(package / "ex1_embedding.py")!r}))
            attempt("process", lambda: subprocess.run(["true"]))
            attempt("system", lambda: os.system("true"))
            attempt("fork", os.fork)
            attempt("socket", lambda: socket.socket())
            attempt("signal", lambda: os.kill(os.getppid(), 0))
            attempt("own signal", lambda: os.kill(os.getpid(), 0))
            attempt("ctypes", lambda: ctypes.CDLL(None).getpid)
            attempt("fork_exec", lambda: _posixsubprocess.fork_exec(*[None] * 23))
            attempt("shm_open", lambda: _posixshmem.shm_open("/grader-test", os.O_CREAT | os.O_RDWR))
            attempt("gc objects", gc.get_objects)
            attempt("sqlite", lambda: sqlite3.connect({str(Path(tmp) / "db")!r}))
            attempt("import dbm", lambda: __import__("dbm"))
            heard = []
            sys.addaudithook(lambda event, args: heard.append(event))  # quietly not added
            open(os.devnull).close()
            print("audit hook", "added" if heard else "refused")
        """)
    assert done.returncode == 0, done.stderr
    results = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    eacces, eperm = "13", "1"
    assert results == {
        "read own": "ran", "list own": "ran", "read python": "ran",
        "read outside": eacces, "list outside": eacces, "write own": eacces,
        "write tmp": eacces, "remove": eperm, "process": eperm, "system": eperm, "fork": eperm,
        "socket": eperm, "signal": eperm, "own signal": "ran", "ctypes": eperm,
        "fork_exec": eperm, "shm_open": eperm, "gc objects": eperm, "sqlite": eperm,
        "import dbm": eperm,
        "audit hook": "refused"}


def test_an_unknown_backend_is_refused_with_a_clear_message():
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "1"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GRADER_BACKEND": "docker"})
    assert done.returncode == 2
    assert "GRADER_BACKEND='docker': choose one of auto, linux, portable" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_backends_start_before_the_judge_imports_torch():
    """grader.py starts the zygote or the first portable worker first, so that it imports torch
    while the judge does: the modules that choose and start a backend must not import torch."""
    done = run_python("""
        import sys
        import grading.backends.portable, grading.backends.zygote, grading.walls.audit
        print(sorted(m for m in ("torch", "numpy", "pytest") if m in sys.modules))
    """)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
