"""The judge side of a test: checks on the outputs a scenario returned, each failing with
CheckFailed and a text in both languages that says what to fix."""
import math

import torch

from grading.errors import CheckFailed
from grading.i18n import Bi
from grading.judge.remote import Remote
from grading.wire.protocol import NotATensor

# The tolerances of every check, by what they decide (float32 arithmetic in another order, or with
# other threads, differs by a few 1e-7):
CLOSE = 1e-5  # two values this close are equal (atol and rtol): a row's sum and 1, an output
#               before and after a change of the future, the learner's and the reference's
ZERO = 1e-6  # an entry at most this is zero: a masked weight, a bias-free output, a leak
NO_GRADIENT = 1e-12  # a gradient at most this is none: an embedding row no id reaches
GRADIENT_CLOSE = 1e-4  # gradients of a loss, summed over many entries, agree this closely

REFERENCE = Bi("参考答案是", "the reference gives")


SHOULD_BE = Bi("应为", "it should be")


def fail(zh, en, key=None, **facts):
    raise CheckFailed(Bi(zh, en), key, **facts)


def shape_text(shape, names=None):
    values = "(" + ", ".join(str(n) for n in shape) + ")"
    return f"({', '.join(names)}) = {values}" if names else values


def index_text(index):
    return "[" + ", ".join(str(i) for i in index) + "]"


def entry(what, index, lang="en"):
    """'out[1, 2]' for a plain name, 'out[:, 0] at [1, 2]' for one that is already indexed. In
    Chinese, the subject of a sentence that goes on with 是: 'out[1, 2] ', 'out[:, 0] 在 [1, 2] 处'
    (a space after code, none after 处)."""
    if "[" not in what:
        return f"{what}{index_text(index)}" + (" " if lang == "zh" else "")
    return f"{what} 在 {index_text(index)} 处" if lang == "zh" else f"{what} at {index_text(index)}"


def sequence_name(value):
    """A tuple or a list, as a Chinese sentence names it: 元组（tuple）, 列表（list）."""
    name = type(value).__name__
    return f"{'元组' if isinstance(value, tuple) else '列表'}（{name}）"


def kind_of(value):
    if isinstance(value, (NotATensor, Remote)):
        return Bi(f"一个 {value.type_name}", f"a {value.type_name}")
    if isinstance(value, torch.Tensor):
        return Bi(f"一个形状为 {shape_text(value.shape)} 的张量",
                  f"one tensor of shape {shape_text(value.shape)}")
    if isinstance(value, (tuple, list)):
        return Bi(f"一个含 {len(value)} 项的{sequence_name(value)}",
                  f"a {type(value).__name__} of {len(value)}")
    return Bi("None", "None") if value is None else Bi(f"一个 {type(value).__name__}",
                                                       f"a {type(value).__name__}")


def spaced(zh):
    """A text that goes right after Chinese: a space before it when it starts with code (是 None,
    but 是一个 tuple)."""
    return f" {zh}" if zh[:1].isascii() else zh


def expect_tensor(value, what, shape=None, names=None):
    """The value is a plain tensor of the given shape, of real floating-point numbers, with no NaN
    or ±inf; returns it as float64."""
    if isinstance(value, (NotATensor, Remote)):
        fail(f"{what} 应当是 torch.Tensor，你的代码返回的却是 {value.type_name}：请用 torch 的运算来计算",
             f"{what} should be a torch.Tensor, but your code returned a {value.type_name}: "
             "compute it with torch operations")
    if not isinstance(value, torch.Tensor):
        kind = kind_of(value)
        fail(f"{what} 应当是 torch.Tensor，你的代码返回的却是{spaced(kind.zh)}",
             f"{what} should be a torch.Tensor, but your code returned {kind.en}",
             key="returned_none" if value is None else "returned_sequence"
             if isinstance(value, (tuple, list)) else None, what=what,
             count=len(value) if isinstance(value, (tuple, list)) else 0)
    if shape is not None and tuple(value.shape) != tuple(shape):
        squeezed = 1 in tuple(shape) and tuple(value.shape) == tuple(n for n in shape if n != 1)
        fail(f"{what} 的形状应为 {shape_text(shape, names)}，实际是 {shape_text(value.shape)}"
             + ("：长度为 1 的维度全都不见了。是不是用了 .squeeze()？它会去掉每一个长度为 1 的维度，"
                "B = 1 或 T = 1 时也一样（一个样本、一个字）" if squeezed else ""),
             f"{what} should have shape {shape_text(shape, names)}, got {shape_text(value.shape)}"
             + (": every dimension of length 1 is gone. A .squeeze()? It drops every dimension "
                "of length 1, B = 1 or T = 1 too (one example, one token)" if squeezed else ""))
    if value.is_complex():
        fail(f"{what} 应当是实数，实际是 {value.dtype}", f"{what} should be real, got {value.dtype}")
    if not value.is_floating_point():  # ints and bools: what a mask or a count is, not a weight
        fail(f"{what} 应当是浮点数的张量（例如 torch.float32），实际是 {value.dtype}：整数或 True/False "
             "表示不了权重和向量",
             f"{what} should hold floating-point numbers (torch.float32, say), got {value.dtype}: "
             "integers or True/False cannot hold weights and vectors")
    value = value.to(torch.float64)
    bad = ~torch.isfinite(value)
    if bad.any():
        where = tuple(bad.nonzero()[0].tolist())
        number = value[where].item()
        if math.isnan(number) and ("softmax" in what or what.startswith("forward(x)")):
            rows = bad.reshape(-1, bad.shape[-1]).all(dim=-1) if bad.dim() else bad
            fail(f"{entry(what, where, 'zh')}是 {number}：输出必须是有限的数（NaN 来自：softmax 沿着一条全是 −∞ 的方向做"
                 "——整行被遮住，或者 softmax 沿错了维度；0 × −∞；填了 +∞；0/0）"
                 + (f"；{int(rows.sum())} 行整行都是 NaN" if bool(rows.any()) else ""),
                 f"{entry(what, where)} is {number}: the output must be finite (NaN comes from a "
                 "softmax along a line that is all −∞: a row masked whole, or a softmax over the "
                 "wrong dimension; from 0 × −∞; from a fill of +∞; from 0/0)"
                 + (f"; {int(rows.sum())} rows are NaN throughout" if bool(rows.any()) else ""))
        fail(f"{entry(what, where, 'zh')}是 {number}：输出必须是有限的数",
             f"{entry(what, where)} is {number}: the output must be finite")
    return value


def expect_close(got, want, what, names=None, atol=CLOSE, rtol=CLOSE, source=REFERENCE,
                 hint=None):
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
        text = Bi(f"{entry(what, worst, 'zh')}是 {g}，{source.zh} {w}（{total} 个数中有 {n} 个不同，最多差 {most}）",
                  f"{at} is {g}, {source.en} {w} ({n} of {total} entries differ, by up to {most})")
        how = relation(got, want)  # what the difference is, when it is a simple one
        if how is not None:
            text = text + Bi("\n" + how.zh, "\n" + how.en)
        raise CheckFailed(text + Bi("\n" + hint.zh, "\n" + hint.en) if hint else text)


def _factor(c):
    """c as the learner may have written it: 2.828 → "√8", 0.3536 → "1/√8", 4 → "4"."""
    for n in range(2, 4097):
        for value, text in ((n ** 0.5, f"√{n}"), (n ** -0.5, f"1/√{n}"), (float(n), f"{n}"),
                            (1 / n, f"1/{n}")):
            if abs(c - value) <= 1e-4 * abs(value) and (text[-1] != "1" or "√" not in text):
                return text if "√" in text or n < 100 else f"{c:.4g}"
    return f"{c:.4g}"


def relation(got, want):
    """A Bi saying how got (float64) relates to want when it is a simple relation: want with the
    last two dimensions swapped, want times one number, or want with its negatives made 0; else
    None. Facts about the values, for the learner to map onto their code."""
    def near(a, b):
        return a.shape == b.shape and bool(torch.allclose(a, b, rtol=1e-4, atol=1e-5))
    if got.dim() >= 2 and got.shape[-1] == got.shape[-2] and got.shape[-1] > 1 \
            and near(got, want.mT):  # (the last two dimensions swapped)
        return Bi("你的结果正好是应有结果的转置（最后两维的行和列互换了）：相乘的顺序或者转置的那一维是不是反了？",
                  "your values are the expected ones transposed (the last two dimensions' rows "
                  "and columns swapped): a product the wrong way round, or the wrong tensor "
                  "transposed?")
    scale = float((got * want).sum() / (want * want).sum()) if float((want * want).sum()) else 0.0
    if scale and abs(scale - 1) > 1e-3 and near(got, scale * want):
        c = _factor(scale)
        return Bi(f"你的每一个数都正好是应有数值的 {c} 倍：差的只是一个缩放的系数",
                  f"every one of your values is exactly {c} times the expected one: only a "
                  "scale factor differs")
    if bool((want < 0).any()) and near(got, want.clamp(min=0)):
        return Bi("你的结果就是应有结果把负数都变成 0（像经过了 ReLU）", "your values are the expected "
                  "ones with every negative number turned into 0 (as a ReLU does)")
    return None


def expect_sequence(value, what, length):
    if not isinstance(value, (tuple, list)) or len(value) != length:
        kind = kind_of(value)
        fail(f"{what} 应当返回 {length} 个张量，实际返回的是{spaced(kind.zh)}",
             f"{what} should return {length} tensors, got {kind.en}")
    return value


def expect_dtype(value, what, dtype=torch.float32):
    """A tensor's numbers are of `dtype` (torch's default, float32, as the lesson's inputs are):
    float64 does not mix with the float32 weights of the next step."""
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != dtype:
        name = str(dtype).replace("torch.", "")
        fail(f"{what} 的数是 {value.dtype}，应当是 {dtype}（torch 默认的类型，课文里的张量都是它）："
             f"它在下一步要和 {name} 的张量、权重相乘，类型不同就会报错",
             f"{what} holds {value.dtype} numbers; it should hold {dtype}, torch's default, "
             f"which the lesson's tensors all have: the next step multiplies it with {name} tensors and weights, and "
             "mixed types are an error")
    return value


def changed_inputs(sent, after, names):
    """[(name, where or None, before, now), …] of the tensor arguments that a call left other than
    the judge sent them (`sent`: the judge's copies; `after`: the worker's report, see
    Remote.call_inputs, from any call's reply); where is None when the shape or the dtype changed."""
    changed = []
    for name, before, now in zip(names, sent, after):
        if not isinstance(now, torch.Tensor) or now.shape != before.shape \
                or now.dtype != before.dtype:
            changed.append((name, None, before, now))
        elif not torch.equal(now, before):  # NaN is never equal: a finite input turned NaN
            where = tuple((now != before).nonzero()[0].tolist())
            changed.append((name, where, before[where].item(), now[where].item()))
    return changed


def expect_inputs_unchanged(sent, after, what, names):
    """The call left its tensor arguments as they were sent: an in-place operation on an input
    (q *= …, scores.masked_fill_(…)) changes the caller's tensor, which a model still uses."""
    if not isinstance(after, list) or len(after) != len(sent):
        fail(f"{what} 调用之后没有交回它的参数", f"{what} did not give its arguments back")
    for name, where, before, now in changed_inputs(sent, after, names)[:1]:
        if where is None:
            kind = kind_of(now)
            zh, en = f"成了{kind.zh}", f"became {kind.en}"
        else:
            zh = f"{entry(name, where)} 从 {before:.4g} 变成了 {now:.4g}"
            en = f"{entry(name, where)} went from {before:.4g} to {now:.4g}"
        fail(f"{what} 原地修改了它的输入 {name}（{zh}）。对输入做原地运算（{name} *= …、{name} += …、"
             f"{name}.masked_fill_(…) 这样带下划线的方法）会把调用者手里的张量也一起改掉，而模型的其余部分还要用它。"
             f"请用不原地修改的写法，它生成一个新张量：{name} = {name} * …、{name}.masked_fill(…)（不带下划线）",
             f"{what} changed its input {name} in place ({en}). An in-place operation on an "
             f"input ({name} *= …, {name} += …, or a method with a trailing underscore such as "
             f"{name}.masked_fill_(…)) changes the caller's tensor too, which the rest of a "
             f"model still uses. Use the out-of-place form, which makes a new tensor: {name} = "
             f"{name} * …, {name}.masked_fill(…) (no underscore)")
    written = getattr(after, "written", None) or []
    for name, wrote in zip(names, written):
        if wrote:  # values as they were, but an in-place operation wrote into the caller's tensor
            fail(f"{what} 对它的输入 {name} 做了原地运算（带下划线的方法，例如 {name}.nan_to_num_()、{name}.clamp_()，"
                 f"或 {name}[…] = …）：这一次数值碰巧没变，但它写进了调用者的张量；需要梯度的张量上这样做会报错，"
                 "输入里真有 NaN 之类时也会被改掉。请用不原地修改的写法，它生成一个新张量（不带下划线的方法）",
                 f"{what} ran an in-place operation on its input {name} (a method with a trailing "
                 f"underscore such as {name}.nan_to_num_() or {name}.clamp_(), or {name}[…] = …): "
                 "the values happened to stay the same here, but it writes into the caller's "
                 "tensor, which fails on a tensor that requires a gradient and would change an "
                 "input that held a NaN, say. Use the out-of-place form, which makes a new "
                 "tensor (the method without the underscore)")


def expect_gradients(got, want, dims=None):
    """The gradients a loss sends back, {name: gradient or None}, are the reference's, `want`:
    each reaches what it reaches in the reference's code (a .detach() or a torch.no_grad()
    cuts it), with its values. `dims`: {name: the names of its dimensions}."""
    got = got if isinstance(got, dict) else {}
    for name, wanted in want.items():
        if not isinstance(got.get(name), torch.Tensor):
            fail(f"{name} 没有得到梯度：用了 .detach()、torch.no_grad() 或 .data？"
                 "数值也许是对的，但这样训练时梯度传不到它，它之前的层什么也学不到",
                 f"{name} gets no gradient: .detach(), torch.no_grad() or .data? The values may "
                 "be right, but in training the gradient could not reach it, and nothing before "
                 "it could learn")
        expect_close(got[name], wanted, f"∂loss/∂{name}", (dims or {}).get(name),
                     atol=GRADIENT_CLOSE, rtol=GRADIENT_CLOSE)


def expect_repeatable(first, again, what):
    """The same input gave the same output twice: nothing random is left on in eval() mode,
    where a check that changes an input must see only what that change did."""
    if isinstance(first, torch.Tensor) and isinstance(again, torch.Tensor) \
            and first.shape == again.shape and not same(first, again):
        not_repeatable(what)


def expect_same_elsewhere(here, there, what):
    """A call made again in a second worker process, where no earlier call of this check ran,
    gave what it gave here: its output depends on its input alone, so a property that combines
    many calls (causality by perturbation) is the code's own, not a memory of earlier calls."""
    if isinstance(here, torch.Tensor) and isinstance(there, torch.Tensor) \
            and here.shape == there.shape and not same(here, there):
        fail(f"同一个输入，{what} 在一个新进程里第一次调用时的输出，和在前面那些调用之后的输出不一样："
             "它把前面调用的什么东西（输入或输出的记忆）带进了这一次。每次调用只能由它自己的输入算出结果",
             f"{what} gave another output for the same input in a fresh process, as its first "
             "call, than it gave after the calls before: it carries something from one call to "
             "the next (a memory of earlier inputs or outputs). Each call must compute from its "
             "own input alone")


def not_repeatable(what):
    raise CheckFailed(not_repeatable_text(what))


def not_repeatable_text(what):
    return Bi(f"同一个输入调用两次 {what}，输出却不一样：里面有随机的东西（例如没有写 training=self.training 的 "
              "F.dropout，或者 torch.rand）。评分时模块处于 eval() 模式，nn.Dropout 会自己关掉；F.dropout 要写 "
              "training=self.training",
              f"{what} gave two different outputs for the same input: something random runs in "
              "it (F.dropout without training=self.training, or torch.rand, say). Grading puts "
              "the module in eval() mode, where nn.Dropout switches itself off; F.dropout needs "
              "training=self.training")


def upper_triangle(t):
    """Mask of the entries above the diagonal of the last two dimensions (the future)."""
    T = t.shape[-1]
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def same(got, want, atol=CLOSE, rtol=CLOSE):
    """got is want within the tests' tolerance (expect_close's); NaN matches NaN and ±∞ the same
    ±∞, so that slips that produce them (an all −∞ row) are recognised too."""
    if not (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)) \
            or got.shape != want.shape or got.is_complex():
        return False
    if got.numel():  # one entry first: most of a slip search's candidates differ there
        g, w = float(got.reshape(-1)[-1]), float(want.reshape(-1)[-1])  # the last position
        if math.isfinite(g) and math.isfinite(w):
            if abs(g - w) > atol + rtol * abs(w):
                return False
        elif not (math.isnan(g) and math.isnan(w)) and g != w:  # NaN for NaN, ±∞ for ±∞ only
            return False
    got, want = got.double(), want.double()
    special = ~torch.isfinite(got) | ~torch.isfinite(want)  # must be the very same NaN or ±∞
    alike = (torch.isnan(got) & torch.isnan(want)) | (torch.isinf(got) & (got == want))
    if not bool((alike | ~special).all()):
        return False
    got, want = torch.where(special, 0, got), torch.where(special, 0, want)
    return bool(((got - want).abs() <= atol + rtol * want.abs()).all())
