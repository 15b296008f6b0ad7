"""Exercise 5 · the causal mask (因果掩码): future scores → −∞ before softmax over the last dim."""
import torch

from grading.testkit import SHAPES, expect_close, expect_tensor, fail, hidden, public, randn, \
    upper_triangle

SHAPE_NAMES = ("B", "T", "T")


# -- scenarios ------------------------------------------------------------------------------------

def draw(gen, B, T):
    return randn(gen, B, T, T) * 3  # spread-out scores, so that wrong weights differ clearly


def weights(ex, gen, B, T):
    return ex.causal_softmax(draw(gen, B, T))


def weights_with_future_changed(ex, gen, B, T):
    """For scores and, for each t, scores whose rows and columns after t are redrawn:
    the weights, (T+1) tensors of (B, T, T). Token t+1… changes exactly those rows and columns."""
    scores = draw(gen, B, T)
    outs = [ex.causal_softmax(scores)]
    for t in range(T):
        changed = scores.clone()
        changed[:, t + 1:, :] = randn(gen, B, T - t - 1, T) * 3
        changed[:, :, t + 1:] = randn(gen, B, T, T - t - 1) * 3
        outs.append(ex.causal_softmax(changed))
    return outs


def jacobian(ex, gen, T):
    """∂weights[0, i, j] / ∂scores[0, a, s]: shape (T, T, T, T)."""
    scores = draw(gen, 1, T)
    return torch.autograd.functional.jacobian(ex.causal_softmax, scores)[0, :, :, 0]


def shapes():
    return [dict(B=s["B"], T=s["T"]) for s in SHAPES]


def checked(value, B, T):
    return expect_tensor(value, "causal_softmax(scores)", (B, T, T), SHAPE_NAMES)


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_shape(submission):
    """the weights keep the scores' shape (B, T, T)"""
    for shape in shapes():
        checked(submission(weights, **shape), **shape)


@public(3)
def test_rows_sum_to_one(submission):
    """every row of weights sums to 1"""
    for shape in shapes():
        w = checked(submission(weights, **shape), **shape)
        sums = w.sum(dim=-1)  # (B, T)
        b, i = divmod(int((sums - 1).abs().argmax()), shape["T"])
        if abs(sums[b, i] - 1) > 1e-5:
            fail(f"row {i} of the weights sums to {sums[b, i]:.4g}, not 1: softmax over the last "
                 "dimension (dim=-1), after masking")


@public(3)
def test_future_is_zero(submission):
    """the upper triangle (the future) of weights is 0"""
    for shape in shapes():
        w = checked(submission(weights, **shape), **shape)
        future = upper_triangle(w) & (w.abs() > 1e-6)  # (B, T, T)
        if future.any():
            b, i, j = future.nonzero()[0].tolist()
            fail(f"weights[{b}, {i}, {j}] is {w[b, i, j]:.4g}, so position {i} sees position {j}, "
                 "which comes after it. Fill the future with float('-inf') before softmax: "
                 "softmax turns −∞ into 0")


@public(1)
def test_first_row(submission):
    """the first row is [1, 0, …]: position 0 sees only itself"""
    for shape in shapes():
        w = checked(submission(weights, **shape), **shape)
        want = torch.zeros(shape["B"], shape["T"], dtype=torch.float64)
        want[:, 0] = 1
        expect_close(w[:, 0, :], want, "weights[:, 0, :]", ("B", "T"), source="it should be")


@public(3)
def test_causal_for_every_position(submission):
    """changing the scores of positions after t never changes the weights of rows up to t"""
    for shape in shapes():
        B, T = shape["B"], shape["T"]
        outs = submission(weights_with_future_changed, **shape)
        if not isinstance(outs, list) or len(outs) != T + 1:
            fail("causal_softmax did not return one tensor per call")
        first = checked(outs[0], B, T)
        for t in range(T):
            diff = (checked(outs[t + 1], B, T)[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > 1e-5:
                b, i, j = (diff == diff.max()).nonzero()[0].tolist()
                fail(f"changing the scores after position {t} changed weights[{b}, {i}, {j}] by "
                     f"{diff.max():.3g}: row {i} depends on the future. Mask before softmax, and "
                     "softmax each row (dim=-1)")


@public(2)
def test_jacobian(submission):
    """∂weights[t] / ∂scores[s] ≈ 0 whenever s is after t"""
    T = SHAPES[0]["T"]
    J = expect_tensor(submission(jacobian, T=T), "the Jacobian of causal_softmax", (T, T, T, T))
    for t in range(T):
        future = torch.zeros(T, T, dtype=torch.bool)  # entries of scores that belong to tokens > t
        future[t + 1:, :] = True
        future[:, t + 1:] = True
        leak = J[t][:, future].abs()
        if leak.numel() and leak.max() > 1e-6:
            fail(f"row {t} of the weights has a derivative of {leak.max():.3g} with respect to "
                 f"scores of positions after {t}: the future still leaks into the past")


@hidden(6)
def test_matches_reference(compare):
    """matches the reference on fresh random scores, three shape sets"""
    for shape in shapes():
        got, want = compare(weights, **shape)
        expect_close(got, want, "causal_softmax(scores)", SHAPE_NAMES)
