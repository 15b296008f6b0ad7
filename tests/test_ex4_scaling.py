"""Exercise 4 · scaled dot-product scores (缩放): q @ kᵀ · head_size^-0.5, shape (B, T, T)."""

import torch

from grading.checks import (
    SHAPES,
    expect_built_yourself,
    expect_calls_close,
    expect_close,
    expect_gradients,
    expect_inputs_unchanged,
    expect_tensor,
    fail,
    hidden,
    named_gradients,
    public,
    randn,
    shown_work,
)
from grading.diagnosis import Picture
from grading.i18n import Bi

# Many scores, so that their variance is estimated within a few percent; head sizes drawn afresh
# each run, one small and one large, and far from T (scaling by √T must not pass by chance).
VARIANCE_B, VARIANCE_T, VARIANCE_HEAD_SIZES = (24, 32), (16, 24), ((4, 8), (64, 96))


# -- scenarios ------------------------------------------------------------------------------------

def draw(gen, B, T, head_size):
    return {"q": randn(gen, B, T, head_size),  # unit Gaussian, as in the lesson's argument
            "k": randn(gen, B, T, head_size)}


def scores(ex, gen, B, T, head_size):
    inputs = draw(gen, B, T, head_size)
    return ex.attention_scores(inputs["q"], inputs["k"])


def shown_scores(ex, gen, B, T, head_size):
    """attention_scores(q, k) and its Call (its record, for a record diff)."""
    inputs = draw(gen, B, T, head_size)
    return ex.attention_scores.shown(inputs["q"], inputs["k"])


def inputs_after(ex, gen, B, T, head_size):
    """The judge's copies of q and k, and q and k as the learner's call left them."""
    inputs = draw(gen, B, T, head_size)
    sent = [inputs["q"].clone(), inputs["k"].clone()]
    _, after = ex.attention_scores.call_inputs(inputs["q"], inputs["k"])
    return sent, after


def learning(ex, gen, B, T, head_size, checked=True):
    """The gradients of Σ grad_output · attention_scores(q, k) for q and for k, as training would
    send them back."""
    inputs = draw(gen, B, T, head_size)
    return named_gradients(ex.attention_scores, [inputs["q"], inputs["k"]], ["q", "k"],
                           randn(gen, B, T, T), what="attention_scores", checked=checked)


def variance_scores(ex, gen):
    """For a small and a large head_size: (the shape, its scores, and the scores of a part of the
    same q and k: the first two examples' first five positions, which must be the same numbers)."""
    out, attention_scores = [], ex.attention_scores
    for low, high in VARIANCE_HEAD_SIZES:
        B, T, H = (int(torch.randint(a, b + 1, (1,), generator=gen))
                   for a, b in (VARIANCE_B, VARIANCE_T, (low, high)))
        inputs = draw(gen, B, T, H)
        part = attention_scores(inputs["q"][:2, :5].clone(), inputs["k"][:2, :5].clone())
        out.append((dict(B=B, T=T, head_size=H), attention_scores(inputs["q"], inputs["k"]),
                    part))
    return out


def calls(ex, gen):
    """The recorded work of attention_scores at the sizes test_matches_reference grades."""
    def make(B, T, head_size):
        def args():
            inputs = draw(gen, B, T, head_size)
            return inputs["q"], inputs["k"]
        return ex.attention_scores, args
    return shown_work(make, shapes(), gen)


def shapes():
    return [dict(B=s["B"], T=s["T"], head_size=s["head_size"]) for s in SHAPES]


# -- tests ----------------------------------------------------------------------------------------

@public(3)
def test_shape(submission):
    """scores have shape (B, T, T), one finite score per pair of positions
    分数的形状是 (B, T, T)：每一对位置一个有限的分数"""
    for shape in shapes():
        expect_tensor(submission(scores, **shape), "attention_scores(q, k)",
                      (shape["B"], shape["T"], shape["T"]), ("B", "T", "T"))


@public(4)
def test_variance_is_about_one(submission):
    """scaled scores stay mild, so softmax is not too extreme: variance ≈ 1 for unit-Gaussian q and k
    缩放后的分数保持温和，softmax 不会过于极端：q、k 是单位高斯随机数时方差约为 1"""
    for s, scores_, part in submission(variance_scores):
        got = expect_tensor(scores_, "attention_scores(q, k)", (s["B"], s["T"], s["T"]),
                            ("B", "T", "T"))
        expect_close(part, got[:2, :5, :5], "attention_scores(q[:2, :5], k[:2, :5])",
                     ("B", "T", "T"), source=Bi("整批计算时这些位置是", "for the whole batch it is"),
                     hint=Bi("每个样本、每对位置的分数只取决于这两个位置的 q 和 k，与批量大小和长度无关。",
                             "The score of a pair of positions depends only on their q and k, "
                             "not on the batch size or the length."))
        variance = got.var().item()
        if not 0.8 < variance < 1.25:
            unscaled_variance(variance, s)
    # The graded sizes too: every call is drawn alike, so scaling only where the variance is
    # measured gains nothing. A few dozen scores vary widely (a right answer's variance reaches
    # about 3.8 in two million draws of 50); unscaled, head_size 8 or more gives about 8 or more.
    for shape in shapes():
        got = expect_tensor(submission(scores, **shape), "attention_scores(q, k)",
                            (shape["B"], shape["T"], shape["T"]), ("B", "T", "T"))
        if got.numel() >= 30 and shape["head_size"] >= 8 and got.var().item() > 5:
            unscaled_variance(got.var().item(), shape)


def unscaled_variance(variance, s):
    H = s["head_size"]
    if variance > 1:
        fail(f"分数太大了：head_size={H} 时方差是 {variance:.3g}（缩放正确时约为 1，不缩放约为 head_size）。"
             "课文：点积的数值随向量长度增大，数值过大，下一步的 softmax 就会变得过于极端，几乎把全部权重集中到一个字上。"
             "乘以 head_size ** -0.5，即除以 head_size 的平方根",
             f"the scores are too large: variance {variance:.3g} for head_size={H} (scaled right "
             "≈ 1, unscaled ≈ head_size). The lesson: dot products grow with the vectors' "
             "length, and softmax of large scores is too extreme, nearly all the weight on one "
             "character. Multiply by head_size ** -0.5, that is divide by the square root of "
             "head_size")
    fail(f"分数被缩得太小了：head_size={H} 时方差只有 {variance:.3g}（缩放正确时约为 1）。这样的分数经过 softmax "
         "几乎是平均分配，看不出哪个字重要。课文除以的是 head_size 的平方根（乘以 head_size ** -0.5）",
         f"the scores are scaled down too far: variance only {variance:.3g} for head_size={H} "
         "(scaled right ≈ 1). softmax of such scores is nearly an even average, with no "
         "character standing out. The lesson divides by the square root of head_size "
         "(multiplies by head_size ** -0.5)")


@public(1, after=["test_shape", "test_variance_is_about_one"])
def test_built_yourself(submission):
    """the scores are computed by hand, not by PyTorch's ready-made attention
    分数是亲手算出来的，没有调用 PyTorch 现成的注意力"""
    expect_built_yourself(submission(calls), "attention_scores")


@public(1, after=["test_shape"])
def test_inputs_unchanged(submission):
    """attention_scores leaves q and k as they were: no in-place operation on its inputs
    attention_scores 不改动 q 和 k：不对输入做原地运算"""
    for shape in shapes():
        sent, after = submission(inputs_after, **shape)
        expect_inputs_unchanged(sent, after, "attention_scores(q, k)", ("q", "k"))


@hidden(5)
def test_matches_reference(compare):
    """matches the reference on fresh random q and k, four shape sets (B = T = 1 among them)
    在四组形状（其中一组 B = T = 1）的全新随机 q、k 上与参考答案一致"""
    # the calls the how-check reads: at every size shapes(), two or three calls each
    expect_calls_close(*compare(calls), "attention_scores(q, k)", ("B", "T", "T"))
    got, want = compare(variance_scores)  # the variance check's sizes are graded too
    for (_, mine, part), (_, theirs, _) in zip(got, want):
        expect_close(mine, theirs, "attention_scores(q, k)", ("B", "T", "T"))


@hidden(1)
def test_gradients_match_reference(compare):
    """a loss's gradients for q and for k match the reference's: training can send them back
    损失对 q 和 k 的梯度与参考答案一致：训练时梯度能传回去"""
    for k, shape in enumerate(shapes()[:2]):
        got, want = compare(learning, checked=k == 0, **shape)
        expect_gradients(got, want, {"q": ("B", "T", "head_size"), "k": ("B", "T", "head_size")})


# -- what the learner built, shown beside the expected ----------------------------------------

PICTURE_SHAPE = dict(B=1, T=5, head_size=64)  # a large head_size: unscaled, softmax is extreme


def picture(probe):
    """softmax of the learner's scores beside softmax of the solution's, at head_size 64: the
    lesson's reason for scaling (softmax too extreme without it) seen in the weights."""
    got, want = probe(scores, **PICTURE_SHAPE)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (1, 5, 5) \
            or not got.is_floating_point():
        return None
    mine = torch.softmax(got[0].double(), dim=-1)
    theirs = torch.softmax(want[0].double(), dim=-1) if want is not None else None
    return Picture(Bi("head_size 为 64 时的 softmax(attention_scores(q, k)[0], dim=-1)",
                      "softmax(attention_scores(q, k)[0], dim=-1), head_size 64"),
                   mine, theirs, note=peak_note(mine, theirs))


def peak_note(mine, theirs):
    """What the weights show when they are more extreme, or flatter, than scaled ones: each
    row's largest weight, on average, beside the scaled scores' (about 0.5 at T = 5)."""
    peak = float(mine.max(dim=-1).values.mean())
    right = float(theirs.max(dim=-1).values.mean()) if theirs is not None else 0.5
    if peak > max(0.75, right + 0.2):
        return Bi(f"每行最大的权重平均是 {peak:.2f}：几乎全部权重都落在一个字上",
                  f"Each row's largest weight is {peak:.2f} on average: nearly all the weight "
                  "on one character")
    if peak < right - 0.15:
        return Bi(f"每行最大的权重平均只有 {peak:.2f}：权重几乎是平均分配的，分数被缩得太小了",
                  f"Each row's largest weight is only {peak:.2f} on average: the weights are "
                  "nearly even, the scores scaled down too far")
    return None
