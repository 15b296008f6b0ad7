"""Shown work: how a call computes, verified by replaying its record here (grading.judge.replay).

The worker records the aten operations of one call; the judge replays the record on inputs the
worker had not seen, with its own weights, and requires the learner's values. A verified record
*is* the computation: checks for a loop (its length grows with T) or for PyTorch's ready-made
attention read it, and Consistent makes checks that combine many calls check one pure function.
"""
import torch

from grading.checks.expect import fail, not_repeatable_text
from grading.errors import CheckFailed, ReplayError
from grading.i18n import Bi
from grading.judge import replay

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
    the judge set ("query.weight"), in the order it set them, replayed as the judge's own.
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
        if replay.reads_uninitialised(record, list(args), params):
            fail(f"{what} 的结果取决于 torch.empty 这类未初始化的内存里碰巧留下的数（例如 torch.baddbmm 没写 beta=0，"
                 "就会把它的输入加进结果）。请用 torch.zeros 建这个张量，或者写上 beta=0",
                 f"{what}'s result depends on whatever uninitialised memory (torch.empty and the "
                 "like) happened to hold (torch.baddbmm without beta=0, say, adds its input into "
                 "the result). Make that tensor with torch.zeros, or pass beta=0")
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
    """PyTorch's ready-made attention among the operations the records show, by their names,
    each with the public function a learner calls to reach it (never a name the learner gave)."""
    used = set().union(*(replay.attention_used(w["record"]) for w in shown.values()))
    return sorted({next((public for word, public in _PUBLIC.items() if word in name), name)
                   for name in used})


# The aten operators' words, and the function that reaches them: sdpa's math path on the CPU
# shows only _safe_softmax, a name no learner wrote.
_PUBLIC = {"scaled_dot_product": "F.scaled_dot_product_attention",
           "_safe_softmax": "F.scaled_dot_product_attention",
           "multi_head_attention": "nn.MultiheadAttention",
           "transformer_encoder": "nn.TransformerEncoderLayer"}


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


class Consistent:
    """Scenario side: a function of the learner's (or an object of theirs) for checks that combine
    many calls (causality at every t, derivatives, the first position). Its first call is
    recorded; every call's output must then be what that record computes for the call's own
    inputs, so state kept from one call to the next, or work outside torch, cannot make the
    calls agree with each other: the property is checked on one pure function. `params` as
    for shown_work, in the order the judge set them."""

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
