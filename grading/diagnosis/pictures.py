"""What the learner built, shown: a small matrix of theirs beside the expected one.

The lesson prints its weights (print(weights)) and reads them row by row; a wrong mask, a softmax
over the wrong dimension or a missing keepdim shows itself at a glance in a 5 × 5 print. A test
file's picture(probe) returns a Picture, made only after a check failed, like a diagnosis; it is
feedback, never points. The report renders it in plain text (no colour: it goes to pipes, CI logs
and results.json alike), at most 80 columns wide, with the first wrong cell in brackets.
"""
import math

import torch

from grading.checks.expect import ZERO, same, upper_triangle
from grading.i18n import Bi

MOST_COLUMNS = 5  # a matrix of more columns is shown cut to its first 5: two fit 80 columns
CELL = 5  # "0.33", "-0.33", "-inf", " nan": the widest number shown is five characters
INDENT = 8  # the report's indent before a picture's lines
TOLERANCE = 1e-3  # a cell differs from the expected one beyond this (shown to two decimals)


class Picture:
    """`got`: the learner's (rows, columns) matrix; `want`: the expected one, or None where the
    solutions are absent (then `wrong`, a boolean matrix of the cells known to be wrong, marks
    one); `title`: a Bi naming what `got` is ("averaging_matrix(5)"); `note`: a Bi under it, or
    None."""

    def __init__(self, title, got, want=None, wrong=None, note=None):
        self.title, self.note = title, note
        self.got = _matrix(got)
        self.want = _matrix(want) if want is not None else None
        if self.want is not None and self.want.shape != self.got.shape:
            self.want = None
        if wrong is None and self.want is not None:
            wrong = ~_alike(self.got, self.want)
        self.wrong = wrong if wrong is not None and wrong.shape == self.got.shape else None

    def first_wrong(self):
        """(row, column) of the first wrong cell, reading row by row; None."""
        if self.wrong is None or not bool(self.wrong[:, :MOST_COLUMNS].any()):
            return None
        return tuple(int(i) for i in self.wrong[:, :MOST_COLUMNS].nonzero()[0])

    def lines(self, lang, most=80):
        """The picture as plain lines: its title, then the learner's matrix and the expected one
        side by side under their names, at most 65 columns wide (5 columns of numbers each); one
        above the other where `most` columns (the report's indent included) cannot hold both."""
        first = self.first_wrong()
        mine = [_row(row, first[1] if first and first[0] == i else None)
                for i, row in enumerate(self.got)]
        width = max(len(line) for line in mine) + 1
        yours, expected = Bi("你的", "yours").render(lang), Bi("应当是", "expected").render(lang)
        out = [self.title.render(lang) + Bi("：", ":").render(lang)]
        if self.want is None:
            out += [" " + yours] + mine
        else:
            theirs = [_row(row, first[1] if first and first[0] == i else None)
                      for i, row in enumerate(self.want)]
            if INDENT + 2 * width + 3 <= most:
                out.append(_pad(" " + yours, width) + "   " + " " + expected)
                out += [_pad(a, width) + "   " + b for a, b in zip(mine, theirs)]
            else:  # a narrow terminal: one above the other
                out += [" " + yours] + mine + [" " + expected] + theirs
        if self.got.shape[1] > MOST_COLUMNS:
            out.append(Bi(f"（只显示前 {MOST_COLUMNS} 列）", f"(the first {MOST_COLUMNS} columns)")
                       .render(lang))
        if first is not None:
            i, j = first
            out.append(Bi(f"[ ] 标出第一个不对的数：第 {i} 行第 {j} 列",
                          f"[ ] marks the first wrong number: row {i}, column {j}").render(lang))
        if self.note is not None:
            out.append(self.note.render(lang))
        return out


def _matrix(value):
    """A 2-D float64 CPU tensor of `value` (a tensor of 1 or 2 dimensions, at most 12 rows)."""
    value = torch.as_tensor(value).detach().to("cpu", torch.float64)
    if value.dim() == 1:
        value = value[None, :]
    if value.dim() != 2:
        raise ValueError("a picture is a matrix or a row")
    return value[:12]


def _alike(a, b):
    both_inf = torch.isinf(a) & torch.isinf(b) & (torch.sign(a) == torch.sign(b))
    both_nan = torch.isnan(a) & torch.isnan(b)
    return both_inf | both_nan | ((a - b).abs() <= TOLERANCE)


def number(v):
    """v in at most five characters: 0.33, -0.33, -inf, nan, 12.3, 1e+03."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    for text in (f"{v:.2f}", f"{v:.1f}", f"{v:.0f}"):
        if len(text) <= CELL:
            return "0.00" if text == "-0.00" else text
    return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")[:CELL]


def _row(row, marked):
    """One row: numbers right-aligned in cells of six; the marked cell's number in brackets, the
    bracket closing in the next cell's first space."""
    cells = [number(float(v)) for v in row[:MOST_COLUMNS]]
    text = ""
    for j, cell in enumerate(cells):
        if j == marked:
            text += f"{'[' + cell:>{CELL + 1}}]"
        else:
            text += f"{cell:>{CELL if j - 1 == marked else CELL + 1}}"
    return text


def _columns(text):
    return sum(2 if "\u2e80" <= ch <= "\uffef" else 1 for ch in text)


def _pad(text, width):
    return text + " " * max(0, width - _columns(text))


def weights_of(call, output, rows):
    """The attention weights in a call's record: the last result of its work of shape
    (…, rows, rows), replayed from the record (grading.judge.replay); None when the record does
    not replay to the call's own output, or holds no such matrix. For a picture only: it never
    decides a point."""
    from grading.errors import ReplayError
    from grading.judge import replay

    record = getattr(call, "record", None)
    if not isinstance(record, dict) or not isinstance(record.get("ops"), list) \
            or record.get("truncated") or not record["ops"]:
        return None
    ops = record["ops"]
    try:
        if not replay.same(replay.replay(record, list(call.args), call.tensors,
                                         budget=replay.Budget(1.0)), output):
            return None
        results = replay.replay({**record, "output": [{"out": [k, 0]} for k in range(len(ops))]},
                                list(call.args), call.tensors, budget=replay.Budget(1.0))
    except (ReplayError, TypeError, ValueError):
        return None
    found = None
    for result in results:
        if isinstance(result, torch.Tensor) and result.is_floating_point() and result.dim() >= 2 \
                and tuple(result.shape[-2:]) == (rows, rows):
            found = result
    return found


def weights_differ(mine, theirs):
    """Where a head's attention weights (T, T) part from the solution's, as a second line for a
    mismatch of its outputs: after them, in the future, in their sharpness, or before softmax."""
    if same(mine, theirs):
        return Bi("\n注意力权重（softmax 的输出）和参考答案的一样：差别在它之后，在值 v 或者乘上它的那一步",
                  "\nthe attention weights (softmax's output) match the reference's: the difference "
                  "comes after them, in the values v or in what multiplies them")
    if bool((upper_triangle(mine) & (mine.abs() > ZERO)).any()):
        return Bi("\n注意力权重已经和参考答案不同：对角线右上方（未来）分到了权重",
                  "\nthe attention weights already differ from the reference's: positions above "
                  "the diagonal (the future) get weight")
    peak, right = float(mine.max(-1).values.mean()), float(theirs.max(-1).values.mean())
    if abs(peak - right) > 0.1:
        sharper = peak > right
        return Bi(f"\n注意力权重已经和参考答案不同：每行最大的权重平均是 {peak:.2f}，参考答案是 {right:.2f}"
                  + ("：分数比应有的大" if sharper else "：分数比应有的小"),
                  f"\nthe attention weights already differ from the reference's: each row's largest "
                  f"weight is {peak:.2f} on average against {right:.2f}"
                  + (": the scores are larger than they should be" if sharper else
                     ": the scores are smaller than they should be"))
    return Bi("\n注意力权重已经和参考答案不同：差别在 softmax 之前（查询、键、它们的乘积）",
              "\nthe attention weights already differ from the reference's: the difference comes "
              "before softmax (the queries, the keys, their product)")
