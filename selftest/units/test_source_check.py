"""The pointer to a loop's line, from the source text (grading/judge/source_check.py): loops that can
run once per position or sample in the code average_context and Head.forward reach. It is shown
only once a verified record has shown a loop, and never costs a point. Learner files are written
into a copy of the solutions, so that the other exercises are right."""
import os
import shutil
import textwrap

import pytest

from fixtures import MISTAKES, SOLUTIONS, materialise_mistake
from grading.judge import source_check
from grading.judge.source_check import LIMIT, loops_in

ENTRIES = {"ex2_averaging": "average_context", "ex6_head": "Head.forward"}
HEAD = '''\
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
'''


def submission(tmp_path, **files):
    """A copy of the solutions with `files` ({module: source}) written over it."""
    folder = tmp_path / "submission"
    if not folder.exists():
        shutil.copytree(SOLUTIONS, folder)
    for module, source in files.items():
        (folder / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return folder


def head(body):
    """ex6_head.py whose Head.forward ends with `body`, indented as there (methods may follow)."""
    return HEAD.format(body=body)


def where(folder, module, *marks):
    """(file, line number, stripped line) of the line of module.py holding each mark."""
    lines = (folder / f"{module}.py").read_text(encoding="utf-8").splitlines()
    return sorted({(f"{module}.py", number, line.strip()) for mark in marks
                   for number, line in enumerate(lines, 1) if mark in line})


def loops(folder, module):
    return loops_in(folder, module, ENTRIES[module])


# -- nothing found in right answers ---------------------------------------------------------------

@pytest.mark.parametrize("folder", [SOLUTIONS, SOLUTIONS.parent / "exercises"],
                         ids=["solutions", "stubs"])
def test_solutions_and_stubs_have_neither(folder):
    for module in ENTRIES:
        assert loops(folder, module) == []


# (Right answers in other styles are not read here: the reader is asked only once a verified record
# has shown a loop, so what it might make of a right answer is never shown. test_fixtures grades
# every fair fixture at full marks with no diagnosis.)


def test_the_catalogued_mistakes(tmp_path):
    """The loop mistakes have their loop found; no other."""
    for i, mistake in enumerate(MISTAKES):
        folder = tmp_path / str(i)
        materialise_mistake(mistake, folder)
        found = {m: loops(folder, m) for m in ENTRIES}
        expected = {m: where(folder, m, mistake.new.split("\n")[0]) if m == mistake.exercise and
                    mistake.name == "loop" else [] for m in ENTRIES}
        assert found == expected, mistake.name


# -- loops that can depend on the input -----------------------------------------------------------

AVERAGES = {  # average_context(x) written with a loop; the line of each mark is reported
    "range_T": ('''\
        def average_context(x):
            B, T, C = x.shape
            out = torch.zeros_like(x)
            for t in range(T):  # mark
                out[:, t] = x[:, :t + 1].mean(dim=1)
            return out
        ''', ["# mark"]),
    "map_from_builtins_by_another_name": ('''\
        from builtins import map as each

        def average_context(x):
            rows = each(lambda t: x[:, :t + 1].mean(dim=1), range(x.shape[1]))  # mark
            return torch.stack(list(rows), dim=1)
        ''', ["# mark"]),
    "shape": ('''\
        def average_context(x):
            out = []
            for t in range(x.shape[1]):  # mark
                out.append(x[:, :t + 1].mean(dim=1))
            return torch.stack(out, dim=1)
        ''', ["# mark"]),
    "unbind_enumerate": ('''\
        def average_context(x):
            total, out = 0, []
            for t, xt in enumerate(x.unbind(1)):  # mark
                total = total + xt
                out.append(total / (t + 1))
            return torch.stack(out, dim=1)
        ''', ["# mark"]),
    "while": ('''\
        def average_context(x):
            t, out = 0, []
            while t < x.shape[1]:  # mark
                out.append(x[:, :t + 1].mean(dim=1))
                t += 1
            return torch.stack(out, dim=1)
        ''', ["# mark"]),
    "comprehension_over_batch": ('''\
        def average_context(x):
            B, T, C = x.shape
            w = averaging_matrix(T)
            return torch.stack([w @ x[b] for b in range(B)])  # mark
        ''', ["# mark"]),
    "stacked_comprehension_over_two_lines": ('''\
        def average_context(x):
            T = x.shape[1]
            return torch.stack(  # not this line
                [x[:, :t + 1].mean(dim=1) for t in range(T)],  # mark
                dim=1)
        ''', ["# mark"]),
    "map_lambda": ('''\
        def average_context(x):
            T = x.shape[1]
            return torch.stack(list(map(lambda t: x[:, :t + 1].mean(1), range(T))), 1)  # mark
        ''', ["# mark"]),
    "recursion": ('''\
        def average_context(x):
            if x.shape[1] == 1:
                return x
            head = average_context(x[:, :-1])  # mark
            T = x.shape[1]
            return torch.cat([head, x.mean(dim=1, keepdim=True)], dim=1)
        ''', ["# mark"]),
    "mutual_recursion": ('''\
        def average_context(x):
            return x if x.shape[1] == 1 else _grow(x)

        def _grow(x):
            head = average_context(x[:, :-1])  # mark
            return torch.cat([head, x.mean(dim=1, keepdim=True)], dim=1)
        ''', ["# mark"]),
    "loop_in_averaging_matrix": ('''\
        def averaging_matrix(T):
            weights = torch.zeros(T, T)
            for i in range(T):  # mark
                weights[i, :i + 1] = 1 / (i + 1)
            return weights

        def average_context(x):
            return averaging_matrix(x.shape[1]) @ x
        ''', ["# mark"]),
    "helper_through_an_alias": ('''\
        def _prefix_means(x):
            return [x[:, :t + 1].mean(dim=1) for t in range(x.shape[1])]  # mark

        means = _prefix_means

        def average_context(x):
            return torch.stack(means(x), dim=1)
        ''', ["# mark"]),
    "itertools_and_reduce": ('''\
        import functools
        from itertools import accumulate as acc

        def average_context(x):
            sums = torch.stack(list(acc(x.unbind(1))), dim=1)  # mark
            T = functools.reduce(lambda a, b: a + 1, x.unbind(1), 0)  # mark too
            return sums / torch.arange(1, T + 1).view(1, -1, 1)
        ''', ["# mark"]),
    "sum_of_a_comprehension_by_name": ('''\
        def average_context(x):
            prefixes = [x[:, :t + 1].mean(dim=1) for t in range(x.shape[1])]  # mark
            total = sum(prefixes)  # mark too: adds them one by one
            return torch.stack(prefixes, dim=1) + 0 * total.unsqueeze(1)
        ''', ["# mark"]),
    "nested_function": ('''\
        def average_context(x):
            def prefix(t):
                return x[:, :t + 1].mean(dim=1)
            return torch.stack([prefix(t) for t in range(x.shape[1])], dim=1)  # mark
        ''', ["# mark"]),
    "range_rebound": ('''\
        def range(n):
            return builtins.range(n * 0 + TRUE_T)

        def average_context(x):
            out = []
            for t in range(3):  # mark: range is the file's own
                out.append(x[:, :t + 1].mean(dim=1))
            return torch.stack(out, dim=1)
        ''', ["# mark"]),
}


@pytest.mark.parametrize("name", sorted(AVERAGES))
def test_loops_in_average_context(tmp_path, name):
    source, marks = AVERAGES[name]
    folder = submission(tmp_path, ex2_averaging="import torch\n" + textwrap.dedent(source))
    assert loops(folder, "ex2_averaging") == where(folder, "ex2_averaging", *marks)


HEADS = {  # the end of Head.forward, or more files: the line of each (module, mark) is reported
    "range_T": ('''\
        out = torch.zeros_like(v)
        for t in range(T):  # mark
            out[:, t] = weights[:, t] @ v
        return out
        ''', {}, [("ex6_head", "# mark")]),
    "comprehension_over_batch": ('''\
        return torch.stack([weights[b] @ v[b] for b in range(B)])  # mark
        ''', {}, [("ex6_head", "# mark")]),
    "unbind": ('''\
        return torch.stack([w @ v for w in weights.unbind(1)], dim=1)  # mark
        ''', {}, [("ex6_head", "# mark")]),
    "helper_method_via_getattr_and_a_joined_name": ('''\
        return getattr(self, "_m" + "ix")(weights, v)

    def _mix(self, weights, v):
        return torch.stack([weights[:, t] @ v for t in range(v.shape[1])], dim=1)  # mark
        ''', {}, [("ex6_head", "# mark")]),
    "helper_method_via_self": ('''\
        return self._mix(weights, v)

    def _mix(self, weights, v):
        return torch.stack([weights[:, t] @ v for t in range(v.shape[1])], dim=1)  # mark
        ''', {}, [("ex6_head", "# mark")]),
    "loop_in_ex5_by_relative_import": ('''\
        from .ex5_causal_mask import causal_softmax
        return causal_softmax(q @ k.mT) @ v
        ''', {"ex5_causal_mask": '''\
        import torch

        def causal_softmax(scores):
            rows = [scores[:, t, :t + 1].softmax(-1) for t in range(scores.shape[1])]  # mark
            return torch.nn.utils.rnn.pad_sequence(rows)
        '''}, [("ex5_causal_mask", "# mark")]),
    "loop_in_ex5_by_module_alias": ('''\
        from . import ex5_causal_mask as m
        return m.causal_softmax(q @ k.mT) @ v
        ''', {"ex5_causal_mask": '''\
        def causal_softmax(scores):
            out = scores.clone()
            for b in range(len(scores)):  # mark
                out[b] = scores[b].softmax(-1)
            return out
        '''}, [("ex5_causal_mask", "# mark")]),
    "loop_in_ex4_by_absolute_package_import": ('''\
        import submission.ex4_scaling
        return submission.ex4_scaling.attention_scores(q, k).softmax(-1) @ v
        ''', {"ex4_scaling": '''\
        def attention_scores(q, k):
            while False:  # mark
                pass
            return q @ k.mT
        '''}, [("ex4_scaling", "# mark")]),
}


@pytest.mark.parametrize("name", sorted(HEADS))
def test_loops_in_head_forward(tmp_path, name):
    body, others, marks = HEADS[name]
    folder = submission(tmp_path, ex6_head=head(body), **others)
    assert loops(folder, "ex6_head") == sorted(x for m, mark in marks
                                               for x in where(folder, m, mark))


def test_loop_in_a_submodule_stored_on_self(tmp_path):
    """self.qkv = QKV(…) from .ex3_qkv in __init__; self.qkv(x) in forward runs QKV.forward."""
    folder = submission(tmp_path, ex3_qkv='''\
        import torch.nn as nn

        class QKV(nn.Module):
            def __init__(self, n_embd, head_size):
                super().__init__()
                self.layers = nn.ModuleList(nn.Linear(n_embd, head_size) for _ in range(3))

            def forward(self, x):
                return [layer(x[:, t]) for t in range(x.shape[1]) for layer in self.layers]  # mark
        ''', ex6_head='''\
        import torch.nn as nn
        from .ex3_qkv import QKV

        class Head(nn.Module):
            def __init__(self, n_embd, head_size, block_size):
                super().__init__()
                self.qkv = QKV(n_embd, head_size)

            def forward(self, x):
                q, k, v = self.qkv(x)
                return (q @ k.mT).softmax(-1) @ v
        ''')
    assert loops(folder, "ex6_head") == where(folder, "ex3_qkv", "# mark")


def test_yield_from(tmp_path):
    folder = submission(tmp_path, ex5_causal_mask='''\
        def causal_softmax(scores):
            yield from scores.unbind(0)  # mark
        ''', ex6_head=head('''\
        from .ex5_causal_mask import causal_softmax
        return torch.stack(list(causal_softmax(weights))) @ v
        '''))
    assert loops(folder, "ex6_head") == where(folder, "ex5_causal_mask", "# mark")


def test_head_forward_inherited_from_a_base_class(tmp_path):
    folder = submission(tmp_path, ex3_qkv='''\
        import torch.nn as nn

        class Base(nn.Module):
            def forward(self, x):
                return self.mix(x)

            def mix(self, x):
                return [f(x) for f in self.fs]  # mark
        ''', ex6_head='''\
        from .ex3_qkv import Base

        class Head(Base):
            def __init__(self, n_embd, head_size, block_size):
                super().__init__()
        ''')
    assert loops(folder, "ex6_head") == where(folder, "ex3_qkv", "# mark")


def test_loops_of_fixed_length_are_not_reported(tmp_path):
    folder = submission(tmp_path, ex6_head=head('''\
        for layer in (self.query, self.key, self.value):
            assert layer.bias is None
        q, k, v = [f(x) for f in [self.query, self.key, self.value]]
        for i in range(3):
            pass
        for i, name in enumerate(("q", "k", "v")):
            pass
        for a, b in zip([q, k], (k, v)):
            pass
        for name, layer in {"q": self.query, "k": self.key}.items():
            pass
        scale = {n: 1.0 for n in "qkv"}
        total = sum([q.sum(), k.sum()])
        layers = (self.query, self.key)
        for layer in layers:
            pass
        return weights @ v
        '''))
    assert loops(folder, "ex6_head") == []


def test_names_bound_once_in_the_function_to_a_fixed_length(tmp_path):
    """Bound once in forward, to a tuple or to a list nothing grows: fixed, though the file binds
    the same names elsewhere (another method's parameters)."""
    folder = submission(tmp_path, ex6_head=head('''\
        layers = (self.query, self.key, self.value)
        q, k, v = [f(x) for f in layers]
        probes = (q, k)
        for probe in probes:
            assert probe.shape == v.shape
        names = ["q", "k", "v"]
        for name in names:
            assert hasattr(self, {"q": "query", "k": "key", "v": "value"}[name])
        return weights @ v

    def describe(self, layers, probes, names):
        return len(layers) + len(probes) + len(names)
        '''))
    assert loops(folder, "ex6_head") == []


def test_a_list_appended_to_in_a_loop_over_positions_is_not_trusted(tmp_path):
    folder = submission(tmp_path, ex6_head=head('''\
        rows = [weights[:, 0]]
        for t in range(1, T):  # mark
            rows.append(weights[:, t])
        for row in rows:  # mark
            assert row.shape[-1] == T
        return weights @ v
        '''))
    assert loops(folder, "ex6_head") == where(folder, "ex6_head", "# mark")


def test_sum_is_a_loop_only_over_a_comprehension(tmp_path):
    """sum(a tensor) and sum(a fixed list) are not reported; the learner may mean a reduction."""
    folder = submission(tmp_path, ex2_averaging='''\
        import torch

        def average_context(x):
            B, T, C = x.shape
            parts = [x, x]
            pair = sum(parts) + sum((x, x)) + sum([x, x])
            total = sum(x) + sum(x.unbind(1))
            weights = torch.tril(torch.ones(T, T))
            return weights / weights.sum(1, keepdim=True) @ x + 0 * (pair + total).sum()
        ''')
    assert loops(folder, "ex2_averaging") == []


def test_names_for_what_can_grow_are_not_trusted(tmp_path):
    folder = submission(tmp_path, ex6_head=head('''\
        rows = []
        rows.append(weights)  # a list can grow: its name is not a fixed length
        for r in rows:  # mark
            pass
        pair = (q, k)
        pair = pair + tuple(x.unbind(1))  # bound twice
        for p in pair:  # mark
            pass
        for t in steps:  # mark
            pass
        return weights @ v

steps = range(3)
steps = range(T)
        '''))
    assert loops(folder, "ex6_head") == where(folder, "ex6_head", "# mark")


def test_loops_outside_what_the_entry_reaches_are_not_reported(tmp_path):
    folder = submission(tmp_path, ex6_head=head('''\
        return weights @ v

    def unused(self, x):
        return [x for _ in range(x.shape[0])]
        ''').replace("super().__init__()", "super().__init__()\n"
                     "        for _ in range(block_size):\n            pass"),
        ex2_averaging='''\
        import torch

        def averaging_matrix(T):
            return torch.stack([torch.ones(T) for _ in range(T)]).tril()

        def average_context(x):
            B, T, C = x.shape
            return torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).view(-1, 1) @ x

        def slow(x):
            while True:
                pass
        ''')
    assert loops(folder, "ex6_head") == []
    assert loops(folder, "ex2_averaging") == []


# -- learner files that are not what they seem ----------------------------------------------------

LOOPED = "def average_context(x):\n    return [x for _ in range(x.shape[1])]\n"


def test_missing_files_and_folders(tmp_path):
    assert loops_in(tmp_path / "nowhere", "ex2_averaging", "average_context") == []
    folder = submission(tmp_path)
    (folder / "ex2_averaging.py").unlink()
    assert loops(folder, "ex2_averaging") == []
    assert loops_in(folder, "ex6_head", "Head.backward") == []
    assert loops_in(folder, "ex6_head", "Nothing.forward") == []
    assert loops_in(folder, "../solutions/ex2_averaging", "average_context") == []


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
    assert loops(folder, "ex2_averaging") == []


def test_symbolic_links_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ex2_averaging.py").write_text(LOOPED)
    (outside / "ex5_causal_mask.py").write_text(LOOPED)
    folder = submission(tmp_path, ex6_head=head('''\
        from .ex5_causal_mask import causal_softmax
        from .linked.ex5_causal_mask import causal_softmax
        return causal_softmax(weights) @ v
        '''))
    for name in ("ex2_averaging.py", "ex5_causal_mask.py"):
        (folder / name).unlink()
        (folder / name).symlink_to(outside / name)
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    assert loops(folder, "ex2_averaging") == []
    assert loops(folder, "ex6_head") == []
    assert loops(outside, "ex2_averaging") != []  # the same files, read where they are


def test_a_named_pipe_does_not_hang(tmp_path):
    folder = submission(tmp_path)
    (folder / "ex2_averaging.py").unlink()
    os.mkfifo(folder / "ex2_averaging.py")
    assert loops(folder, "ex2_averaging") == []


def test_imports_that_leave_the_folder_are_not_followed(tmp_path):
    (tmp_path / "ex6_helpers.py").write_text("def mix(w, v):\n    return [r @ v for r in w]\n")
    folder = submission(tmp_path, ex6_head=head('''\
        from ..ex6_helpers import mix
        import ex6_helpers
        return mix(weights, v) + ex6_helpers.mix(weights, v)
        '''))
    assert loops(folder, "ex6_head") == []


def test_a_huge_file_is_read_in_part(tmp_path):
    """What lies past LIMIT is not read: the part read is pointed to."""
    folder = submission(tmp_path)
    padding = "# padding\n" * (2 * LIMIT // 10)
    (folder / "ex2_averaging.py").write_text(LOOPED + '"""' + padding + '"""\n')
    assert loops(folder, "ex2_averaging") == [
        ("ex2_averaging.py", 2, "return [x for _ in range(x.shape[1])]")]


def test_answers_are_kept_while_the_files_read_are_unchanged(tmp_path, monkeypatch):
    """A grading session asks the same more than once: nothing is parsed again unless a file
    read changed (its size, its mtime) or one that was missing appeared."""
    reads, read = [], source_check._read
    monkeypatch.setattr(source_check, "_read", lambda path: reads.append(path) or read(path))
    folder = submission(tmp_path, ex6_head=head('''\
        from .ex6_helpers import mix
        return mix(weights, v)
        '''))
    assert loops(folder, "ex6_head") == []
    before = len(reads)
    assert loops(folder, "ex6_head") == [] and len(reads) == before
    helpers = folder / "ex6_helpers.py"
    helpers.write_text("def mix(w, v):\n    return [r @ v for r in w.unbind(1)]\n")
    assert loops(folder, "ex6_head") == [("ex6_helpers.py", 2,
                                          "return [r @ v for r in w.unbind(1)]")]
    helpers.write_text("def mix(w, v):\n    return w @ v\n")
    assert loops(folder, "ex6_head") == []


def test_cycles_in_the_learner_code_end(tmp_path):
    """Aliases, bases and imports that go round in circles, and a class with many bases."""
    folder = submission(tmp_path, ex6_head='''\
        from .ex6_head import *
        from .ex5_causal_mask import causal_softmax

        helper = other
        other = helper

        class A(B):
            pass

        class B(A):
            pass

        class Head(A, B, A, B, A, B, A, B, A, B, A, B, A, B, A, B, A, B, A, B):
            def forward(self, x):
                return helper(self.missing(x)) @ super().forward(x)

        class Twisted:
            forward = backward
            backward = forward
            self = forward
        ''', ex5_causal_mask="from .ex6_head import Head\nfrom .ex5_causal_mask import *\n")
    assert loops(folder, "ex6_head") == []
    assert loops_in(folder, "ex6_head", "Twisted.forward") == []


# -- the reader's own failures --------------------------------------------------------------------

def test_every_submission_fixture_is_read_without_a_failure_of_the_reader(tmp_path):
    """Over every whole-file fixture (attacks, broken code, real code), the reader never fails
    itself: a file it cannot read or parse is nothing found, not an exception."""
    from fixtures import fixture_dirs, materialise_files
    before = len(source_check.problems())
    for kind in ("fair", "broken", "attack", "twin"):
        for fixture in fixture_dirs(kind):
            folder = tmp_path / fixture.name
            materialise_files(fixture, folder)
            for module in ENTRIES:
                loops(folder, module)
    assert source_check.problems()[before:] == []


def test_a_failure_of_the_reader_is_kept_not_swallowed(tmp_path, monkeypatch):
    def broken(self, module, entry, found):
        raise RuntimeError("the reader's own bug")
    monkeypatch.setattr(source_check._Submission, "walk", broken)
    monkeypatch.setattr(source_check, "_ANSWERS", {})
    before = len(source_check.problems())
    assert loops(SOLUTIONS, "ex6_head") == []  # the learner loses nothing
    assert "the reader's own bug" in "".join(source_check.problems()[before:])
