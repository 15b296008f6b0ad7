"""Shown work: how a call computes, verified by replaying its record here (grading.judge.replay).

Every call a worker answers comes with its record: the aten operations it ran, as data. A check
that needs to know *how* the code computes verifies every call it makes: the record must be
complete (every tensor in it an input, a result of its operations, one of the object's own tensors,
or a number), replay here to exactly what the call returned, and be the same program as every
other call of the check with arguments of the same sizes. So code that behaves only on the first
call, or only while its operations are recorded, gains nothing; and a verified record *is* the
computation: checks for a loop (its length grows with T, or it is long at a T no fixed loop
covers), for PyTorch's ready-made attention, and for gradients (autograd over the replayed record,
here) read it. Consistent makes checks that combine many calls check one pure function.
"""
import torch

from grading.checks.expect import fail, not_repeatable_text
from grading.errors import CheckFailed, ReplayError
from grading.i18n import Bi
from grading.judge import replay

# Two batch sizes and three lengths, one long: a loop of a fixed number of steps must take at
# least LONG_T steps to be right at T = LONG_T (the hidden comparisons grade that length too), so
# its record holds at least LONG_T operations, where a vectorised answer needs a few dozen (a head
# takes 24 to 56 in the right heads of selftest/submissions; an average 5 to 16).
LONG_T = 128
LOOP_SIZES = ((2, 4), (2, 8), (4, 4), (2, LONG_T))
MOST_OPS = LONG_T * 3 // 4  # more operations than this in one call: a loop


def shown_work(function, make_args, sizes=LOOP_SIZES):
    """Scenario side. At each (B, T) of sizes, two calls of function (a function of the learner's,
    or an object of theirs) on make_args(B, T), each drawn fresh. {"B=2, T=4": [Call, Call], …}"""
    return {f"B={B}, T={T}": [function.shown(*make_args(B, T))[1] for _ in range(2)]
            for B, T in sizes}


def unverified(error, what):
    """What the learner reads when the record of `what` cannot be verified (a ReplayError)."""
    name = error.name
    if error.kind == "random":
        return not_repeatable_text(what)
    if error.kind == "made_outside":
        return Bi(f"{what} 用到了一个形状为 {name} 的张量，它不是这次调用里任何一个 torch 运算算出来的：是在 torch 之外做的"
                  "（Python 循环或列表、numpy、torch.tensor(…) 装进的 Python 数），或者是上一次调用留下的。"
                  "评分器只能验证在这次调用的输入、对象自己的参数和 register_buffer 存下的张量上做的 torch 运算："
                  "请用 torch 运算来算它，或者在 __init__ 里用 register_buffer 把它存进对象",
                  f"{what} uses a tensor of shape {name} that no torch operation of this call "
                  "made: it was made outside torch (a Python loop or list, numpy, Python numbers "
                  "put into torch.tensor(…)), or kept from an earlier call. The grader can only "
                  "verify torch operations on the call's inputs and on the object's own "
                  "parameters and buffers: compute it with torch operations, or keep it in the "
                  "object with register_buffer in __init__")
    if error.kind == "autograd":
        return Bi(f"autograd 没法通过 {what} 算出梯度：是不是对 autograd 还要用到的张量做了原地修改"
                  "（masked_fill_、+= 之类）？请改用不带下划线的版本，得到一个新张量",
                  f"autograd cannot compute the gradient through {what} ({error}): an in-place "
                  "change (masked_fill_, += and the like) to a tensor autograd still needs? Use "
                  "the version without the underscore, which makes a new tensor")
    if error.kind == "costly":
        return Bi(f"{what} 记录下的 torch 运算要评分器算太久才能验证（参考答案只要几毫秒）",
                  f"the torch operations {what} recorded take the grader too long to verify "
                  "(the solution's take milliseconds)")
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
    return Bi(f"{what} 记录下的 torch 运算在评分器里重放不出来{op_zh}",
              f"the torch operations {what} recorded do not replay ({error})")


def verify(call, what):
    """Judge side: the call's record is complete, replays here to what the call returned, and the
    object's tensors are as its first call showed them; CheckFailed otherwise. `call`: a Call
    (grading.judge.remote), or None for the solution's calls, which need no verifying."""
    if call is None:
        return
    missing = sorted(set(p for p in replay.references(call.record, "param") if type(p) is str)
                     - set(call.tensors))
    if call.changed or missing:
        kept(what, call.changed or missing[0])
    expect_replays_to(call.record, call.args, call.tensors, call.output, what, call.budget)


def expect_same_program(calls, what):
    """Calls with arguments of the same sizes (on the same object) computed the same way."""
    programs = {}
    for call in calls:
        if call is not None and programs.setdefault(call.key, call.program()) != call.program():
            fail(f"{what} 对同样大小的输入，这一次调用和前一次做的 torch 运算不一样：评分器会验证每一次调用，"
                 "代码每次都要用同样的方法计算",
                 f"{what} ran other torch operations in this call than in an earlier one with "
                 "inputs of the same sizes: the grader verifies every call, and the code must "
                 "compute the same way each time")


def kept(what, path):
    fail(f"{what} 用到的 self.{path} 和对象第一次被调用之前的不一样（或者那时还没有它）：{what} 在两次调用之间记住了什么。"
         "每一次调用只能用它自己的输入和对象建好时的参数与 register_buffer 存下的张量",
         f"{what} uses self.{path}, which is not as it was before the object's first call (or "
         f"did not exist then): {what} keeps something from one call to the next. Each call may "
         "use only its own inputs and the parameters and buffers the object was built with")


def verified(shown, what):
    """Judge side: every call of shown_work verifies, and the calls at each size are one program.
    Returns {size: the number of operations of a call}; CheckFailed otherwise."""
    for calls in shown.values():
        for call in calls:
            verify(call, what)
        expect_same_program(calls, what)
    return {size: max(replay.length(c.record) if c is not None else 0 for c in calls)
            for size, calls in shown.items()}


def expect_replays_to(record, args, params, output, what, budget=None):
    """The record, replayed here on args (with the object's tensors `params`), gives output."""
    try:
        replayed = replay.replay(record, list(args), params, budget=budget)
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
    fail(f"{what} 返回的值和它自己记录下的 torch 运算算出的不一样：有一部分计算不在 torch 里"
         f"（numpy、从张量里取出来的 Python 数），或者 {what} 在两次调用之间记住了什么。"
         "评分器只能验证在这次调用的输入上做的 torch 运算",
         f"{what} returned other values than its own recorded torch operations compute: "
         "part of the work happens outside torch (numpy, Python numbers taken out of "
         f"tensors), or {what} keeps something from one call to the next. The grader can only "
         "verify torch operations on the call's own inputs")


def loops(shown, most=MOST_OPS):
    """For diagnoses: True when every record verifies and their lengths differ (a loop)."""
    try:
        lengths = verified(shown, "")
    except CheckFailed:
        return False
    return len(set(lengths.values())) > 1 or max(lengths.values()) > most


def expect_no_loop(shown, what, where=None, most=MOST_OPS):
    """Vectorised ("直接用循环…效率较低"): the verified record of a call does not grow with T or
    B, and holds at most `most` operations (a loop of a fixed number of steps that is right at
    T = LONG_T takes at least LONG_T steps, more than `most`). `where()` may point to the line of a loop in
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
    used = set().union(*(replay.attention_used(call.record) for calls in shown.values()
                         for call in calls if call is not None))
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
    many calls (causality at every t, derivatives, the first position). Every call is verified
    (see verify), and the calls with arguments of the same sizes must be one program, so state
    kept from one call to the next, work outside torch, or code that changes what it does from
    call to call cannot make the calls agree with each other: the property is checked on one
    pure function."""

    def __init__(self, function, what):
        self.function, self.what = function, what
        self.calls = []  # the first call with each key

    def check(self, call):
        verify(call, self.what)
        first = next((c for c in self.calls if c.key == call.key), None)
        if first is None:
            self.calls.append(call)  # the first call of its sizes: the program the rest must be
        else:
            expect_same_program([first, call], self.what)

    def __call__(self, *args):
        if self.function.trusted:  # the solution's
            return self.function(*args)
        output, call = self.function.shown(*args)
        self.check(call)
        return output

    def vjp(self, args, **kwargs):
        return vjp(self.function, args, what=self.what, check=None if self.function.trusted
                   else self.check, **kwargs)


def vjp(function, args, wrt, grad_output, parameters=(), what="forward", check=None,
        verified=True):
    """The gradients a call sends back, computed here: {"output", "input_grads",
    "parameter_grads"} as the solution's (grading.worker.executor.Executor.vjp), for `wrt` (the
    arguments' positions) and `parameters` (attribute paths of the object's weights the judge
    set, "query.weight"). For the learner's code, the call runs in the worker with autograd on;
    its record is verified (`check`, else verify) and autograd runs here, over the replayed
    record: the gradients a worker could report are never read. A record whose gradients
    disagree with how its own output changes (a custom backward, a detached shortcut) fails.
    verified=False, for a diagnosis only (which never costs a point): the worker's own report,
    so that code whose record cannot be verified can still be explained."""
    if function.trusted or not verified:
        return function.vjp(args, wrt=wrt, grad_output=grad_output, parameters=parameters,
                            unverified=not verified)
    output, call = function.shown(*args, grad=wrt)
    (check or (lambda c: verify(c, what)))(call)
    try:
        grads = replay.gradients(call, wrt, grad_output, parameters)
    except ReplayError as error:
        raise CheckFailed(unverified(error, what)) from None
    if grads is None:
        return {"output": output, "input_grads": None, "parameter_grads": None}
    input_grads, parameter_grads, agrees = grads
    if not agrees:
        fail(f"autograd 通过 {what} 算出的梯度，和它的输出实际怎样随输入变化对不上：一部分计算被切断在 autograd 之外"
             "（.detach()、.data、torch.no_grad()，或者自己写的 backward）",
             f"the gradient autograd computes through {what} disagrees with how its output "
             "really changes: part of the computation is cut off from autograd (.detach(), "
             ".data, torch.no_grad(), or a backward of one's own)")
    return {"output": output, "input_grads": input_grads, "parameter_grads": parameter_grads}


def shapes_of(args):
    return tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else repr(a) for a in args)
