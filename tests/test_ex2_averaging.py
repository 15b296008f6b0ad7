"""Exercise 2 · averaging the context (对前文取平均): weights = normalised tril; weights @ x."""
import torch

from grading.i18n import Bi
from grading.testkit import SHAPES, SHOULD_BE, Diagnosis, close, expect_close, expect_no_loop, \
    expect_tensor, fail, hidden, operations, public, randn, upper_triangle

LENGTHS = (1, 5, 8)
HINTS = [
    Bi("先想第 i 个位置要平均哪些位置：它自己和它之前的，一共 i+1 个。把\u201c参与平均的位置\u201d画成一张 "
       "T × T 的 0/1 表，它是什么形状？再想怎样让每一行的和变成 1。",
       "First think which positions position i averages: itself and those before it, i+1 in all. "
       "Draw the positions that take part as a T × T table of 0s and 1s: what shape is it? Then "
       "think how to make every row sum to 1."),
    Bi("课文的步骤：torch.tril 作用在 torch.ones(T, T) 上得到下三角的全 1 矩阵 tril；每一行除以这一行的和"
       "（sum 沿 dim=1，keepdim=True）就是 weights。average_context 里，一次矩阵乘法 weights @ x "
       "就让 (T, T) 乘上 (B, T, C) 的每个样本，不需要循环。",
       "The lesson's steps: torch.tril applied to torch.ones(T, T) gives the lower-triangular "
       "matrix of ones, tril; dividing each row by its sum (sum over dim=1 with keepdim=True) gives "
       "weights. In average_context, one matrix product weights @ x applies the (T, T) matrix to "
       "every sample of the (B, T, C) input, with no loop."),
]


# -- scenarios ------------------------------------------------------------------------------------

def matrix(ex, gen, T):
    return ex.averaging_matrix(T)


def draw(gen, B, T, C):
    return randn(gen, B, T, C)


def average(ex, gen, B, T, C):
    return ex.average_context(draw(gen, B, T, C))


def average_with_future_changed(ex, gen, B, T, C):
    """Outputs for x; for each t, for x with every position after t replaced; and for each t, for
    x with position t itself replaced: 2T+1 tensors of (B, T, C)."""
    x = randn(gen, B, T, C)
    outs = [ex.average_context(x)]
    for t in range(T):
        changed = x.clone()
        changed[:, t + 1:] = randn(gen, B, T - t - 1, C)
        outs.append(ex.average_context(changed))
    for t in range(T):
        changed = x.clone()
        changed[:, t] = randn(gen, B, C)
        outs.append(ex.average_context(changed))
    return outs


def calls(ex, gen, C):
    """Torch calls of average_context at two lengths and two batch sizes."""
    return operations(ex.average_context, lambda B, T: (randn(gen, B, T, C),))


def shapes():
    return [dict(B=s["B"], T=s["T"], C=s["n_embd"]) for s in SHAPES]


def checked_matrix(value, T):
    return expect_tensor(value, f"averaging_matrix({T})", (T, T), ("T", "T"))


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_rows_sum_to_one(submission):
    """averaging_matrix: every row sums to 1
    averaging_matrix：每一行之和为 1"""
    for T in LENGTHS:
        sums = checked_matrix(submission(matrix, T=T), T).sum(dim=-1)
        row = int((sums - 1).abs().argmax())
        if abs(sums[row] - 1) > 1e-5:
            fail(f"averaging_matrix({T}) 第 {row} 行之和是 {sums[row]:.4g}，不是 1：每一行都要归一化",
                 f"row {row} of averaging_matrix({T}) sums to {sums[row]:.4g}, not 1: normalise "
                 "each row")


@public(2, after=["test_rows_sum_to_one"])
def test_future_is_zero(submission):
    """averaging_matrix: the upper triangle (the future) is 0
    averaging_matrix：上三角（未来的位置）全为 0"""
    for T in LENGTHS:
        weights = checked_matrix(submission(matrix, T=T), T)
        future = upper_triangle(weights) & (weights.abs() > 1e-6)
        if future.any():
            i, j = future.nonzero()[0].tolist()
            fail(f"averaging_matrix({T})[{i}, {j}] 是 {weights[i, j]:.4g}：位置 {i} 会把在它之后的位置 "
                 f"{j} 也平均进来；这个矩阵必须是下三角的",
                 f"averaging_matrix({T})[{i}, {j}] is {weights[i, j]:.4g}: position {i} would "
                 f"average in position {j}, which comes after it; the matrix must be "
                 "lower-triangular")


@public(2)
def test_row_i_is_one_over_i_plus_one(submission):
    """averaging_matrix: row 1 is [1, 0, …], row i is 1/(i+1) on its first i+1 entries
    averaging_matrix：第 1 行是 [1, 0, …]，第 i 行的前 i+1 个数都是 1/(i+1)"""
    for T in LENGTHS:
        weights = checked_matrix(submission(matrix, T=T), T)
        counts = torch.arange(1, T + 1, dtype=torch.float64)
        want = torch.tril(torch.ones(T, T, dtype=torch.float64)) / counts[:, None]
        expect_close(weights, want, f"averaging_matrix({T})", ("T", "T"), source=SHOULD_BE)


@public(2)
def test_mean_of_the_past(submission):
    """average_context: position t is the mean of x[:, :t+1]
    average_context：位置 t 的输出是 x[:, :t+1] 的平均"""
    for shape in shapes():
        got = submission(average, **shape)
        x = submission.inputs(draw, **shape).double()
        counts = torch.arange(1, shape["T"] + 1, dtype=torch.float64)[None, :, None]
        want = x.cumsum(dim=1) / counts  # (B, T, C): the mean of x[:, :t+1] at each t
        expect_close(got, want, "average_context(x)", ("B", "T", "C"),
                     source=Bi("x[:, :t+1] 的平均是", "the mean of x[:, :t+1] is"))


@public(2)
def test_causal(submission):
    """average_context: changing x after position t never changes outputs up to t
    average_context：改动位置 t 之后的 x，不会改变 t 及之前的输出"""
    for shape in shapes():
        outs = submission(average_with_future_changed, **shape)
        B, T, C = shape["B"], shape["T"], shape["C"]
        first = expect_tensor(outs[0], "average_context(x)", (B, T, C), ("B", "T", "C"))
        for t in range(T):
            changed = expect_tensor(outs[t + 1], "average_context(x)", (B, T, C))
            diff = (changed[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > 1e-5:
                s = int(diff.amax(dim=(0, 2)).argmax())
                fail(f"改动位置 {t} 之后的 x，改变了位置 {s} 的输出：一个位置只能平均它自己和它之前的位置",
                     f"changing x after position {t} changed the output at position {s}: a "
                     "position may only average itself and what came before it")
        for t in range(T):
            own = expect_tensor(outs[T + 1 + t], "average_context(x)", (B, T, C))
            if (own[:, t] - first[:, t]).abs().max() <= 1e-6:
                fail(f"改动位置 {t} 的 x，位置 {t} 的输出却没有变：每个位置都要把它自己平均进去",
                     f"changing x at position {t} did not change the output at {t}: each "
                     "position averages itself in")


@public(2, after=["test_mean_of_the_past"])
def test_vectorised(submission):
    """average_context is one matrix product, with no Python loop over positions
    average_context 是一次矩阵乘法，没有对位置的 Python 循环"""
    expect_no_loop(submission(calls, C=SHAPES[0]["n_embd"]),
                   submission.source.loops("average_context"), "average_context")


@hidden(1)
def test_matrix_matches_reference(compare):
    """averaging_matrix matches the reference for T = 1, 5, 8
    T = 1、5、8 时 averaging_matrix 与参考答案一致"""
    for T in LENGTHS:
        got, want = compare(matrix, T=T)
        expect_close(got, want, f"averaging_matrix({T})", ("T", "T"))


@hidden(2)
def test_average_matches_reference(compare):
    """average_context matches the reference on fresh random x, three shape sets
    在三组形状的全新随机 x 上 average_context 与参考答案一致"""
    for shape in shapes():
        got, want = compare(average, **shape)
        expect_close(got, want, "average_context(x)", ("B", "T", "C"))


# -- diagnoses ------------------------------------------------------------------------------------

def diagnose(probe):
    T = 5
    got, _ = probe(matrix, T=T)
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (T, T):
        w, lower = got.double(), torch.tril(torch.ones(T, T, dtype=torch.bool))
        if close(w, torch.full((T, T), 1.0 / T, dtype=torch.float64)):
            return Diagnosis("ex2.all_ones",
                             "平均矩阵的每个数都是 1/T：每个位置平均了全部 T 个位置，连未来也算进去了。"
                             "要从下三角的全 1 矩阵 tril 出发，第 i 行只有前 i+1 个位置为 1",
                             "Every entry of the averaging matrix is 1/T: each position averages "
                             "all T positions, the future included. Start from the "
                             "lower-triangular tril, whose row i has 1s only in its first i+1 "
                             "places")
        if (w[~lower].abs() > 1e-6).any() and (w[lower & ~torch.eye(T, dtype=torch.bool)] == 0).all():
            return Diagnosis("ex2.upper_triangular",
                             "矩阵是上三角的：每个位置平均的是它自己和它之后的位置，也就是未来。"
                             "用 torch.tril（下三角），不是 torch.triu",
                             "The matrix is upper-triangular: each position averages itself and "
                             "what comes after it, the future. Use torch.tril (lower), not "
                             "torch.triu")
        if close(w.sum(dim=0), torch.ones(T, dtype=torch.float64)) and \
                not close(w.sum(dim=1), torch.ones(T, dtype=torch.float64)):
            return Diagnosis("ex2.column_normalised",
                             "归一化沿错了方向：现在是每一列之和为 1。第 i 行是位置 i 的权重，要让每一行之和"
                             "为 1，按行求和：sum(dim=1, keepdim=True)",
                             "Normalised along the wrong direction: each column sums to 1 now. Row "
                             "i holds position i's weights, so each row must sum to 1: sum over "
                             "dim=1, with keepdim=True")
    x_shape = dict(B=2, T=T, C=T)  # C == T: x @ weights runs, silently wrong
    got, _ = probe(average, **x_shape)
    x = probe.inputs(draw, **x_shape).double()
    weights = torch.tril(torch.ones(T, T, dtype=torch.float64))
    weights = weights / weights.sum(dim=1, keepdim=True)
    if close(got, x @ weights):
        return X_AT_WEIGHTS
    counts = probe.submission(calls, C=SHAPES[0]["n_embd"])
    if len({c["operators"] for c in counts.values()}) > 1 \
            or probe.source.loops("average_context"):
        return Diagnosis("ex2.loop",
                         "结果是对的，但用了 Python 循环。课文说\u201c直接用循环来求平均效率较低\u201d："
                         "一次 (T, T) 与 (B, T, C) 的矩阵乘法就完成了所有位置的平均",
                         "The values are right but come from a Python loop. The lesson: a loop is "
                         "slow (直接用循环来求平均效率较低); one product of the (T, T) matrix with "
                         "the (B, T, C) input averages every position at once")
    return None


X_AT_WEIGHTS = Diagnosis("ex2.x_at_weights",
                         "乘法的顺序反了：x @ weights 是在通道（C）方向上混合，而不是在位置（T）方向上平均。"
                         "(T, T) 的 weights 放在左边：weights @ x",
                         "The product is the wrong way round: x @ weights mixes the channels (C), "
                         "not the positions (T). The (T, T) weights go on the left: weights @ x")


def diagnose_error(error):
    frames = error.get("frames", [])
    if "cannot be multiplied" in error.get("message", "") and frames \
            and frames[-1][2] == "average_context":
        return X_AT_WEIGHTS
    return None
