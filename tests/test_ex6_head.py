"""Exercise 6 · one attention head (一个完整的注意力头): (B, T, n_embd) → (B, T, head_size)."""

import torch

from grading.checks import (
    CLOSE,
    LONG_T,
    SHAPES,
    ZERO,
    draw_qkv,
    expect_built_yourself,
    expect_calls_close,
    expect_close,
    expect_gradients,
    expect_inputs_unchanged,
    expect_no_loop,
    expect_repeatable,
    expect_row_gradients,
    expect_same_elsewhere,
    expect_tensor,
    fail,
    hidden,
    named_gradients,
    perturbed_tokens,
    positions,
    public,
    randn,
    row_gradients,
    set_linear,
    shown_work,
    trainable_shapes,
    upper_triangle,
)
from grading.diagnosis import Picture, weights_differ, weights_of
from grading.errors import CheckFailed, WorkerFailure
from grading.i18n import Bi

OUT_NAMES = ("B", "T", "head_size")
LONG = {**SHAPES[0], "T": LONG_T, "block_size": LONG_T + 8}  # T far beyond the other shapes
WEIGHTS = ("query", "key", "value")


# -- scenarios ------------------------------------------------------------------------------------

draw = draw_qkv


def build(ex, inputs, n_embd, head_size, block_size):
    head = ex.Head(n_embd, head_size, block_size)
    for name in ("query", "key", "value"):
        set_linear(head, name, inputs[name])
    return head.eval()


def shown_forward(ex, gen, B, T, n_embd, head_size, block_size):
    """forward's output and its Call (its record, for a record diff): see forward."""
    inputs = draw(gen, B, T, n_embd, head_size)
    return build(ex, inputs, n_embd, head_size, block_size).shown(inputs["x"])


def forward(ex, gen, B, T, n_embd, head_size, block_size, zero_input=False):
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    x = torch.zeros_like(inputs["x"]) if zero_input else inputs["x"]
    with torch.no_grad():
        return head(x)  # (B, T, head_size)


def inputs_after(ex, gen, B, T, n_embd, head_size, block_size):
    """The judge's copy of x, and x as the learner's forward left it."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    sent = [inputs["x"].clone()]
    _, after = head.call_inputs(inputs["x"])
    return sent, after


def tokens_after_t_changed(ex, gen, B, T, n_embd, head_size, block_size, vocab_size):
    """forward through a plain embedding, with the tokens after each t changed: (the positions t,
    2·len + 4 outputs of (B, T, head_size)): grading.checks.perturbed_tokens."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    again = build(ex.elsewhere(), inputs, n_embd, head_size, block_size)  # a second worker
    return perturbed_tokens(head, again, gen, B, T, n_embd, vocab_size)


def gradients(ex, gen, B, T, n_embd, head_size, block_size):
    """Calls on fresh batches of B sequences; each sequence sends back the gradient of one row
    out[t], the rows of positions(gen, T) in turn: every row of a short sequence, a few drawn
    afresh of a long one (grading.checks.derivatives.row_gradients)."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)

    def after(t):  # (T, n_embd): the positions after t
        return (torch.arange(T) > t)[:, None].expand(T, n_embd)
    return row_gradients(head, lambda: randn(gen, B, T, n_embd), B, T, after, gen,
                         rows=positions(gen, T))


def learning(ex, gen, B, T, n_embd, head_size, block_size, checked=True):
    """What training would use: the gradients of a random loss for x and for the three weights."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    return named_gradients(head, [inputs["x"]], ["x"], randn(gen, B, T, head_size),
                           [f"{name}.weight" for name in WEIGHTS], "Head.forward", checked)


def parameters(ex, gen, n_embd, head_size, block_size):
    return trainable_shapes(ex.Head(n_embd, head_size, block_size))


def calls(ex, gen):
    """The recorded work of forward at the sizes test_matches_reference grades (the long T
    among them: a loop of a fixed number of steps that is right there is a long one)."""
    def make(B, T, n_embd, head_size, block_size):
        head = build(ex, draw(gen, B, T, n_embd, head_size), n_embd, head_size, block_size)
        return head, lambda: (randn(gen, B, T, n_embd),)
    return shown_work(make, [sizes(shape) for shape in SHAPES + [LONG]], gen)


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "n_embd", "head_size", "block_size")}


def checked(value, shape):
    return expect_tensor(value, "forward(x)", (shape["B"], shape["T"], shape["head_size"]),
                         OUT_NAMES)


# -- tests ----------------------------------------------------------------------------------------

@public(3)
def test_shape(submission):
    """forward gives (B, T, head_size) of finite numbers, for T below block_size too, and long T
    forward 给出形状 (B, T, head_size)、都是有限的数的输出，T 小于 block_size 或很长时也一样"""
    for shape in SHAPES + [LONG]:  # (a size that fails shows here, not in a check using it)
        checked(submission(forward, **sizes(shape)), shape)


@public(5)
def test_causal_for_every_token(submission):
    """changing the tokens after t never changes the outputs up to t, for every t
    对每个 t：改动 t 之后的字，永远不会改变 t 及之前的输出"""
    for shape in SHAPES + [LONG]:
        ts, outs = submission(tokens_after_t_changed, vocab_size=shape["vocab_size"],
                              **sizes(shape))
        n = len(ts)
        if not isinstance(outs, list) or len(outs) != 2 * n + 4:
            fail("forward 没有在每次调用时返回一个张量", "forward did not return one tensor per call")
        first = checked(outs[0], shape)
        expect_repeatable(first, checked(outs[2 * n + 1], shape), "forward")
        expect_same_elsewhere(checked(outs[-2], shape), checked(outs[-1], shape), "forward")
        for i, t in enumerate(ts):
            diff = (checked(outs[1 + i], shape)[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > CLOSE:
                s = int(diff.amax(dim=(0, 2)).argmax())
                fail(f"改动位置 {t} 之后的字，改变了位置 {s} 的输出：这个注意力头让未来漏了进来。"
                     "要看三处：softmax 之前，未来的分数填成 −∞（tril 切成 [:T, :T]，填 tril == 0 的位置）；"
                     "softmax 沿每一行做（dim=-1）；然后 weights @ v",
                     f"changing the tokens after position {t} changed the output at position "
                     f"{s}: the head lets the future in. Three places to look: before softmax, "
                     "the future's scores become −∞ (tril sliced to [:T, :T], filled where "
                     "tril == 0); the softmax runs along each row (dim=-1); then weights @ v")
        for i, t in enumerate(ts):
            if (checked(outs[1 + n + i], shape)[:, t] - first[:, t]).abs().max() <= ZERO:
                fail(f"改动位置 {t} 的字，位置 {t} 的输出却没有变：每个位置都要关注它自己，并对值向量加权求和",
                     f"changing the token at position {t} did not change the output at {t}: "
                     "each position must attend to itself and weight the values")


@public(3)
def test_jacobian(submission):
    """∂out[t] / ∂x[s] ≈ 0 whenever s is after t
    s 在 t 之后时，∂out[t] / ∂x[s] ≈ 0"""
    for shape in (SHAPES[0], LONG):  # every row of the first; a few drawn afresh at the long T
        rows_see_the_past_alone(submission(gradients, **sizes(shape)), shape)


def rows_see_the_past_alone(result, shape):
    """Fails when a row t of row_gradients' result has a derivative with respect to a position
    after t, or none with respect to one up to t."""
    B, T, H = shape["B"], shape["T"], shape["head_size"]
    grad = expect_row_gradients(result, "Head.forward", "forward(x)", (B, T, H),
                                OUT_NAMES)  # (rows, T, n_embd)
    rows = result["rows"]
    leak = grad.abs().amax(dim=2)  # (rows, T): largest |∂out[t] / ∂x[s, :]| for row t, position s
    future = torch.arange(T)[None, :] > torch.tensor(rows)[:, None]  # (rows, T)
    if leak[future].numel() and leak[future].max() > ZERO:
        i, s = (leak * future == (leak * future).max()).nonzero()[0].tolist()
        fail(f"out[{rows[i]}] 对在它之后的 x[{s}] 的导数是 {leak[i, s]:.3g}：未来渗进了过去",
             f"out[{rows[i]}] has a derivative of {leak[i, s]:.3g} with respect to x[{s}], which "
             "comes after it: the future leaks into the past")
    if leak[~future].min() <= ZERO:
        i, s = ((leak == leak[~future].min()) & ~future).nonzero()[0].tolist()
        fail(f"out[{rows[i]}] 对 x[{s}] 的导数为 0，而位置 {s} 不在它之后：每个位置都要看到它自己和它之前的字",
             f"out[{rows[i]}] has no derivative with respect to x[{s}], though position {s} is "
             "not after it: each position must see itself and what came before it")


@public(2)
def test_first_position_sees_itself(submission):
    """position 0 sees only itself, so its output is its own value vector
    位置 0 只能看见自己，所以它的输出就是它自己的值向量"""
    for shape in SHAPES + [LONG]:
        out = checked(submission(forward, **sizes(shape)), shape)
        inputs = submission.inputs(draw, **{k: shape[k] for k in ("B", "T", "n_embd", "head_size")})
        value_0 = inputs["x"][:, 0].double() @ inputs["value"].double().T  # (B, head_size)
        expect_close(out[:, 0], value_0, "out[:, 0]", ("B", "head_size"),
                     source=Bi("它自己的值向量 x[:, 0] @ self.value.weight.T（没有偏置）是",
                               "its own value vector, x[:, 0] @ self.value.weight.T (no bias), is"),
                     hint=Bi("因果掩码之后，权重的第 0 行是 [1, 0, …]：位置 0 只关注自己，所以输出是 value(x[:, 0])。",
                             "After the causal mask, row 0 of the weights is [1, 0, …]: position "
                             "0 attends only to itself, so its output is value(x[:, 0])."))


@public(2)
def test_no_bias(submission):
    """query, key and value have no bias: a zero input gives a zero output
    query、key、value 没有偏置：输入全为 0 时输出也全为 0"""
    for shape in SHAPES[:2]:
        out = checked(submission(forward, zero_input=True, **sizes(shape)), shape)
        if out.abs().max() > ZERO:
            fail("输入全为 0 时输出不是 0：有一个层带了偏置；课文用的是 nn.Linear(n_embd, head_size, bias=False)",
                 "the output is not 0 for an all-zero input: a layer adds a bias; the lesson uses "
                 "nn.Linear(n_embd, head_size, bias=False)")
        if checked(submission(forward, **sizes(shape)), shape).abs().max() <= ZERO:
            fail("随机输入时输出也全为 0：输出要由值向量加权求和得到",
                 "the output is 0 for a random input too: it must be a weighted sum of the values")


@public(2, after=["test_causal_for_every_token", "test_first_position_sees_itself"])
def test_vectorised(submission):
    """forward works on all positions at once, with no Python loop over them
    forward 一次处理所有位置，没有对位置的 Python 循环"""
    expect_no_loop(submission(calls), "Head.forward", submission.source)


@public(1)
def test_mask_is_not_trained(submission):
    """the only trainable parameters are the three layers' weights: the mask is not one
    可训练的参数只有三个线性层的权重：掩码不是参数"""
    n_embd, head_size, block_size = 12, 8, 8
    shapes = submission(parameters, n_embd=n_embd, head_size=head_size,
                        block_size=block_size)
    layer = [head_size, n_embd]
    if shapes and all(s == layer for s in shapes) and len(shapes) < 3:
        fail(f"可训练参数只有 {len(shapes)} 个 (head_size, n_embd) = ({head_size}, {n_embd}) 的权重，应当有三个："
             "有几个层其实是同一个 nn.Linear（例如 self.query = self.key = self.value = nn.Linear(…)）。"
             "查询、键、值各要一个自己的层",
             f"there {'is only one' if len(shapes) == 1 else f'are only {len(shapes)}'} trainable "
             f"(head_size, n_embd) = ({head_size}, {n_embd}) "
             f"weight{'' if len(shapes) == 1 else 's'} where there should be three: some of the layers are one and the same "
             "nn.Linear (self.query = self.key = self.value = nn.Linear(…), say). Query, key and "
             "value each need a layer of their own")
    if sorted(shapes) != [layer] * 3:
        extra = [s for s in shapes if s != layer]
        why = (("掩码用 register_buffer 保存，它不参与训练", "keep the mask with register_buffer, it is "
                "not trained") if [block_size, block_size] in extra else
               ("多出来的 (head_size,) 是偏置：课文的三个层都是 bias=False", "the extra (head_size,) is "
                "a bias: the lesson's three layers all have bias=False") if [head_size] in extra else
               ("多出来的参数不属于这一课的注意力头", "the extra parameters are no part of this "
                "lesson's head"))
        fail(f"可训练参数的形状是 {shapes}，应当只有三个 (head_size, n_embd) = ({head_size}, {n_embd})：{why[0]}",
             f"the trainable parameters have shapes {shapes}; there should be just three "
             f"(head_size, n_embd) = ({head_size}, {n_embd}): {why[1]}")


@public(1, after=["test_causal_for_every_token", "test_first_position_sees_itself"])
def test_built_yourself(submission):
    """the head is built by hand, not from PyTorch's ready-made attention
    注意力头是亲手搭的，没有调用 PyTorch 现成的注意力"""
    expect_built_yourself(submission(calls), "Head.forward")


@public(1, after=["test_shape"])
def test_inputs_unchanged(submission):
    """forward leaves x as it was: no in-place operation on its input
    forward 不改动传进来的 x：不对输入做原地运算"""
    for shape in SHAPES + [LONG]:
        sent, after = submission(inputs_after, **sizes(shape))
        expect_inputs_unchanged(sent, after, "forward(x)", ("x",))


@hidden(3)
def test_matches_reference(compare):
    """matches the reference on fresh random inputs, four shape sets (B = T = 1 among them) and a long sequence
    在四组形状（其中一组 B = T = 1）和一个长序列的全新随机输入上与参考答案一致"""
    # the calls the how-checks read: every size above, two or three calls of one head each
    try:
        expect_calls_close(*compare(calls), "forward(x)", OUT_NAMES)
    except CheckFailed as failure:  # where the work parts from the solution's: the weights?
        extra = weights_compared(compare)
        raise CheckFailed(failure.text + extra if extra else failure.text, failure.key) from None


def weights_compared(compare):
    """A second line for a mismatch (a Bi, or None): how the head's attention weights compare
    with the solution's (weights_pair)."""
    if getattr(compare, "recorded", None) is None:
        return None
    try:
        mine, theirs = weights_pair(compare) or (None, None)
    except (WorkerFailure, CheckFailed, TypeError, ValueError):  # no second line, then
        return None
    return None if theirs is None else weights_differ(mine, theirs)


@hidden(2)
def test_gradients_match_reference(compare):
    """a loss's gradients for x and for the query, key and value weights match the reference's
    损失对 x 以及 query、key、value 权重的梯度与参考答案一致"""
    for k, shape in enumerate(SHAPES[:2] + [LONG]):  # (the long T too: every size alike)
        got, want = compare(learning, checked=k == 0, **sizes(shape))
        expect_gradients(got, want)


# -- what the learner built, shown beside the expected ----------------------------------------

PICTURE_SHAPE = {**SHAPES[0], "block_size": 11, "B": 1}  # the diagnosis's first draw, one sequence


def weights_pair(runner):
    """The head's attention weights (the last (T, T) matrix of its work, replayed from its
    record) for one sequence of five: (the learner's, the solution's or None where the
    solutions are absent); None where a record shows no such matrix."""
    T, found = PICTURE_SHAPE["T"], runner.recorded(shown_forward, **sizes(PICTURE_SHAPE))
    (out, call), (want, reference) = found or (runner.submission(shown_forward,
                                                                 **sizes(PICTURE_SHAPE)), (0, 0))
    mine, theirs = weights_of(call, out, T), found and weights_of(reference, want, T)
    if mine is None or found is not None and theirs is None:
        return None
    return mine.reshape(-1, T, T)[0].double(), found and theirs.reshape(-1, T, T)[0].double()


def picture(probe):
    """The head's attention weights, the learner's beside the solution's; without the
    solutions, the future's non-zero weights marked."""
    mine, theirs = weights_pair(probe) or (None, None)
    if mine is None:
        return None
    if theirs is None:
        return Picture(TITLE, mine, wrong=upper_triangle(mine) & (mine.abs() > ZERO))
    return Picture(TITLE, mine, theirs)


TITLE = Bi("Head 的注意力权重 weights[0]（T = 5）", "Head's attention weights[0] (T = 5)")
