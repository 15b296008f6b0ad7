"""Shown work: *how* a call computes, for the how-checks alone (no Python loop over positions in
the data path, no ready-made attention), verified by replaying its record here
(grading.judge.replay).

Values decide, the record only adds. Every point for *what* the code computes comes from values
the judge compares itself; a record is read only by the two how-checks, and only for calls whose
values are checked too (against the reference, where it is here). Honest host-side work reads as
honest: a read of a tensor into Python (an assert, a print, a bounds check) replays as part of
the program; a tensor the call did not make (a buffer, a mask from numpy or a list, a cache) is a
constant shown by value. The no-loop measure counts the data path (what reads the inputs and the
weights), not the constants; calls of the same sizes must be one data path with the same
constants, so work done outside torch on the inputs, which changes with them, is refused. A
how-check that cannot verify says so under its own name, never as a failed property.
"""
import math

import torch

from grading.checks.expect import CLOSE, expect_close, fail, not_repeatable_text
from grading.errors import CheckFailed, ReplayError
from grading.i18n import Bi
from grading.judge import replay

# A loop of a fixed number of steps must take at least LONG_T steps to be right at T = LONG_T
# (the hidden comparisons grade that length), so its data path holds at least LONG_T
# operations, where a vectorised answer needs a few dozen.
LONG_T = 128
MOST_OPS = LONG_T * 3 // 4  # more operations than this on the data path of one call: a loop


def expect_calls_close(got, want, what, names, atol=CLOSE, rtol=CLOSE):
    """Hidden side: the calls a how-check reads (shown_work's, on the learner's code and on the
    solution's with the same draws) gave the solution's values, within expect_close's
    tolerances: a record of a wrong computation earns nothing that the values do not."""
    for size, calls in got.items():
        for (output, _), (wanted, _) in zip(calls, want.get(size, [])):
            expect_close(output, wanted, what, names, atol=atol, rtol=rtol)


def shown_work(make, sizes, gen):
    """Scenario side. The calls the how-checks read, drawn as the value checks draw theirs, at
    the sizes they grade (so that no size is the how-checks' alone): for each size (a dict of the
    draw's parameters), make(**size) -> (a function of the learner's or an object of theirs,
    draw() -> fresh arguments), then two or three calls of it (how many, `gen` draws: code that
    computes one way on an object's first calls and another on later ones is read at both).
    {"B=2, T=5": [(output, Call), …], …}; the Call is None for the solution's calls, which are
    not verified."""
    shown = {}
    for size in sizes:
        name = ", ".join(f"{k}={v}" for k, v in size.items() if k in ("B", "T", "block_size"))
        function, draw = make(**size)
        count = 2 + int(torch.randint(0, 2, (1,), generator=gen))
        shown[name] = [function.shown(*draw()) for _ in range(count)]
    return shown


def _could_not(what, zh, en):
    return Bi(f"无法验证 {what} 是怎样计算的：{zh}。这一项只看计算的方式（不对位置写循环、亲手搭建）；"
              "你的输出是否正确由其他检查判断",
              f"could not verify how {what} computes: {en}. This check looks only at how the "
              "code computes (no loop over positions, built by hand); whether its values are "
              "right is for the other checks to say")


def unverified(error, what):
    """What the learner reads when the record of `what` cannot be verified (a ReplayError)."""
    name = error.name
    if error.kind == "random":
        return not_repeatable_text(what)
    if error.kind == "made_outside":
        return _could_not(what, f"它用到了一个形状为 {name} 的张量，太大了，评分器看不到它的值",
                          f"it uses a tensor of shape {name}, too large for the grader to see")
    if error.kind == "costly":
        return _could_not(what, "记录下的 torch 运算要评分器算太久（参考答案只要几毫秒）",
                          "its recorded torch operations take the grader too long to replay "
                          "(the solution's take milliseconds)")
    if error.kind == "operation":
        return _could_not(what, f"它用了 {name}，评分器不重放这个运算",
                          f"it uses {name}, an operation the grader does not replay")
    op_zh = f"（{str(error.name)[:80]}）" if error.name else ""
    if error.kind == "size":
        return Bi(f"{what} 一次调用里的 torch 运算太多、或者张量比输入大得太多{op_zh}：是不是对位置写了 Python 循环？",
                  f"{what} makes too many torch operations in one call, or tensors far larger "
                  f"than its inputs ({error}): a Python loop over positions?")
    return _could_not(what, f"记录下的 torch 运算在评分器里重放不出来{op_zh}",
                      f"its recorded torch operations do not replay ({error})")


def verify(call, what):
    """Judge side: the call's record replays here to what the call returned; its Work (the data
    path measured). CheckFailed, in the how-check's own words, otherwise."""
    try:
        work = replay.measure(call.record, list(call.args), call.tensors, budget=call.budget)
    except ReplayError as error:
        raise CheckFailed(unverified(error, what)) from None
    if not replay.same(work.output, call.output):
        if replay.reads_uninitialised(call.record, list(call.args), call.tensors):
            fail(f"{what} 的结果取决于 torch.empty 这类未初始化的内存里碰巧留下的数（例如 torch.baddbmm 没写 beta=0，"
                 "就会把它的输入加进结果）。请用 torch.zeros 建这个张量，或者写上 beta=0",
                 f"{what}'s result depends on whatever uninitialised memory (torch.empty and the "
                 "like) happened to hold (torch.baddbmm without beta=0, say, adds its input into "
                 "the result). Make that tensor with torch.zeros, or pass beta=0")
        raise CheckFailed(_could_not(
            what, "它返回的值和它自己记录下的 torch 运算算出的不一样",
            "it returned other values than its own recorded torch operations compute"))
    return work


def verified(shown, what):
    """Judge side: every call of shown_work verifies, and the calls at each size are one data
    path with the same constants. Returns {size: the data path's operations in a call};
    CheckFailed otherwise. (The same calls' values are compared with the solution's by the
    exercise's hidden test: expect_calls_close.)"""
    lengths = {}
    for size, calls in shown.items():
        programs = set()
        for _, call in calls:
            if call is None:
                continue
            work = verify(call, what)
            programs.add(work.program)
            if work.data_ops >= lengths.get(size, (-1,))[0]:
                lengths[size] = work.data_ops, work.lines
        if len(programs) > 1:
            raise CheckFailed(_could_not(
                what, f"在 {size} 时，两次输入不同的调用做的运算或用到的常数不一样（每次调用的算法不同？"
                "还是在 torch 之外用输入算了什么？）",
                f"at {size}, two calls with other inputs ran other operations or used other "
                "constants (it computes one way on some calls and another way on others? or "
                "something is computed from the inputs outside torch?)"))
    return {size: n for size, (n, _) in lengths.items()}, \
        {size: lines for size, (_, lines) in lengths.items()}


def loops(shown, most=MOST_OPS):
    """For diagnoses: True when every record verifies and their data paths' lengths differ (a
    loop), or one is longer than `most`."""
    try:
        lengths, _ = verified(shown, "")
    except CheckFailed:
        return False
    return _loop(lengths, most) is not None


def _loop(lengths, most):
    """"grows": the data path is longer at some T than at another of the same B; "long": longer
    than `most` at some size; None. Growth is measured between sizes of two or more examples and
    positions (torch itself takes other paths for a dimension of one: einsum drops it, say) and
    of as many examples (the check is of a loop over positions: one over the examples, each
    computed at once, has the property the check names)."""
    if not lengths:
        return None
    if any(len(set(group.values())) > 1 for group in _same_b(_kept(lengths))):
        return "grows"
    return "long" if max(lengths.values()) > most else None


def _kept(by_size):
    return {size: x for size, x in by_size.items()
            if not any(part in ("B=1", "T=1") for part in size.split(", "))}


def _same_b(by_size):
    """by_size's sizes ("B=2, T=5, …") grouped by their B (sizes without one: a group of their
    own): [{size: x, …}, …]."""
    groups = {}
    for size, x in by_size.items():
        b = next((part for part in size.split(", ") if part.startswith("B=")), "")
        groups.setdefault(b, {})[size] = x
    return list(groups.values())


def loop_line(lines, loop):
    """(file, line) of the learner's code where a loop's operations are, from the records' lines
    ({size: {(file, line): operations}}): the first line whose count changes with the size
    ("grows"), or the line of the most operations ("long"); None where the records name none.
    The lines are the worker's own word: a pointer, never a verdict."""
    kept = _kept(lines) or lines
    seen = sorted(set().union(*kept.values())) if kept else []
    if loop == "grows":
        return next((at for at in seen for group in _same_b(kept)
                     if len({per.get(at, 0) for per in group.values()}) > 1), None)
    counts = {at: max(per.get(at, 0) for per in kept.values()) for at in seen}
    return max(seen, key=lambda at: (counts[at], -at[1]), default=None)


def expect_no_loop(shown, what, source=None, most=MOST_OPS):
    """Vectorised ("直接用循环…效率较低"): the verified record of a call does not grow with T or
    B, and holds at most `most` operations (a loop of a fixed number of steps that is right at
    T = LONG_T takes at least LONG_T steps, more than `most`). `source` (the test's
    submission.source) reads the line the records put the loop's operations on: only to say
    where, once the record has shown a loop; it never costs a point."""
    lengths, lines = verified(shown, what)
    loop = _loop(lengths, most)
    if loop is not None:
        at = loop_line(lines, loop)
        text = source.line(*at) if at and source is not None else None
        found = (at[0], at[1], text) if text else None
        at_zh = f"（可能在 {found[0]} 第 {found[1]} 行：{found[2]}）" if found else ""
        at_en = f" (perhaps {found[0]}, line {found[1]}: {found[2]})" if found else ""
        if loop == "grows":
            grown = next(g for g in _same_b(_kept(lengths)) if len(set(g.values())) > 1)
            first = {}  # one size for each length: the numbers that show the growth, no more
            for key, n in grown.items():
                first.setdefault(n, key)
            listed = ", ".join(f"{key}: {n}" for n, key in sorted(first.items())[:3])
            listed_zh = "；".join(f"{key}：{n} 次" for n, key in sorted(first.items())[:3])
            zh = f"{what} 调用 torch 运算的次数随长度 T 变化（{listed_zh}），说明有对位置的 Python 循环"
            en = (f"{what} makes a different number of torch operations as T changes "
                  f"({listed}): a Python loop over positions")
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
    used = set().union(*(replay.attention_used(call.record) for calls in shown.values()
                         for _, call in calls if call is not None))
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


def named_gradients(function, args, names, grad_output, parameters=(), what="forward",
                    checked=True):
    """What training would send back, for expect_gradients: vjp for the first len(names)
    arguments and the weights at `parameters` (attribute paths), as {name: its gradient, or None},
    the weights named "self.<path>"."""
    reply = vjp(function, args, wrt=list(range(len(names))), grad_output=grad_output,
                parameters=list(parameters), what=what, checked=checked)
    reply = reply if isinstance(reply, dict) else {}
    inputs = reply.get("input_grads") if isinstance(reply.get("input_grads"), list) else []
    weights = reply.get("parameter_grads") if isinstance(reply.get("parameter_grads"), dict) else {}
    return {**{name: inputs[k] if k < len(inputs) else None for k, name in enumerate(names)},
            **{f"self.{path}": weights.get(path) for path in parameters}}


def vjp(function, args, wrt, grad_output, parameters=(), what="forward", checked=True):
    """The gradients a call sends back: {"output", "input_grads", "parameter_grads"} as the
    solution's (grading.worker.executor.Executor.vjp), for `wrt` (the arguments' positions) and
    `parameters` (attribute paths of the object's weights the judge set, "query.weight"). They
    are values like any output, compared with the reference's by the tests; and, for the
    learner's code, with how its own forward calls change along a random direction of the
    arguments in wrt (central differences): a backward of its own, or a forward whose gradient
    is another computation's (out = masked + (unmasked − masked).detach()), fails here.
    checked=False, for a diagnosis (which must see the gradients, whatever they are): no
    comparison with the forward calls."""
    reply = function.vjp(args, wrt=wrt, grad_output=grad_output, parameters=parameters)
    if function.trusted or not checked or not wrt or not isinstance(reply, dict):
        return reply
    grads = reply.get("input_grads")
    if not (isinstance(grads, list) and len(grads) == len(wrt) and all(
            isinstance(g, torch.Tensor) and g.is_floating_point()
            and isinstance(args[i], torch.Tensor) and g.shape == args[i].shape
            and bool(torch.isfinite(g).all())
            for g, i in zip(grads, wrt))):
        return reply  # none, or not finite: expect_gradients says so in its own words
    gen = torch.Generator().manual_seed(len(wrt))
    for later in (False, True):  # a random direction, then one in the later positions alone,
        # where a forward that sees the future and a gradient that does not part most
        directions = [_direction(args[i], gen, later) for i in wrt]
        claimed = sum(float((g.double() * d.double()).sum()) for g, d in zip(grads, directions))
        numeric = slope(function, args, wrt, directions, grad_output)
        if numeric is None:
            fail(f"{what} 在离输入一小步的地方没有给出同形状、都是有限数的输出，所以没法用有限差分核对它的梯度",
                 f"{what} gave no output of the same shape and of finite numbers a small step "
                 "away from the input, so its gradient cannot be checked by finite differences")
        if not agree(claimed, numeric):
            fail(f"autograd 通过 {what} 算出的梯度，和它的输出实际怎样随输入变化对不上（沿一个随机方向：梯度给出 "
                 f"{claimed:.4g}，有限差分给出 {numeric:.4g}）：一部分计算被切断在 autograd 之外"
                 "（.detach()、.data、torch.no_grad()，或者自己写的 backward）",
                 f"the gradient autograd computes through {what} disagrees with how its output "
                 f"really changes (along a random direction: the gradient gives {claimed:.4g}, "
                 f"finite differences give {numeric:.4g}): part of the computation is cut off from "
                 "autograd (.detach(), .data, torch.no_grad(), or a backward of one's own)")
    return reply


def _direction(arg, gen, later):
    """A random direction for one argument; later: only in the second half of its positions
    (dimension 1, as (B, T, …) is laid out), zero before."""
    direction = torch.randn(arg.shape, generator=gen)
    if later and arg.dim() >= 2:
        direction[:, :arg.shape[1] // 2] = 0
    return direction


def slope(function, args, wrt, directions, grad_output, step=1e-3):
    """Σ grad_output · (f(args + step·d) − f(args − step·d)) / 2·step, from two forward calls;
    None when they return no tensors of grad_output's shapes, of finite numbers."""
    moved = []
    for sign in (1, -1):
        shifted = list(args)
        for i, d in zip(wrt, directions):
            shifted[i] = args[i] + sign * step * d
        moved.append(function(*shifted))
    wanted = grad_output if isinstance(grad_output, (list, tuple)) else [grad_output]
    pairs = []
    for out in moved:
        if isinstance(grad_output, torch.Tensor) and not isinstance(out, torch.Tensor):
            return None  # one tensor was wanted: a tuple of it is another output
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outs) != len(wanted) or not all(
                isinstance(o, torch.Tensor) and o.is_floating_point() and o.shape == g.shape
                and bool(torch.isfinite(o).all()) for o, g in zip(outs, wanted)):
            return None
        pairs.append(outs)
    return sum(float((g.double() * (a.double() - b.double())).sum())
               for g, a, b in zip(wanted, *pairs)) / (2 * step)


def agree(claimed, numeric):
    """A gradient's directional derivative and central differences of float32 forward calls:
    the tolerance of grading.checks.derivatives, measured on the fair fixtures."""
    return math.isfinite(claimed) and abs(numeric - claimed) <= 2e-2 + 2e-2 * abs(numeric)
