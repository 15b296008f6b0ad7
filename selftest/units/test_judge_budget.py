"""The judge's own budget (issue 16, point 6): what it reads of a submission is bounded and charged
to that submission, and a batch judge runs under a memory limit of its own."""
import ast
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from fixtures import SOLUTIONS
from grading.judge import source_check

MIB = 1 << 20


def test_a_dozen_big_files_cost_the_judge_a_bounded_read(tmp_path, monkeypatch):
    """Twelve 1 MiB files in the submission's folder, each asked for (as a record's lines or a
    crash's frames may name them): the source reader parses at most its BUDGET of them in all (it
    once parsed 1 MiB of each, holding hundreds of MB), and leaves the rest unread."""
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS, folder)
    line = "x = [a + b for a in range(3) for b in c]\n"
    for number in range(12):
        (folder / f"big{number}.py").write_text(line * (MIB // len(line) + 1))
    parsed, parse = [], ast.parse

    def counted(source, *args, **kwargs):  # the bytes parsed, without holding the big trees
        parsed.append(len(source))
        return parse("" if len(source) > 64 << 10 else source, *args, **kwargs)
    with monkeypatch.context() as patched:  # (undone before asserting: pytest parses too)
        patched.setattr(source_check.ast, "parse", counted)
        shown = [source_check.line(folder, f"big{number}.py", 1) for number in range(12)]
    assert sum(parsed) <= source_check.BUDGET + source_check.LIMIT, \
        f"{sum(parsed) / MIB:.1f} MiB parsed"
    assert None in shown, "nothing was left unread"


def test_a_judge_under_its_memory_limit_fails_to_allocate_past_it():
    """The limit a batch judge puts on itself (grading/commands/batch.limit_judge_memory): past it, an
    allocation fails in that process, which the batch then replaces."""
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS is Linux's here")
    from grading.commands import batch
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # a stand-in judge: limit itself to 256 MiB more, then try for 1 GiB
        os.close(read_end)
        try:
            batch.limit_judge_memory(256 * MIB)
            try:
                bytearray(1024 * MIB)
                os.write(write_end, b"allocated")
            except MemoryError:
                os.write(write_end, b"refused")
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer:
        said = answer.read()
    os.waitpid(pid, 0)
    assert said == b"refused"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
def test_the_judges_memory_limit_leaves_torchs_own_mapping_out():
    """limit_judge_memory(extra) counts from the judge with torch imported: a CUDA build of torch
    maps 3-5 GB at import, and a limit taken before it (6be57eb) left a learner's own CUDA torch
    no room at all ("OpenBLAS error: Memory allocation still failed"). Here, in a fresh
    interpreter, a limit of 64 MiB taken first must still let torch import and compute."""
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\n"
            "from grading.judge.limits import limit_judge_memory\n"
            "assert 'torch' not in sys.modules\n"
            "limit_judge_memory(64 << 20)\n"
            "import torch\nprint(float((torch.ones(64, 64) @ torch.ones(64, 64)).sum()))\n")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "262144.0", done.stderr[-1000:]


def test_a_record_too_large_to_read_is_refused_unread_or_counted():
    """Issue 32: one unused operation of 600k references took 139 s of judge CPU and 3.2 GB: the
    packed record's fast decoding counted nothing. Past MAX_PACKED_TEXT it is refused unread;
    below, its objects are counted (MAX_VALUES) and it reads as no record."""
    import json

    from grading.wire import protocol
    refs = [{"out": [0, 0]}] * 600_000
    text = json.dumps([["aten.cat.default", [refs], {}, False]])
    assert len(text) > protocol.MAX_PACKED_TEXT
    assert protocol.Packed(text=text).value is None
    counted = json.dumps([["aten.cat.default", [[{"in": 0}] * 250_000], {}, False]])
    assert len(counted) < protocol.MAX_PACKED_TEXT
    assert protocol.Packed(text=counted).value is None  # 250k objects > MAX_VALUES
    small = json.dumps([["aten.cat.default", [[{"in": 0}] * 10], {}, False]])
    assert protocol.Packed(text=small).value == json.loads(small)


def test_decoding_a_record_is_charged_to_the_replay_budget():
    """A record is decoded when a how-check first reads it: that CPU time is the submission's, as
    the replay's is (it was the judge's, unbounded)."""
    import json

    from grading.judge.remote import Call
    from grading.judge.replay import Budget
    from grading.wire import protocol
    text = json.dumps([["aten.add.Tensor", [{"in": 0}] * 3000, {}, False]] * 50)
    budget = Budget(30.0)
    call = Call(shown={"ops": protocol.Packed(text=text), "output": None}, args=[], output=None,
                budget=budget)
    assert len(call.record["ops"]) == 50 and budget.left < 30.0


def test_a_record_referring_to_too_many_tensors_is_refused_before_it_runs():
    import torch

    from grading.errors import ReplayError
    from grading.judge import replay
    record = {"ops": [["aten.add.Tensor", [{"in": 0}, {"in": 0}], {}, False],
                      ["aten.cat.default", [[{"out": [0, 0]}] * (replay.MAX_REFERENCES + 1)],
                       {}, False]], "output": {"out": [0, 0]}, "truncated": False}
    with pytest.raises(ReplayError) as refused:
        replay.replay(record, [torch.ones(3)])
    assert refused.value.kind == "size"


def test_a_diagonal_is_bounded_by_its_offset():
    """diag_embed with a large offset makes (n + offset)² entries per vector: it was bounded as
    n², and a one-entry vector with an offset of 3000 reached 4.5 GB."""
    import torch

    from grading.errors import ReplayError
    from grading.judge import replay
    record = {"ops": [["aten.diag_embed.default", [{"in": 0}, 3000], {}, False]],
              "output": {"out": [0, 0]}, "truncated": False}
    with pytest.raises(ReplayError):
        replay.replay(record, [torch.ones(2)])
    record["ops"][0][1][1] = 2
    assert replay.replay(record, [torch.ones(3)]).shape == (5, 5)
