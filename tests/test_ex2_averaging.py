"""Exercise 2 · averaging the context (对前文取平均): weights = normalised tril; weights @ x."""
import torch

from grading.testkit import SHAPES, expect_close, expect_tensor, fail, hidden, public, randn, \
    upper_triangle

LENGTHS = (1, 5, 8)


# -- scenarios ------------------------------------------------------------------------------------

def matrix(ex, gen, T):
    return ex.averaging_matrix(T)


def draw(gen, B, T, C):
    return randn(gen, B, T, C)


def average(ex, gen, B, T, C):
    return ex.average_context(draw(gen, B, T, C))


def average_with_future_changed(ex, gen, B, T, C):
    """Outputs for x and, for each t, for x with every position after t replaced: (T+1, B, T, C)."""
    x = randn(gen, B, T, C)
    outs = [ex.average_context(x)]
    for t in range(T):
        changed = x.clone()
        changed[:, t + 1:] = randn(gen, B, T - t - 1, C)
        outs.append(ex.average_context(changed))
    return outs


def shapes():
    return [dict(B=s["B"], T=s["T"], C=s["n_embd"]) for s in SHAPES]


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_rows_sum_to_one(submission):
    """averaging_matrix: every row sums to 1"""
    for T in LENGTHS:
        weights = expect_tensor(submission(matrix, T=T), f"averaging_matrix({T})", (T, T),
                                ("T", "T"))
        sums = weights.sum(dim=-1)
        row = int((sums - 1).abs().argmax())
        if abs(sums[row] - 1) > 1e-5:
            fail(f"row {row} of averaging_matrix({T}) sums to {sums[row]:.4g}, not 1: normalise "
                 "each row, tril / tril.sum(dim=1, keepdim=True)")


@public(2)
def test_future_is_zero(submission):
    """averaging_matrix: the upper triangle (the future) is 0"""
    for T in LENGTHS:
        weights = expect_tensor(submission(matrix, T=T), f"averaging_matrix({T})", (T, T),
                                ("T", "T"))
        future = upper_triangle(weights) & (weights.abs() > 1e-6)
        if future.any():
            i, j = future.nonzero()[0].tolist()
            fail(f"averaging_matrix({T})[{i}, {j}] is {weights[i, j]:.4g}: position {i} would "
                 f"average in position {j}, which comes after it; the matrix must be lower-"
                 "triangular (torch.tril)")


@public(2)
def test_row_i_is_one_over_i_plus_one(submission):
    """averaging_matrix: row 1 is [1, 0, …], row i is 1/(i+1) on its first i+1 entries"""
    for T in LENGTHS:
        weights = expect_tensor(submission(matrix, T=T), f"averaging_matrix({T})", (T, T),
                                ("T", "T"))
        counts = torch.arange(1, T + 1, dtype=torch.float64)
        want = torch.tril(torch.ones(T, T, dtype=torch.float64)) / counts[:, None]
        expect_close(weights, want, f"averaging_matrix({T})", ("T", "T"), source="it should be")


@public(3)
def test_mean_of_the_past(submission):
    """average_context: position t is the mean of x[:, :t+1]"""
    for shape in shapes():
        got = submission(average, **shape)
        x = submission.inputs(draw, **shape).double()
        counts = torch.arange(1, shape["T"] + 1, dtype=torch.float64)[None, :, None]
        want = x.cumsum(dim=1) / counts  # (B, T, C): the mean of x[:, :t+1] at each t
        expect_close(got, want, "average_context(x)", ("B", "T", "C"),
                     source="the mean of x[:, :t+1] is")


@public(2)
def test_causal(submission):
    """average_context: changing x after position t never changes outputs up to t"""
    for shape in shapes():
        outs = submission(average_with_future_changed, **shape)
        B, T, C = shape["B"], shape["T"], shape["C"]
        first = expect_tensor(outs[0], "average_context(x)", (B, T, C), ("B", "T", "C"))
        for t in range(T):
            changed = expect_tensor(outs[t + 1], "average_context(x)", (B, T, C))
            diff = (changed[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > 1e-5:
                s = int(diff.amax(dim=(0, 2)).argmax())
                fail(f"changing x after position {t} changed the output at position {s}: "
                     "a position may only average itself and what came before it")


@hidden(2)
def test_matrix_matches_reference(compare):
    """averaging_matrix matches the reference for T = 1, 5, 8"""
    for T in LENGTHS:
        got, want = compare(matrix, T=T)
        expect_close(got, want, f"averaging_matrix({T})", ("T", "T"))


@hidden(2)
def test_average_matches_reference(compare):
    """average_context matches the reference on fresh random x, three shape sets"""
    for shape in shapes():
        got, want = compare(average, **shape)
        expect_close(got, want, "average_context(x)", ("B", "T", "C"))
