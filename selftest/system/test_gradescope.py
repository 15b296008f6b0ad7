"""The Gradescope autograder bundle (grading/commands/gradescope.py): its layout, and run_autograder in a
fake /autograder (AUTOGRADER_ROOT) on three submissions graded at once: the stubs (0), the
solutions (100), and the solutions without ex6_head.py but with files to ignore (100 − ex6)."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import course
from grading.commands import gradescope
from grading.config import EXERCISES

pytestmark = pytest.mark.full  # the grader's own machinery: --check --full

ROOT = Path(__file__).resolve().parents[2]
LAST = EXERCISES[-1]  # ex6_head, the exercise the partial submission leaves out
MISSING_MESSAGE = f"{LAST}.py is missing from the submission"  # the grader's own words
RUN_TIMEOUT = 300  # seconds for one run_autograder; --check grades its batch meanwhile


MISTAKEN = [("ex3_qkv.py", "return q, k, v", "return k, q, v"),
            ("ex4_scaling.py", "q @ k.transpose(-2, -1)", "k @ q.transpose(-2, -1)"),
            ("ex2_averaging.py", "tril.sum(dim=1, keepdim=True)", "tril.sum(dim=0, keepdim=True)")]


def mode(info):
    return (info.external_attr >> 16) & 0o777


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    assert gradescope.main([str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def source(bundle, tmp_path_factory):
    """The bundle unpacked as Gradescope does (into /autograder/source), permissions kept."""
    target = tmp_path_factory.mktemp("unpacked") / "source"
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            archive.extract(info, target)
            os.chmod(target / info.filename, mode(info))
    return target


def lay_out(root, source, files):
    """A fake $AUTOGRADER_ROOT: the unpacked bundle in source/, `files` ({path: bytes}) in
    submission/."""
    shutil.copytree(source, root / "source")
    for name, data in files.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_bytes(data)
    return root


@pytest.fixture(scope="module")
def gradings(source, tmp_path_factory):
    """{name: (CompletedProcess, results.json)} for the three submissions, graded at once."""
    base = tmp_path_factory.mktemp("autograder")
    stubs = {f"exercises/{p.name}": p.read_bytes() for p in (ROOT / "exercises").glob("*.py")}
    solutions = {p.name: p.read_bytes() for p in (ROOT / "solutions").glob("ex*.py")}
    partial = {name: data for name, data in solutions.items() if name != f"{LAST}.py"}
    partial["notes.txt"] = b"my notes\n"
    # Deeper than the solution of the same name: ignored, else ex1 would score 0.
    partial[f"old/{EXERCISES[0]}.py"] = stubs[f"exercises/{EXERCISES[0]}.py"]
    # Slips that pass every public check and fail only hidden ones: (k, q, v) for (q, k, v) in
    # ex3, k @ qᵀ in ex4; and ex2 normalised by columns, which fails public checks too.
    mistaken = dict(solutions)
    for name, old, new in MISTAKEN:
        assert old in mistaken[name].decode(), (name, old)
        mistaken[name] = mistaken[name].decode().replace(old, new).encode()
    submissions = {"stubs": ({}, stubs), "solutions": ({}, solutions),
                   "partial": ({"GRADER_LANG": "en"}, partial),
                   "mistaken": ({"GRADER_LANG": "en"}, mistaken)}
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("GRADER_LANG", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    started = {}
    for name, (extra, files) in submissions.items():
        root = lay_out(base / name, source, files)
        started[name] = root, subprocess.Popen(
            ["bash", str(root / "source" / "run_autograder")], cwd=root,
            env={**environment, **extra, "AUTOGRADER_ROOT": str(root),
                 "AUTOGRADER_PYTHON": sys.executable},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = {}
    for name, (root, process) in started.items():
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
        run = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        results = root / "results" / "results.json"
        assert results.is_file(), f"{name}: no results.json\n{stdout}\n{stderr}"
        done[name] = run, json.loads(results.read_text(encoding="utf-8"))
    return done


def test_the_zip_holds_setup_run_autograder_and_the_grader(bundle):
    with zipfile.ZipFile(bundle) as archive:
        infos = {info.filename: info for info in archive.infolist()}
        for name, info in infos.items():
            if name.startswith(f"{gradescope.FOLDER}/"):
                relative = name[len(gradescope.FOLDER) + 1:]
                assert archive.read(info) == (ROOT / relative).read_bytes(), name
    assert {"setup.sh", "run_autograder"} <= set(infos)
    top = {name.split("/")[0] for name in infos}
    assert top == {"setup.sh", "run_autograder", gradescope.SETTINGS, gradescope.FOLDER}
    with zipfile.ZipFile(bundle) as archive:
        settings = json.loads(archive.read(gradescope.SETTINGS))
    assert settings == {"lang": "zh", "hidden_visibility": "after_published"}  # the defaults
    shipped = {name[len(gradescope.FOLDER) + 1:] for name in infos if "/" in name}
    expected = {"grader.py", "course.py", "pytest.ini", "requirements.txt"} | {
        p.relative_to(ROOT).as_posix() for folder in ("grading", "tests", "solutions", "exercises")
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert shipped == expected
    assert not any(part in ("selftest", ".git", "__pycache__") for name in shipped
                   for part in name.split("/"))


def test_the_scripts_are_executable_bash(bundle, source):
    with zipfile.ZipFile(bundle) as archive:
        for name in ("setup.sh", "run_autograder"):
            assert mode(archive.getinfo(name)) & 0o111 == 0o111, name
            assert os.access(source / name, os.X_OK)
            assert (source / name).read_text().startswith("#!/usr/bin/env bash\n")
            syntax = subprocess.run(["bash", "-n", str(source / name)], check=False,
                                    capture_output=True, text=True, timeout=30)
            assert syntax.returncode == 0, f"{name}: {syntax.stderr}"
    setup = (source / "setup.sh").read_text()
    assert "set -euo pipefail" in setup and "apt-get install" in setup
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in setup
    assert f'"$here/{gradescope.FOLDER}/requirements.txt"' in setup
    assert (source / gradescope.FOLDER / "requirements.txt").is_file()


def test_the_stubs_score_0_in_chinese_from_a_folder(gradings):
    run, results = gradings["stubs"]
    assert run.returncode == 0, run.stderr
    assert results["score"] == 0 and results["tests"]
    assert results["extra_data"]["graded"] == [f"exercises/{name}.py" for name in EXERCISES]
    assert results["extra_data"]["missing"] == []
    assert results["extra_data"]["ignored"] == ["exercises/__init__.py"]
    assert "已忽略的文件（不打分）：exercises/__init__.py" in results["output"]  # zh by default


def test_the_solutions_score_100(gradings):
    run, results = gradings["solutions"]
    assert run.returncode == 0, run.stderr
    assert results["score"] == course.TOTAL
    assert all(test["status"] == "passed" for test in results["tests"])
    assert results["extra_data"]["missing"] == [] and results["extra_data"]["ignored"] == []
    # before publication the output gives the public checks' points alone (seal)
    public = sum(t["max_score"] for t in results["tests"] if "hidden" not in t["tags"])
    assert f"{public:g}/{public:g}（公开检查" in results["output"], results["output"]
    assert f"{course.TOTAL}/{course.TOTAL}" not in results["output"]
    assert "缺少" not in results["output"]


def test_a_missing_file_scores_0_and_extra_files_are_ignored(gradings):
    run, results = gradings["partial"]
    assert run.returncode == 0, run.stderr
    last = [test for test in gradings["solutions"][1]["tests"]
            if test["name"].startswith(f"{LAST} · ")]
    assert last
    assert results["score"] == course.TOTAL - sum(test["max_score"] for test in last)
    missing = [test for test in results["tests"] if test["name"].startswith(f"{LAST} · ")]
    assert all(test["score"] == 0 for test in missing)
    assert any(MISSING_MESSAGE in test["output"] for test in missing)
    assert results["extra_data"]["missing"] == [f"{LAST}.py"]
    assert results["extra_data"]["ignored"] == ["notes.txt", f"old/{EXERCISES[0]}.py"]
    lines = results["output"].splitlines()
    assert f"Missing files (those exercises score 0): {LAST}.py" in lines
    assert f"Ignored files (not graded): notes.txt, old/{EXERCISES[0]}.py" in lines


def test_the_shallowest_regular_file_of_a_name_is_graded(tmp_path):
    submission, target = tmp_path / "submission", tmp_path / "graded"
    first, second = (f"{name}.py" for name in EXERCISES[:2])
    files = {f"a/b/{first}": "deep", f"a/{first}": "shallow", f"b/{second}": "regular"}
    for name, text in files.items():
        (submission / name).parent.mkdir(parents=True, exist_ok=True)
        (submission / name).write_text(text)
    (submission / second).symlink_to(ROOT / "solutions" / second)  # never read through a link
    target.mkdir()
    graded, missing, ignored = gradescope.gather(submission, target)
    assert [p.as_posix() for p in graded] == [f"a/{first}", f"b/{second}"]
    assert missing == [f"{name}.py" for name in EXERCISES[2:]]
    assert [p.as_posix() for p in ignored] == [f"a/b/{first}", second]
    assert sorted(p.name for p in target.iterdir()) == [first, second]
    assert (target / first).read_text() == "shallow" and (target / second).read_text() == "regular"


def test_when_grading_cannot_run_the_learner_is_told_to_contact_the_staff(tmp_path, monkeypatch):
    """The grader's exit status 2 with no results.json, or with one in which no test erred, or no
    results.json at all: score 0, the course staff, the end of the grader's stderr."""
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "notes.txt").write_text("notes")
    results = tmp_path / "results" / "results.json"

    def fake_grade(folder, path, lang, environ, code):
        if code == 2:  # results.json, then status 2, with no test marked as erred
            path.write_text(json.dumps({"score": 100, "output": "100/100", "tests": []}))
        return code, "", f"the end of stderr {code}"

    for code in (2, 1):
        monkeypatch.setattr(gradescope, "grade", lambda *args, code=code: fake_grade(*args, code))
        assert gradescope.run(tmp_path, {"GRADER_LANG": "en"}) == 0
        data = json.loads(results.read_text(encoding="utf-8"))
        assert data["score"] == 0
        assert "contact the course staff" in data["output"]
        assert f"the end of stderr {code}" in data["output"]
        assert "Ignored files (not graded): notes.txt" in data["output"]


def test_a_check_that_errs_costs_that_check_not_the_submission(tmp_path, monkeypatch):
    """Defence in depth: when a test meets an error of the grader itself (grader.py writes
    results.json, then exits 2), the other exercises keep their points; the learner reads which
    check erred and that it is no problem of their code."""
    from grading.output.report import GRADING_ERROR_TAG
    (tmp_path / "submission").mkdir()
    results = tmp_path / "results" / "results.json"
    tests = [{"name": f"{name} · a check", "score": 0 if name == LAST else 5, "max_score": 5,
              "status": "failed" if name == LAST else "passed",
              "tags": ["public"] + ([GRADING_ERROR_TAG] if name == LAST else [])}
             for name in EXERCISES]

    def fake_grade(folder, path, lang, environ):
        path.write_text(json.dumps({"score": 5 * (len(EXERCISES) - 1),
                                    "output": "(the judge's report)", "tests": tests}))
        return 2, "", "a test erred"

    monkeypatch.setattr(gradescope, "grade", fake_grade)
    assert gradescope.run(tmp_path, {"GRADER_LANG": "en"}) == 0
    data = json.loads(results.read_text(encoding="utf-8"))
    shown = [{k: v for k, v in test.items() if k != "visibility"} for test in data["tests"]]
    assert data["score"] == 5 * (len(EXERCISES) - 1) and shown == tests  # (each visible or sealed, as the bundle says)
    assert "an error in the grader itself" in data["output"]
    assert f"{LAST} · a check" in data["output"] and "contact" not in data["output"]


def test_run_autograder_writes_results_even_when_python_cannot_start(source, tmp_path):
    root = lay_out(tmp_path, source, {})
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], check=False,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "AUTOGRADER_ROOT": str(root),
                               "AUTOGRADER_PYTHON": str(tmp_path / "no-python")})
    assert done.returncode != 0
    data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert data["score"] == 0 and "contact the course staff" in data["output"]


@pytest.mark.parametrize("name, problem", [
    ("autograder.tar", "does not end with .zip"),
    ("no-such-folder/autograder.zip", "does not exist"),
    ("folder.zip", "is a folder"),
])
def test_a_bad_zip_name_is_one_line_and_status_2(tmp_path, capsys, name, problem):
    (tmp_path / "folder.zip").mkdir()
    assert gradescope.main([str(tmp_path / name)]) == 2
    captured = capsys.readouterr()
    assert problem in captured.err and captured.err.count("\n") == 1 and captured.out == ""
    assert gradescope.main([]) == 2


def test_the_upload_is_explained(tmp_path, capsys):
    assert gradescope.main([str(tmp_path / "autograder.zip")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and str(tmp_path / "autograder.zip") in lines[0]
    assert "Configure Autograder" in lines[1]


def test_hidden_checks_wait_for_publication_and_no_visible_test_tells_them(gradings):
    """With the default bundle: every hidden check's test is after_published; the visible ones
    (the public checks) carry no comparison with the solution and no likely cause (found by such
    comparisons), even for slips that only the hidden checks catch."""
    run, results = gradings["mistaken"]
    assert run.returncode == 0, run.stderr
    tests = results["tests"]
    hidden = [t for t in tests if "hidden" in t["tags"]]
    visible = [t for t in tests if t["visibility"] == "visible"]
    assert hidden and all(t["visibility"] == "after_published" for t in hidden)
    assert visible and all(t["tags"] == ["public"] for t in visible)
    assert len(hidden) + len(visible) == len(tests)
    failed = {t["name"].split(" · ")[0] for t in hidden if t["status"] == "failed"}
    assert {"ex2_averaging", "ex3_qkv", "ex4_scaling"} <= failed, failed
    told = [t for t in hidden if "→" in t["output"]]
    assert {t["name"].split(" · ")[0] for t in told} >= {"ex3_qkv", "ex4_scaling"}, told
    for test in visible:
        assert "reference" not in test["output"].lower() and "→" not in test["output"], test
    assert all(t["status"] == "passed" for t in visible if t["name"].startswith(("ex3", "ex4")))
    assert "reference" not in results["output"].lower()
    # The top-level output gives the public checks' points alone: the total with the hidden
    # checks in it would let a student probe them by resubmitting.
    public = sum(t["score"] for t in visible)
    public_max = sum(t["max_score"] for t in visible)
    assert f"{public:g}/{public_max:g} (public checks" in results["output"], results["output"]
    assert f"{results['score']:g}/" not in results["output"].replace(f"{public:g}/", "")


def test_the_language_and_the_hidden_visibility_are_chosen_when_the_bundle_is_made(
        tmp_path, monkeypatch):
    """`gradescope OUT.zip --lang en --hidden-visibility after_due_date` writes settings.json;
    run_autograder's grading then reports in English and seals the hidden tests until the due
    date, with no environment variable set (Gradescope sets none)."""
    out = tmp_path / "autograder.zip"
    assert gradescope.main([str(out), "--lang", "en", "--hidden-visibility", "after_due_date"]) == 0
    with zipfile.ZipFile(out) as archive:
        settings = json.loads(archive.read(gradescope.SETTINGS))
    assert settings == {"lang": "en", "hidden_visibility": "after_due_date"}
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / gradescope.SETTINGS).write_text(json.dumps(settings))
    (tmp_path / "submission").mkdir()
    asked = []

    def fake_grade(folder, path, lang, environ):
        asked.append(lang)
        path.write_text(json.dumps({"score": 3, "output": "3/100", "tests": [
            {"name": "ex4_scaling · shape", "tags": ["public"], "visibility": "visible",
             "output": ""},
            {"name": "ex4_scaling · matches", "tags": ["hidden"], "visibility": "visible",
             "output": "scores[0, 1, 2] is 0.5, the reference's 0.25"}]}))
        return 1, "", ""

    monkeypatch.setattr(gradescope, "grade", fake_grade)
    assert gradescope.run(tmp_path, {}) == 0
    data = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert asked == ["en"] and "Missing files (those exercises score 0)" in data["output"]
    assert [t["visibility"] for t in data["tests"]] == ["visible", "after_due_date"]
    assert gradescope.main([str(out), "--hidden-visibility", "visible"]) == 2  # never at once
    assert gradescope.main([str(out), "--lang", "fr"]) == 2


FAKE_PYTHON = """#!/usr/bin/env bash
# python3 as setup.sh calls it, on a machine where PyTorch's CPU index cannot be reached: pip with
# that index alone fails; with it as an extra index, pip quietly takes PyPI's torch, a CUDA build.
echo "$*" >> "$FAKE_LOG"
case "$1 ${2:-}" in
  "-m venv") mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; exit 0 ;;
  "-m pip")
    case "$*" in *"--index-url https://download.pytorch.org"*) exit 1 ;; esac
    case "$*" in *torch*|*requirements*) touch "$(dirname "$0")/cuda-torch" ;; esac
    exit 0 ;;
  "-c "*) case "$2" in *cuda*) [ ! -e "$(dirname "$0")/cuda-torch" ]; exit ;; esac; exit 0 ;;
esac
exit 0
"""


def test_setup_stops_rather_than_install_a_cuda_torch(source, tmp_path):
    """When PyTorch's CPU index cannot be reached, setup.sh exits non-zero and says why, and
    never goes on to the install that would take PyPI's CUDA build."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text(FAKE_PYTHON)
    (fake / "python3").chmod(0o755)
    log = tmp_path / "log"
    done = subprocess.run(["bash", str(source / "setup.sh")], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}",
                                           "AUTOGRADER_ROOT": str(tmp_path / "root"),
                                           "FAKE_LOG": str(log)})
    assert done.returncode != 0, done.stdout + done.stderr
    assert "could not install torch==" in done.stderr and "CPU build" in done.stderr
    assert "Stopping rather than installing PyPI's" in done.stderr
    assert "requirements.txt" not in log.read_text()  # the install that would fall back
