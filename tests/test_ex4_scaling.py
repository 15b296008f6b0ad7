"""Exercise 4 · scaled dot-product scores (缩放): q @ kᵀ · head_size^-0.5, shape (B, T, T)."""
from grading.testkit import SHAPES, expect_close, expect_tensor, fail, hidden, public, randn

# Many scores, so that their variance is estimated within a few percent: (16, 32, 32) scores.
VARIANCE_SHAPE = dict(B=16, T=32, head_size=64)


# -- scenarios ------------------------------------------------------------------------------------

def scores(ex, gen, B, T, head_size):
    q = randn(gen, B, T, head_size)  # unit Gaussian, as in the lesson's argument
    k = randn(gen, B, T, head_size)
    return ex.attention_scores(q, k)


def shapes():
    return [dict(B=s["B"], T=s["T"], head_size=s["head_size"]) for s in SHAPES]


# -- tests ----------------------------------------------------------------------------------------

@public(3)
def test_shape(submission):
    """scores have shape (B, T, T): one score per pair of positions"""
    for shape in shapes():
        expect_tensor(submission(scores, **shape), "attention_scores(q, k)",
                      (shape["B"], shape["T"], shape["T"]), ("B", "T", "T"))


@public(4)
def test_variance_is_about_one(submission):
    """with unit-Gaussian q and k, the scaled scores have variance ≈ 1"""
    s = VARIANCE_SHAPE
    got = expect_tensor(submission(scores, **s), "attention_scores(q, k)",
                        (s["B"], s["T"], s["T"]), ("B", "T", "T"))
    variance = got.var().item()
    if not 0.8 < variance < 1.25:
        fail(f"the scores have variance {variance:.3g} for head_size={s['head_size']}; scaled "
             "right it is ≈ 1 (unscaled ≈ head_size): multiply by head_size ** -0.5, the inverse "
             "of the square root of head_size")


@hidden(8)
def test_matches_reference(compare):
    """matches the reference on fresh random q and k, three shape sets"""
    for shape in shapes():
        got, want = compare(scores, **shape)
        expect_close(got, want, "attention_scores(q, k)", ("B", "T", "T"))
