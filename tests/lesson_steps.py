"""The lesson's steps and their slips, where several exercises take the same step.

Exercise 4 computes the scores, exercise 5 the masked softmax, exercise 6 both inside a head: the
ways of each step (SCORE_STEPS, MASK_STEPS: the lesson's own first, then the slips learners make)
and the causes of the crashes they share live here, once, for each test file to import; no test
file imports another. See grading/diagnosis/slips.py for how a diagnosis searches them.
"""
import functools
import re

import torch

from grading.checks import LONG_T
from grading.diagnosis import Diagnosis, Way

# -- from ex3_qkv ------------------------------------------------------------

def layer_shape_diagnosis(error, exercise):
    """A layer that is not nn.Linear(n_embd, head_size), from the shape set_linear found."""
    if error.get("key") != "linear_shape":
        return None
    shape, n_embd, head_size = tuple(error["shape"]), error["n_embd"], error["head_size"]
    if shape == (n_embd, head_size):  # weight (out, in): nn.Linear(head_size, n_embd)
        return Diagnosis(f"{exercise}.layer_shape",
                         "某个线性层的输入输出维度写反了：nn.Linear 的第一个参数是输入维度 n_embd，"
                         "第二个是输出维度 head_size",
                         "A linear layer has its dimensions the wrong way round: nn.Linear takes "
                         "the input size n_embd first, then the output size head_size")
    if shape == (n_embd, n_embd):
        name = error["layer"]
        return Diagnosis(f"{exercise}.layer_out_n_embd",
                         f"self.{name} 是 nn.Linear(n_embd, n_embd)：它的输出长度应当是 head_size，不是 n_embd。"
                         f"查询、键、值都是 head_size 维的向量：nn.Linear(n_embd, head_size, bias=False)",
                         f"self.{name} is an nn.Linear(n_embd, n_embd): its output length must be "
                         "head_size, not n_embd. Queries, keys and values are head_size-long "
                         "vectors: nn.Linear(n_embd, head_size, bias=False)")
    return None


# -- from ex4_scaling ------------------------------------------------------------

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


# -- from ex5_causal_mask ------------------------------------------------------------

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
        Way("past_only", "past only",
            "每一行只覆盖了它之前的位置（例如在循环里写 scores[:, t, :t]）：位置 t 把它自己漏掉了，第 0 行什么也没有"
            "（全是 0）。第 t 行覆盖的是位置 0 到 t，包括自己：[:t+1]；不用循环的话，masked_fill(tril == 0, "
            "float('-inf')) 再 softmax",
            "Each row covers only the positions before it (scores[:, t, :t] in a loop, say): "
            "position t leaves itself out, and row 0 holds nothing (all 0). Row t covers "
            "positions 0 to t, itself included: [:t+1]; without a loop, masked_fill(tril == 0, "
            "float('-inf')) and then softmax"),
        Way("no_mask", None,
            "没有因果掩码：每一行都对所有位置做了 softmax，位置 i 看到了它之后的字——那是答案。在 softmax 之前"
            "把 tril == 0 的位置填成 −∞（如果调用了 masked_fill：它不改原张量，而是返回一个新张量，要把结果赋回去，"
            "weights = weights.masked_fill(…)）",
            "There is no causal mask: each row is a softmax over every position, so position i "
            "sees the characters after it, which are the answer. Fill where tril == 0 with −∞ "
            "before softmax (if you did call masked_fill: it does not change its tensor but "
            "returns a new one, which must be assigned, weights = weights.masked_fill(…))"),
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
        Way("divided_by_row_sum", "row sum",
            "每一行是除以它自己的和来归一化的，而不是 softmax：分数有正有负，这样得到的\u201c权重\u201d可以是负数、"
            "可以大于 1，和接近 0 时还会变得极大。softmax 先取指数，每个权重都是正的，一行之和为 1：先把未来填成 −∞，"
            "再 F.softmax(weights, dim=-1)",
            "Each row was normalised by dividing it by its own sum instead of by a softmax: "
            "scores can be negative, so such \u201cweights\u201d can be negative or above 1, and "
            "huge where a row's sum is near 0. softmax takes the exponential first, so every "
            "weight is positive and a row sums to 1: fill the future with −∞, then "
            "F.softmax(weights, dim=-1)"),
    ],
}


def masked_weights(scores, pick):
    """The weights that the ways in `pick` (a way's value for each of MASK_STEPS) make of the
    scores (B, T, T), computed here in the judge."""
    def soft(s):
        if pick["softmax"] == "row sum":  # each row divided by its sum; the future must be 0
            s = s.masked_fill(torch.isinf(s), 0.0)
            return s / s.sum(dim=pick["dim"], keepdim=True)
        return pick["softmax"](s, dim=pick["dim"])
    if pick["mask"] is None:
        return soft(scores)
    if pick["mask"] == "past only":  # row t: a softmax over the positions before t; row 0 empty
        T = scores.shape[-1]
        past = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)
        return soft(scores.masked_fill(~past, pick["fill"])).masked_fill(~past.any(-1)[:, None],
                                                                         0.0)
    keep = pick["mask"](scores.shape[-1])  # (T, T)
    if pick["order"] == "after":
        return soft(scores).masked_fill(~keep, 0.0)  # the future zeroed after softmax
    if pick["order"] == "inf after":
        return soft(scores).masked_fill(~keep, float("-inf"))
    return soft(scores.masked_fill(~keep, pick["fill"]))


def fixed_size_mask(error, exercise, T_from, graded):
    """A mask of a fixed size N × N (torch.ones(8, 8), or head_size × head_size): right at every
    graded length (`graded`: the longest T its values were checked at), which are all at most N,
    it no longer fits the scores at T = LONG_T (the long sequence of the check for a loop). The
    sizes are those of the crash the learner sees there."""
    message, frames = error.get("message", ""), error.get("frames", [])
    line = frames[-1][3] if frames and len(frames[-1]) > 3 else ""
    named = {int(n) for n in re.findall(r"\((\d+)\)", message)}
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


def inf_into_integers(error, exercise):
    """−∞ filled into an integer tensor (a tril or a mask made with dtype=torch.long, say): PyTorch
    refuses, "value cannot be converted to type int64_t without overflow", on the line that fills."""
    message, frames = error.get("message", ""), error.get("frames", [])
    line = frames[-1][3] if frames and len(frames[-1]) > 3 else ""
    kind = re.search(r"value cannot be converted to type (u?int\d+)_t without overflow", message)
    if kind and re.search(r"masked_fill|fill|full|where|inf", line):
        return Diagnosis(f"{exercise}.inf_into_integers",
                         f"把 −∞ 填进了一个整数张量（{kind[1]}，例如 dtype=torch.long 建的 tril 或掩码）：整数存不下"
                         "float(\"-inf\")。要填 −∞ 的张量得是浮点数：直接在分数上 masked_fill，或者用 "
                         "torch.ones(T, T) 默认的浮点类型建掩码",
                         f"−∞ was filled into an integer tensor ({kind[1]}: a tril or mask made with "
                         "dtype=torch.long, say), and no integer can hold float(\"-inf\"). The "
                         "tensor that takes −∞ must be floating point: masked_fill the scores "
                         "themselves, or build the mask with torch.ones(T, T), float by default")
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


