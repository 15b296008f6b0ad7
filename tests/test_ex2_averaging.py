"""Exercise 2 · averaging the context (对前文取平均): weights = normalised tril; weights @ x."""
import torch

from grading.checks import (
    CLOSE,
    LONG_T,
    SHAPES,
    SHOULD_BE,
    ZERO,
    expect_calls_close,
    expect_close,
    expect_dtype,
    expect_gradients,
    expect_inputs_unchanged,
    expect_no_loop,
    expect_tensor,
    fail,
    hidden,
    named_gradients,
    positions,
    public,
    randn,
    returned_or_raised,
    shown_work,
    upper_triangle,
)
from grading.diagnosis import Picture
from grading.i18n import Bi

LENGTHS = (1, 5, 8, 12)  # 12: longer than the lesson's example's T = 8


# -- scenarios ------------------------------------------------------------------------------------

def matrix(ex, gen, T):
    return ex.averaging_matrix(T)


def draw(gen, B, T, C):
    return randn(gen, B, T, C)


def average(ex, gen, B, T, C):
    return ex.average_context(draw(gen, B, T, C))


def shown_matrix(ex, gen, T):
    """averaging_matrix(T) and its Call (its record, for a record diff)."""
    return ex.averaging_matrix.shown(T)


def shown_average(ex, gen, B, T, C):
    """average_context(x) and its Call (its record, for a record diff)."""
    return ex.average_context.shown(draw(gen, B, T, C))


def average_with_future_changed(ex, gen, B, T, C):
    """Outputs for x; for each t of positions(gen, T), for x with every position after t
    replaced; and for each such t, for x with position t itself replaced: (the positions,
    2·len + 1 tensors of (B, T, C))."""
    x = randn(gen, B, T, C)
    average_context = ex.average_context
    ts = positions(gen, T)
    outs = [average_context(x)]
    for t in ts:
        changed = x.clone()
        changed[:, t + 1:] = randn(gen, B, T - t - 1, C)
        outs.append(average_context(changed))
    for t in ts:
        changed = x.clone()
        changed[:, t] = randn(gen, B, C)
        outs.append(average_context(changed))
    return ts, outs


def inputs_after(ex, gen, B, T, C):
    """The judge's copy of x, and x as the learner's call left it."""
    x = draw(gen, B, T, C)
    sent = [x.clone()]
    _, after = ex.average_context.call_inputs(x)
    return sent, after


def learning(ex, gen, B, T, C, checked=True):
    """The gradient of Σ grad_output · average_context(x) for x, as training would send it back."""
    x = draw(gen, B, T, C)
    return named_gradients(ex.average_context, [x], ["x"], randn(gen, B, T, C),
                           what="average_context", checked=checked)


def calls(ex, gen):
    """The recorded work of average_context at the sizes test_average_matches_reference grades."""
    return shown_work(lambda B, T, C: (ex.average_context, lambda: (randn(gen, B, T, C),)),
                      graded(), gen)


def graded():
    return shapes() + [dict(B=2, T=LONG_T, C=SHAPES[0]["n_embd"])]


def shapes():
    return [dict(B=s["B"], T=s["T"], C=s["n_embd"]) for s in SHAPES]


def average_or_error(ex, gen, B, T, C):
    return returned_or_raised(ex.average_context, draw(gen, B, T, C))


def checked_matrix(value, T):
    expect_dtype(value, f"averaging_matrix({T})")
    return expect_tensor(value, f"averaging_matrix({T})", (T, T), ("T", "T"))


# -- tests ----------------------------------------------------------------------------------------

@public(1)
def test_rows_sum_to_one(submission):
    """averaging_matrix: every row sums to 1
    averaging_matrix：每一行之和为 1"""
    for T in LENGTHS:
        sums = checked_matrix(submission(matrix, T=T), T).sum(dim=-1)
        row = int((sums - 1).abs().argmax())
        if abs(sums[row] - 1) > CLOSE:
            fail(f"averaging_matrix({T}) 第 {row} 行之和是 {sums[row]:.4g}，不是 1：每一行都要归一化",
                 f"row {row} of averaging_matrix({T}) sums to {sums[row]:.4g}, not 1: normalise "
                 "each row")


@public(2, after=["test_rows_sum_to_one"])
def test_future_is_zero(submission):
    """averaging_matrix: the upper triangle (the future) is 0
    averaging_matrix：上三角（未来的位置）全为 0"""
    for T in LENGTHS:
        weights = checked_matrix(submission(matrix, T=T), T)
        future = upper_triangle(weights) & (weights.abs() > ZERO)
        if future.any():
            i, j = future.nonzero()[0].tolist()
            fail(f"averaging_matrix({T})[{i}, {j}] 是 {weights[i, j]:.4g}：位置 {i} 会把在它之后的位置 "
                 f"{j} 也平均进来；这个矩阵必须是下三角的",
                 f"averaging_matrix({T})[{i}, {j}] is {weights[i, j]:.4g}: position {i} would "
                 f"average in position {j}, which comes after it; the matrix must be "
                 "lower-triangular")


@public(1)
def test_row_i_is_one_over_i_plus_one(submission):
    """averaging_matrix: row 0 is [1, 0, …], row i is 1/(i+1) on its first i+1 entries
    averaging_matrix：第 0 行是 [1, 0, …]，第 i 行的前 i+1 个数都是 1/(i+1)"""
    for T in LENGTHS:
        weights = checked_matrix(submission(matrix, T=T), T)
        counts = torch.arange(1, T + 1, dtype=torch.float64)
        want = torch.tril(torch.ones(T, T, dtype=torch.float64)) / counts[:, None]
        expect_close(weights, want, f"averaging_matrix({T})", ("T", "T"), source=SHOULD_BE)


@public(2)
def test_mean_of_the_past(submission):
    """average_context: position t is the mean of x[:, :t+1]
    average_context：位置 t 的输出是 x[:, :t+1] 的平均"""
    for shape in graded():
        got = expect_dtype(submission(average, **shape), "average_context(x)")
        x = submission.inputs(draw, **shape).double()
        counts = torch.arange(1, shape["T"] + 1, dtype=torch.float64)[None, :, None]
        want = x.cumsum(dim=1) / counts  # (B, T, C): the mean of x[:, :t+1] at each t
        expect_close(got, want, "average_context(x)", ("B", "T", "C"),
                     source=Bi("x[:, :t+1] 的平均是", "the mean of x[:, :t+1] is"))


@public(2)
def test_causal(submission):
    """average_context: changing x after position t never changes outputs up to t
    average_context：改动位置 t 之后的 x，不会改变 t 及之前的输出"""
    for shape in graded():
        ts, outs = submission(average_with_future_changed, **shape)
        B, T, C, n = shape["B"], shape["T"], shape["C"], len(ts)
        first = expect_tensor(outs[0], "average_context(x)", (B, T, C), ("B", "T", "C"))
        for i, t in enumerate(ts):
            changed = expect_tensor(outs[i + 1], "average_context(x)", (B, T, C))
            diff = (changed[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > CLOSE:
                s = int(diff.amax(dim=(0, 2)).argmax())
                fail(f"改动位置 {t} 之后的 x，改变了位置 {s} 的输出：一个位置只能平均它自己和它之前的位置",
                     f"changing x after position {t} changed the output at position {s}: a "
                     "position may only average itself and what came before it")
        for i, t in enumerate(ts):
            own = expect_tensor(outs[n + 1 + i], "average_context(x)", (B, T, C))
            if (own[:, t] - first[:, t]).abs().max() <= ZERO:
                fail(f"改动位置 {t} 的 x，位置 {t} 的输出却没有变：每个位置都要把它自己平均进去",
                     f"changing x at position {t} did not change the output at {t}: each "
                     "position averages itself in")


@public(2, after=["test_mean_of_the_past"])
def test_vectorised(submission):
    """average_context is one matrix product, with no Python loop over positions
    average_context 是一次矩阵乘法，没有对位置的 Python 循环"""
    expect_no_loop(submission(calls), "average_context", submission.source, most=60)


@public(1, after=["test_mean_of_the_past"])
def test_inputs_unchanged(submission):
    """average_context leaves x as it was: no in-place operation on its input
    average_context 不改动 x：不对输入做原地运算"""
    for shape in graded():
        sent, after = submission(inputs_after, **shape)
        expect_inputs_unchanged(sent, after, "average_context(x)", ("x",))


@hidden(1)
def test_matrix_matches_reference(compare):
    """averaging_matrix matches the reference for T = 1, 5, 8, 12
    T = 1、5、8、12 时 averaging_matrix 与参考答案一致"""
    for T in LENGTHS:
        got, want = compare(matrix, T=T)
        expect_close(got, want, f"averaging_matrix({T})", ("T", "T"))


@hidden(2)
def test_average_matches_reference(compare):
    """average_context matches the reference on fresh random x, four shape sets (B = T = 1 among them) and a long one
    在四组形状（其中一组 B = T = 1）和一个长序列的全新随机 x 上 average_context 与参考答案一致"""
    # the calls the no-loop check reads: at every size graded(), two or three calls each
    expect_calls_close(*compare(calls), "average_context(x)", ("B", "T", "C"))


@hidden(1)
def test_gradients_match_reference(compare):
    """a loss's gradient for x matches the reference's: training can send it back through
    损失对 x 的梯度与参考答案一致：训练时梯度能传回去"""
    for k, shape in enumerate(shapes()[:2] + graded()[-1:]):  # the long T too
        got, want = compare(learning, checked=k == 0, **shape)
        expect_gradients(got, want, {"x": ("B", "T", "C")})


# -- what the learner built, shown beside the expected ----------------------------------------

def picture(probe):
    """averaging_matrix(5), the learner's beside the lesson's (the definition the checks use)."""
    got = probe.submission(matrix, T=5)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (5, 5):
        return None
    counts = torch.arange(1, 6, dtype=torch.float64)
    return Picture(Bi("averaging_matrix(5)", "averaging_matrix(5)"), got,
                   torch.tril(torch.ones(5, 5, dtype=torch.float64)) / counts[:, None])
