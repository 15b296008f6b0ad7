"""grader.py as a learner and a CI meet it: exit codes, one-line errors, the report, the JSON."""
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

import course
from conftest import ROOT, copy_repository, early_folder, early_run, run_grader

pytestmark = pytest.mark.full  # the grader's own machinery: --check --full


@pytest.mark.long_run  # reads a run of long_runs.py
def test_untouched_stubs_report_zero_and_point_to_ex1():
    done = early_run("stubs")  # python grader.py
    assert done.returncode == 1, done.stderr
    assert f"Total 0/{course.TOTAL}" in done.stdout
    assert "Next: ex1_embedding" in done.stdout
    assert "not started" in done.stdout


@pytest.mark.long_run  # reads a run of long_runs.py
def test_chinese_report_results_json_and_a_pass_mark():
    done = early_run("zh")  # mistake ex5 mask_with_zero, exercise 5, --pass-mark 5, in Chinese
    results = json.loads((early_folder() / "zh.json").read_text())
    assert 5 <= results["score"] < course.BY_NAME["ex5_causal_mask"].points
    assert done.returncode == 0, done.stdout + done.stderr  # below full marks, above the mark
    assert f"总分 {results['score']:g}/{course.BY_NAME['ex5_causal_mask'].points}" in done.stdout and "可能的原因" in done.stdout
    assert results["execution_time"] > 0 and sum(t["max_score"] for t in results["tests"]) == course.BY_NAME["ex5_causal_mask"].points
    assert results["tests"] and all(t["name"].startswith("ex5_causal_mask · ")
                                    for t in results["tests"])
    assert all({"name", "number", "score", "max_score", "status", "output", "visibility"} <= set(t)
               for t in results["tests"])


def one_line_error(done):
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def test_bad_exercise_is_a_one_line_error():
    assert "there is no exercise '9'" in one_line_error(run_grader("9"))


def test_unknown_option_is_a_one_line_error():
    assert "unrecognized arguments" in one_line_error(run_grader("--bogus"))


def test_full_without_check_is_a_one_line_error():
    assert "--full goes with --check" in one_line_error(run_grader("--full"))


def test_unwritable_results_path_is_a_one_line_error(tmp_path):
    assert "does not exist" in one_line_error(run_grader("--json", tmp_path / "no" / "r.json"))


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="a folder where no file can be made")
def test_a_results_path_where_no_file_can_be_made_is_refused_before_grading(tmp_path):
    """Issue 35: a folder that passes os.access (root's /proc, a read-only mount) but takes no
    file: a traceback after the whole batch was graded. Now refused at once, in the learner's
    language, for every results file."""
    for args in (("--solutions", "1", "--json", "/proc/r.json"),
                 ("--batch", str(ROOT / "solutions"), "--csv", "/proc/g.csv"),
                 ("--batch", str(ROOT / "solutions"), "--csv", tmp_path / "g.csv",
                  "--report", "/proc/class.md")):
        assert "cannot be written (no file can be made there)" in one_line_error(run_grader(*args))
        assert "写不进去" in one_line_error(run_grader(*args, lang="zh"))


def test_missing_submission_folder_is_a_one_line_error(tmp_path):
    assert "is not a folder" in one_line_error(run_grader("--submission", tmp_path / "none"))


def test_hint_levels_then_a_clear_end():
    first = run_grader("hint", "5")
    assert first.returncode == 0 and "Hint 1/2 for ex5_causal_mask" in first.stdout
    assert "python grader.py hint 5 2" in first.stdout
    last = run_grader("hint", "ex5", "2", lang="zh")
    assert last.returncode == 0 and "提示 2/2" in last.stdout and "最后一级" in last.stdout
    assert "hint levels 1 to 2" in one_line_error(run_grader("hint", "5", "3"))


def test_hint_remembers_only_when_asked():
    from grading.commands.hints import MEMORY
    kept = MEMORY.read_bytes() if MEMORY.exists() else None
    try:
        MEMORY.unlink(missing_ok=True)
        assert "Hint 1/2" in run_grader("hint", "3").stdout
        assert not MEMORY.exists(), "a plain `hint` must write nothing"
        assert "Hint 1/2" in run_grader("hint", "3", "--remember").stdout
        assert "Hint 2/2" in run_grader("hint", "3", "--remember").stdout
    finally:
        MEMORY.unlink(missing_ok=True)
        if kept is not None:
            MEMORY.write_bytes(kept)


def test_watch_regrades_every_saved_file_and_quits_on_ctrl_c(tmp_path):
    import shutil
    import signal
    import subprocess
    import sys
    import threading
    import time

    from conftest import ROOT
    folder = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises", folder)
    shutil.copy(ROOT / "solutions" / "ex1_embedding.py", folder / "ex1_embedding.py")
    watcher = subprocess.Popen([sys.executable, str(ROOT / "grader.py"), "--submission", folder,
                                "--watch", "--lang", "en"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen = []
    reader = threading.Thread(target=lambda: seen.extend(iter(watcher.stdout.readline, "")))
    reader.start()

    def wait_for(count, limit=60):  # the screens shown so far, once there are `count` of them
        deadline = time.monotonic() + limit
        while "".join(seen).count("Watching") < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return "".join(seen).count("Watching")

    try:
        assert wait_for(1) == 1, "".join(seen)
        time.sleep(0.5)  # a save after the watcher took its snapshot
        # two files saved within one poll (Save All, git checkout): one fixed, one broken (the
        # newer), and both are regraded; should the two saves fall into two polls, the last
        # screen says the same
        shutil.copy(ROOT / "solutions" / "ex3_qkv.py", folder / "ex3_qkv.py")
        shutil.copy(ROOT / "exercises" / "ex1_embedding.py", folder / "ex1_embedding.py")
        deadline = time.monotonic() + 60
        while f"Total 15/{course.TOTAL}" not in "".join(seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        watcher.send_signal(signal.SIGINT)
        err = watcher.communicate(timeout=60)[1]  # a loaded machine (a CI runner) can be slow
    finally:
        watcher.kill()
        reader.join(timeout=5)
    assert watcher.returncode == 0 and "Traceback" not in err, err
    screens = "".join(seen).split("\033[2J\033[H")[1:]
    assert 2 <= len(screens) <= 3, screens
    assert f"Total 10/{course.TOTAL}" in screens[0] and f"Total 15/{course.TOTAL}" in screens[-1], screens
    assert "· ex1_embedding" in screens[-1] and "✓ ex3_qkv" in screens[-1]


def test_watch_regrades_every_file_changed_within_one_poll(tmp_path, monkeypatch):
    """Several saves between two polls, in any order (a file fixed, others broken, one rewritten
    with its old mtime kept, as `cp -p` does): every changed exercise is regraded, in one go; a
    save made while grading is regraded at the next poll. The watcher's loop alone, with grading
    and the screen stood in for, so that the saves land within one poll for certain."""
    from grading.commands import watch
    from grading.judge import session
    from grading.output import report

    for name in session.EXERCISES:
        (tmp_path / f"{name}.py").write_text("raise NotImplementedError\n")

    def save(name, text, keep_mtime=False):
        path = tmp_path / f"{name}.py"
        before = path.stat()
        path.write_text(text)
        if keep_mtime:
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    screens, graded = [], []

    def show(result, command, lang, watching=False):
        screens.append(watching)
        if len(screens) == 1:  # after the watcher's first look at the files, before its poll
            save("ex5_causal_mask", "weights = scores  # broken\n")
            save("ex3_qkv", "q = k = v = None  # broken too, saved later\n")
            save("ex1_embedding", "fixed = True\n", keep_mtime=True)  # older than both
        return ""

    def grade(zygote, folder, seed, exercises, call_timeout, split=False):
        graded.append(list(exercises))
        if len(graded) == 1:
            save("ex6_head", "saved while ex1, ex3 and ex5 were graded\n")
        elif len(graded) == 2:
            raise KeyboardInterrupt  # how watching ends
        return session.Grade(folder, seed, [session.ExerciseGrade(name, []) for name in exercises],
                             0.1)

    monkeypatch.setattr(session, "grade", grade)
    monkeypatch.setattr(report, "text", show)
    result = session.Grade(tmp_path, 1, [session.ExerciseGrade(name, [])
                                         for name in session.EXERCISES], 0.1)
    with pytest.raises(KeyboardInterrupt):
        watch.watch(None, tmp_path, 1, 1.0, result, "python grader.py", "en", poll=0.05)
    assert graded == [["ex1_embedding", "ex3_qkv", "ex5_causal_mask"], ["ex6_head"]], graded
    assert screens == [True, True]


def test_a_console_that_cannot_show_the_text_or_a_closed_pipe_breaks_nothing():
    """Any console (ASCII, GBK, cp1252) gets the text with what it cannot show replaced; a reader
    that goes away early (python grader.py | head) ends the output quietly, status unchanged."""
    for encoding in ("ascii", "gbk", "cp1252"):
        done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "hint", "5", "--lang",
                               "zh"], capture_output=True, timeout=60,
                              env={**os.environ, "PYTHONIOENCODING": encoding})
        assert done.returncode == 0 and done.stderr == b"", (encoding, done.stderr)
        assert "python grader.py hint 5 2" in done.stdout.decode(encoding)
    reader = subprocess.Popen([sys.executable, str(ROOT / "grader.py"), "hint", "5"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()  # gone before anything is written
    assert reader.wait(timeout=60) == 0 and reader.stderr.read() == b""


def test_symbols_a_console_cannot_show_get_an_ascii_stand_in():
    import io

    from grading.output.terminal import PipeSafe
    shown = {}
    for encoding in ("ascii", "cp1252", "utf-8"):
        raw = io.BytesIO()
        stream = PipeSafe(io.TextIOWrapper(raw, encoding=encoding))
        stream.write("✓ ex1 · █░ → 先")
        stream.flush()
        shown[encoding] = raw.getvalue().decode(encoding)
    assert shown == {"ascii": "+ ex1 - #. -> ?", "cp1252": "+ ex1 · #. -> ?",
                     "utf-8": "✓ ex1 · █░ → 先"}


BROKEN_SOLUTIONS = {  # name: (file, text, replacement)
    "off by one": ("ex2_averaging.py", "tril.sum(dim=1, keepdim=True)",
                   "(tril.sum(dim=1, keepdim=True) + 1)"),
    "scaling removed": ("ex6_head.py", " * head_size ** -0.5  # (B, T, T)", "  # (B, T, T)"),
    "syntax error": ("ex3_qkv.py", "q = self.query(x)  #", "q = self.query(x  #"),
    "import error": ("ex4_scaling.py", "import torch\n", "import torch\nimport no_such_module\n"),
}


@pytest.mark.timeout(400)
def test_check_names_a_broken_solution_on_its_first_line(tmp_path):
    """`--check` with a broken solution: a banner that does not read like a pass, then at once a
    line naming that solution's file and what is wrong (a failing check and what it got, or the
    known mistake that no longer applies to it); it stops there, exit status 1, with no pytest
    INTERNALERROR. pytest over selftest/ on its own stops with one message too."""
    started = {}
    for name, (file, text, replacement) in BROKEN_SOLUTIONS.items():
        copy = copy_repository(tmp_path / name.replace(" ", "-"))
        shutil.copytree(ROOT / "selftest", copy / "selftest",
                        ignore=shutil.ignore_patterns("__pycache__"))
        solution = copy / "solutions" / file
        assert text in solution.read_text()
        solution.write_text(solution.read_text().replace(text, replacement))
        started[name] = copy, subprocess.Popen(
            [sys.executable, "grader.py", "--check"], cwd=copy, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    outputs = {}
    for name, (copy, run) in started.items():
        output = outputs[name] = run.communicate(timeout=300)[0]
        lines = output.splitlines()
        assert run.returncode == 1, (name, output)
        assert lines[0].startswith("python grader.py --check: first the solutions must get full marks")
        assert "✓" not in lines[0]
        file = BROKEN_SOLUTIONS[name][0]
        assert lines[1].startswith(f"✗ solutions/{file}"), (name, output)
        assert "--check stopped here" in output and "INTERNALERROR" not in output
        assert "update the fixture" not in output and "passed" not in output
    assert "SyntaxError" in outputs["syntax error"].splitlines()[1]
    assert "No module named 'no_such_module'" in outputs["import error"].splitlines()[1]
    assert "“averaging_matrix: every row sums to 1” fails: row 0" in \
        outputs["off by one"].splitlines()[1]
    copy = started["scaling removed"][0]
    alone = subprocess.run([sys.executable, "-m", "pytest", "selftest", "-p", "no:cacheprovider",
                            "-q"], cwd=copy, capture_output=True, text=True, timeout=120)
    assert alone.returncode == pytest.ExitCode.USAGE_ERROR, alone.stdout + alone.stderr
    assert "selftest: solutions/ex6_head.py no longer holds" in alone.stdout + alone.stderr
    assert "INTERNALERROR" not in alone.stdout + alone.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux backend's hand-over")
def test_a_grading_run_imports_torch_once():
    """grader.py hands its run over to a judge forked from the zygote once torch is imported
    there (backends/zygote.HandedOver): the process started as grader.py imports no torch (its
    -X importtime lines name none; the zygote and the judge log no imports), and the grade holds."""
    done = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "grader.py"),
                           "--solutions", "1", "--lang", "en"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")]
    assert "grading.commands.cli" in imported  # the log is this process's
    assert "torch" not in imported and "pytest" not in imported, done.stderr[-2000:]
    assert "10/10" in done.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal")
def test_ctrl_c_at_a_terminal_reaches_the_judge_once(tmp_path):
    """Ctrl-C at a terminal goes to the whole foreground group (grader.py, the zygote, the
    judge): the judge stops watching, as asked, once; grader.py passes on only a SIGINT sent to
    it alone (test_watch_regrades_the_exercise_being_edited sends one)."""
    import pty
    folder = tmp_path / "exercises"
    shutil.copytree(ROOT / "solutions", folder)
    pid, terminal = pty.fork()
    if pid == 0:  # the child: a session whose controlling terminal is the pty
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "grader.py", "--submission", str(folder),
                                  "--watch", "--lang", "en"])
    seen = b""
    try:
        deadline = time.monotonic() + 90
        while b"Watching" not in seen and time.monotonic() < deadline:
            if select.select([terminal], [], [], 0.5)[0]:
                seen += os.read(terminal, 1 << 16)
        assert b"Watching" in seen, seen.decode(errors="replace")
        os.write(terminal, b"\x03")  # Ctrl-C, as the terminal's line discipline takes it
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ended, status = os.waitpid(pid, os.WNOHANG)
            if ended:
                break
            if select.select([terminal], [], [], 0.2)[0]:
                try:
                    seen += os.read(terminal, 1 << 16)
                except OSError:
                    pass
        else:
            raise AssertionError("still watching 30 s after Ctrl-C")
        pid = None
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(terminal)
    assert os.waitstatus_to_exitcode(status) == 0, seen.decode(errors="replace")
    assert b"Traceback" not in seen and b"interrupted" not in seen, seen.decode(errors="replace")
