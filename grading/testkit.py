"""What the test files use: grade marks, shape sets, scenario helpers, judge-side checks, diagnoses.

A *scenario* is a plain function `(exercise_module, generator, **params) -> outputs`. It runs in a
worker on the submission and in the judge on the solution, with generators seeded alike, and only
produces outputs: every comparison happens in the judge, where the submission cannot reach.

A test file may also define
    HINTS = [Bi(...), Bi(...)]          a nudge, then the lesson's step (never solution code)
    diagnose(probe) -> Diagnosis|None   what a failing exercise's outputs say about the mistake
    diagnose_error(error) -> Diagnosis|None   the same from an exception the learner's code raised
"""
import json

import pytest
import torch

from grading.i18n import Bi
from grading.protocol import NotATensor

# Shape sets that expose silent bugs: B > 1, T < block_size, T != head_size,
# head_size != n_embd (both ways) and vocab_size != n_embd.
SHAPES = [
    dict(B=2, T=5, n_embd=12, head_size=8, block_size=8, vocab_size=11),
    dict(B=3, T=8, n_embd=16, head_size=4, block_size=8, vocab_size=20),
    dict(B=4, T=3, n_embd=6, head_size=10, block_size=9, vocab_size=5),
]
REFERENCE = Bi("参考答案是", "the reference gives")
SHOULD_BE = Bi("应为", "it should be")


def public(points, after=()):
    """A public case: a property the lesson states, checkable without the solution.
    `after` names tests of the same file that must pass first: a quality (no loop, no shortcut)
    earns nothing on code that does not compute the right thing."""
    return pytest.mark.grade(points=points, kind="public", after=tuple(after))


def hidden(points):
    """A hidden case: compares with the solution's outputs, so it needs solutions/."""
    return pytest.mark.grade(points=points, kind="hidden")


# -- scenario side (runs in the worker and in the judge) ------------------------------------------

class Mismatch(Exception):
    """The submission's module lacks the structure the exercise's API fixes. Crosses to the judge
    as JSON, so that both languages and the diagnosis key survive."""

    def __init__(self, zh, en, key=None):
        super().__init__(json.dumps({"zh": zh, "en": en, "key": key}, ensure_ascii=False))


def randn(generator, *shape):
    return torch.randn(*shape, generator=generator)


def linear_weight(generator, n_in, n_out):
    """A weight for nn.Linear(n_in, n_out), shape (n_out, n_in), scaled like PyTorch's init."""
    return randn(generator, n_out, n_in) * n_in ** -0.5


def draw_qkv(gen, B, T, n_embd, head_size):
    """Inputs for exercises 3 and 6, in a fixed order: the query, key and value weights, then x."""
    return {"query": linear_weight(gen, n_embd, head_size),
            "key": linear_weight(gen, n_embd, head_size),
            "value": linear_weight(gen, n_embd, head_size),
            "x": randn(gen, B, T, n_embd)}


def set_linear(module, name, weight):
    """Copy weight into module.<name>.weight, which must be an nn.Linear(n_embd, head_size)'s."""
    n_out, n_in = weight.shape
    layer = getattr(module, name, None)
    if layer is None:
        raise Mismatch(f"缺少 self.{name}：这个练习需要 self.{name} = "
                       "nn.Linear(n_embd, head_size, bias=False)",
                       f"self.{name} is missing: the exercise needs self.{name} = "
                       "nn.Linear(n_embd, head_size, bias=False)")
    current = getattr(layer, "weight", None)
    if not isinstance(current, torch.Tensor):
        raise Mismatch(f"self.{name} 没有 .weight：它应当是一个 nn.Linear",
                       f"self.{name} has no .weight: it should be an nn.Linear")
    if tuple(current.shape) != (n_out, n_in):
        raise Mismatch(f"self.{name}.weight 的形状是 {tuple(current.shape)}，而 nn.Linear(n_embd="
                       f"{n_in}, head_size={n_out}) 的是 ({n_out}, {n_in})",
                       f"self.{name}.weight has shape {tuple(current.shape)}, but "
                       f"nn.Linear(n_embd={n_in}, head_size={n_out}) has ({n_out}, {n_in})",
                       key="linear_shape")
    with torch.no_grad():
        current.copy_(weight)


def set_embedding(module, weight):
    """Copy weight into module.token_embedding_table.weight, a (vocab_size, n_embd) table."""
    vocab_size, n_embd = weight.shape
    table = getattr(module, "token_embedding_table", None)
    current = getattr(table, "weight", None)
    if not isinstance(current, torch.Tensor):
        raise Mismatch("缺少 self.token_embedding_table，或者它不是 nn.Embedding",
                       "self.token_embedding_table is missing or is not an nn.Embedding")
    if tuple(current.shape) != (vocab_size, n_embd):
        raise Mismatch(f"self.token_embedding_table.weight 的形状是 {tuple(current.shape)}，而 "
                       f"nn.Embedding(vocab_size={vocab_size}, n_embd={n_embd}) 的是 "
                       f"({vocab_size}, {n_embd})",
                       f"self.token_embedding_table.weight has shape {tuple(current.shape)}, but "
                       f"nn.Embedding(vocab_size={vocab_size}, n_embd={n_embd}) has "
                       f"({vocab_size}, {n_embd})",
                       key="embedding_shape")
    with torch.no_grad():
        current.copy_(weight)


class _CallCounter(torch.overrides.TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.count, self.names = 0, set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        self.names.add(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def count_torch_calls(function, *args):
    """Run function(*args), counting the torch functions and tensor methods it calls.
    Returns {"calls": n, "names": sorted names}: the same n at every T and B means no Python loop
    over positions or over the batch."""
    counter = _CallCounter()
    with counter:
        function(*args)
    return {"calls": counter.count, "names": sorted(counter.names)}


# -- judge side -----------------------------------------------------------------------------------

class CheckFailed(AssertionError):
    """A check on the submission's outputs failed; `text` is what the learner reads."""

    def __init__(self, text):
        super().__init__(text.en)
        self.text = text


class Diagnosis:
    """The likely mistake behind a failing exercise, named by a key the mistake catalogue uses."""

    def __init__(self, key, zh, en):
        self.key, self.text = key, Bi(zh, en)

    def __repr__(self):
        return f"Diagnosis({self.key!r})"


def fail(zh, en):
    raise CheckFailed(Bi(zh, en))


def shape_text(shape, names=None):
    values = "(" + ", ".join(str(n) for n in shape) + ")"
    return f"({', '.join(names)}) = {values}" if names else values


def index_text(index):
    return "[" + ", ".join(str(i) for i in index) + "]"


def entry(what, index):
    """'out[1, 2]' for a plain name, 'out[:, 0] at [1, 2]' for one that is already indexed."""
    return f"{what} at {index_text(index)}" if "[" in what else f"{what}{index_text(index)}"


def kind_of(value):
    if isinstance(value, NotATensor):
        return Bi(f"一个 {value.type_name}", f"a {value.type_name}")
    if isinstance(value, torch.Tensor):
        return Bi(f"一个形状为 {shape_text(value.shape)} 的张量",
                  f"one tensor of shape {shape_text(value.shape)}")
    if isinstance(value, (tuple, list)):
        return Bi(f"一个含 {len(value)} 项的 {type(value).__name__}",
                  f"a {type(value).__name__} of {len(value)}")
    return Bi("None", "None") if value is None else Bi(f"一个 {type(value).__name__}",
                                                       f"a {type(value).__name__}")


def expect_tensor(value, what, shape=None, names=None):
    """The value is a plain tensor of the given shape with no NaN; returns it as float64."""
    if isinstance(value, NotATensor):
        fail(f"{what} 应当是 torch.Tensor，你的代码返回的却是 {value.type_name}：请用 torch 的运算来计算",
             f"{what} should be a torch.Tensor, but your code returned a {value.type_name}: "
             "compute it with torch operations")
    if not isinstance(value, torch.Tensor):
        kind = kind_of(value)
        fail(f"{what} 应当是 torch.Tensor，你的代码返回的却是{kind.zh}",
             f"{what} should be a torch.Tensor, but your code returned {kind.en}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(f"{what} 的形状应为 {shape_text(shape, names)}，实际是 {shape_text(value.shape)}",
             f"{what} should have shape {shape_text(shape, names)}, got {shape_text(value.shape)}")
    if value.is_complex():
        fail(f"{what} 应当是实数，实际是 {value.dtype}", f"{what} should be real, got {value.dtype}")
    value = value.to(torch.float64)
    bad = ~torch.isfinite(value)
    if bad.any():
        where = tuple(bad.nonzero()[0].tolist())
        number = value[where].item()
        fail(f"{entry(what, where)} 是 {number}：输出必须是有限的数（整行都是 −∞ 的话，softmax 之后就是 NaN）",
             f"{entry(what, where)} is {number}: the output must be finite (a row that is all −∞ "
             "turns into NaN after softmax)")
    return value


def expect_close(got, want, what, names=None, atol=1e-5, rtol=1e-5, source=REFERENCE, hint=None):
    """got matches want elementwise within atol + rtol·|want|, like torch.testing.assert_close.
    `source` says where want comes from: the reference (hidden cases) or the lesson (public);
    `hint`, a Bi, is a second line that says what the check means."""
    got = expect_tensor(got, what, want.shape, names)
    want = want.to(torch.float64)
    diff = (got - want).abs()
    wrong = diff > atol + rtol * want.abs()
    if wrong.any():
        worst = tuple(torch.nonzero(diff == diff.max())[0].tolist())
        at, g, w = entry(what, worst), f"{got[worst].item():.4g}", f"{want[worst].item():.4g}"
        n, total, most = int(wrong.sum()), want.numel(), f"{diff.max().item():.2g}"
        text = Bi(f"{at} 是 {g}，{source.zh} {w}（{total} 个数中有 {n} 个不同，最多差 {most}）",
                  f"{at} is {g}, {source.en} {w} ({n} of {total} entries differ, by up to {most})")
        raise CheckFailed(text + Bi("\n" + hint.zh, "\n" + hint.en) if hint else text)


def expect_sequence(value, what, length):
    if not isinstance(value, (tuple, list)) or len(value) != length:
        kind = kind_of(value)
        fail(f"{what} 应当返回 {length} 个张量，实际返回的是{kind.zh}",
             f"{what} should return {length} tensors, got {kind.en}")
    return value


def expect_same_calls(counts, what):
    """Vectorised: the number of torch calls must not grow with T or B ("直接用循环…效率较低")."""
    calls = {key: c["calls"] for key, c in counts.items()}
    if len(set(calls.values())) > 1:
        listed = ", ".join(f"{key}: {n}" for key, n in calls.items())
        fail(f"{what} 调用 torch 运算的次数随长度或批量变化（{listed}），说明有对位置或样本的 Python 循环。"
             "课文说：直接用循环来求平均效率较低——请用一次矩阵乘法完成",
             f"{what} makes a different number of torch calls as T or B change ({listed}): a "
             "Python loop over positions or samples. The lesson: a loop is slow "
             "(直接用循环来求平均效率较低); do it with one matrix product")


# PyTorch's ready-made attention, as the torch-call counter names it (nn.MultiheadAttention runs
# multi_head_attention_forward).
FORBIDDEN = {"scaled_dot_product_attention", "multi_head_attention_forward"}


def forbidden_calls(counts):
    """The ready-made attention functions among the calls that count_torch_calls saw."""
    return sorted(FORBIDDEN.intersection(set().union(*(c["names"] for c in counts.values()))))


def expect_built_yourself(counts, what):
    used = forbidden_calls(counts)
    if used:
        fail(f"{what} 调用了 PyTorch 现成的注意力（{', '.join(used)}）。这一课的目的就是亲手搭出注意力，"
             "所以这里不能用它：请用课文的步骤，点积、缩放、掩码、softmax、加权求和",
             f"{what} calls PyTorch's ready-made attention ({', '.join(used)}). This lesson is "
             "about building attention yourself, so it is not allowed here: use the lesson's "
             "steps, dot products, scaling, the mask, softmax, a weighted sum")


def shortcut_diagnosis(counts, key):
    used = forbidden_calls(counts)
    if used:
        return Diagnosis(key,
                         f"用了 PyTorch 现成的注意力（{', '.join(used)}）。结果也许是对的，但这一课要你亲手"
                         "走一遍：点积、缩放、掩码、softmax、加权求和，每一步都看得见",
                         f"PyTorch's ready-made attention was used ({', '.join(used)}). The result "
                         "may be right, but this lesson asks you to take every step yourself: dot "
                         "products, scaling, the mask, softmax, the weighted sum, each one visible")
    return None


def upper_triangle(t):
    """Mask of the entries above the diagonal of the last two dimensions (the future)."""
    T = t.shape[-1]
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def close(a, b, tol=1e-4):
    """For diagnoses: a and b are tensors of one shape that agree within tol (relative)."""
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
            and bool(torch.allclose(a.double(), b.double(), rtol=tol, atol=tol)))
