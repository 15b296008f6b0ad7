"""Exercise 4 · scaled dot-product scores (缩放): q @ kᵀ · head_size^-0.5, shape (B, T, T)."""
import re

import torch

from grading.i18n import Bi
from grading.testkit import SHAPES, Consistent, Diagnosis, Way, changed_everywhere, \
    expect_built_yourself, expect_close, expect_inputs_unchanged, expect_tensor, fail, hidden, \
    lesson, modifies_input_diagnosis, named_slips, public, randn, same, \
    shortcut_diagnosis, shown_work

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


def inputs_after(ex, gen, B, T, head_size):
    """The judge's copies of q and k, and q and k as the learner's call left them."""
    inputs = draw(gen, B, T, head_size)
    sent = [inputs["q"].clone(), inputs["k"].clone()]
    _, after = ex.attention_scores.call_inputs(inputs["q"], inputs["k"])
    return sent, after


def variance_scores(ex, gen):
    """For a small and a large head_size: (the shape, its scores, and the scores of a part of the
    same q and k: the first two examples' first five positions, which must be the same numbers)."""
    out, attention_scores = [], Consistent(ex.attention_scores, "attention_scores")
    for low, high in VARIANCE_HEAD_SIZES:
        B, T, H = (int(torch.randint(a, b + 1, (1,), generator=gen))
                   for a, b in (VARIANCE_B, VARIANCE_T, (low, high)))
        inputs = draw(gen, B, T, H)
        part = attention_scores(inputs["q"][:2, :5].clone(), inputs["k"][:2, :5].clone())
        out.append((dict(B=B, T=T, head_size=H), attention_scores(inputs["q"], inputs["k"]),
                    part))
    return out


def calls(ex, gen, head_size):
    """The recorded work of attention_scores at two lengths and two batch sizes."""
    return shown_work(ex.attention_scores,
                      lambda B, T: (randn(gen, B, T, head_size), randn(gen, B, T, head_size)))


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
    """with unit-Gaussian q and k, the scaled scores have variance ≈ 1
    q、k 是单位高斯随机数时，缩放后的分数方差约为 1"""
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
            fail(f"head_size={s['head_size']} 时分数的方差是 {variance:.3g}；缩放正确时约为 1（不缩放约为 "
                 "head_size）：乘以 head_size ** -0.5，即除以 head_size 的平方根",
                 f"the scores have variance {variance:.3g} for head_size={s['head_size']}; scaled "
                 "right it is ≈ 1 (unscaled ≈ head_size): multiply by head_size ** -0.5, the "
                 "inverse of the square root of head_size")


@public(1, after=["test_shape", "test_variance_is_about_one"])
def test_built_yourself(submission):
    """the scores are computed by hand, not by PyTorch's ready-made attention
    分数是亲手算出来的，没有调用 PyTorch 现成的注意力"""
    expect_built_yourself(submission(calls, head_size=8), "attention_scores")


@public(1, after=["test_shape"])
def test_inputs_unchanged(submission):
    """attention_scores leaves q and k as they were: no in-place operation on its inputs
    attention_scores 不改动 q 和 k：不对输入做原地运算"""
    for shape in shapes():
        sent, after = submission(inputs_after, **shape)
        expect_inputs_unchanged(sent, after, "attention_scores(q, k)", ("q", "k"))


@hidden(6)
def test_matches_reference(compare):
    """matches the reference on fresh random q and k, three shape sets
    在三组形状的全新随机 q、k 上与参考答案一致"""
    for shape in shapes():
        got, want = compare(scores, **shape)
        expect_close(got, want, "attention_scores(q, k)", ("B", "T", "T"))


# -- diagnoses ------------------------------------------------------------------------------------
# The mistake space of attention_scores: which product, and what it is scaled by (the lesson's way
# first). Exercise 6's head reuses these steps. A scale is a function of the sizes n = {"B", "T",
# "C", "head_size"} (C, n_embd, only inside the head).

SCORE_STEPS = {
    "product": [
        Way("q_at_k", lambda q, k: q @ k.transpose(-2, -1)),
        Way("k_at_q", lambda q, k: k @ q.transpose(-2, -1),
            "分数表被转置了：算的是 k @ qᵀ。第 i 行第 j 列应是第 i 个字的查询与第 j 个字的键的点积：q @ kᵀ",
            "The table of scores is transposed: k @ qᵀ was computed. Row i, column j is query i "
            "dotted with key j: q @ kᵀ"),
        Way("q_at_q", lambda q, k: q @ q.transpose(-2, -1),
            "算的是 q @ qᵀ：查询和查询比，键没有用上。第 i 行第 j 列应是第 i 个字的查询与第 j 个字的键的点积：q @ kᵀ",
            "q @ qᵀ was computed: queries matched against queries, and the keys unused. Row i, "
            "column j is query i dotted with key j: q @ kᵀ"),
        Way("k_at_k", lambda q, k: k @ k.transpose(-2, -1),
            "算的是 k @ kᵀ：键和键比，查询没有用上。第 i 行第 j 列应是第 i 个字的查询与第 j 个字的键的点积：q @ kᵀ",
            "k @ kᵀ was computed: keys matched against keys, and the queries unused. Row i, "
            "column j is query i dotted with key j: q @ kᵀ"),
        Way("elementwise_product", lambda q, k: (q * k).sum(-1),
            "算的是 (q * k).sum(-1)：逐元素相乘再求和，只得到每个位置和它自己的点积（分数表的对角线），形状是 (B, T)，"
            "而不是 (B, T, T)。每一对位置 (i, j) 都要一个点积：q @ k.transpose(-2, -1)",
            "(q * k).sum(-1) was computed: an elementwise product, summed, gives only each "
            "position's dot product with itself (the diagonal of the table of scores), of shape "
            "(B, T) instead of (B, T, T). Every pair (i, j) needs its dot product: "
            "q @ k.transpose(-2, -1)"),
    ],
    "scale": [
        Way("sqrt_head_size", lambda n: n["head_size"] ** -0.5),
        Way("not_scaled", lambda n: 1.0,
            "分数没有缩放，是 q @ kᵀ 本身：数值会随 head_size 变大，softmax 会变得过于极端。乘以 head_size ** -0.5",
            "The scores are not scaled, just q @ kᵀ: they grow with head_size and the softmax "
            "becomes too extreme. Multiply by head_size ** -0.5"),
        Way("head_size_not_sqrt", lambda n: n["head_size"] ** -1.0,
            "分数被除以了 head_size，而不是它的平方根：要么除的是 head_size 本身，要么缩放了两次（q 已经乘过 "
            "head_size ** -0.5，分数又乘了一次）。分数被压得太小，方差约为 1/head_size。只缩放一次：分数乘以 "
            "head_size ** -0.5",
            "The scores came out divided by head_size instead of its square root: either by "
            "head_size itself, or scaled twice (q already multiplied by head_size ** -0.5, then "
            "the scores once more). They come out too small, variance ≈ 1/head_size. Scale once: "
            "multiply the scores by head_size ** -0.5"),
        Way("head_size_over_2", lambda n: n["head_size"] ** -1.0 / 2,
            "写成了 head_size ** -1/2：** 比 / 先算，所以这是 (head_size ** -1) / 2，即除以 2·head_size，"
            "而不是除以 head_size 的平方根。写 head_size ** -0.5，或者加上括号 head_size ** (-1/2)",
            "head_size ** -1/2 was written: ** binds tighter than /, so that is "
            "(head_size ** -1) / 2, a division by 2·head_size, not by the square root of "
            "head_size. Write head_size ** -0.5, or with parentheses head_size ** (-1/2)"),
        Way("times_sqrt_head_size", lambda n: n["head_size"] ** 0.5,
            "分数乘上了 √head_size，而不是除以它（写成了 head_size ** 0.5，或者除以 head_size ** -0.5）："
            "分数反而被放大了。乘以 head_size ** -0.5，即除以 head_size 的平方根",
            "The scores were multiplied by √head_size instead of divided by it (head_size ** 0.5, "
            "or a division by head_size ** -0.5): they grow instead of shrinking. Multiply by "
            "head_size ** -0.5, that is divide by the square root of head_size"),
        Way("scaled_by_T", lambda n: n["T"] ** -0.5,
            "除以的是 √T（序列长度 q.shape[1]），而不是 √head_size（向量长度 q.shape[-1]）。点积随向量长度变大，"
            "所以按 head_size 缩放",
            "Scaled by √T (the sequence length, q.shape[1]) instead of √head_size (the vector "
            "length, q.shape[-1]). Dot products grow with the vector length, so scale by "
            "head_size"),
        Way("scaled_by_B", lambda n: n["B"] ** -0.5,
            "除以的是 √B（批量大小 q.shape[0]），而不是 √head_size（向量长度 q.shape[-1]）。点积随向量长度变大，"
            "所以按 head_size 缩放",
            "Scaled by √B (the batch size, q.shape[0]) instead of √head_size (the vector length, "
            "q.shape[-1]). Dot products grow with the vector length, so scale by head_size"),
    ],
    "then": [  # what comes after the scaling in attention_scores (exercise 6 has its own steps)
        Way("scores", None),
        Way("softmax_too_early", "softmax",
            "attention_scores 已经做了 softmax：这一步只算缩放后的分数 q @ kᵀ · head_size^-0.5。"
            "掩码和 softmax 是下一步（因果掩码）的事，掩码必须在 softmax 之前",
            "attention_scores already applies softmax: this step computes only the scaled scores, "
            "q @ kᵀ · head_size^-0.5. The mask and the softmax belong to the next step (因果掩码, "
            "the causal mask), and the mask must come before the softmax"),
    ],
}


def scaled_scores(q, k, pick, n):
    """The scores (B, T, T) that the ways in `pick` make of q and k (float64, in the judge)."""
    scores = pick["product"](q, k) * pick["scale"](n)
    return scores.softmax(dim=-1) if pick.get("then") == "softmax" else scores


DIAGNOSE_SHAPE = dict(B=2, T=5, head_size=8)  # T != head_size != B, no one a square of another
CONFIRM_SHAPE = dict(B=3, T=7, head_size=5)  # the second draw: other sizes, the same property


def diagnose(probe):
    shape = DIAGNOSE_SHAPE
    B, H = shape["B"], shape["head_size"]
    got, _ = probe(scores, **shape)
    if hasattr(got, "shape") and tuple(got.shape) == (B, H, H):
        return Diagnosis("ex4.transposed_q",
                         f"分数的形状是 (B, head_size, head_size) = ({B}, {H}, {H})：转置的是 q 而不是 k。"
                         "要的是 q @ kᵀ，即 q @ k.transpose(-2, -1)，得到 (B, T, T)",
                         f"The scores have shape (B, head_size, head_size) = ({B}, {H}, {H}): q "
                         "was transposed instead of k. The lesson's product is q @ kᵀ, "
                         "q @ k.transpose(-2, -1), which is (B, T, T)")

    def draws():  # the learner's scores and the judge's computation of them, draw after draw
        learner = got
        for size in (shape, CONFIRM_SHAPE):
            if size is not shape:
                learner, _ = probe(scores, **size)
            inputs = probe.inputs(draw, **size)
            q, k = inputs["q"].double(), inputs["k"].double()
            yield learner, lambda pick, q=q, k=k, size=size: scaled_scores(q, k, pick, size)
    found = named_slips(SCORE_STEPS, draws(), "ex4.", most=2)
    if found:
        return found
    if right_where_graded(probe):
        changed = changed_everywhere(probe, inputs_after, shapes(), ("q", "k"))
        if changed:
            return modifies_input_diagnosis("ex4", "attention_scores", changed,
                                            "q = q * head_size ** -0.5")
    return shortcut_diagnosis(probe.submission(calls, head_size=H), "ex4.shortcut")


def right_where_graded(probe):
    """For the diagnoses that say "the values are right": right at every graded size and at
    the second draw's."""
    for shape in [*shapes(), CONFIRM_SHAPE]:
        got, _ = probe(scores, **shape)
        inputs = probe.inputs(draw, **shape)
        if not same(got, scaled_scores(inputs["q"].double(), inputs["k"].double(),
                                       lesson(SCORE_STEPS), shape)):
            return False
    return True


def transposed_3d(error, exercise):
    """`k.T` on a (B, T, head_size) tensor: it reverses all three dimensions."""
    frames = error.get("frames", [])
    line = frames[-1][3] if frames and len(frames[-1]) > 3 else ""
    if re.search(r"\w\.T\b", line) and "must match the size" in error.get("message", ""):
        return Diagnosis(f"{exercise}.T_on_3d",
                         "k.T 作用在三维的 (B, T, head_size) 张量上，会把三个维度全部倒过来，变成 (head_size, T, B)，"
                         "而不只是交换最后两维（PyTorch 也会警告：x.T 用在非二维张量上已被弃用）。"
                         "要交换最后两维：k.transpose(-2, -1)，或者 k.mT",
                         "k.T on a 3-D (B, T, head_size) tensor reverses all three dimensions, "
                         "giving (head_size, T, B), not just the last two (PyTorch warns that x.T "
                         "on tensors that are not 2-D is deprecated). Swap the last two: "
                         "k.transpose(-2, -1), or k.mT")
    return None


def undefined_head_size(error, exercise, zh_where, en_where):
    if error.get("type") == "NameError" and "'head_size'" in error.get("message", ""):
        return Diagnosis(f"{exercise}.head_size_undefined",
                         f"head_size 没有定义：{zh_where}",
                         f"head_size is not defined: {en_where}")
    return None


def sqrt_of_int(error, exercise):
    """torch.sqrt(head_size) of a Python int: torch.sqrt takes tensors only."""
    frames = error.get("frames", [])
    line = frames[-1][3] if frames and len(frames[-1]) > 3 else ""
    if error.get("type") == "TypeError" and "must be Tensor, not int" in error.get("message", "") \
            and re.search(r"\bsqrt\(", line):
        return Diagnosis(f"{exercise}.sqrt_of_int",
                         "torch.sqrt 只接受张量，而 head_size 是一个 Python 整数（q.shape[-1]）。"
                         "求它的平方根用 head_size ** 0.5 或 math.sqrt(head_size)；或者直接乘以 head_size ** -0.5",
                         "torch.sqrt takes only tensors, and head_size is a Python int "
                         "(q.shape[-1]). Take its square root with head_size ** 0.5 or "
                         "math.sqrt(head_size); or multiply by head_size ** -0.5 directly")
    return None


def diagnose_error(error):
    return transposed_3d(error, "ex4") or sqrt_of_int(error, "ex4") or undefined_head_size(
        error, "ex4",
        "attention_scores 只拿到 q 和 k，head_size 是它们最后一维的长度：head_size = q.shape[-1]",
        "attention_scores gets only q and k, and head_size is the length of their last "
        "dimension: head_size = q.shape[-1]")
