"""Exercise 5 · the causal mask (因果掩码): future scores → −∞ before softmax over the last dim."""
import functools
import re

import torch

from grading.i18n import Bi
from grading.errors import WorkerFailure
from grading.testkit import LONG_T, SHAPES, SHOULD_BE, Consistent, Diagnosis, Way, \
    changed_everywhere, expect_built_yourself, expect_close, expect_inputs_unchanged, \
    expect_row_gradients, expect_tensor, fail, hidden, lesson, modifies_input_diagnosis, \
    named_slips, public, randn, row_gradients, same, shortcut_diagnosis, shown_work, \
    upper_triangle

SHAPE_NAMES = ("B", "T", "T")


# -- scenarios ------------------------------------------------------------------------------------

def draw(gen, B, T):
    return randn(gen, B, T, T) * 3  # spread-out scores, so that wrong weights differ clearly


def weights(ex, gen, B, T):
    return ex.causal_softmax(draw(gen, B, T))


def inputs_after(ex, gen, B, T):
    """The judge's copy of the scores, and the scores as the learner's call left them."""
    scores = draw(gen, B, T)
    sent = [scores.clone()]
    _, after = ex.causal_softmax.call_inputs(scores)
    return sent, after


def weights_with_future_changed(ex, gen, B, T):
    """For scores; for each t, scores whose rows and columns after t are redrawn (token t+1…
    changes exactly those); and for each t, scores whose row t is redrawn up to t (the present):
    the weights, 2T+1 tensors of (B, T, T)."""
    scores = draw(gen, B, T)
    causal_softmax = Consistent(ex.causal_softmax, "causal_softmax")  # one pure function
    outs = [causal_softmax(scores)]
    for t in range(T):
        changed = scores.clone()
        changed[:, t + 1:, :] = randn(gen, B, T - t - 1, T) * 3
        changed[:, :, t + 1:] = randn(gen, B, T, T - t - 1) * 3
        outs.append(causal_softmax(changed))
    for t in range(T):
        changed = scores.clone()
        changed[:, t, :t + 1] = randn(gen, B, t + 1) * 3
        outs.append(causal_softmax(changed))
    return outs


def future_of_each_row(T):
    """(T, T, T): for copy t, the scores that belong to positions after t (their rows and
    columns: token t+1… changes exactly those)."""
    future = torch.zeros(T, T, T, dtype=torch.bool)
    for t in range(T):
        future[t, t + 1:, :] = True
        future[t, :, t + 1:] = True
    return future


def gradients(ex, gen, T):
    """T copies of one score table; copy t sends back the gradient of row t of its weights."""
    scores = draw(gen, 1, T).expand(T, T, T).clone()
    return row_gradients(Consistent(ex.causal_softmax, "causal_softmax"), scores,
                         future_of_each_row(T), gen)


def calls(ex, gen):
    """The recorded work of causal_softmax at two lengths and two batch sizes."""
    return shown_work(ex.causal_softmax, lambda B, T: (draw(gen, B, T),))


def shapes():
    return [dict(B=s["B"], T=s["T"]) for s in SHAPES]


def checked(value, B, T):
    return expect_tensor(value, "causal_softmax(scores)", (B, T, T), SHAPE_NAMES)


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_shape(submission):
    """the weights keep the scores' shape (B, T, T) and are finite numbers
    权重保持分数的形状 (B, T, T)，而且都是有限的数"""
    for shape in shapes():
        checked(submission(weights, **shape), **shape)


@public(3)
def test_rows_sum_to_one(submission):
    """every row of weights sums to 1
    权重的每一行之和为 1"""
    for shape in shapes():
        sums = checked(submission(weights, **shape), **shape).sum(dim=-1)  # (B, T)
        b, i = divmod(int((sums - 1).abs().argmax()), shape["T"])
        if abs(sums[b, i] - 1) > 1e-5:
            fail(f"权重第 {i} 行之和是 {sums[b, i]:.4g}，不是 1：先掩码，再沿最后一维（dim=-1）做 softmax",
                 f"row {i} of the weights sums to {sums[b, i]:.4g}, not 1: mask first, then "
                 "softmax over the last dimension (dim=-1)")


@public(3, after=["test_rows_sum_to_one"])
def test_future_is_zero(submission):
    """the upper triangle (the future) of weights is 0
    权重的上三角（未来的位置）全为 0"""
    for shape in shapes():
        w = checked(submission(weights, **shape), **shape)
        future = upper_triangle(w) & (w.abs() > 1e-6)  # (B, T, T)
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
    for shape in shapes():
        w = checked(submission(weights, **shape), **shape)
        want = torch.zeros(shape["B"], shape["T"], dtype=torch.float64)
        want[:, 0] = 1
        expect_close(w[:, 0, :], want, "weights[:, 0, :]", ("B", "T"), source=SHOULD_BE)


@public(3)
def test_causal_for_every_position(submission):
    """changing the scores of positions after t never changes the weights of rows up to t
    改动 t 之后各位置的分数，不会改变 t 及之前各行的权重"""
    for shape in shapes():
        B, T = shape["B"], shape["T"]
        outs = submission(weights_with_future_changed, **shape)
        if not isinstance(outs, list) or len(outs) != 2 * T + 1:
            fail("causal_softmax 没有在每次调用时返回一个张量",
                 "causal_softmax did not return one tensor per call")
        first = checked(outs[0], B, T)
        for t in range(T):
            diff = (checked(outs[t + 1], B, T)[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > 1e-5:
                b, i, j = (diff == diff.max()).nonzero()[0].tolist()
                fail(f"改动位置 {t} 之后的分数，使 weights[{b}, {i}, {j}] 变了 {diff.max():.3g}：第 {i} "
                     "行依赖于未来。先掩码再 softmax，并且对每一行（dim=-1）做 softmax",
                     f"changing the scores after position {t} changed weights[{b}, {i}, {j}] by "
                     f"{diff.max():.3g}: row {i} depends on the future. Mask before softmax, and "
                     "softmax each row (dim=-1)")
        for t in range(1, T):  # row 0 is [1, 0, …] whatever its score
            own = checked(outs[T + 1 + t], B, T)
            if (own[:, t] - first[:, t]).abs().max() <= 1e-6:
                fail(f"改动第 {t} 行自己（位置 0..{t}）的分数，第 {t} 行的权重却没有变：权重要由分数算出来",
                     f"changing row {t}'s own scores (positions 0..{t}) did not change its "
                     "weights: the weights must come from the scores")


@public(2)
def test_jacobian(submission):
    """∂weights[t] / ∂scores[s] ≈ 0 whenever s is after t
    s 在 t 之后时，∂weights[t] / ∂scores[s] ≈ 0"""
    T = SHAPES[0]["T"]
    grad = expect_row_gradients(submission(gradients, T=T), "causal_softmax",
                                "causal_softmax(scores)", (T, T, T), SHAPE_NAMES)  # (T, T, T)
    for t in range(T):
        leak = grad[t][future_of_each_row(T)[t]].abs()
        if leak.numel() and leak.max() > 1e-6:
            fail(f"权重第 {t} 行对位置 {t} 之后的分数的导数是 {leak.max():.3g}：未来仍然渗进了过去",
                 f"row {t} of the weights has a derivative of {leak.max():.3g} with respect to "
                 f"scores of positions after {t}: the future still leaks into the past")
    if grad[T - 1, T - 1, :].abs().max() <= 1e-6:
        fail("最后一行的权重对它自己那一行的分数的导数全为 0：权重要随分数变化（梯度要能传回去）",
             "the last row of the weights has no derivative with respect to its own scores: the "
             "weights must follow the scores (and let gradients through)")


@public(1, after=["test_rows_sum_to_one", "test_future_is_zero"])
def test_built_yourself(submission):
    """the mask and softmax are written by hand, not by PyTorch's ready-made attention
    掩码和 softmax 是亲手写的，没有调用 PyTorch 现成的注意力"""
    expect_built_yourself(submission(calls), "causal_softmax")


@public(1, after=["test_shape"])
def test_inputs_unchanged(submission):
    """causal_softmax leaves the scores as they were: no in-place operation on its input
    causal_softmax 不改动传进来的分数：不对输入做原地运算"""
    for shape in shapes():
        sent, after = submission(inputs_after, **shape)
        expect_inputs_unchanged(sent, after, "causal_softmax(scores)", ("scores",))


@hidden(4)
def test_matches_reference(compare):
    """matches the reference on fresh random scores, three shape sets
    在三组形状的全新随机分数上与参考答案一致"""
    for shape in shapes():
        got, want = compare(weights, **shape)
        expect_close(got, want, "causal_softmax(scores)", SHAPE_NAMES)


# -- diagnoses ------------------------------------------------------------------------------------
# The mistake space of causal_softmax: the lesson's five choices, each with the slips learners make
# (the lesson's way first). Exercise 6's head reuses these steps for its own mask and softmax.

def kept(upper, keep, diagonal=0):
    """(T, T) bool → True where a score is kept: the lower triangle (tril) or the upper (triu),
    from the given diagonal (-1: below it; 1: one step above it), the positions where it is 1
    (keep) or 0 (an inverted mask)."""
    @functools.lru_cache(maxsize=None)  # the slip search asks for the same T again and again
    def mask(T):
        ones = torch.ones(T, T)
        triangle = torch.triu(ones, diagonal) if upper else torch.tril(ones, diagonal)
        return triangle == (1 if keep else 0)
    return mask


MASK_STEPS = {
    "mask": [
        Way("tril", kept(upper=False, keep=True)),
        Way("triu", kept(upper=True, keep=True),
            "留下的是上三角（用了 torch.triu，或者把 tril 转置了）而不是下三角 torch.tril：被屏蔽的是过去，留下的是未来。"
            "位置 i 只能看它自己和它之前的字",
            "The mask keeps the upper triangle (torch.triu, or a transposed tril) instead of the "
            "lower one, torch.tril: the past is masked and the future kept. Position i may see "
            "only itself and what came before it"),
        Way("inverted_mask", kept(upper=False, keep=False),
            "掩码反了：填成 −∞ 的是 tril == 1 的位置，也就是过去和自己，留下的是未来；最后一行全是 −∞，"
            "softmax 之后变成 NaN。要填的是 tril == 0 的位置",
            "The mask is inverted: −∞ went where tril == 1, the past and the position itself, "
            "leaving the future; the last row is all −∞ and turns into NaN after softmax. Fill "
            "where tril == 0"),
        Way("diagonal_masked", kept(upper=False, keep=True, diagonal=-1),
            "掩码连对角线也遮住了：位置 i 连它自己都看不到（例如 torch.tril(…, diagonal=-1)，或者把不带 diagonal=1 "
            "的 torch.triu 当成要屏蔽的位置）。第 0 行于是全是 −∞，softmax 之后变成 NaN。每个位置看的是它自己和它之前的字："
            "要屏蔽的是 torch.tril(torch.ones(T, T)) == 0 的位置",
            "The mask covers the diagonal too: position i cannot see even itself "
            "(torch.tril(…, diagonal=-1), say, or a torch.triu without diagonal=1 taken as what "
            "to hide). Row 0 is then all −∞ and turns into NaN after softmax. Each position sees "
            "itself and what came before it: hide where torch.tril(torch.ones(T, T)) == 0"),
        Way("one_step_of_future", kept(upper=False, keep=True, diagonal=1),
            "掩码多留了一步未来：位置 i 还能看到位置 i+1（例如 torch.tril(…, diagonal=1)，或者 torch.triu(…, "
            "diagonal=2)）。下一个字正是要预测的答案。要屏蔽的是 torch.tril(torch.ones(T, T)) == 0 的位置，"
            "对角线 diagonal=0",
            "The mask leaves one step of the future visible: position i still sees position i+1 "
            "(torch.tril(…, diagonal=1), say, or torch.triu(…, diagonal=2)). The next character "
            "is the very answer to predict. Hide where torch.tril(torch.ones(T, T)) == 0, "
            "diagonal 0"),
        Way("no_mask", None,
            "没有因果掩码：每一行都对所有位置做了 softmax，位置 i 看到了它之后的字——那是答案。在 softmax 之前"
            "把 tril == 0 的位置填成 −∞",
            "There is no causal mask: each row is a softmax over every position, so position i "
            "sees the characters after it, which are the answer. Fill where tril == 0 with −∞ "
            "before softmax"),
    ],
    "fill": [
        Way("inf", float("-inf")),
        Way("masked_with_zero", 0.0,
            "未来的位置填的是 0 而不是 −∞：softmax(0) 不是 0，未来仍然分到了权重，于是每个位置都看到了它之后的字。"
            "课文在 softmax 之前把未来填成 −∞（因果掩码）",
            "The future is filled with 0 instead of −∞: softmax(0) is not 0, so the future keeps "
            "a weight and every position sees what comes after it. The lesson fills future "
            "scores with −∞ before softmax (因果掩码)"),
    ],
    "order": [
        Way("before", "before"),
        Way("mask_after_softmax", "after",
            "掩码放在了 softmax 之后：先 softmax 再清零，每一行之和就不再是 1，而且分母里仍然有未来的分数。"
            "课文的顺序是先填 −∞，再 softmax",
            "The mask comes after softmax: zeroing the future afterwards leaves rows that no "
            "longer sum to 1, and the future still sits in each row's denominator. The lesson's "
            "order: fill with −∞ first, then softmax"),
        Way("inf_after_softmax", "inf after",
            "−∞ 是在 softmax 之后才填进去的：未来的权重成了 −∞ 而不是 0。课文的顺序是先把分数里的未来填成 −∞，"
            "softmax 再把它们变成 0",
            "−∞ was filled in after softmax, so the future's weights are −∞ instead of 0. The "
            "lesson's order: fill the future scores with −∞ first; softmax then turns them into "
            "0"),
    ],
    "dim": [
        Way("last", -1),
        Way("softmax_dim1", 1,
            "softmax 沿 dim=1（列的方向）做的：现在是每一列之和为 1。第 i 行是位置 i 的权重，要沿最后一维 dim=-1 做",
            "softmax ran over dim=1 (down the columns): each column sums to 1 now. Row i holds "
            "position i's weights: softmax over the last dimension, dim=-1"),
        Way("softmax_no_dim", 0,
            "softmax 沿 dim=0（批量那一维）做的：同一位置的不同样本之间互相归一化了。F.softmax 不写 dim 时，"
            "对 (B, T, T) 的张量 PyTorch 替你选的就是 dim=0（并给出警告）。第 i 行是位置 i 的权重：写明 dim=-1",
            "The softmax ran over dim=0, the batch, so the samples are normalised against each "
            "other. That is also what PyTorch picks for a (B, T, T) tensor when F.softmax is "
            "given no dim (with a warning). Row i holds position i's weights: say dim=-1"),
    ],
    "softmax": [
        Way("softmax", torch.softmax),
        Way("log_softmax", torch.log_softmax,
            "用的是 log_softmax：它给出的是权重的对数（都不大于 0），每一行加起来不是 1。加权求和要的是权重本身：F.softmax",
            "log_softmax was used: it gives the logarithms of the weights (none above 0), and "
            "the rows do not sum to 1. A weighted sum needs the weights themselves: F.softmax"),
        Way("sigmoid", lambda s, dim: torch.sigmoid(s),
            "用的是 sigmoid 而不是 softmax：sigmoid 把每个分数单独压到 0 和 1 之间，一行加起来不是 1。权重要在一行之内"
            "互相比较、加起来为 1：F.softmax(…, dim=-1)",
            "sigmoid was used instead of softmax: it squashes each score on its own, so a row "
            "does not sum to 1. Weights are compared within their row and sum to 1: "
            "F.softmax(…, dim=-1)"),
    ],
}


def masked_weights(scores, pick):
    """The weights that the ways in `pick` (a way's value for each of MASK_STEPS) make of the
    scores (B, T, T), computed here in the judge."""
    def soft(s):
        return pick["softmax"](s, dim=pick["dim"])
    if pick["mask"] is None:
        return soft(scores)
    keep = pick["mask"](scores.shape[-1])  # (T, T)
    if pick["order"] == "after":
        return soft(scores).masked_fill(~keep, 0.0)  # the future zeroed after softmax
    if pick["order"] == "inf after":
        return soft(scores).masked_fill(~keep, float("-inf"))
    return soft(scores.masked_fill(~keep, pick["fill"]))


DIAGNOSE_SHAPE = dict(B=2, T=5)  # B != T: a mask sized by B, or a softmax over B, shows
CONFIRM_SHAPE = dict(B=3, T=7)  # the second draw, with other sizes


def right_where_graded(probe):
    """For the diagnoses that say "the values are right": right at every graded size too."""
    for shape in shapes():
        got, _ = probe(weights, **shape)
        if not same(got, masked_weights(probe.inputs(draw, **shape).double(), lesson(MASK_STEPS))):
            return False
    return True


def diagnose(probe):
    shape = DIAGNOSE_SHAPE
    got, _ = probe(weights, **shape)
    if hasattr(got, "shape") and tuple(got.shape) == (shape["T"], shape["B"], shape["T"]):
        return Diagnosis("ex5.batch_axis",
                         "输出的形状是 (T, B, T)：批量那一维跑到了中间。权重要保持分数的形状 (B, T, T)，"
                         "整批一起处理就不需要对样本循环",
                         "The output has shape (T, B, T): the batch dimension moved to the middle. "
                         "The weights keep the scores' shape (B, T, T); working on the whole batch "
                         "at once needs no loop over samples")
    scores = probe.inputs(draw, **shape).double()

    def draws():  # the learner's weights and the judge's computation of them, draw after draw
        yield got, lambda pick: masked_weights(scores, pick)
        again, _ = probe(weights, **CONFIRM_SHAPE)
        other = probe.inputs(draw, **CONFIRM_SHAPE).double()
        yield again, lambda pick: masked_weights(other, pick)
    found = named_slips(MASK_STEPS, draws(), "ex5.", most=3)
    if found:
        return found
    right = same(got, masked_weights(scores, lesson(MASK_STEPS))) and right_where_graded(probe)
    if right and changed_everywhere(probe, inputs_after, shapes(), ("scores",)):
        return modifies_input_diagnosis(
            "ex5", "causal_softmax", ["scores"],
            'weights = scores.masked_fill(tril == 0, float("-inf"))')
    if right and probe.submission(gradients, T=shape["T"])["grad"] is None:
        return Diagnosis("ex5.detached",
                         "数值是对的，但权重不带梯度：causal_softmax 里用了 torch.no_grad()、.detach() 或 .data。"
                         "在模型里，梯度要穿过 softmax 传回分数，查询和键才能学习",
                         "The values are right, but the weights carry no gradient: torch.no_grad(), "
                         ".detach() or .data inside causal_softmax. In a model the gradient must "
                         "flow through the softmax back to the scores, or the queries and keys "
                         "cannot learn")
    try:
        shown = probe.submission(calls)
    except WorkerFailure as failure:  # right at every graded size, and a crash at a longer T
        if right and failure.kind == "raised":
            return fixed_size_mask(failure.error, "ex5", "scores.shape[-1]")
        raise
    return shortcut_diagnosis(shown, "ex5.shortcut")


def fixed_size_mask(error, exercise, T_from):
    """A mask of a fixed size N × N (torch.ones(8, 8), or head_size × head_size): right at every
    graded length, which are all at most N, it no longer fits the scores at T = LONG_T (the long
    sequence of the check for a loop). The sizes are those of the crash the learner sees there."""
    message, frames = error.get("message", ""), error.get("frames", [])
    line = frames[-1][3] if frames and len(frames[-1]) > 3 else ""
    named = {int(n) for n in re.findall(r"\((\d+)\)", message)}
    graded = max(s["T"] for s in SHAPES + [CONFIRM_SHAPE])
    fixed = [n for n in named if graded <= n < LONG_T]
    if "must match the size" in message and re.search(r"tril|mask|masked_fill|where", line) \
            and len(named) == 2 and LONG_T in named and len(fixed) == 1:
        n = fixed[0]
        return Diagnosis(f"{exercise}.fixed_size_mask",
                         f"掩码的大小是固定的 {n} × {n}，而不是 T × T：序列长度 T 不超过 {n} 时还能对上，"
                         f"到了 T = {LONG_T} 就和 (T, T) 的分数对不上了。掩码要按这一次的长度来建：T = {T_from}，"
                         "torch.tril(torch.ones(T, T))",
                         f"The mask has a fixed size, {n} × {n}, instead of T × T: it fits while the "
                         f"sequence has at most {n} positions, and at T = {LONG_T} it no longer "
                         f"fits the (T, T) scores. Build it for this call's length: T = {T_from}, "
                         "torch.tril(torch.ones(T, T))")
    return None


def mask_sized_by_batch(error, B, T, exercise):
    """A mask made from the batch size: the size B met the size T where the mask meets the
    scores (torch.tril(torch.ones(B, B)), self.tril[:B, :B], scores.shape[0] taken for T)."""
    message, frames = error.get("message", ""), error.get("frames", [])
    line = frames[-1][3] if frames and len(frames[-1]) > 3 else ""
    if "must match the size" in message and re.search(r"tril|mask|masked_fill|where", line) \
            and set(re.findall(r"\((\d+)\)", message)) == {str(B), str(T)}:
        return Diagnosis(f"{exercise}.mask_sized_by_B",
                         f"掩码的大小用了批量大小 B = {B}，而序列长度是 T = {T}：掩码要是 (T, T) 的，"
                         "T 是分数的最后一维 scores.shape[-1]（或 x.shape[1]）；scores.shape[0] 是 B，"
                         "样本的个数",
                         f"The mask was sized by the batch size B = {B}, but the sequence has T = "
                         f"{T} positions: the mask is (T, T), T being the scores' last dimension "
                         "scores.shape[-1] (or x.shape[1]); scores.shape[0] is B, the number of "
                         "samples")
    return None


def diagnose_error(error):
    return mask_sized_by_batch(error, DIAGNOSE_SHAPE["B"], DIAGNOSE_SHAPE["T"], "ex5")
