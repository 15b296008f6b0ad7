"""Exercise 5 · the causal mask (因果掩码): future scores → −∞ before softmax over the last dim."""


import torch

from grading.checks import (
    CLOSE,
    LONG_T,
    SHAPES,
    SHOULD_BE,
    ZERO,
    expect_built_yourself,
    expect_calls_close,
    expect_close,
    expect_inputs_unchanged,
    expect_row_gradients,
    expect_same_elsewhere,
    expect_tensor,
    fail,
    hidden,
    positions,
    public,
    randn,
    row_gradients,
    shown_work,
    upper_triangle,
)
from grading.diagnosis import Picture
from grading.i18n import Bi

SHAPE_NAMES = ("B", "T", "T")


# -- scenarios ------------------------------------------------------------------------------------

def draw(gen, B, T):
    return randn(gen, B, T, T) * 3  # spread-out scores, so that wrong weights differ clearly


def weights(ex, gen, B, T):
    return ex.causal_softmax(draw(gen, B, T))


def large_weights(ex, gen, B, T):
    """causal_softmax of scores forty times the usual (many beyond ±100, where exp overflows)."""
    return ex.causal_softmax(draw(gen, B, T) * 40)


def shown_weights(ex, gen, B, T):
    """causal_softmax(scores) and its Call (its record, for a record diff)."""
    return ex.causal_softmax.shown(draw(gen, B, T))


def inputs_after(ex, gen, B, T):
    """The judge's copy of the scores, and the scores as the learner's call left them."""
    scores = draw(gen, B, T)
    sent = [scores.clone()]
    _, after = ex.causal_softmax.call_inputs(scores)
    return sent, after


def weights_with_future_changed(ex, gen, B, T):
    """For scores; for each t of positions(gen, T), scores whose rows and columns after t are
    redrawn (token t+1… changes exactly those); for each such t, scores whose row t is redrawn up
    to t (the present); and scores with the future of a random t redrawn, here and in a second
    worker (does an output depend on earlier calls?): (the positions, 2·len + 3 weights of
    (B, T, T))."""
    scores = draw(gen, B, T)
    causal_softmax = ex.causal_softmax
    ts = positions(gen, T)
    outs = [causal_softmax(scores)]
    for t in ts:
        changed = scores.clone()
        changed[:, t + 1:, :] = randn(gen, B, T - t - 1, T) * 3
        changed[:, :, t + 1:] = randn(gen, B, T, T - t - 1) * 3
        outs.append(causal_softmax(changed))
    for t in ts:
        changed = scores.clone()
        changed[:, t, :t + 1] = randn(gen, B, t + 1) * 3
        outs.append(causal_softmax(changed))
    # one of the changed calls again, in a second worker: what it gave above was its own
    t = int(torch.randint(0, T, (1,), generator=gen))
    changed = scores.clone()
    changed[:, t + 1:, :] = randn(gen, B, T - t - 1, T) * 3
    changed[:, :, t + 1:] = randn(gen, B, T, T - t - 1) * 3
    outs += [causal_softmax(changed), ex.elsewhere().causal_softmax(changed)]
    return ts, outs


def future_of_row(T, t):
    """(T, T): for row t, the scores that belong to positions after t (their rows and columns:
    token t+1… changes exactly those)."""
    future = torch.zeros(T, T, dtype=torch.bool)
    future[t + 1:, :] = True
    future[:, t + 1:] = True
    return future


def gradients(ex, gen, B, T):
    """Calls on fresh batches of B score tables; each table sends back the gradient of one row
    of its weights, the rows of positions(gen, T) in turn: every row of a short table, a few
    drawn afresh of a long one (grading.checks.derivatives.row_gradients)."""
    return row_gradients(ex.causal_softmax, lambda: draw(gen, B, T), B, T,
                         lambda t: future_of_row(T, t), gen, rows=positions(gen, T))


def calls(ex, gen):
    """The recorded work of causal_softmax at the sizes test_matches_reference grades."""
    return shown_work(lambda B, T: (ex.causal_softmax, lambda: (draw(gen, B, T),)), graded(), gen)


def graded():
    """The sizes the comparisons grade, a long sequence among them."""
    return shapes() + [dict(B=2, T=LONG_T)]


def shapes():
    return [dict(B=s["B"], T=s["T"]) for s in SHAPES]


def checked(value, B, T):
    return expect_tensor(value, "causal_softmax(scores)", (B, T, T), SHAPE_NAMES)


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_shape(submission):
    """the weights keep the scores' shape (B, T, T) and are finite numbers, long T and large scores too
    权重保持分数的形状 (B, T, T)，而且都是有限的数，T 很长、分数很大时也一样"""
    for shape in graded():  # (a size that fails shows here first)
        checked(submission(weights, **shape), **shape)
    large = submission(large_weights, B=2, T=8)
    if isinstance(large, torch.Tensor) and large.is_floating_point() \
            and not torch.isfinite(large).all():
        fail("分数很大时（很多超过 ±100）权重里出现了 NaN 或 inf：很大的分数取指数会超出 float32 的范围（inf），"
             "很小的会变成 0，inf / inf 和 0 / 0 都是 NaN。F.softmax 先从每一行减去这一行自己的最大值再取指数，就不会这样；"
             "自己写 softmax 的话也要这样做：scores - scores.max(dim=-1, keepdim=True).values",
             "for large scores (many beyond ±100) the weights hold NaN or inf: the exponential "
             "of a large score is beyond float32's range (inf), of a very negative one 0, and "
             "inf / inf or 0 / 0 is NaN. F.softmax subtracts each row's own largest score "
             "before taking exponentials, so this cannot happen; a softmax written by hand must "
             "do the same: scores - scores.max(dim=-1, keepdim=True).values",
             key="softmax_overflow")
    checked(large, B=2, T=8)


@public(3)
def test_rows_sum_to_one(submission):
    """every row of weights sums to 1
    权重的每一行之和为 1"""
    for shape in graded():
        sums = checked(submission(weights, **shape), **shape).sum(dim=-1)  # (B, T)
        b, i = divmod(int((sums - 1).abs().argmax()), shape["T"])
        if abs(sums[b, i] - 1) > CLOSE:
            fail(f"权重第 {i} 行之和是 {sums[b, i]:.4g}，不是 1：先掩码，再沿最后一维（dim=-1）做 softmax",
                 f"row {i} of the weights sums to {sums[b, i]:.4g}, not 1: mask first, then "
                 "softmax over the last dimension (dim=-1)")


@public(3, after=["test_rows_sum_to_one"])
def test_future_is_zero(submission):
    """the upper triangle (the future) of weights is 0
    权重的上三角（未来的位置）全为 0"""
    for shape in graded():
        w = checked(submission(weights, **shape), **shape)
        future = upper_triangle(w) & (w.abs() > ZERO)  # (B, T, T)
        if future.any():
            b, i, j = future.nonzero()[0].tolist()
            fail(f"weights[{b}, {i}, {j}] 是 {w[b, i, j]:.4g}，位置 {i} 看到了在它之后的位置 {j}。"
                 "在 softmax 之前把未来填成 float('-inf')：softmax 把 −∞ 变成 0",
                 f"weights[{b}, {i}, {j}] is {w[b, i, j]:.4g}, so position {i} sees position "
                 f"{j}, which comes after it. Fill the future with float('-inf') before softmax: "
                 "softmax turns −∞ into 0")


@public(1)
def test_first_row(submission):
    """row 0 is [1, 0, …]: position 0 sees only itself
    第 0 行是 [1, 0, …]：位置 0 只能看见自己"""
    for shape in graded():
        w = checked(submission(weights, **shape), **shape)
        want = torch.zeros(shape["B"], shape["T"], dtype=torch.float64)
        want[:, 0] = 1
        expect_close(w[:, 0, :], want, "weights[:, 0, :]", ("B", "T"), source=SHOULD_BE)


@public(3)
def test_causal_for_every_position(submission):
    """changing the scores of positions after t never changes the weights of rows up to t
    改动 t 之后各位置的分数，不会改变 t 及之前各行的权重"""
    for shape in graded():
        B, T = shape["B"], shape["T"]
        ts, outs = submission(weights_with_future_changed, **shape)
        n = len(ts)
        if not isinstance(outs, list) or len(outs) != 2 * n + 3:
            fail("causal_softmax 没有在每次调用时返回一个张量",
                 "causal_softmax did not return one tensor per call")
        first = checked(outs[0], B, T)
        expect_same_elsewhere(checked(outs[-2], B, T), checked(outs[-1], B, T), "causal_softmax")
        for i, t in enumerate(ts):
            diff = (checked(outs[i + 1], B, T)[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > CLOSE:
                b, r, j = (diff == diff.max()).nonzero()[0].tolist()
                fail(f"改动位置 {t} 之后的分数，使 weights[{b}, {r}, {j}] 变了 {diff.max():.3g}：第 {r} "
                     "行依赖于未来。先掩码再 softmax，并且对每一行（dim=-1）做 softmax",
                     f"changing the scores after position {t} changed weights[{b}, {r}, {j}] by "
                     f"{diff.max():.3g}: row {r} depends on the future. Mask before softmax, and "
                     "softmax each row (dim=-1)")
        for i, t in enumerate(ts):
            if t == 0:  # row 0 is [1, 0, …] whatever its score
                continue
            own = checked(outs[n + 1 + i], B, T)
            if (own[:, t] - first[:, t]).abs().max() <= ZERO:
                fail(f"改动第 {t} 行自己（位置 0..{t}）的分数，第 {t} 行的权重却没有变：权重要由分数算出来",
                     f"changing row {t}'s own scores (positions 0..{t}) did not change its "
                     "weights: the weights must come from the scores")


@public(2)
def test_jacobian(submission):
    """∂weights[t] / ∂scores[s] ≈ 0 whenever s is after t
    s 在 t 之后时，∂weights[t] / ∂scores[s] ≈ 0"""
    # (every row at the first shape; at the long T, a few rows drawn afresh: a call per row
    # there would cost a loop over positions, slow but right, its time)
    B, T = SHAPES[0]["B"], SHAPES[0]["T"]
    grad = rows_without_future(submission(gradients, B=B, T=T), B, T)  # (T, T, T): every row
    rows_without_future(submission(gradients, B=2, T=LONG_T), 2, LONG_T)  # a few rows drawn
    if grad[T - 1, T - 1, :].abs().max() <= ZERO:
        fail("最后一行的权重对它自己那一行的分数的导数全为 0：权重要随分数变化（梯度要能传回去）",
             "the last row of the weights has no derivative with respect to its own scores: the "
             "weights must follow the scores (and let gradients through)")


def rows_without_future(result, B, T):
    """The rows' gradients of row_gradients' result (rows, T, T), after failing when one of them
    reaches a score of the row's future."""
    grad = expect_row_gradients(result, "causal_softmax", "causal_softmax(scores)", (B, T, T),
                                SHAPE_NAMES)
    for t, row in zip(result["rows"], grad):
        leak = row[future_of_row(T, t)].abs()
        if leak.numel() and leak.max() > ZERO:
            fail(f"权重第 {t} 行对位置 {t} 之后的分数的导数是 {leak.max():.3g}：未来仍然渗进了过去",
                 f"row {t} of the weights has a derivative of {leak.max():.3g} with respect to "
                 f"scores of positions after {t}: the future still leaks into the past")
    return grad


@public(1, after=["test_rows_sum_to_one", "test_future_is_zero"])
def test_built_yourself(submission):
    """the mask and softmax are written by hand, not by PyTorch's ready-made attention
    掩码和 softmax 是亲手写的，没有调用 PyTorch 现成的注意力"""
    expect_built_yourself(submission(calls), "causal_softmax")


@public(1, after=["test_shape"])
def test_inputs_unchanged(submission):
    """causal_softmax leaves the scores as they were: no in-place operation on its input
    causal_softmax 不改动传进来的分数：不对输入做原地运算"""
    for shape in graded():
        sent, after = submission(inputs_after, **shape)
        expect_inputs_unchanged(sent, after, "causal_softmax(scores)", ("scores",))


@hidden(4)
def test_matches_reference(compare):
    """matches the reference on fresh random scores, four shape sets (B = T = 1 among them) and a long sequence
    在四组形状（其中一组 B = T = 1）和一个长序列的全新随机分数上与参考答案一致"""
    # the calls the how-check reads: at every size graded(), two or three calls each
    expect_calls_close(*compare(calls), "causal_softmax(scores)", SHAPE_NAMES)


# -- what the learner built, shown beside the expected ----------------------------------------

def picture(probe):
    """causal_softmax of one (5, 5) score matrix, the learner's weights beside the solution's;
    without the solutions, the future's non-zero weights (or a row not summing to 1) marked."""
    got, want = probe(weights, B=1, T=5)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (1, 5, 5) \
            or not got.is_floating_point():
        return None
    mine = got[0].double()
    wrong = None
    if want is None:
        wrong = upper_triangle(mine) & (mine.abs() > ZERO)
        if not wrong.any():
            wrong = torch.zeros_like(wrong)
            wrong[:, 0] = (mine.sum(dim=-1) - 1).abs() > CLOSE
    return Picture(Bi("causal_softmax(scores)[0]", "causal_softmax(scores)[0]"), mine,
                   want[0] if want is not None else None, wrong)
