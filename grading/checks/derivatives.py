"""Derivatives: the gradient each output row sends back, checked against finite differences of
forward calls, so that a worker cannot report gradients its forward pass does not have."""
import math

import torch

from grading.checks.expect import expect_tensor, fail, kind_of, not_repeatable, same, shape_text, spaced
from grading.checks.scenario import randn


def row_gradients(function, draw, B, T, future, gen, rows=None):
    """The gradient that out[t] sends back to the input, for every t, from calls like any other:
    ceil(T / B) calls, each on a fresh batch `draw()` of B independent examples of T positions
    (the graded sizes: no copies of one sequence, no batch size only this check uses); in each,
    example b's output gradient is random at one row t and 0 elsewhere, the rows t = 0…T−1 taken
    in turn. `future(t)` marks the entries of one example's input that belong to positions after
    t. Returns {"outputs": each forward call's output, "grad": the gradients of the rows stitched
    together, (T, …) of one example's input each (None when a call's output carries none),
    "agreement": [(the reported gradient along a direction, finite differences of forward calls
    along it), …]} for a random direction and one in the future alone, in every call: a worker
    cannot report gradients that its own forward pass does not have. (One call drawn was not
    enough: the last call's rows are the last position's, whose future is empty, and a head with
    a masked head's gradients and an unmasked forward agrees there.) Whatever comes back,
    expect_row_gradients judges it; nothing here assumes a shape or a type.
    `rows`: the rows t to take, in order, when not every one (at a long T, a call per row would
    cost a loop over positions its time): "grad" then holds theirs alone, in that order, and each
    call is checked along the future's direction alone, with no second call for randomness (the
    first shape's, every row taken, has checked both): four calls, where a call per row and two
    directions would cost a head that loops over positions, slow but right, its time."""
    sampled = rows is not None and len(rows) < T
    rows = list(range(T)) if rows is None else list(rows)
    result = {"grad": None, "agreement": [], "outputs": [], "input": None, "rows": rows}
    taken = []
    for first in range(0, len(rows), B):
        inputs = draw()
        result["input"] = tuple(inputs.shape[1:])
        with_rows = function(inputs)
        result["outputs"].append(with_rows)
        if not (_real(with_rows) and with_rows.dim() == inputs.dim()
                and with_rows.shape[:2] == inputs.shape[:2]):
            return result  # no B examples of T rows: expect_row_gradients says what came instead
        if first == 0 and not sampled and not same(function(inputs), with_rows):  # randomness
            return {**result, "random": True}
        picked = [rows[min(first + b, len(rows) - 1)] for b in range(B)]  # each example's row
        grad_output = torch.zeros(with_rows.shape)
        for b, t in enumerate(picked):
            grad_output[b, t] = randn(gen, *with_rows.shape[2:])
        reply = function.vjp([inputs], wrt=[0], grad_output=grad_output)
        grads = reply.get("input_grads") if isinstance(reply, dict) else None
        grad = grads[0] if isinstance(grads, list) and len(grads) == 1 else None
        result["vjp_output"] = reply.get("output") if isinstance(reply, dict) else None
        if not (_real(grad) and grad.shape == inputs.shape and bool(torch.isfinite(grad).all())):
            return {**result, "grad": grad}
        in_future = torch.stack([future(t) for t in picked]).expand(inputs.shape)
        directions = [] if sampled else [randn(gen, *inputs.shape)]  # a random one, and the future
        directions.append(randn(gen, *inputs.shape) * in_future)
        for direction in directions:
            claimed = float((grad.double() * direction.double()).sum())
            result["agreement"].append(
                (claimed, finite_difference(function, inputs, direction, grad_output)))
        taken += [grad[b] for b in range(B) if first + b < len(rows)]
    result["grad"] = torch.stack(taken)
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


def expect_row_gradients(result, what, call, shape, names):
    """Every call's output (B examples × T rows: `shape`, named `names`) is finite, the gradients
    came back as finite numbers of the input's shape, and they agree with the forward pass;
    returns the rows' gradients stitched together (float64, (T, …) of one example's input each).
    Every comparison is made on finite numbers only: with a NaN, `>` and `<=` are both false, and
    a check written with them would pass."""
    if result.get("random"):
        not_repeatable(what)
    for output in result["outputs"]:
        expect_tensor(output, call, shape, names)  # shape, dtype, NaN and inf
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
    inputs = shape_text((shape[0], *result["input"]))
    if not _real(grad) or (tuple(grad.shape[1:]) != result["input"]
                           and tuple(grad.shape) != (shape[0], *result["input"])):
        kind = kind_of(grad)
        fail(f"autograd 通过 {what} 传回的梯度应当是形状为 {inputs} 的浮点张量，和输入一样，实际是{spaced(kind.zh)}",
             f"the gradient autograd sends back through {what} should be a floating-point "
             f"tensor of the input's shape {inputs}, but it is {kind.en}")
    if not bool(torch.isfinite(grad).all()):
        fail(f"autograd 通过 {what} 传回的梯度里有 NaN 或 ±∞：梯度必须是有限的数（课文里的每一步都有有限的导数）",
             f"the gradient autograd sends back through {what} holds NaN or ±inf: a gradient "
             "must be finite (every step of the lesson has a finite derivative)")
    if not result["agreement"]:
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
