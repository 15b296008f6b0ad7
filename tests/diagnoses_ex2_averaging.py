"""Exercise 2's diagnoses: the causes its failing outputs and crashes point to (diagnose,
diagnose_error; the judge's plugin calls them once a check of ex2_averaging fails). tests/test_ex2_averaging.py
holds its checks. Not in the student copy: the lesson's steps they search are the answers."""
import torch
from test_ex2_averaging import (
    average,
    average_or_error,
    calls,
    draw,
    inputs_after,
    learning,
    matrix,
    shapes,
    shown_average,
    shown_matrix,
)

from grading.checks import loops
from grading.diagnosis import (
    Diagnosis,
    Recorded,
    Way,
    changed_everywhere,
    close,
    crash_cause,
    detached_diagnosis,
    lesson,
    modifies_input_diagnosis,
    named_slips,
    record_diff,
    slip_diagnosis,
)

# The mistake space of averaging_matrix: which 0/1 matrix, and how its rows are made to average
# (the lesson's way first). A way of "normalise" maps the (T, T) 0/1 matrix to the weights.

def ones_matrix(T):
    return torch.ones(T, T, dtype=torch.float64)


AVERAGING_STEPS = {
    "triangle": [
        Way("tril", lambda T: torch.tril(ones_matrix(T))),
        Way("upper_triangular", lambda T: torch.triu(ones_matrix(T)),
            "矩阵是上三角的：每个位置平均的是它自己和它之后的位置，也就是未来。用 torch.tril（下三角），不是 torch.triu",
            "The matrix is upper-triangular: each position averages itself and what comes after "
            "it, the future. Use torch.tril (lower), not torch.triu"),
        Way("all_ones", ones_matrix,
            "平均矩阵里每个位置都平均了全部 T 个位置，连未来也算进去了。要从下三角的全 1 矩阵 tril 出发，"
            "第 i 行只有前 i+1 个位置为 1（对全是 0 的矩阵做 softmax 也是这个结果：未来要填 −∞，不是 0；"
            "masked_fill 返回一个新张量，结果要赋回去）",
            "Each position averages all T positions, the future included. Start from the "
            "lower-triangular tril, whose row i has 1s only in its first i+1 places (a softmax "
            "of a matrix of 0s gives the same: the future must be −∞, not 0, and masked_fill "
            "returns a new tensor, which must be assigned)"),
        Way("diagonal_excluded", lambda T: torch.tril(ones_matrix(T), diagonal=-1),
            "位置 i 只平均了它之前的字，没有它自己（不带对角线的下三角 torch.tril(…, diagonal=-1)，或者把 [:t+1] "
            "写成了 [:t]，都是这样）；第 0 个位置什么也没有，0/0 得到 NaN。课文第 i 行平均的是位置 0 到 i，包括自己："
            "torch.tril(torch.ones(T, T))",
            "Position i averages only what came before it, not itself (as a lower triangle "
            "without its diagonal, torch.tril(…, diagonal=-1), does, or a slice [:t] where "
            "[:t+1] was meant); position 0 then has nothing to average, and 0/0 gives NaN. The "
            "lesson's row i averages positions 0 to i, itself included: "
            "torch.tril(torch.ones(T, T))"),
        Way("one_step_of_future", lambda T: torch.tril(ones_matrix(T), diagonal=1),
            "下三角矩阵多了一条对角线（torch.tril(…, diagonal=1)）：位置 i 还平均进了位置 i+1，那是未来。"
            "课文第 i 行只平均位置 0 到 i：torch.tril(torch.ones(T, T))",
            "The triangle reaches one diagonal too far (torch.tril(…, diagonal=1)): position i "
            "also averages position i+1, which is the future. The lesson's row i averages "
            "positions 0 to i only: torch.tril(torch.ones(T, T))"),
    ],
    "normalise": [
        Way("row_sums", lambda m: m / m.sum(dim=1, keepdim=True)),
        Way("column_normalised", lambda m: m / m.sum(dim=0, keepdim=True),
            "归一化沿错了方向：现在是每一列之和为 1。第 i 行是位置 i 的权重，要让每一行之和为 1，按行求和："
            "sum(dim=1, keepdim=True)",
            "Normalised along the wrong direction: each column sums to 1 now. Row i holds "
            "position i's weights, so each row must sum to 1: sum over dim=1, with "
            "keepdim=True"),
        Way("sums_broadcast_as_a_row", lambda m: m / m.sum(dim=1),
            "每行之和被沿错了方向广播：tril.sum(dim=1) 不加 keepdim=True 的形状是 (T,)，除以它时第 j 列被除以第 j 行的和，"
            "而不是第 i 行被除以它自己的和。保留那一维：tril.sum(dim=1, keepdim=True)"
            "（用 torch.arange(1, T+1) 也一样要加 [:, None]）",
            "The row sums were broadcast the wrong way: tril.sum(dim=1) without keepdim=True has "
            "shape (T,), and dividing by it divides column j by row j's sum instead of row i by "
            "its own. Keep the dimension: tril.sum(dim=1, keepdim=True) (a torch.arange(1, T+1) "
            "needs [:, None] the same way)"),
        Way("divided_by_T", lambda m: m / m.shape[0],
            "每一行都除以了 T：只有最后一行的和是 1。第 i 行平均的是 i+1 个位置，要除以这一行自己的和：tril.sum(dim=1, "
            "keepdim=True)（用累加和 x.cumsum(dim=1) 时，位置 i 除以 i+1：torch.arange(1, T + 1)[:, None]）",
            "Every row was divided by T: only the last row sums to 1. Row i averages i+1 "
            "positions, so divide it by its own sum: tril.sum(dim=1, keepdim=True) (with a "
            "running sum x.cumsum(dim=1), position i by i+1: torch.arange(1, T + 1)[:, None])"),
        Way("off_by_one", lambda m: m / torch.arange(m.shape[0], dtype=m.dtype)[:, None],
            "第 i 行除以的是 i，而不是 i+1（torch.arange(T) 从 0 开始数），于是第 0 行除以了 0。第 i 行平均的是 "
            "i+1 个位置：torch.arange(1, T + 1)[:, None]，或者 tril.sum(dim=1, keepdim=True)",
            "Row i was divided by i instead of i+1 (torch.arange(T) counts from 0), so row 0 "
            "was divided by 0. Row i averages i+1 positions: torch.arange(1, T + 1)[:, None], or "
            "tril.sum(dim=1, keepdim=True)"),
        Way("softmax_of_zeros_and_ones", lambda m: torch.softmax(m, dim=-1),
            "权重是 0/1 矩阵 tril 直接做 softmax：softmax 把 0 变成 e⁰，并不是 0，未来仍然分到了权重，"
            "过去的权重也不相等。课文的第三种写法先把未来填成 −∞：torch.zeros(T, T).masked_fill(tril == 0, "
            "float('-inf'))，再 softmax",
            "The weights are a softmax of the 0/1 matrix tril itself: softmax turns 0 into e⁰, "
            "not 0, so the future keeps weight and the past is not weighted equally. The "
            "lesson's third version fills the future with −∞ first: torch.zeros(T, "
            "T).masked_fill(tril == 0, float('-inf')), then softmax"),
        Way("softmax_mask_inverted",
            lambda m: torch.softmax(torch.zeros_like(m).masked_fill(m == 1, float("-inf")), dim=-1),
            "masked_fill 的条件反了：填成 −∞ 的是 tril == 1 的位置（过去和自己），留下的是未来；"
            "最后一行全是 −∞，softmax 之后成了 NaN（T = 1 时唯一的一行也是）。课文的第三种写法填的是 tril == 0 的位置："
            "torch.zeros(T, T).masked_fill(tril == 0, float('-inf'))，再 softmax",
            "masked_fill's condition is inverted: −∞ went where tril == 1 (the past and the "
            "position itself), leaving the future; the last row is all −∞ and softmax makes it "
            "NaN (the one row too, at T = 1). The lesson's third version fills where tril == 0: "
            "torch.zeros(T, T).masked_fill(tril == 0, float('-inf')), then softmax"),
        Way("not_normalised", lambda m: m,
            "行没有归一化：用的是 tril 本身，位置 i 得到的是前 i+1 个向量的和，而不是平均。每一行除以这一行的和："
            "tril.sum(dim=1, keepdim=True)",
            "The rows are not normalised: tril itself gives position i the sum of the first i+1 "
            "vectors, not their mean. Divide each row by its sum: tril.sum(dim=1, "
            "keepdim=True)"),
    ],
}


X_AT_WEIGHTS = Way("x_at_weights", lambda weights, x: x @ weights,
                   "乘法的顺序反了：x @ weights 是在通道（C）方向上混合，而不是在位置（T）方向上平均。"
                   "(T, T) 的 weights 放在左边：weights @ x",
                   "The product is the wrong way round: x @ weights mixes the channels (C), not "
                   "the positions (T). The (T, T) weights go on the left: weights @ x")
# average_context's space: the matrix's steps (it may build its own, or average another way that
# equals a matrix product: x.cumsum(1) / T is (tril / T) @ x), and which side x goes on.
AVERAGE_STEPS = {**AVERAGING_STEPS, "product": [
    Way("weights_at_x", lambda weights, x: weights @ x),
    X_AT_WEIGHTS,
    Way("transposed_weights", lambda weights, x: weights.transpose(-2, -1) @ x,
        "乘上的是转置后的平均矩阵 weightsᵀ @ x（(x.transpose(1, 2) @ weights).transpose(1, 2) 也是它）："
        "第 i 行是位置 i 的权重，位置 i 的输出是 weights 的第 i 行和 x 的乘积，weights @ x",
        "The product uses the transposed matrix, weightsᵀ @ x (which is also what "
        "(x.transpose(1, 2) @ weights).transpose(1, 2) gives): row i holds position i's weights, "
        "and position i's output is row i of weights times x, weights @ x"),
]}
DIAGNOSE_B = 2  # the batch size of diagnose's call of average_context (T is 5)

# average_context written with running sums, x.cumsum(dim=1) divided by the count of each
# position: what the counts are, and along which dimension of x they are divided.
RUNNING_SUM_STEPS = {
    "counts": [
        Way("counts_from_one", lambda T: torch.arange(1, T + 1, dtype=torch.float64)),
        Way("counts_from_zero", lambda T: torch.arange(T, dtype=torch.float64),
            "average_context 里，位置 i 的累加和除以的是 i，而不是 i+1：torch.arange(T) 从 0 开始数，于是位置 0 "
            "除以了 0，得到 inf（0/0 则是 NaN）。位置 i 平均的是 i+1 个向量：除以 torch.arange(1, T + 1)",
            "In average_context, the running sum at position i was divided by i instead of i+1: "
            "torch.arange(T) counts from 0, so position 0 was divided by 0, giving inf (NaN for "
            "0/0). Position i averages i+1 vectors: divide by torch.arange(1, T + 1)"),
    ],
    "counts_axis": [
        Way("over_positions", lambda counts: counts[:, None]),
        Way("counts_over_channels", lambda counts: counts,
            "average_context 里，各位置的计数（共 T 个）被广播到了 x 的最后一维：(B, T, C) 的张量除以形状为 (T,) "
            "的张量时，它对齐的是最后一维，也就是通道 C，于是除的是通道而不是位置；C 与 T 不同时就会报错。把计数变成一列 "
            "(T, 1)，让它沿位置对齐：torch.arange(1, T + 1)[:, None]",
            "In average_context, the counts of the positions (T of them) were broadcast along x's "
            "last dimension: dividing a (B, T, C) tensor by one of shape (T,) lines it up with "
            "the last dimension, the channels C, so the channels are divided instead of the "
            "positions, and where C differs from T it is an error. Make the counts a column, "
            "(T, 1), lined up with the positions: torch.arange(1, T + 1)[:, None]"),
    ],
}
RAISED = torch.full((1,), float("nan"))  # a call that raised, as the slip search compares it


def running_sums(pick, x):
    """What the ways in `pick` make of x (B, T, C) with running sums; RAISED where they raise."""
    try:
        return x.cumsum(dim=1) / pick["counts_axis"](pick["counts"](x.shape[1]))
    except RuntimeError:  # (T,) counts against C channels, C != T
        return RAISED


def lesson_matrix(T):
    pick = lesson(AVERAGING_STEPS)
    return pick["normalise"](pick["triangle"](T))


MATRIX_RECORDED = Recorded(shown_matrix, (dict(T=5), dict(T=7)), "averaging_matrix")
AVERAGE_RECORDED = Recorded(shown_average, (dict(B=2, T=5, C=6), dict(B=3, T=7, C=4)),
                            "average_context", inputs=("x",))




def diagnose(probe):
    return catalogued(probe) or record_diff.diagnosis(probe, MATRIX_RECORDED, "ex2") \
        or record_diff.diagnosis(probe, AVERAGE_RECORDED, "ex2")


def catalogued(probe):
    def matrices():  # the learner's matrix and the judge's, for T = 5 and then another T
        for T in (5, 7):
            got, _ = probe(matrix, T=T)
            yield got, lambda pick, T=T: pick["normalise"](pick["triangle"](T))
    found = named_slips(AVERAGING_STEPS, matrices(), "ex2.", most=2)
    if found:
        return found
    found = fixed_size(probe) or float64_matrix(probe)
    if found:
        return found

    first = []  # the first draw's (output, x), for the loop's diagnosis below

    def averages():  # C == T: x @ weights runs, silently wrong
        for B, T in ((DIAGNOSE_B, 5), (3, 7)):
            got, _ = probe(average, B=B, T=T, C=T)
            x = probe.inputs(draw, B=B, T=T, C=T).double()
            first.append((got, x))
            yield got, lambda pick, x=x, T=T: averaged(pick, x, T)
    found = named_slips(AVERAGE_STEPS, averages(), "ex2.", most=2)
    if found and found.key == "ex2.x_at_weights":
        return found
    if found:  # averaging_matrix is right: the slip is average_context's own
        en = found.text.en
        return Diagnosis(found.key, "average_context 里：" + found.text.zh,
                         "In average_context: " + (en[0].lower() + en[1:] if en[1:2].islower()
                                                   else en))
    got, x = first[0]
    if not close(got, averaged(lesson(AVERAGE_STEPS), x, 5)):
        return running_sums_diagnosis(probe)
    if not all(  # the loop's says so
            close(probe(average, **shape)[0], averaged(lesson(AVERAGE_STEPS), probe.inputs(
                draw, **shape).double(), shape["T"])) for shape in shapes()):
        return None
    if probe(average, **shapes()[0])[0].dtype == torch.float64 == got.dtype:
        return Diagnosis("ex2.float64_average",
                         "average_context 的数值是对的，但它返回的是 float64（双精度），而输入 x 是 torch 默认的 float32"
                         "（numpy 的运算遇到 np.arange 这样的整数数组会得到 float64，.double() 也一样）。下一步的线性层的"
                         "权重是 float32，类型不同就会报错：用 torch 来算，weights @ x，或者转换回来：.to(x.dtype)",
                         "average_context computes the right numbers but returns them as float64 "
                         "(double), where x is torch's default float32 (numpy arithmetic with an "
                         "integer array such as np.arange gives float64, and so does .double()). "
                         "The next step's linear layers hold float32 weights, and mixed types "
                         "are an error: compute it with torch, weights @ x, or convert it back: "
                         ".to(x.dtype)")
    changed = changed_everywhere(probe, inputs_after, shapes(), ("x",))
    if changed:
        return modifies_input_diagnosis("ex2", "average_context", changed,
                                        "x_averaged = weights @ x")
    if probe.submission(learning, checked=False, **shapes()[0])["x"] is None:
        return detached_diagnosis("ex2", "average_context", ["x"])
    if loops(probe.submission(calls), most=60):
        return Diagnosis("ex2.loop",
                         "结果是对的，但用了 Python 循环。课文说\u201c直接用循环来求平均效率较低\u201d："
                         "一次 (T, T) 与 (B, T, C) 的矩阵乘法就完成了所有位置的平均",
                         "The values are right but come from a Python loop. The lesson: a loop is "
                         "slow (直接用循环来求平均效率较低); one product of the (T, T) matrix with "
                         "the (B, T, C) input averages every position at once")
    return None


def fixed_size(probe):
    """averaging_matrix(T) of one fixed size n × n, the lesson's matrix of n, at two T or more."""
    wrong, right = {}, []
    for T in (5, 7, 12, 16):
        got = probe.submission(matrix, T=T)
        if not isinstance(got, torch.Tensor) or got.dim() != 2:
            return None
        if tuple(got.shape) == (T, T):
            right.append(T)
        else:
            wrong[T] = got
    sizes = {tuple(got.shape) for got in wrong.values()}
    if len(wrong) < 2 or len(sizes) != 1:
        return None
    n, m = sizes.pop()
    if n != m:
        return None
    if not all(close(got, lesson_matrix(n)) for got in wrong.values()) or not all(
            close(probe.submission(matrix, T=T), lesson_matrix(T)) for T in right):
        return None
    T = min(wrong)
    sliced = (f"（切成 [:T, :T] 只在 T ≤ {n} 时够用，更长的序列需要更大的矩阵）",
              f" (slicing it to [:T, :T] serves only T ≤ {n}; a longer sequence needs a larger "
              "matrix)") if right else ("", "")
    return Diagnosis("ex2.fixed_size",
                     f"averaging_matrix({T}) 返回的是 {n} × {n} 的矩阵：矩阵的大小写成了固定的数 {n}，而不是 T"
                     f"{sliced[0]}。要按传进来的 T 建：torch.tril(torch.ones(T, T))",
                     f"averaging_matrix({T}) returns a matrix of {n} × {n}: its size is written as "
                     f"the number {n}, not as T{sliced[1]}. Build it from the T it is given: "
                     "torch.tril(torch.ones(T, T))")


def float64_matrix(probe):
    """The lesson's matrix in float64, at two T."""
    for T in (5, 7):
        got = probe.submission(matrix, T=T)
        if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64
                and close(got, lesson_matrix(T))):
            return None
    return Diagnosis("ex2.float64_matrix",
                     "averaging_matrix 的数值是对的，但它是 float64（双精度），而 torch 默认的类型、也是 x 的类型，是 "
                     "float32（numpy 默认用 float64 计算，torch.from_numpy 会保留这个类型；dtype=torch.float64 或 "
                     ".double() 也一样）。weights @ x 要求两者类型相同：float64 的矩阵乘 float32 的 x 会报错，把 x 也变成 "
                     "float64 的话，下一步 float32 的权重又不配。用 torch 来建：torch.tril(torch.ones(T, T))，或者转换："
                     ".float()",
                     "averaging_matrix has the right numbers but in float64 (double), where "
                     "torch's default, and x's type, is float32 (numpy computes in float64 and "
                     "torch.from_numpy keeps that type; dtype=torch.float64 or .double() do the "
                     "same). weights @ x needs both of one type: a float64 matrix times a float32 "
                     "x is an error, and turning x into float64 too would not suit the next "
                     "step's float32 weights. Build it with torch, torch.tril(torch.ones(T, T)), "
                     "or convert it: .float()")


def running_sums_diagnosis(probe):
    """average_context by running sums with a slip in the counts: at C == T, where a (T,) count
    vector broadcasts against the channels, and at a graded size, where C != T (the same numbers,
    or an error when the slip's own computation raises there)."""
    def draws():
        for B, T in ((DIAGNOSE_B, 5), (3, 7)):
            got, _ = probe(average, B=B, T=T, C=T)
            x = probe.inputs(draw, B=B, T=T, C=T).double()
            yield got, lambda pick, x=x: running_sums(pick, x)
        shape = shapes()[0]
        got, error = probe.submission(average_or_error, **shape)
        x = probe.inputs(draw, **shape).double()
        yield (RAISED if error == "RuntimeError" else got), lambda pick: running_sums(pick, x)
    return named_slips(RUNNING_SUM_STEPS, draws(), "ex2.", most=2)


def averaged(pick, x, T):
    """What the ways in `pick` make of x (B, T, C): the matrix's steps, then the product."""
    weights = pick["normalise"](pick["triangle"](T))
    return pick["product"](weights, x)


def diagnose_error(error):
    return averaging_crash(error) or crash_cause(error, "ex2")


def averaging_crash(error):
    frames, message = error.get("frames", []), error.get("message", "")
    if not frames or frames[-1][2] != "average_context":
        return None
    if "cannot be multiplied" in message:
        return slip_diagnosis("ex2.", [X_AT_WEIGHTS])
    if f"[{DIAGNOSE_B}, {DIAGNOSE_B}]" in message:  # a (B, B) matrix met the (B, T, C) input
        return Diagnosis("ex2.matrix_sized_by_B",
                         "average_context 用批量大小 B 建了平均矩阵：x 的形状是 (B, T, C)，平均矩阵要是 (T, T) 的，"
                         "T 是 x.shape[1]（B, T, C = x.shape 里的第二个），不是 x.shape[0]",
                         "average_context built the averaging matrix from the batch size B: x is "
                         "(B, T, C) and the matrix is (T, T), T being x.shape[1] (the second of "
                         "B, T, C = x.shape), not x.shape[0]")
    return None
