"""What the test files use: grade marks, shape sets, scenario helpers, judge-side checks, diagnoses.

A *scenario* is a plain function `(ex, generator, **params) -> outputs`, where `ex` is an exercise
module: the learner's through grading.judge.remote (each call a request to the worker) or the solution's.
It runs in the judge both times, with generators seeded alike: drawing inputs, perturbing them,
every comparison happens in the judge, where the submission cannot reach.

A test file may also define
    HINTS = [Bi(...), Bi(...)]          a nudge, then the lesson's step (never solution code)
    diagnose(probe) -> Diagnosis|None   what a failing exercise's outputs say about the mistake
    diagnose_error(error) -> Diagnosis|None   the same from an exception the learner's code raised
"""
import itertools
import math

import pytest
import torch

from grading.judge import replay
from grading.i18n import Bi
from grading.wire.protocol import NotATensor
from grading.judge.remote import Remote
from grading.errors import WorkerFailure, CheckFailed, ReplayError

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


# -- scenario side: each scenario runs in the judge, on the learner's module through the worker
#    (grading.judge.remote) and on the solution's, with generators seeded alike --------------------------

class Mismatch(WorkerFailure):
    """The submission's module lacks the structure the exercise's API fixes; `key` is for the
    diagnoses."""

    def __init__(self, zh, en, key=None, **facts):
        super().__init__("raised", Bi(zh, en), error={"type": "Mismatch", "message": en,
                                                       "frames": [], "key": key, **facts})


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
    found = module.set(f"{name}.weight", weight)
    if found.get("missing") == name:
        layers = [path[:-len(".weight")] for path, shape, _ in module.parameters()
                  if path.endswith(".weight") and shape == [n_out, n_in]]
        own = "、".join(f"self.{layer}" for layer in layers)
        raise Mismatch(f"{module.type_name}(…) 建好之后没有 self.{name}：这个练习规定了层的名字，"
                       f"要在 __init__ 里建好 self.{name} = nn.Linear(n_embd, head_size, bias=False)"
                       + (f"（现有的层是 {own}）" if layers else ""),
                       f"{module.type_name}(…) has no self.{name} once built: the exercise fixes the "
                       f"layers' names, and __init__ builds self.{name} = "
                       "nn.Linear(n_embd, head_size, bias=False)"
                       + (f" (its layers are {', '.join(f'self.{x}' for x in layers)})"
                          if layers else ""),
                       key="layer_missing", layer=name, layers=layers)
    if "shape" not in found:
        raise Mismatch(f"self.{name} 没有 .weight：它应当是一个 nn.Linear",
                       f"self.{name} has no .weight: it should be an nn.Linear")
    if found["shape"] != [n_out, n_in]:
        shape = tuple(found["shape"])
        raise Mismatch(f"self.{name}.weight 的形状是 {shape}，而 nn.Linear(n_embd="
                       f"{n_in}, head_size={n_out}) 的是 ({n_out}, {n_in})",
                       f"self.{name}.weight has shape {shape}, but "
                       f"nn.Linear(n_embd={n_in}, head_size={n_out}) has ({n_out}, {n_in})",
                       key="linear_shape", shape=shape, n_embd=n_in, head_size=n_out, layer=name)


def set_embedding(module, weight):
    """Copy weight into module.token_embedding_table.weight, a (vocab_size, n_embd) table."""
    vocab_size, n_embd = weight.shape
    found = module.set("token_embedding_table.weight", weight)
    if found.get("missing") == "token_embedding_table":
        raise Mismatch("TokenEmbedding(vocab_size, n_embd) 建好之后没有 self.token_embedding_table：这张表要在 "
                       "__init__ 里建一次，self.token_embedding_table = nn.Embedding(vocab_size, n_embd)，"
                       "forward 里只负责查表",
                       "TokenEmbedding(vocab_size, n_embd) has no self.token_embedding_table once "
                       "built: the table belongs in __init__, built once, "
                       "self.token_embedding_table = nn.Embedding(vocab_size, n_embd); forward only "
                       "looks ids up in it", key="embedding_missing")
    if "shape" not in found:
        kind = module.inspect("token_embedding_table").get("type", "")
        raise Mismatch(f"self.token_embedding_table 是 {kind}，没有 .weight 这张表：它应当是 "
                       "nn.Embedding(vocab_size, n_embd)",
                       f"self.token_embedding_table is a {kind} with no .weight table: it should be "
                       "an nn.Embedding(vocab_size, n_embd)")
    if found["shape"] != [vocab_size, n_embd]:
        shape = tuple(found["shape"])
        raise Mismatch(f"self.token_embedding_table.weight 的形状是 {shape}，而 "
                       f"nn.Embedding(vocab_size={vocab_size}, n_embd={n_embd}) 的是 "
                       f"({vocab_size}, {n_embd})",
                       f"self.token_embedding_table.weight has shape {shape}, but "
                       f"nn.Embedding(vocab_size={vocab_size}, n_embd={n_embd}) has "
                       f"({vocab_size}, {n_embd})",
                       key="embedding_shape", shape=shape, vocab_size=vocab_size, n_embd=n_embd,
                       kind=module.inspect("token_embedding_table").get("type", ""))


def raises(call, *args):
    """The name of the exception the learner's call raised, or "" when it returned."""
    try:
        call(*args)
        return ""
    except WorkerFailure as failure:
        if failure.kind != "raised":
            raise
        return failure.error.get("type", "")


def trainable_shapes(module):
    return [shape for _, shape, requires_grad in module.parameters() if requires_grad]


def returned_or_raised(call, *args):
    """(what the learner's call returned, "") or (None, the name of the exception it raised)."""
    try:
        return call(*args), ""
    except WorkerFailure as failure:
        if failure.kind != "raised":
            raise
        return None, failure.error.get("type", "") or "Exception"


# -- judge side -----------------------------------------------------------------------------------

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
             f"{what} should be a torch.Tensor, but your code returned {kind.en}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(f"{what} 的形状应为 {shape_text(shape, names)}，实际是 {shape_text(value.shape)}",
             f"{what} should have shape {shape_text(shape, names)}, got {shape_text(value.shape)}")
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
            fail(f"{entry(what, where, 'zh')}是 {number}：输出必须是有限的数（整行都是 −∞ 的话，softmax 之后就是 NaN）",
                 f"{entry(what, where)} is {number}: the output must be finite (a row that is all "
                 "−∞ turns into NaN after softmax)")
        fail(f"{entry(what, where, 'zh')}是 {number}：输出必须是有限的数",
             f"{entry(what, where)} is {number}: the output must be finite")
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
        text = Bi(f"{entry(what, worst, 'zh')}是 {g}，{source.zh} {w}（{total} 个数中有 {n} 个不同，最多差 {most}）",
                  f"{at} is {g}, {source.en} {w} ({n} of {total} entries differ, by up to {most})")
        raise CheckFailed(text + Bi("\n" + hint.zh, "\n" + hint.en) if hint else text)


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
    Remote.call_inputs); where is None when the shape or the dtype changed."""
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


# -- shown work: how a call computes, verified by replaying its record here (grading.replay) --------

# Two batch sizes and three lengths, one long: a loop of a fixed number of steps (64 steps, or
# block_size, whatever T is) must take at least as many as the longest T, and its record is then
# far longer than any vectorised answer's (a head takes 24 to 56 operations in the 35 right heads
# of selftest/submissions; an average 5 to 16).
LOOP_SIZES = ((2, 4), (2, 8), (4, 4), (2, 40))
LONG_T = 40


def shown_work(function, make_args, sizes=LOOP_SIZES, params=None):
    """Scenario side. At each (B, T) of sizes: the record of one call of function (a function of
    the learner's, or an object of theirs) on make_args(B, T), then its output for fresh arguments
    drawn after the record came back. `params`: {attribute path: tensor} of the object's tensors
    the judge set ("query.weight"), replayed as the judge's own.
    {"B=2, T=4": {"record", "args", "output", "params"}, …}"""
    shown = {}
    for B, T in sizes:
        record = function.trace(*make_args(B, T), params=list(params or {}))
        args = make_args(B, T)
        shown[f"B={B}, T={T}"] = {"record": record, "args": args, "output": function(*args),
                                  "params": params or {}}
    return shown


def unverified(error, what):
    """What the learner reads when the record of `what` cannot be verified (a ReplayError)."""
    name = error.name
    if error.kind == "random":
        return not_repeatable_text(what)
    if error.kind == "outside":
        return Bi(f"{what} 把张量里的数取到了 Python 里（{name}：.item()、.tolist()、float(…) 之类）。评分器只能验证"
                  "在张量上做的 torch 运算：请让每一步都留在 torch 里",
                  f"{what} takes numbers out of tensors into Python ({name}: .item(), "
                  ".tolist(), float(…) and the like). The grader can only verify torch "
                  "operations on tensors: keep every step in torch")
    if error.kind == "operation":
        return Bi(f"{what} 用了 {name}，评分器不重放这个运算（它只验证纯粹的张量运算）：请用课文里的运算来写这一步"
                  "（矩阵乘法、masked_fill、softmax……）",
                  f"{what} uses {name}, an operation the grader does not replay (it verifies "
                  "pure tensor operations only): write this step with the lesson's operations "
                  "(matrix products, masked_fill, softmax, …)")
    # the replay's own words are English: in Chinese, only the operation to blame (code)
    op_zh = f"（{str(error.name)[:80]}）" if error.name else ""
    if error.kind == "size":
        return Bi(f"{what} 一次调用里的 torch 运算太多、或者张量比输入大得太多{op_zh}：是不是对位置写了 Python 循环？",
                  f"{what} makes too many torch operations in one call, or tensors far larger "
                  f"than its inputs ({error}): a Python loop over positions?")
    return Bi(f"{what} 报告的 torch 运算在新的输入上跑不通{op_zh}",
              f"the torch operations {what} reports do not run on new inputs ({error})")


def verified(shown, what):
    """Judge side: each record, replayed here on the fresh arguments, gives what the learner's
    code returned for them. Returns {size: the number of operations}; CheckFailed otherwise."""
    for work in shown.values():
        expect_replays_to(work["record"], work["args"], work["params"], work["output"], what)
    return {size: replay.length(work["record"]) for size, work in shown.items()}


def expect_replays_to(record, args, params, output, what):
    """The record, replayed here on args (with the judge's params), gives output."""
    try:
        replayed = replay.replay(record, list(args), params)
    except ReplayError as error:
        raise CheckFailed(unverified(error, what)) from None
    if not replay.same(replayed, output):
        outside(what)


def outside(what):
    fail(f"对新的输入，{what} 返回的值和它自己记录下的 torch 运算算出的不一样：有一部分计算不在 torch 里"
         f"（numpy、从张量里取出来的 Python 数），或者 {what} 在两次调用之间记住了什么。"
         "评分器只能验证在这次调用的输入上做的 torch 运算",
         f"for new inputs, {what} returned other values than its own recorded torch "
         "operations compute: part of the work happens outside torch (numpy, Python numbers "
         f"taken out of tensors), or {what} keeps something from one call to the next. The "
         "grader can only verify torch operations on the call's own inputs")


def loops(shown, most=150):
    """For diagnoses: True when every record verifies and their lengths differ (a loop)."""
    try:
        lengths = verified(shown, "")
    except CheckFailed:
        return False
    return len(set(lengths.values())) > 1 or max(lengths.values()) > most


def expect_no_loop(shown, what, where=None, most=150):
    """Vectorised ("直接用循环…效率较低"): the verified record of a call does not grow with T or
    B, and holds at most `most` operations (a loop of a fixed number of steps, as many as the
    longest T or more, holds several times that). `where()` may point to the line of a loop in
    the learner's source: only to say where, once the record has shown one; reading the source
    never costs a point."""
    lengths = verified(shown, what)
    if len(set(lengths.values())) > 1 or max(lengths.values()) > most:
        found = (where() or [None])[0] if where else None
        at_zh = f"（可能在 {found[0]} 第 {found[1]} 行：{found[2]}）" if found else ""
        at_en = f" (perhaps {found[0]}, line {found[1]}: {found[2]})" if found else ""
        if len(set(lengths.values())) > 1:
            first = {}  # one size for each length: the numbers that show the growth, no more
            for key, n in lengths.items():
                first.setdefault(n, key)
            listed = ", ".join(f"{key}: {n}" for n, key in sorted(first.items())[:3])
            listed_zh = "；".join(f"{key}：{n} 次" for n, key in sorted(first.items())[:3])
            zh = f"{what} 调用 torch 运算的次数随长度或批量变化（{listed_zh}），说明有对位置或样本的 Python 循环"
            en = (f"{what} makes a different number of torch operations as T or B change "
                  f"({listed}): a Python loop over positions or samples")
        else:
            n = max(lengths.values())
            zh = (f"{what} 一次调用要做 {n} 个 torch 运算（不用循环的写法只要几十个），说明有一个步数固定的 "
                  "Python 循环，每一步处理一个位置")
            en = (f"{what} makes {n} torch operations in one call (an answer without a loop makes a "
                  "few dozen): a Python loop of a fixed number of steps, one position a step")
        fail(f"{zh}{at_zh}。课文说：直接用循环来求平均效率较低——请用一次矩阵乘法完成",
             f"{en}{at_en}. The lesson: a loop is slow (直接用循环来求平均效率较低); do it with one "
             "matrix product")


def ready_made(shown):
    """PyTorch's ready-made attention among the operations the records show, by their names."""
    return sorted(set().union(*(replay.attention_used(w["record"]) for w in shown.values())))


def expect_built_yourself(shown, what):
    """No ready-made attention among the operations of the verified record of a call."""
    used = ready_made(shown)
    if used:
        fail(f"{what} 调用了 PyTorch 现成的注意力（{'、'.join(used)}）。这一课的目的就是亲手搭出注意力，"
             "所以这里不能用它：请用课文的步骤，点积、缩放、掩码、softmax、加权求和",
             f"{what} calls PyTorch's ready-made attention ({', '.join(used)}). This lesson is "
             "about building attention yourself, so it is not allowed here: use the lesson's "
             "steps, dot products, scaling, the mask, softmax, a weighted sum")
    verified(shown, what)


def shortcut_diagnosis(shown, key):
    used = ready_made(shown) if isinstance(shown, dict) else []
    if used:
        return Diagnosis(key,
                         f"用了 PyTorch 现成的注意力（{'、'.join(used)}）。结果也许是对的，但这一课要你亲手"
                         "走一遍：点积、缩放、掩码、softmax、加权求和，每一步都看得见",
                         f"PyTorch's ready-made attention was used ({', '.join(used)}). The result "
                         "may be right, but this lesson asks you to take every step yourself: dot "
                         "products, scaling, the mask, softmax, the weighted sum, each one visible")
    return None


def modifies_input_diagnosis(exercise, function, names, fix):
    """The values are right at every graded size, but the call changes its inputs in place
    (test_inputs_unchanged). Nothing here says the values are right: the in-place change may
    also break autograd, and that crash may be what the learner sees first."""
    listed = ", ".join(names)
    return Diagnosis(f"{exercise}.modifies_input",
                     f"{function} 原地修改了它的输入 {listed}（*=、+=，或者 masked_fill_ 这样带下划线的方法）："
                     "调用者手里的张量也被改掉了；如果 autograd 为求梯度存下的张量被覆盖，反向传播还会出错。"
                     f"用不原地修改的写法生成新张量，例如 {fix}",
                     f"{function} changes its input {listed} in place (*=, +=, or a method with a "
                     "trailing underscore such as masked_fill_): the caller's tensor is changed "
                     "too, and when a tensor autograd saved for the gradient is overwritten, the "
                     f"backward pass fails as well. Make a new tensor instead, as in {fix}")


def changed_everywhere(probe, scenario, shapes, names):
    """For diagnoses: the names of the inputs that the learner's call changed at every one of
    `shapes` (`scenario` gives the judge's copies and the worker's report, see call_inputs)."""
    found = [{name for name, *_ in changed_inputs(*probe.submission(scenario, **shape), names)}
             for shape in shapes]
    return [name for name in names if all(name in f for f in found)]


class Consistent:
    """Scenario side: a function of the learner's (or an object of theirs) for checks that combine
    many calls (causality at every t, derivatives, the first position). Its first call is
    recorded; every call's output must then be what that record computes for the call's own
    inputs, so state kept from one call to the next, or work outside torch, cannot make the
    calls agree with each other: the property is checked on one pure function."""

    def __init__(self, function, what, params=None):
        self.function, self.what, self.params = function, what, params or {}
        self.records = {}  # the arguments' shapes -> the record of the first call with them

    def _recorded(self, args):
        """The record of the first call with these arguments' shapes (a record holds the sizes
        of its call), made before that call runs."""
        key = shapes_of(args)
        if key not in self.records:
            self.records[key] = self.function.trace(*args, params=list(self.params))
        return self.records[key]

    def __call__(self, *args):
        if self.function.trusted:  # the solution's
            return self.function(*args)
        record = self._recorded(args)
        output = self.function(*args)
        expect_replays_to(record, args, self.params, output, self.what)
        return output

    def vjp(self, args, **kwargs):
        if self.function.trusted:
            return self.function.vjp(args, **kwargs)
        record = self._recorded(args)
        reply = self.function.vjp(args, **kwargs)
        if isinstance(reply, dict):
            expect_replays_to(record, args, self.params, reply.get("output"), self.what)
        return reply


def shapes_of(args):
    return tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else repr(a) for a in args)


# -- derivatives ----------------------------------------------------------------------------------

def row_gradients(function, inputs, future, gen):
    """The gradient that out[t] sends back to the input, for every t at once: `inputs` (T, T, …)
    holds T copies of one example, and copy t's output gradient is random at row t, 0 elsewhere.
    `future` marks, for copy t, the input entries that belong to positions after t.
    Returns {"output": the forward call's output, "grad": the reported gradient (None when the
    output carries none), "agreement": [(the reported gradient along a direction, finite
    differences of forward calls along it), …]} for a random direction and one in the future
    alone: a worker cannot report gradients that its own forward pass does not have. Whatever
    comes back, expect_row_gradients judges it; nothing here assumes a shape or a type."""
    with_rows = function(inputs)
    result = {"grad": None, "agreement": [], "output": with_rows, "inputs": tuple(inputs.shape)}
    if not (_real(with_rows) and with_rows.dim() == inputs.dim()
            and with_rows.shape[:2] == inputs.shape[:2]):
        return result  # no T copies of T rows: expect_row_gradients says what came instead
    if not same(function(inputs), with_rows):  # randomness: no derivative to compare
        return {**result, "random": True}
    grad_output = torch.zeros(with_rows.shape)
    for t in range(inputs.shape[0]):
        grad_output[t, t] = randn(gen, *with_rows.shape[2:])
    reply = function.vjp([inputs], wrt=[0], grad_output=grad_output)
    grads = reply.get("input_grads") if isinstance(reply, dict) else None
    grad = grads[0] if isinstance(grads, list) and len(grads) == 1 else None
    result.update(grad=grad, vjp_output=reply.get("output") if isinstance(reply, dict) else None)
    if not (_real(grad) and grad.shape == inputs.shape and bool(torch.isfinite(grad).all())):
        return result
    for direction in (randn(gen, *inputs.shape), randn(gen, *inputs.shape) * future):
        claimed = float((grad.double() * direction.double()).sum())
        result["agreement"].append(
            (claimed, finite_difference(function, inputs, direction, grad_output)))
    return result


def _real(value):
    """A plain tensor of real floating-point numbers."""
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def finite_difference(function, inputs, direction, grad_output, step=1e-3):
    """Σ grad_output · (f(x + step·d) − f(x − step·d)) / 2·step: the directional derivative that an
    honest vector-Jacobian product must agree with. None when the calls return no such tensor of
    finite numbers."""
    ahead = function(inputs + step * direction)
    behind = function(inputs - step * direction)
    if not all(_real(t) and t.shape == grad_output.shape and bool(torch.isfinite(t).all())
               for t in (ahead, behind)):
        return None
    return float((grad_output.double() * (ahead.double() - behind.double())).sum() / (2 * step))


def expect_repeatable(first, again, what):
    """The same input gave the same output twice: nothing random is left on in eval() mode,
    where a check that changes an input must see only what that change did."""
    if isinstance(first, torch.Tensor) and isinstance(again, torch.Tensor) \
            and first.shape == again.shape and not same(first, again):
        not_repeatable(what)


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


def expect_row_gradients(result, what, call, shape, names):
    """The output of `call` (T copies × T rows: `shape`, named `names`) is finite, its gradient
    came back as finite numbers of the input's shape, and it agrees with the forward pass; returns
    the gradient (float64). Every comparison is made on finite numbers only: with a NaN, `>` and
    `<=` are both false, and a check written with them would pass."""
    if result.get("random"):
        not_repeatable(what)
    expect_tensor(result["output"], call, shape, names)  # shape, dtype, NaN and inf
    grad, vjp_output = result["grad"], result.get("vjp_output")
    if grad is None and not isinstance(vjp_output, torch.Tensor):
        kind = kind_of(vjp_output)
        fail(f"{what} 在计算梯度时应当返回一个张量，实际返回的是{spaced(kind.zh)}，没法检查它的梯度",
             f"{what} should return one tensor when its gradient is computed, but it returned "
             f"{kind.en}, whose gradient cannot be checked")
    if grad is None:
        fail(f"{what} 的输出不带梯度：里面用了 torch.no_grad() 或 .detach()？这样模型就没法通过它学习",
             f"the output of {what} carries no gradient: torch.no_grad() or .detach() inside? "
             "A model could not learn through it")
    inputs = shape_text(result["inputs"])
    if not _real(grad) or tuple(grad.shape) != result["inputs"]:
        kind = kind_of(grad)
        fail(f"autograd 通过 {what} 传回的梯度应当是形状为 {inputs} 的浮点张量，和输入一样，实际是{spaced(kind.zh)}",
             f"the gradient autograd sends back through {what} should be a floating-point "
             f"tensor of the input's shape {inputs}, but it is {kind.en}")
    if not bool(torch.isfinite(grad).all()):
        fail(f"autograd 通过 {what} 传回的梯度里有 NaN 或 ±∞：梯度必须是有限的数（课文里的每一步都有有限的导数）",
             f"the gradient autograd sends back through {what} holds NaN or ±inf: a gradient "
             "must be finite (every step of the lesson has a finite derivative)")
    if len(result["agreement"]) != 2:
        raise AssertionError("row_gradients checked no direction")  # the judge's own bug
    for claimed, numeric in result["agreement"]:
        if numeric is None:
            fail(f"{what} 在离输入一小步的地方没有给出同形状、都是有限数的输出，所以没法用有限差分核对它的梯度",
                 f"{what} gave no output of the same shape and of finite numbers a small step "
                 "away from the input, so its gradient cannot be checked by finite differences")
        if not (math.isfinite(claimed) and abs(numeric - claimed) <= 2e-2 + 2e-2 * abs(numeric)):
            fail(f"autograd 通过 {what} 算出的梯度，与它的输出实际怎样随输入变化对不上（沿一个随机方向：梯度给出 "
                 f"{claimed:.4g}，有限差分给出 {numeric:.4g}）：要么有一部分计算被切断在 autograd 之外（里面用了 "
                 ".detach()、.data 或 torch.no_grad()？），要么输出只能一大步一大步地变（例如给分数加上 1e9 "
                 "这样巨大的数，会抹掉它们的精度）",
                 f"the gradient autograd computes through {what} disagrees with how its output "
                 f"really changes (along a random direction: the gradient gives {claimed:.4g}, "
                 f"finite differences give {numeric:.4g}): either part of the computation is cut "
                 "off from autograd (.detach(), .data or torch.no_grad() inside?), or the output "
                 "changes only in coarse steps (a huge number such as 1e9 added to the scores "
                 "wipes out their precision)")
    return grad.double()


def upper_triangle(t):
    """Mask of the entries above the diagonal of the last two dimensions (the future)."""
    T = t.shape[-1]
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def close(a, b, tol=1e-4):
    """For diagnoses: a and b are tensors of one shape, of finite real numbers, that agree within
    tol (relative). Outputs of NaN or ±inf are close to nothing: they match no cause here (the
    slip search's `same` is the one that recognises the NaN of an all −∞ row)."""
    return (finite(a) is not None and finite(b) is not None and a.shape == b.shape
            and bool(torch.allclose(a.double(), b.double(), rtol=tol, atol=tol)))


def finite(value, shape=None):
    """For diagnoses: value as float64 when it is a tensor of finite real floating-point numbers
    (of `shape`, when given), else None: a diagnosis reasons only on numbers a mistake makes."""
    if not (isinstance(value, torch.Tensor) and value.is_floating_point()) \
            or (shape is not None and tuple(value.shape) != tuple(shape)):
        return None
    value = value.double()
    return value if bool(torch.isfinite(value).all()) else None


# -- the mistake space: which combination of known slips makes the learner's output --------------
#
# A diagnosis by search. An exercise's computation is written as a few *steps* of the lesson (which
# layer makes q, what the scores are scaled by, what the future is filled with, …); each step is a
# list of *ways*, the lesson's own first, then the slips learners make. The test file gives a
# `compute(pick)` that runs the lesson's computation in the judge, in float64, on the very inputs
# the learner's code got, with `pick` = {step: the chosen way's value}. We try every combination of
# up to `most` slips and keep those whose output is the learner's. A cause is named only when
# exactly one combination is left: two different stories that give the same numbers say nothing.

class Way:
    """One way of doing one step: `key` names it in diagnosis keys, zh/en say what differs from
    the lesson (and what the lesson does), `value` is what compute() uses for it."""

    def __init__(self, key, value, zh="", en=""):
        self.key, self.value = key, value
        self.text = Bi(zh, en) if zh or en else None  # the lesson's own way has nothing to say

    def __repr__(self):
        return f"Way({self.key!r})"


def same(got, want, atol=1e-5, rtol=1e-5):
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


def slips(steps, compute, got, most=2):
    """The smallest combinations of slips (tuples of Ways, in the steps' order) whose output is
    got; [] when the lesson's own way gives got. `steps` is {step: [lesson's Way, slip, …]}.
    A combination that holds a smaller matching one is skipped: its extra slip changes nothing
    here (the fill value when there is no mask), so it tells no different story."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: more threads only add waiting, on a busy machine much
    try:
        return _slips(steps, compute, got, most)
    finally:
        torch.set_num_threads(threads)


def _slips(steps, compute, got, most):
    lesson = {step: ways[0].value for step, ways in steps.items()}
    if _output(compute, lesson, got):
        return []
    found = []
    for n in range(1, most + 1):
        for chosen in itertools.combinations(steps, n):  # n different steps…
            for ways in itertools.product(*(steps[s][1:] for s in chosen)):  # …each one slipped
                if any(set(f) <= set(ways) for f in found):
                    continue
                pick = {**lesson, **{s: w.value for s, w in zip(chosen, ways)}}
                if _output(compute, pick, got):
                    found.append(ways)
    return found


def _output(compute, pick, got):
    try:
        return same(got, compute(pick))
    except (RuntimeError, IndexError, ValueError):  # a slip that cannot run on these shapes
        return False


def named_slips(steps, draws, prefix, most=2):
    """The Diagnosis of the combination of slips behind the learner's outputs, or None.
    `draws` yields (got, compute) for one draw of inputs after another, best with other sizes:
    every draw must confirm a combination (so a constant that happens to equal a size in one
    draw, a hard-coded 8 for head_size, is no slip of the lesson's), and of those confirmed, the
    one with the fewest slips is named, when no other is as small (the simplest story: all three
    of q, k, v out of one layer, not two slips that add up to the same)."""
    found = None
    for got, compute in draws:
        if found is None:
            found = slips(steps, compute, got, most)
        else:
            found = [ways for ways in found if _output(compute, _pick(steps, ways), got)]
        if not found:
            return None
    fewest = [ways for ways in found if len(ways) == min(map(len, found))]
    return slip_diagnosis(prefix, fewest[0]) if len(fewest) == 1 else None


def _pick(steps, ways):
    chosen = {w: s for s, options in steps.items() for w in options if w in ways}
    return {s: next((w.value for w in ways if chosen[w] == s), options[0].value)
            for s, options in steps.items()}


COUNTS = {2: ("两", "Two"), 3: ("三", "Three")}


def slip_diagnosis(prefix, ways):
    """Diagnosis(prefix + the slips' keys sorted and joined by "+"), its text the slips' own: one
    slip's text as it is; several as "Two things differ from the lesson: (1) … (2) …"."""
    key = prefix + "+".join(sorted(w.key for w in ways))
    if len(ways) == 1:
        return Diagnosis(key, ways[0].text.zh, ways[0].text.en)
    zh_n, en_n = COUNTS.get(len(ways), (str(len(ways)), str(len(ways))))
    zh = f"有{zh_n}处和课文不同：" + "；".join(f"（{i}）{w.text.zh}" for i, w in enumerate(ways, 1))
    en = f"{en_n} things differ from the lesson: " + "; ".join(
        f"({i}) {w.text.en}" for i, w in enumerate(ways, 1))
    return Diagnosis(key, zh, en)


def lesson(steps):
    """The pick of the lesson's own way at every step."""
    return {step: ways[0].value for step, ways in steps.items()}
