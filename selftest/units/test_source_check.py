"""The learner's source in messages, never in a verdict: the line a verified record puts a loop's
operations on (the worker names, for each aten operation, the line of the submission's code that
reached it; grading/checks/shown_work.loop_line picks the loop's), and the reader that shows that
line, a crashing function or how a function is written (grading/judge/source_check.py), which
reads the submission's own files alone, bounded, and never fails. Learner files are written into
a copy of the solutions, so that the other exercises are right."""
import importlib
import os
import shutil
import sys
import textwrap

import pytest
import torch

from fixtures import ALL_MISTAKES, SOLUTIONS, materialise_mistake
from grading.checks.shown_work import loop_line
from grading.judge import replay, source_check
from grading.judge.source_check import LIMIT, function_text, functions_named, line
from grading.wire import protocol
from grading.worker.executor import Executor
from grading.worker.serve import SUBMISSION_PACKAGE

HEAD = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        weights = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        weights = F.softmax(weights.masked_fill(self.tril[:T, :T] == 0, float("-inf")), dim=-1)
{body}
"""


def submission(tmp_path, **files):
    """A copy of the solutions with `files` ({module: source}) written over it."""
    folder = tmp_path / SUBMISSION_PACKAGE
    if not folder.exists():
        shutil.copytree(SOLUTIONS, folder)
    for module, source in files.items():
        (folder / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return folder


def head(body):
    """ex6_head.py whose Head.forward ends with `body`, indented as there (methods may follow)."""
    return HEAD.format(body=body)


def where(folder, module, mark):
    """(file, line number) of the one line of module.py holding the mark."""
    lines = (folder / f"{module}.py").read_text(encoding="utf-8").splitlines()
    found = [(f"{module}.py", n) for n, text in enumerate(lines, 1) if mark in text]
    assert len(found) == 1, found
    return found[0]


def pointed(folder, module):
    """What loop_line points to for `module` of the folder, from records made as a worker makes
    them (the folder imported as a worker imports a submission) at three sizes, verified here."""
    for name in [n for n in sys.modules if n.split(".")[0] == SUBMISSION_PACKAGE]:
        del sys.modules[name]
    sys.path.insert(0, str(folder.parent))
    try:
        executor = Executor(importlib.import_module(f"{SUBMISSION_PACKAGE}.{module}"))
    finally:
        sys.path.remove(str(folder.parent))
    if module == "ex6_head":
        made = executor.run({"op": "call", "target": {"name": "Head"}, "args": [12, 8, 16]})
        target = {"handle": made["output"].number}
    else:
        target = {"name": "average_context"}
    lines = {}
    for T in (3, 5, 7):
        x = torch.randn(2, T, 12)
        reply = protocol.from_wire(protocol.to_wire(executor.run(
            {"op": "call", "target": target, "args": [x]})))
        record = {**reply["record"], "ops": reply["record"]["ops"].value}
        work = replay.measure(record, [x])
        assert replay.same(work.output, reply["output"])
        lines[f"B=2, T={T}"] = work.lines
    return loop_line(lines, "grows")


# -- the line of a loop, from the records -----------------------------------------------------------

AVERAGES = {  # average_context(x) written with a loop; the line of the mark is pointed to
    "range_T": """\
        def average_context(x):
            B, T, C = x.shape
            out = torch.zeros_like(x)
            for t in range(T):
                out[:, t] = x[:, :t + 1].mean(dim=1)  # mark
            return out
        """,
    "comprehension": """\
        def average_context(x):
            T = x.shape[1]
            return torch.stack(
                [x[:, :t + 1].mean(dim=1) for t in range(T)],  # mark
                dim=1)
        """,
    "map_lambda": """\
        def average_context(x):
            T = x.shape[1]
            return torch.stack(list(map(lambda t: x[:, :t + 1].mean(1), range(T))), 1)  # mark
        """,
    "recursion": """\
        def average_context(x):
            if x.shape[1] == 1:
                return x
            head = average_context(x[:, :-1])  # mark
            return torch.cat([head, x.mean(dim=1, keepdim=True)], dim=1)
        """,
    "nested_function": """\
        def average_context(x):
            def prefix(t):
                return x[:, :t + 1].mean(dim=1)  # mark
            return torch.stack([prefix(t) for t in range(x.shape[1])], dim=1)
        """,
    "itertools": """\
        from itertools import accumulate as acc

        def average_context(x):
            sums = torch.stack(list(acc(x.unbind(1))), dim=1)  # mark
            return sums / torch.arange(1, x.shape[1] + 1).view(1, -1, 1)
        """,
}


@pytest.mark.parametrize("name", sorted(AVERAGES))
def test_the_line_of_a_loop_in_average_context(tmp_path, name):
    folder = submission(tmp_path, ex2_averaging="import torch\n" + textwrap.dedent(AVERAGES[name]))
    assert pointed(folder, "ex2_averaging") == where(folder, "ex2_averaging", "# mark")


HEADS = {  # the end of Head.forward, and other files: the line of (module, mark) is pointed to
    "range_T": ("""\
        out = torch.zeros_like(v)
        for t in range(T):
            out[:, t] = (weights[:, t:t + 1] @ v)[:, 0]  # mark
        return out
        """, {}, "ex6_head"),
    "unbind": ("""\
        return torch.stack([w @ v for w in weights.unbind(1)], dim=1)  # mark
        """, {}, "ex6_head"),
    "helper_method": ("""\
        return getattr(self, "_m" + "ix")(weights, v)

    def _mix(self, weights, v):
        return torch.stack([weights[:, t] @ v for t in range(v.shape[1])], dim=1)  # mark
        """, {}, "ex6_head"),
    "loop_in_ex5_by_relative_import": ("""\
        from .ex5_causal_mask import causal_softmax
        return causal_softmax(q @ k.mT) @ v
        """, {"ex5_causal_mask": """\
        import torch

        def causal_softmax(scores):
            T = scores.shape[1]
            mask = torch.ones(T, T).triu(1).bool()
            rows = [scores[:, t].masked_fill(mask[t], float("-inf")).softmax(-1)  # mark
                    for t in range(T)]
            return torch.stack(rows, dim=1)
        """}, "ex5_causal_mask"),
}


@pytest.mark.parametrize("name", sorted(HEADS))
def test_the_line_of_a_loop_in_head_forward(tmp_path, name):
    body, others, module = HEADS[name]
    folder = submission(tmp_path, ex6_head=head(body), **others)
    assert pointed(folder, "ex6_head") == where(folder, module, "# mark")


def test_no_line_where_nothing_loops(tmp_path):
    """The solutions, and a loop that only builds a constant from the sizes: nothing grows."""
    folder = submission(tmp_path, ex2_averaging="""\
        import torch

        def average_context(x):
            T = x.shape[1]
            weights = torch.zeros(T, T)
            for i in range(T):
                weights[i, :i + 1] = 1 / (i + 1)
            return weights @ x
        """)
    assert pointed(folder, "ex2_averaging") is None
    assert pointed(folder, "ex6_head") is None


def test_the_catalogued_loops(tmp_path):
    """The catalogued loop mistakes are pointed to on the line the catalogue changed."""
    loops = [m for m in ALL_MISTAKES if m.name == "loop"]  # whatever --check N keeps
    assert loops
    for i, mistake in enumerate(loops):
        folder = tmp_path / str(i) / SUBMISSION_PACKAGE
        materialise_mistake(mistake, folder)
        assert pointed(folder, mistake.exercise) == where(
            folder, mistake.exercise, mistake.new.split("\n")[0].strip()), mistake.exercise


def test_a_loop_of_fixed_length_is_pointed_to_where_most_operations_are():
    """"long": no line grows, the line of the most operations is the loop's; T=1 and B=1 sizes
    are left out (torch takes other paths for a dimension of one); records without lines: None."""
    lines = {"B=2, T=3": {("a.py", 4): 2, ("a.py", 9): 64, ("a.py", 12): 1},
             "B=1, T=1": {("a.py", 4): 1, ("a.py", 9): 64}}
    assert loop_line(lines, "long") == ("a.py", 9)
    assert loop_line(lines, "grows") is None
    assert loop_line({"B=2, T=3": {}}, "grows") is None


def test_a_worker_line_that_is_not_one_is_no_pointer():
    """The line is the worker's word: anything but [file, number] is left out, and the data path
    is counted as ever."""
    trace = replay.Trace()
    x = torch.ones(2)
    trace.start([x], {})
    for where in (True, ["a.py"], [1, 2], ["a.py", "3"], None, ["a.py", 3]):
        trace.step("aten.add.Tensor", "add", [x, x], {}, x + x, where)
    assert trace.lines == {("a.py", 3): 1}
    assert trace.count == 6


# -- the reader: the submission's own files, bounded, never failing ---------------------------------

LOOPED = "def average_context(x):\n    return [x for _ in range(x.shape[1])]\n"


def test_the_reader_shows_lines_and_functions(tmp_path):
    folder = submission(tmp_path, ex2_averaging="import torch\n" + LOOPED)
    assert line(folder, "ex2_averaging.py", 3) == "return [x for _ in range(x.shape[1])]"
    assert function_text(folder, "ex2_averaging.py", "average_context") == LOOPED.rstrip("\n")
    assert [(n, returns) for n, returns, _, _ in functions_named(
        folder, "ex2_averaging", "average_context")] == [(2, True)]
    for number in (0, 4, 99, -1, "3", None):
        assert line(folder, "ex2_averaging.py", number) is None


def test_only_the_folders_own_files_are_read(tmp_path):
    (tmp_path / "ex6_helpers.py").write_text(LOOPED)
    folder = submission(tmp_path)
    (folder / "sub").mkdir()
    (folder / "sub" / "ex2_averaging.py").write_text(LOOPED)
    for file in ("../ex6_helpers.py", "sub/ex2_averaging.py", "sub\\ex2_averaging.py",
                 str(tmp_path / "ex6_helpers.py"), "..", ".py", "", None, 3, "ex2_averaging",
                 "ex2_averaging.py\0"):
        assert line(folder, file, 2) is None, file
    assert line(tmp_path / "nowhere", "ex2_averaging.py", 2) is None


@pytest.mark.parametrize("content", [
    b"def average_context(x):\n    for t in range(x.shape[1]:\n        pass\n",  # a syntax error
    b"\xff\xfe\x00\x00 not text",
    b"def average_context(x):\n    return x\x00\n",
    b"# -*- coding: no-such-codec -*-\n" + LOOPED.encode(),
    b"x = " + b"(" * 100_000 + b")" * 100_000 + b"\n",
    b"x = " + b"-" * 200_000 + b"1\n",
], ids=["syntax_error", "undecodable", "null_byte", "bad_coding", "deep_parentheses", "deep_unary"])
def test_unparsable_files_give_nothing(tmp_path, content):
    folder = submission(tmp_path)
    (folder / "ex2_averaging.py").write_bytes(content)
    assert line(folder, "ex2_averaging.py", 1) is None
    assert function_text(folder, "ex2_averaging.py", "average_context") == ""
    assert functions_named(folder, "ex2_averaging", "average_context") == []


def test_symbolic_links_and_named_pipes_are_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ex2_averaging.py").write_text(LOOPED)
    folder = submission(tmp_path)
    (folder / "ex2_averaging.py").unlink()
    (folder / "ex2_averaging.py").symlink_to(outside / "ex2_averaging.py")
    (folder / "ex5_causal_mask.py").unlink()
    os.mkfifo(folder / "ex5_causal_mask.py")  # it must not hang the judge
    assert line(folder, "ex2_averaging.py", 2) is None
    assert line(folder, "ex5_causal_mask.py", 1) is None
    assert line(outside, "ex2_averaging.py", 2) is not None  # the same file, read where it is


def test_a_huge_file_is_read_in_part(tmp_path):
    """What lies past LIMIT is not read: the part read is shown."""
    folder = submission(tmp_path)
    padding = "# padding\n" * (2 * LIMIT // 10)
    (folder / "ex2_averaging.py").write_text(LOOPED + '"""' + padding + '"""\n')
    assert line(folder, "ex2_averaging.py", 2) == "return [x for _ in range(x.shape[1])]"


def test_files_are_parsed_again_only_when_they_change(tmp_path, monkeypatch):
    reads, read = [], source_check._read
    monkeypatch.setattr(source_check, "_read", lambda path: reads.append(path) or read(path))
    folder = submission(tmp_path, ex2_averaging=LOOPED)
    assert line(folder, "ex2_averaging.py", 2) is not None
    assert line(folder, "ex2_averaging.py", 1) is not None and len(reads) == 1
    (folder / "ex2_averaging.py").write_text("def average_context(x):\n\n    return x  # new\n")
    assert line(folder, "ex2_averaging.py", 3) == "return x  # new" and len(reads) == 2


def test_every_submission_fixture_is_read_without_a_failure_of_the_reader(tmp_path):
    """Over every whole-file fixture (attacks, broken code, real code), the reader never fails
    itself: a file it cannot read or parse is nothing found, not an exception."""
    from fixtures import fixture_dirs, materialise_files
    before = len(source_check.problems())
    for kind in ("fair", "broken", "attack", "twin"):
        for fixture in fixture_dirs(kind):
            folder = tmp_path / fixture.name
            materialise_files(fixture, folder)
            for file in os.listdir(folder):
                line(folder, file, 1)
                functions_named(folder, file.removesuffix(".py"), "forward")
                function_text(folder, file, "forward")
    assert source_check.problems()[before:] == []


def test_a_failure_of_the_reader_is_kept_not_swallowed(monkeypatch):
    def broken(path):
        raise RuntimeError("the reader's own bug")
    monkeypatch.setattr(source_check, "_stamp", broken)
    before = len(source_check.problems())
    assert line(SOLUTIONS, "ex6_head.py", 1) is None  # the learner loses nothing
    assert "the reader's own bug" in "".join(source_check.problems()[before:])
