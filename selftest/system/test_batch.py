"""`--batch` as a TA meets it (issue 17, item 2) and its judges' budget (issue 16, point 6).

The unit tests read the layouts, zips, names and the summary without grading. One batch run
(started with the session, see start) grades a class laid out every way a TA receives it, with
one judge killed part-way by the self-test's hook: the row it was grading is marked, every other
row is graded by the judges left and the one started in its place, and the exit status is 1.
"""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

import course
from conftest import ROOT, early_folder, early_run, run_grader
from fixtures import SOLUTIONS
from grading.commands import batch
from long_runs import KILLED, MISTAKE, ZERO_WIDTH, solutions_in, zip_of

FULL = f"{course.TOTAL:g}"  # a right submission's total, as the gradebook writes it


# -- without grading -----------------------------------------------------------------------------

def test_each_layout_a_ta_receives_is_found(tmp_path):
    """The six files at the top, in exercises/ (a clone), one folder down, or not there at all."""
    solutions_in(tmp_path / "plain")
    solutions_in(tmp_path / "clone" / "exercises")
    (tmp_path / "clone" / "README.md").write_text("a clone\n")
    solutions_in(tmp_path / "nested" / "my-repo" / "exercises")
    solutions_in(tmp_path / "two" / "a")
    solutions_in(tmp_path / "two" / "b")
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "answers.txt").write_text("see me\n")
    found = {name: batch.find_exercises(tmp_path / name) for name in
             ("plain", "clone", "nested", "two", "empty", "notes")}
    assert found["plain"] == (tmp_path / "plain", None, "")
    assert found["clone"] == (tmp_path / "clone" / "exercises", None, "")
    assert found["nested"] == (tmp_path / "nested" / "my-repo" / "exercises", None, "")
    assert found["two"][1][0] == "refused" and "more than one" in found["two"][1][1]
    assert found["empty"][1] == ("empty", "an empty folder")
    assert found["notes"][1][0] == "empty"


def test_a_folder_deep_down_or_a_second_copy_is_graded_and_said(tmp_path):
    """Issue 37: a submission two levels down read "empty", and of two copies the top one was
    graded with no word. Each is graded now, its note saying which files."""
    solutions_in(tmp_path / "deep" / "a" / "b" / "exercises")
    solutions_in(tmp_path / "both")
    solutions_in(tmp_path / "both" / "exercises")
    assert batch.find_exercises(tmp_path / "deep") == (
        tmp_path / "deep" / "a" / "b" / "exercises", None,
        "graded a/b/exercises/ (deeper than usual)")
    assert batch.find_exercises(tmp_path / "both") == (
        tmp_path / "both", None, "two copies: graded the files at the top, not exercises/")


def test_identical_submissions_are_noted_and_untouched_stubs_are_not():
    rows = {name: {"status": "graded", "note": note, "files": files} for name, note, files in (
        ("ann", "", "f1"), ("ben", "missing ex6_head.py", "f1"), ("cy", "", "f2"),
        ("di", "", "stubs"), ("ed", "", "stubs"))}
    batch.note_identical(rows, stubs="stubs")
    assert rows["ann"]["note"] == "identical files to ben"
    assert rows["ben"]["note"] == "missing ex6_head.py; identical files to ann"
    assert rows["cy"]["note"] == rows["di"]["note"] == rows["ed"]["note"] == ""


def test_a_zip_is_extracted_inside_its_folder_or_refused(tmp_path):
    """No name that leaves the folder (../, an absolute path), no link, no bomb: each refuses the
    whole zip, and nothing is written outside the folder it was given."""
    files = {f"repo/exercises/{p.name}": p.read_text() for p in SOLUTIONS.glob("ex*.py")}
    good = zip_of(tmp_path / "good.zip", files)
    cases = {
        "traversal": {"../../outside.py": "x = 1\n"},
        "absolute": {"/tmp/outside.py": "x = 1\n"},
        "link": {"ex1_embedding.py@": "/etc/passwd"},
        "many": {f"f{i}.py": "" for i in range(batch.ZIP_FILES + 1)},
        "bomb": {"ex1_embedding.py": "#" * (batch.ZIP_BYTES + 1)},
    }
    for name, entries in cases.items():
        target = tmp_path / f"into-{name}"
        target.mkdir()
        why = batch.extract_zip(zip_of(tmp_path / f"{name}.zip", entries), target)
        assert why, f"{name}.zip was extracted"
        assert not list(target.rglob("*.py")) or name == "many", name
    assert not (tmp_path / "outside.py").exists()
    (tmp_path / "into-good").mkdir()
    assert batch.extract_zip(good, tmp_path / "into-good") == ""
    job = batch.prepare(good, tmp_path)
    assert job["path"].endswith("repo/exercises") and job["missing"] == []


def test_names_stay_as_their_folders_visibly_and_never_a_formula():
    """alice and alice with a zero-width space are two rows that look different; tabs, newlines,
    bidirectional controls are shown as escapes, not removed; a formula gets an apostrophe."""
    record = {"status": "empty", "note": "an empty folder", "exercises": {}, "total": 0,
              "seconds": 0}
    names = ["alice", ZERO_WIDTH, "tab\tname", "line\nbreak", "right\u202eleft", "=1+1", "+1",
             "-1", "@SUM(A1)", "with, comma \"quoted\"", "back\\slash"]
    rows = list(csv.DictReader(batch.csv_text(dict.fromkeys(names, record)).splitlines()))
    shown = [row["name"] for row in rows]
    assert len(set(shown)) == len(names)
    assert "alice\\u200b" in shown and "tab\\tname" in shown and "line\\nbreak" in shown
    assert "right\\u202eleft" in shown and "with, comma \"quoted\"" in shown
    assert {"'=1+1", "'+1", "'-1", "'@SUM(A1)"} <= set(shown)
    assert "back\\\\slash" in shown  # doubled, so that no name can pass for an escaped one
    assert all(row["status"] == "empty" and row["note"] == "an empty folder" for row in rows)


def test_the_summary_counts_each_status_and_the_grades():
    graded = {"status": "graded", "note": "", "exercises": {}, "total": 100, "seconds": 1}
    records = {"a": graded, "b": {**graded, "total": 40}, "c": {**graded, "total": 70},
               "d": {**graded, "status": "incomplete", "note": "missing ex6_head.py",
                     "total": 75},
               "e": batch.record_of("empty", "an empty folder"),
               "f": batch.record_of("refused", "a symbolic link"),
               "g": batch.record_of("grading error", "its judge was killed by SIGKILL")}
    text = batch.summary(records)
    assert "graded 3 · incomplete 1 · empty 1 · refused 1 · grading error 1" in text
    assert "mean 71.2" in text and "median 72.5" in text
    assert "g: its judge was killed by SIGKILL" in text and "f: a symbolic link" in text
    assert text.count("█") and "100 " in text


def test_what_the_class_got_wrong_counts_the_likely_causes():
    """The diagnoses the report gave, by exercise and key, most frequent first, with a few rows;
    in the summary and in the CSV beside the gradebook."""
    def wrong(exercise, key):
        return {"status": "graded", "note": "", "total": 80, "seconds": 1, "exercises": {
            exercise: {"score": 0, "diagnosis": {"key": key, "en": f"because {key}",
                                                 "zh": f"因为 {key}"}}}}
    records = {name: wrong("ex5_causal_mask", "ex5.zero") for name in ("a", "b", "=c")}
    records["d"] = wrong("ex4_scaling", "ex4.unscaled")
    rows = batch.causes(records)
    assert [(r["exercise"], r["key"], r["count"]) for r in rows] == [
        ("ex5_causal_mask", "ex5.zero", 3), ("ex4_scaling", "ex4.unscaled", 1)]
    assert rows[0]["examples"] == ["=c", "a", "b"]
    text = batch.summary(records)
    assert "3 × ex5_causal_mask: because ex5.zero (e.g. '=c, a, b)" in text
    assert "因为 ex5.zero" in batch.summary(records, "zh")
    table = list(csv.DictReader(batch.causes_csv(rows).splitlines()))
    assert table[0] == {"exercise": "ex5_causal_mask", "key": "ex5.zero", "count": "3",
                        "cause": "because ex5.zero", "examples": "'=c, a, b"}


def test_a_cause_in_the_learners_own_words_stays_with_its_row():
    """Issue 34: the first row's text of a key was shown for every row of that key, so one
    learner's undefined name ("scale is not defined") stood for another's (head_dim)."""
    def crashed(name):
        return {"status": "graded", "note": "", "total": 80, "seconds": 1, "exercises": {
            "ex6_head": {"score": 0, "diagnosis": {"key": "ex6.crash_name_undefined",
                                                   "en": f"{name} is not defined here",
                                                   "zh": f"{name} 在这里没有定义"}}}}
    records = {"a": crashed("scale"), "b": crashed("head_dim"), "c": crashed("head_dim")}
    rows = batch.causes(records)
    assert {(r["cause"], tuple(r["examples"])) for r in rows} == {
        ("scale is not defined here", ("a",)), ("head_dim is not defined here", ("b", "c"))}
    assert "head_dim is not defined here (e.g. 'b, c)" in batch.summary(records) \
        or "head_dim is not defined here (e.g. b, c)" in batch.summary(records)


def test_the_class_report_is_markdown_by_exercise():
    """--report PATH: per exercise, its likely causes with counts and a few rows, as a table; a
    learner's name or text cannot break the table or carry a command."""
    def wrong(exercise, key, text):
        return {"status": "graded", "note": "", "total": 80, "seconds": 1, "exercises": {
            exercise: {"score": 0, "diagnosis": {"key": key, "en": text, "zh": text}}}}
    records = {name: wrong("ex5_causal_mask", "ex5.zero", "no mask") for name in ("a", "b|c")}
    records["d"] = wrong("ex4_scaling", "ex4.unscaled", "not scaled")
    records["e"] = {"status": "empty", "note": "", "total": 0, "seconds": 0, "exercises": {}}
    text = batch.class_report(records)
    assert "4 submissions: graded 3, empty 1" in text and "mean 80.0, median 80" in text
    assert text.index("### ex4_scaling") < text.index("### ex5_causal_mask")
    assert "| 2 | no mask | a\\, b\\|c |" in text and "| 1 | not scaled | d |" in text
    assert "## 全班最常见的可能原因" in batch.class_report(records, "zh")


def test_a_name_or_cause_is_inert_markdown():
    """In --report, text from a submission renders as itself: every ASCII punctuation character
    escaped (CommonMark shows an escaped one as itself), so no tag, link, emphasis or cell."""
    hostile = ["<img src=x onerror=alert(1)>", "**loud**", "[click](https://evil.example)",
               "# heading", "a|b", "`code`", "_under_", "1. list", "&lt;script&gt;", "\\*"]
    for text in hostile:
        shown = batch.markdown_text(text)
        unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", shown)  # what is left once escapes are read
        assert not re.search(r"[!-/:-@\[-`{-~]", unescaped), (text, shown)
    records = {"<b>x</b>": {"status": "graded", "note": "", "total": 80, "seconds": 1,
                            "exercises": {"ex4_scaling": {"score": 0, "diagnosis": {
                                "key": "ex4.k", "en": "[a](b) **c**", "zh": "[a](b)"}}}}}
    report = batch.class_report(records)
    assert "<b>" not in report and "](b)" not in report and "**c**" not in report


def test_the_class_report_renders_as_its_own_text():
    """--report through a CommonMark renderer (markdown-it-py, with tables, as GitHub renders
    it; .ci/run installs it): folder names and causes that are markup render to the very same
    HTML structure as plain names, and show as themselves — no tag, link, emphasis or cell."""
    markdown_it = pytest.importorskip("markdown_it", reason="pip install markdown-it-py==4.3.0 "
                                      "(CI installs it) for the CommonMark rendering")
    from html.parser import HTMLParser

    class Page(HTMLParser):  # the tags in order, and the text
        def __init__(self, html):
            super().__init__(convert_charrefs=True)
            self.tags, self.text = [], []
            self.feed(html)

        def handle_starttag(self, tag, attrs):
            self.tags.append((tag, attrs))

        def handle_endtag(self, tag):
            self.tags.append(("/" + tag, []))

        def handle_data(self, data):
            self.text.append(data)

    hostile = ["<img src=x onerror=alert(1)>", "**loud**", "[click](https://evil.example)",
               "# heading", "a|b", "`code`", "_under_", "1. list", "&lt;script&gt;", "\\*",
               "<https://evil.example>", "![i](x.png)", "~~gone~~", "> quote", "---", "a\\"]

    def report(names):
        return batch.class_report({name: {
            "status": "graded", "note": "", "total": 80, "seconds": 1, "exercises": {
                "ex4_scaling": {"score": 0, "diagnosis": {"key": f"ex4.{i}", "en": name,
                                                          "zh": name}}}}
            for i, name in enumerate(names)})

    render = markdown_it.MarkdownIt("commonmark").enable("table").render
    shown, plain = Page(render(report(hostile))), Page(render(report(
        [f"name{i}" for i in range(len(hostile))])))
    assert shown.tags == plain.tags
    text = "".join(shown.text)
    assert all(name in text for name in hostile), text


def _with_hidden(total, max_, hidden_skipped):
    test = {"id": "test_matches_reference", "kind": "hidden", "points": 6, "score": 0,
            "status": "skipped" if hidden_skipped else "passed", "message": None}
    return {"status": "graded", "note": "", "total": total, "max": max_, "seed": 7,
            "seconds": 1, "exercises": {"ex4_scaling": {"score": total, "tests": [test]}}}


def test_public_figures_are_shown_as_public():
    """Without solutions/ (the student copy) a row's total is the public checks' of `of` points,
    `hidden` reads "not run", and the summary says this is no gradebook."""
    records = {"a": _with_hidden(9, 9, True), "b": _with_hidden(5, 9, True)}
    rows = list(csv.DictReader(batch.csv_text(records).splitlines()))
    assert [(r["total"], r["of"], r["hidden"], r["seed"]) for r in rows] == [
        ("9", "9", "not run", "7"), ("5", "9", "not run", "7")]
    text = batch.summary(records)
    assert "hidden checks did not run" in text and "public checks only, of 9" in text
    assert batch.public_only(records) and not batch.public_only({"c": _with_hidden(15, 15, False)})
    checks = list(csv.DictReader(batch.checks_csv(records).splitlines()))
    assert checks[0] == {"name": "a", "exercise": "ex4_scaling", "check": "test_matches_reference",
                         "kind": "hidden", "points": "0", "of": "6", "status": "skipped",
                         "message": ""}


def test_saved_rows_resume_with_their_seed(tmp_path):
    saved = tmp_path / "grades.saved.jsonl"
    lines = [{"seed": 11}, {"name": "a", "record": _with_hidden(9, 9, False)},
             {"name": "b", "record": batch.record_of("grading error", "its judge died")}]
    saved.write_text("\n".join(map(json.dumps, lines)) + "\n{\"name\": \"c\", \"rec")  # cut
    assert batch.read_saved(saved, None) == (11, {"a": lines[1]["record"]})  # b: regraded
    with pytest.raises(ValueError, match="seed"):
        batch.read_saved(saved, 12)
    with pytest.raises(ValueError, match="no batch to resume"):
        batch.read_saved(tmp_path / "none.saved.jsonl", None)


def test_saved_rows_resume_whatever_the_names_hold(tmp_path):
    """Issue 34: a folder's name with U+2028 (or another line separator Python's splitlines
    knows) lost every saved row: "no batch to resume"."""
    saved = tmp_path / "grades.saved.jsonl"
    names = ["a\u2028b", "c\u2029d", "e\x85f", "g\x1ch", "i\x0bj", "k\x0cl", "m\rn"]
    rows = [{"name": name, "record": _with_hidden(9, 9, False)} for name in names]
    lines = [{"seed": 11}, *rows]
    saved.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                     encoding="utf-8")
    assert batch.read_saved(saved, None) == (11, {row["name"]: row["record"] for row in rows})


@pytest.mark.full
def test_every_row_is_graded_again_exactly_by_its_entry_and_seed(tmp_path):
    """Issue 37: the guide's command to grade one row again gave 0/25 for a repository clone
    that the gradebook graded 25/25. --submission now finds a row's files as the batch does
    (a clone, a folder deep down, a .zip): the same points, check by check, for every layout."""
    class_ = tmp_path / "class"
    wrong = solutions_in(class_ / "plain")
    text = (wrong / f"{MISTAKE.exercise}.py").read_text(encoding="utf-8")
    (wrong / f"{MISTAKE.exercise}.py").write_text(text.replace(MISTAKE.old, MISTAKE.new),
                                                  encoding="utf-8")
    shutil.copytree(wrong, class_ / "clone" / "repo" / "exercises")
    shutil.copytree(wrong, class_ / "deep" / "a" / "b" / "exercises")
    zip_of(class_ / "zipped.zip", {f"mine/{f.name}": f.read_text(encoding="utf-8")
                                    for f in wrong.glob("ex*.py")})
    book = tmp_path / "grades.csv"
    done = run_grader("--batch", class_, "--csv", book, "--seed", "7", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    checks = list(csv.DictReader(open(batch.beside(book, "checks"), encoding="utf-8-sig")))
    for name in ("plain", "clone", "deep", "zipped.zip"):
        result = tmp_path / f"{name}.json"
        again = run_grader("--submission", class_ / name, "--seed", "7", "--json", result)
        assert again.returncode in (0, 1), again.stdout + again.stderr
        graded = [(t["name"].split(" · ")[0], t["score"])  # in each exercise's order of checks
                  for t in json.loads(result.read_text(encoding="utf-8"))["tests"]]
        row = [(c["exercise"], float(c["points"])) for c in checks if c["name"] == name]
        assert graded == row, name
        assert sum(points for _, points in row) < course.TOTAL  # the mistake costs points


@pytest.mark.full
def test_a_renamed_file_is_named_in_the_gradebook(tmp_path):
    """Issue 37: a student who saved Ex5_causal_mask.py read "missing ex5_causal_mask.py", with
    no word of the file that is there."""
    from long_runs import solutions_in
    alice = solutions_in(tmp_path / "class" / "alice")
    (alice / "ex5_causal_mask.py").rename(alice / "Ex5_causal_mask.py")
    gradebook = tmp_path / "grades.csv"
    done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "--batch",
                           str(tmp_path / "class"), "--csv", str(gradebook), "--lang", "en"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    row, = csv.DictReader(gradebook.read_text(encoding="utf-8-sig").splitlines())
    assert row["note"] == "missing ex5_causal_mask.py (Ex5_causal_mask.py is there)", row


@pytest.mark.full
def test_an_interrupt_to_the_whole_process_group_still_writes_the_gradebook(tmp_path):
    """Issue 37: SIGINT to the process group (a CI cancel, Ctrl-C in a make target) reached the
    batch twice, and the second cut the gradebook short: only grades.saved.jsonl was left. Now
    grades.csv is written, the rows not graded marked interrupted, exit 130."""
    from long_runs import solutions_in
    folder = tmp_path / "class"
    for n in range(24):
        solutions_in(folder / f"s{n:02d}")
    gradebook, saved = tmp_path / "grades.csv", tmp_path / "grades.saved.jsonl"
    run = subprocess.Popen([sys.executable, str(ROOT / "grader.py"), "--batch", str(folder),
                            "--csv", str(gradebook), "--seed", "7", "--lang", "en"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None and (
                not saved.exists() or len(saved.read_text().splitlines()) < 3):
            time.sleep(0.1)
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130, err[-2000:]
    rows = list(csv.DictReader(gradebook.read_text(encoding="utf-8-sig").splitlines()))
    assert len(rows) == 24 and any(r["status"] == "interrupted" for r in rows), err[-2000:]


@pytest.mark.full  # a batch of its own, 17 s beside --check's shared one: the instructor's loop
def test_an_interrupted_batch_keeps_its_rows_stops_its_judges_and_resumes(tmp_path):
    """SIGTERM part-way: exit 130 at once, every judge gone, the rows graded so far in the
    gradebook and the rest marked interrupted; --resume grades only those, to the grades of one
    whole run."""
    from long_runs import solutions_in
    folder = tmp_path / "class"
    solutions_in(folder / "a-right")
    slow = solutions_in(folder / "b-slow")  # each forward sleeps: the batch is caught in it
    (slow / "ex6_head.py").write_text(
        (ROOT / "selftest" / "submissions" / "broken-ex6-slow_forward" / "ex6_head.py")
        .read_text(encoding="utf-8"), encoding="utf-8")
    solutions_in(folder / "c-right")
    gradebook = tmp_path / "grades.csv"
    saved = tmp_path / "grades.saved.jsonl"
    run = subprocess.Popen([sys.executable, str(ROOT / "grader.py"), "--batch", str(folder),
                            "--csv", str(gradebook), "--seed", "7", "--jobs", "1",
                            "--lang", "en"], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None and (
                not saved.exists() or len(saved.read_text().splitlines()) < 2):
            time.sleep(0.1)
        time.sleep(1.0)  # b-slow is being graded now
        stopped = time.monotonic()
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=30)
        took = time.monotonic() - stopped
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130, err[-2000:]
    assert took < 10, f"the batch took {took:.1f} s to stop"
    with pytest.raises(ProcessLookupError):  # no judge, zygote or worker of it lives on
        os.killpg(run.pid, 0)
    rows = {r["name"]: r for r in csv.DictReader(gradebook.read_text(encoding="utf-8-sig").splitlines())}
    assert rows["a-right"]["status"] == "graded" and rows["a-right"]["total"] == FULL
    assert rows["b-slow"]["status"] == rows["c-right"]["status"] == "interrupted"
    assert "interrupted" in err and "--resume" in err
    resumed = run_grader("--batch", folder, "--csv", gradebook, "--resume", "--jobs", "1",
                         timeout=300)
    again = {r["name"]: r for r in csv.DictReader(gradebook.read_text(encoding="utf-8-sig").splitlines())}
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    same = [key for key in rows["a-right"] if key != "note"]  # (once c-right is graded, the
    # note says their files are the same)
    assert [again["a-right"][k] for k in same] == [rows["a-right"][k] for k in same]
    assert again["a-right"]["note"] == "identical files to c-right"
    assert again["c-right"]["total"] == FULL
    assert again["b-slow"]["status"] == "graded" and again["c-right"]["seed"] == "7"
    assert not saved.exists()


# -- one batch, graded ----------------------------------------------------------------------------

@pytest.mark.full
@pytest.mark.long_run  # reads a run of long_runs.py
def test_a_class_laid_out_every_way_with_a_judge_killed_part_way():
    done = early_run("batch flows")
    rows = {row["name"]: row for row in
            csv.DictReader((early_folder() / "batch-flows" / "class.csv").read_text(
                encoding="utf-8-sig").splitlines())}
    for name in ("class.csv", "class-causes.csv", "class-checks.csv"):  # Excel reads the names
        assert (early_folder() / "batch-flows" / name).read_bytes().startswith(b"\xef\xbb\xbf")
    got_mistake = rows.get("q-mistake", {}).get("total") or FULL  # (its points: test_fixtures)
    expect = {"a-right": ("graded", FULL), "b-right": ("graded", FULL),
              "alice": ("graded", FULL), "alice\\u200b": ("graded", FULL),
              "'=SUM(1)": ("graded", FULL), "z-right": ("graded", FULL),
              "n-after-1": ("graded", FULL), "o-after-2": ("graded", FULL),
              "p-after-3": ("graded", FULL), "clone": ("graded", FULL),
              "nested": ("graded", FULL), "zipped.zip": ("graded", FULL),
              "stubs": ("graded", "0"), "partial": ("incomplete", "10"),
              "empty": ("empty", "0"), "evil.zip": ("refused", "0"),
              KILLED: ("grading error", "0"), "q-mistake": ("graded", got_mistake)}
    got = {name: (row["status"], row["total"]) for name, row in rows.items()}
    assert float(got_mistake) < course.TOTAL
    assert got == expect, done.stdout[-3000:] + done.stderr[-3000:]
    assert "SIGKILL" in rows[KILLED]["note"]
    assert "missing ex2_averaging.py" in rows["partial"]["note"]
    assert done.returncode == 1, done.stderr  # a row met a grading error: regrade it
    assert "grading error 1" in done.stdout and f"{KILLED}: its judge was killed" in done.stdout
    table = (early_folder() / "batch-flows" / "class-causes.csv").read_text(encoding="utf-8-sig")
    wrong = list(csv.DictReader(table.splitlines()))
    assert [(r["exercise"], r["key"], r["count"], r["examples"]) for r in wrong] == [
        ("ex5_causal_mask", MISTAKE.diagnosis, "1", "q-mistake")]
    assert "What the class got wrong" in done.stdout


@pytest.mark.full
def test_a_row_the_machine_was_too_busy_for_is_graded_again_alone(tmp_path):
    """Issue 34: one row of the self-test's batch that met "the machine was too busy" (twice) made
    the batch fixture fail, and every test of every row erred. Such a row is graded again alone;
    busy once more, the tests that read it are skipped with that reason."""
    from conftest import BUSY, BusyRow, settled
    folder = tmp_path / "submissions"
    shutil.copytree(SOLUTIONS, folder / "solutions")
    records = {"solutions": {"status": "grading error", "note": f"grading error: {BUSY} to "
                             "grade this check in time (twice)"}}
    records = settled(records, ROOT, folder, "auto", "")
    assert records["solutions"]["status"] == "graded" and records["solutions"]["total"] == 100
    with pytest.raises(pytest.skip.Exception, match="too busy"):
        BusyRow(name="a row", status="busy")["exercises"]
    with pytest.raises(AssertionError):  # any other grading error is the self-test's failure
        settled({"x": {"status": "grading error", "note": "its judge died"}}, ROOT, folder,
                "auto", "")
