"""Exercise 6's diagnoses: the causes its failing outputs and crashes point to (diagnose,
diagnose_error; the judge's plugin calls them once a check of ex6_head fails). tests/test_ex6_head.py
holds its checks. Not in the student copy: the lesson's steps they search are the answers."""
import itertools
import re

import torch
from test_ex6_head import (
    LONG,
    WEIGHTS,
    build,
    calls,
    draw,
    forward,
    inputs_after,
    learning,
    parameters,
    shown_forward,
    sizes,
)

from grading.checks import LONG_T, SHAPES, ZERO, loops, same, sequence_name
from grading.diagnosis import (
    Diagnosis,
    Recorded,
    Way,
    changed_everywhere,
    crash_cause,
    finite,
    lesson,
    modifies_input_diagnosis,
    named_slips,
    record_diff,
    shortcut_diagnosis,
)
from grading.errors import WorkerFailure
from lesson_steps import (
    MASK_STEPS,
    SCORE_STEPS,
    fixed_size_mask,
    inf_into_integers,
    layer_shape_diagnosis,
    mask_sized_by_batch,
    masked_weights,
    scaled_scores,
    sqrt_of_int,
    transposed_3d,
    undefined_head_size,
)


def parameter_names(ex, gen, n_embd, head_size, block_size):
    """A scenario: the dotted names of the head's trainable parameters (query.weight, key.bias…)."""
    return [path for path, _, trains in ex.Head(n_embd, head_size, block_size).parameters()
            if trains]


def twice(ex, gen, B, T, n_embd, head_size, block_size):
    """A scenario: forward's outputs for the same x, twice."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    return head(inputs["x"]), head(inputs["x"])


# The mistake space of the head: exercise 3's layers, exercise 4's scores, exercise 5's mask and
# softmax, and what the weights multiply (exercise 2's weighted sum); the lesson's way first.
# Every mistake diagnosed in exercises 4 and 5 is so inside the head too, under the key ex6.….

LAYER_TEXT = ("查询、键、值各司其职，各要一个自己的 nn.Linear：q = self.query(x)，k = self.key(x)，"
              "v = self.value(x)",
              "Query, key and value each do their own job and need an nn.Linear of their own: "
              "q = self.query(x), k = self.key(x), v = self.value(x)")
HEAD_STEPS = {
    "layers": [
        Way("qkv", lambda q, k, v: (q, k, v)),
        Way("qkv_all_query", lambda q, k, v: (q, q, q),
            "q、k、v 都是由 self.query 算出来的，三者完全相同。" + LAYER_TEXT[0],
            "q, k and v all come out of self.query, so the three are the same. " + LAYER_TEXT[1]),
        Way("qkv_all_key", lambda q, k, v: (k, k, k),
            "q、k、v 都是由 self.key 算出来的，三者完全相同。" + LAYER_TEXT[0],
            "q, k and v all come out of self.key, so the three are the same. " + LAYER_TEXT[1]),
        Way("k_from_query", lambda q, k, v: (q, q, v),
            "分数是 q @ qᵀ（k 是由 self.query 算出来的，或者写成了 q @ q.transpose(-2, -1)）：查询和查询比，"
            "而不是和键比。" + LAYER_TEXT[0],
            "The scores are q @ qᵀ (k came out of self.query, or q @ q.transpose(-2, -1) was "
            "written): queries matched against queries, not keys. " + LAYER_TEXT[1]),
        Way("q_from_key", lambda q, k, v: (k, k, v),
            "分数是 k @ kᵀ（q 是由 self.key 算出来的，或者写成了 k @ k.transpose(-2, -1)）：键和键比，"
            "没有查询。" + LAYER_TEXT[0],
            "The scores are k @ kᵀ (q came out of self.key, or k @ k.transpose(-2, -1) was "
            "written): keys matched against keys, with no query. " + LAYER_TEXT[1]),
        Way("qkv_all_value", lambda q, k, v: (v, v, v),
            "q、k、v 完全相同，都出自同一个层（这次检查设为 self.value 的那一个：三个名字指向同一个 nn.Linear，"
            "或者三次都用了 self.value(x)）。" + LAYER_TEXT[0],
            "q, k and v are the same, all out of one layer (the one this check set as "
            "self.value: one nn.Linear under three names, or self.value(x) used three times). "
            + LAYER_TEXT[1]),
    ],
    "product": [
        SCORE_STEPS["product"][0],
        Way("k_at_q", SCORE_STEPS["product"][1].value,
            "分数表被转置了：算的是 k @ qᵀ（或者 q 和 k 用了对方的层）。第 i 行第 j 列应是第 i 个字的查询与第 j 个字的"
            "键的点积：q @ kᵀ，q = self.query(x)，k = self.key(x)",
            "The table of scores is transposed: k @ qᵀ was computed (or q and k came out of each "
            "other's layer). Row i, column j is query i dotted with key j: q @ kᵀ, with "
            "q = self.query(x) and k = self.key(x)"),
    ],
    "scale": [*SCORE_STEPS["scale"], Way(
        "scaled_by_n_embd", lambda n: n["C"] ** -0.5,
        "缩放用的是 n_embd（字向量的长度 C），而不是 head_size（q、k 的长度）。点积是在 head_size 维的 "
        "q、k 之间算的，所以乘以 head_size ** -0.5",
        "The scaling uses n_embd (C, the length of the characters' vectors) instead of head_size "
        "(the length of q and k). The dot products are between head_size-long q and k, so "
        "multiply by head_size ** -0.5"), Way(
        "scaled_by_block_size", lambda n: n["block_size"] ** -0.5,
        "缩放用的是 block_size（能看的最长上下文），而不是 head_size（q、k 的长度）。点积是在 head_size 维的 "
        "q、k 之间算的，所以乘以 head_size ** -0.5",
        "The scaling uses block_size (the longest context) instead of head_size (the length of "
        "q and k). The dot products are between head_size-long q and k, so multiply by "
        "head_size ** -0.5")],
    "scaled_at": [
        Way("scores", "scores"),
        Way("scaled_after_softmax", "weights",
            "缩放放在了 softmax 之后：乘的是权重，而不是分数。这样 softmax 仍然作用在没缩放的大分数上，过于极端，"
            "而且每一行加起来不再是 1。课文的顺序：分数 = q @ kᵀ · head_size^-0.5，然后掩码，再 softmax",
            "The scaling comes after softmax: the weights were scaled, not the scores. The "
            "softmax then still works on the large unscaled scores, too extreme, and the rows no "
            "longer sum to 1. The lesson's order: scores = q @ kᵀ · head_size^-0.5, then the "
            "mask, then softmax"),
    ],
    **MASK_STEPS,
    "values": [
        Way("v", lambda w, x, q, k, v: w @ v),
        Way("weights_returned", lambda w, x, q, k, v: w,
            "forward 返回的是权重 weights 本身，形状 (B, T, T)，而不是对值的加权求和：out = weights @ v，"
            "然后 return out",
            "forward returns the weights themselves, of shape (B, T, T), instead of the "
            "weighted sum of the values: out = weights @ v, then return out"),
        Way("weights_at_x", lambda w, x, q, k, v: w @ x,
            "输出是 weights @ x：加权求和的对象应当是值向量 v，不是字向量 x（所以输出是 head_size 维，不是 n_embd 维）",
            "The output is weights @ x: the weighted sum is over the values v, not over the "
            "characters' vectors x (so the output has head_size numbers, not n_embd)"),
        Way("weights_at_k", lambda w, x, q, k, v: w @ k,
            "输出是 weights @ k（或者 v 是由 self.key 算出来的）：加权求和的对象应当是值向量 v = self.value(x)，"
            "不是键 k。键只用来打分，值才是交付的内容",
            "The output is weights @ k (or v came out of self.key): the weighted sum is over the "
            "values v = self.value(x), not the keys k. Keys only score the match; the values are "
            "what is handed over"),
        Way("weights_at_q", lambda w, x, q, k, v: w @ q,
            "输出是 weights @ q（或者 v 是由 self.query 算出来的）：加权求和的对象应当是值向量 v = self.value(x)，"
            "不是查询 q。查询只用来打分，值才是交付的内容",
            "The output is weights @ q (or v came out of self.query): the weighted sum is over "
            "the values v = self.value(x), not the queries q. Queries only score the match; the "
            "values are what is handed over"),
        Way("weights_transposed", lambda w, x, q, k, v: w.transpose(-2, -1) @ v,
            "加权求和用的是转置后的权重 weightsᵀ @ v：第 i 行是位置 i 的权重，位置 i 的输出是这一行与 v 的乘积："
            "out = weights @ v",
            "The weighted sum uses the transposed weights, weightsᵀ @ v: row i holds position "
            "i's weights, and position i's output is that row times v, out = weights @ v"),
    ],
}


def head_computation(inputs, block_size):
    """compute(pick) for the slip search: what the ways in `pick` make of the inputs (float64,
    in the judge), (B, T, head_size). The projections are made once, and the scores once for
    each way of making them: the search tries some two thousand combinations."""
    x = inputs["x"].double()
    projections = [x @ inputs[name].double().T for name in WEIGHTS]  # q, k, v by their layers
    B, T, C = x.shape
    scores_made = {}

    def compute(pick):
        q, k, v = pick["layers"](*projections)
        n = dict(B=B, T=T, C=C, head_size=q.shape[-1], block_size=block_size)
        later = pick["scaled_at"] == "weights"  # the scale is applied to the weights instead
        made_by = (pick["layers"], pick["product"], None if later else pick["scale"])
        if made_by not in scores_made:
            scores_made[made_by] = scaled_scores(
                q, k, {**pick, "scale": UNSCALED} if later else pick, n)
        weights = masked_weights(scores_made[made_by], pick)
        return pick["values"](weights * pick["scale"](n) if later else weights, x, q, k, v)
    return compute


def UNSCALED(n):
    return 1.0


# The sizes of the diagnosis's draws: every size differs from the others (block_size too), and
# the second draw changes them all, so that no constant passes for one of them twice.
DIAGNOSE_SHAPE = {**SHAPES[0], "block_size": 11}
CONFIRM_SHAPE = SHAPES[2]
RECORDED = Recorded(shown_forward, (sizes(DIAGNOSE_SHAPE), sizes(CONFIRM_SHAPE)),
                    "Head.forward", inputs=("x",))






def diagnose(probe):
    return catalogued(probe) or record_diff.diagnosis(probe, RECORDED, "ex6")


def right_where_graded(probe):
    """For the diagnoses that say "the values are right": right at every graded size too (the
    long T apart: right_at_long)."""
    for shape in SHAPES:
        got, _ = probe(forward, **sizes(shape))
        inputs = probe.inputs(draw, **{k: shape[k] for k in ("B", "T", "n_embd", "head_size")})
        if not same(got, head_computation(inputs, shape["block_size"])(lesson(HEAD_STEPS))):
            return False
    return True


def right_at_long(probe):
    """forward is right at the long T as well (a loop of a fixed number of steps can be right at
    the short sizes alone)."""
    try:
        got, _ = probe(forward, **sizes(LONG))
    except WorkerFailure:
        return False
    inputs = probe.inputs(draw, **{k: LONG[k] for k in ("B", "T", "n_embd", "head_size")})
    return same(got, head_computation(inputs, LONG["block_size"])(lesson(HEAD_STEPS)))


def at(probe, scenario, shape, **params):
    """probe(scenario) at the sizes of `shape`; a crash of the learner's code carries them (the
    cause of a crash names the sizes of the call that crashed, see diagnose_error)."""
    try:
        return probe(scenario, **sizes(shape), **params)
    except WorkerFailure as failure:
        if failure.kind == "raised" and isinstance(failure.error, dict):
            failure.error = {**failure.error, "sizes": sizes(shape)}
        raise


def returned_tuple(outputs):
    """(out, weights) returned, as Hugging Face's and Raschka's heads do: out right at every
    graded size. `outputs`: [(the learner's output, the lesson's), …]."""
    for got, want in outputs:
        if not (isinstance(got, (tuple, list)) and len(got) == 2 and same(got[0], want)):
            return None
    outputs = [got for got, _ in outputs]
    return Diagnosis("ex6.returns_a_tuple",
                     f"forward 返回了 {len(outputs[0])} 项的{sequence_name(outputs[0])}，例如 (out, weights)（"
                     "有些实现会把注意力权重一起交出来）：第一项是对的，但这个注意力头只返回 out，"
                     "一个 (B, T, head_size) 的张量：return out",
                     f"forward returns a {type(outputs[0]).__name__} of {len(outputs[0])} (such as "
                     "(out, weights): some implementations hand the attention weights out too): its "
                     "first item is right, but this head returns only out, one (B, T, head_size) "
                     "tensor: return out")


def catalogued(probe):
    found = returned_tuple(graded_outputs(probe))
    if found:
        return found

    def draws():  # the learner's output and the judge's computation of it, draw after draw
        for size in (DIAGNOSE_SHAPE, CONFIRM_SHAPE):
            output, _ = at(probe, forward, size)
            inputs = probe.inputs(draw, **{k: size[k] for k in ("B", "T", "n_embd", "head_size")})
            yield output, head_computation(inputs, size["block_size"])
    first = draws()
    got, compute = next(first)
    right = same(got, compute(lesson(HEAD_STEPS))) and right_where_graded(probe)
    return named_slips(HEAD_STEPS, itertools.chain([(got, compute)], first), "ex6.", most=3) \
        or built_otherwise(probe) or right_values_otherwise(probe, right)


def graded_outputs(probe):
    """[(the learner's output, the lesson's)] at the graded sizes, in test_shape's order: a crash
    here is the one the learner sees (a mask not sliced, told as such only where it is that)."""
    graded = []
    try:
        for size in SHAPES:
            output, _ = at(probe, forward, size)
            inputs = probe.inputs(draw, **{k: size[k] for k in ("B", "T", "n_embd", "head_size")})
            graded.append((output, head_computation(inputs, size["block_size"])(lesson(HEAD_STEPS))))
    except WorkerFailure as failure:
        error = failure.error if failure.kind == "raised" and isinstance(failure.error, dict) else {}
        if error.get("sizes") and tril_not_sliced(error, error["sizes"]) \
                and not unsliced_at_other_sizes(probe):
            failure.error = {**error, "not_the_unsliced_mask": True}
        raise
    return graded


LAYER_SIZES = dict(n_embd=12, head_size=8, block_size=LONG_T + 8)


def built_otherwise(probe):
    """A cause in what __init__ builds: an extra layer, a bias, a trainable mask."""
    shape, layer_sizes = DIAGNOSE_SHAPE, LAYER_SIZES
    names = probe.submission(parameter_names, **layer_sizes)
    extra = sorted({path.split(".")[0] for path in names} - set(WEIGHTS) - {"tril"})
    if extra and all(f"{w}.weight" in names for w in WEIGHTS):
        listed = ", ".join(f"self.{layer}" for layer in extra)
        return Diagnosis("ex6.extra_layer",
                         f"注意力头里多了 query、key、value 之外的层：{listed.replace(', ', '、')}"
                         f"（参数 {'、'.join(p for p in names if p.split('.')[0] in extra)}）。这一课的头只有查询、键、值三个层，"
                         "输出就是 weights @ v 本身；LayerNorm、输出投影、残差这些属于 Transformer 块，是下一课的内容",
                         f"The head has layers besides query, key and value: {listed} (parameters "
                         f"{', '.join(p for p in names if p.split('.')[0] in extra)}). This lesson's "
                         "head has only the query, key and value layers and outputs weights @ v "
                         "itself; a LayerNorm, an output projection or a residual belongs to the "
                         "Transformer block, the next lesson")
    zero, _ = probe(forward, zero_input=True, **sizes(shape))
    zero = finite(zero, (shape["B"], shape["T"], shape["head_size"]))
    if zero is not None and zero.abs().max() > ZERO:
        return Diagnosis("ex6.bias",
                         "输入全为 0 时输出不为 0：某个线性层带了偏置。课文的 query、key、value 都是 bias=False",
                         "A zero input gives a non-zero output: a layer has a bias. The lesson's "
                         "query, key and value all have bias=False")
    shapes = probe.submission(parameters, **layer_sizes)
    if [layer_sizes["block_size"]] * 2 in shapes:
        return Diagnosis("ex6.mask_trainable",
                         "掩码 tril 成了可训练的参数（nn.Parameter）：优化器会去改它，未来可能重新被看见。"
                         "用 self.register_buffer(\"tril\", …) 保存它：它随模块移动，但不参与训练",
                         "The mask tril is a trainable parameter (nn.Parameter): an optimiser "
                         "would change it and could let the future back in. Keep it with "
                         "self.register_buffer(\"tril\", …): it moves with the module but is not "
                         "trained")
    biases = [path for path in names if path.endswith(".bias") and path.split(".")[0] in WEIGHTS]
    if biases:  # (a key's bias cancels in the softmax: the zero input may not show it)
        listed = ", ".join(f"self.{path[:-len('.bias')]}" for path in biases)
        return Diagnosis("ex6.bias",
                         f"{listed.replace(', ', '、')} 带了偏置（{'、'.join(biases)}）：nn.Linear 默认 bias=True。"
                         "课文的 query、key、value 都是 nn.Linear(n_embd, head_size, bias=False)",
                         f"{listed} {'has a bias' if len(biases) == 1 else 'have biases'} "
                         f"({', '.join(biases)}): nn.Linear's default is bias=True. The lesson's "
                         "query, key and value are all nn.Linear(n_embd, head_size, bias=False)")
    return None


def right_values_otherwise(probe, right):
    """A cause where forward's values are right (or nearly): its input changed, its layers made
    in forward or detached, a mask of a fixed size, a loop, a ready-made shortcut."""
    shape = DIAGNOSE_SHAPE
    if changed_everywhere(probe, inputs_after, [sizes(s) for s in SHAPES], ("x",)):
        return modifies_input_diagnosis("ex6", "Head.forward", ["x"], "q = self.query(x)")
    grads = probe.submission(learning, checked=False, **sizes(shape))
    cut = [what for what, grad in grads.items() if what != "x" and grad is None]
    if cut and not right:
        first, again = probe.submission(twice, **sizes(shape))
        if isinstance(first, torch.Tensor) and not same(first, again):
            return layers_in_forward(cut)
    if cut and right:
        return Diagnosis("ex6.detached",
                         f"数值是对的，但 {'、'.join(cut)} 得不到梯度：forward 里用了 .detach()、.data 或 "
                         "torch.no_grad()。训练时梯度要从损失一路传回 query、key、value 的权重，模型才能学习",
                         f"The values are right, but {', '.join(cut)} "
                         f"{'gets' if len(cut) == 1 else 'get'} no gradient: "
                         ".detach(), .data or torch.no_grad() in forward. In training the "
                         "gradient must flow from the loss back to the query, key and value "
                         "weights, or the model cannot learn")
    try:
        shown = probe.submission(calls)
    except WorkerFailure as failure:  # right at every graded size, and a crash at a longer T
        if right and failure.kind == "raised":
            return fixed_size_mask(failure.error, "ex6", "x.shape[1]",
                                   max(s["T"] for s in SHAPES + [CONFIRM_SHAPE]))
        raise
    if right and loops(shown) and not right_at_long(probe):
        return Diagnosis("ex6.loop_fixed_steps",
                         f"forward 在短序列上是对的，到了 T = {LONG_T} 却不对了，而且它对位置做了 Python 循环：循环的步数是固定的"
                         "（比如课文例子里的 8），只算到了前面那么多个位置。一次矩阵乘法 weights @ v 就同时算出了所有位置，"
                         "不管 T 有多长",
                         f"forward is right on the short sequences but not at T = {LONG_T}, and it "
                         "loops over positions in Python: the loop makes a fixed number of steps "
                         "(the lesson example's 8, say), so it reaches only that many positions. One "
                         "product, weights @ v, computes every position at once, whatever T is")
    if right and loops(shown):
        return Diagnosis("ex6.loop",
                         "结果是对的，但 forward 对位置做了 Python 循环。一次矩阵乘法 weights @ v 就同时算出了所有位置，"
                         "课文说直接用循环效率较低",
                         "The values are right but forward loops over positions in Python. One "
                         "product, weights @ v, computes every position at once; the lesson warns "
                         "that a loop is slow")
    return shortcut_diagnosis(shown, "ex6.shortcut")


def layers_in_forward(cut):
    return Diagnosis("ex6.layers_in_forward",
                     f"forward 每次运行都新建了 nn.Linear：{'、'.join(cut)} 从来没有被用到（它得不到梯度），"
                     "而且同一个 x 调用两次，输出也不一样（每次都是新的随机权重）。层要在 __init__ 里建好："
                     "self.query = nn.Linear(n_embd, head_size, bias=False)；forward 里只使用它们：q = self.query(x)",
                     f"forward makes a new nn.Linear each time it runs: {', '.join(cut)} "
                     f"{'is' if len(cut) == 1 else 'are'} never used (no gradient reaches "
                     f"{'it' if len(cut) == 1 else 'them'}), and two calls on the same x give "
                     "different outputs (new random weights each time). Layers are made in "
                     "__init__, self.query = nn.Linear(n_embd, head_size, bias=False); forward "
                     "only uses them: q = self.query(x)")


def mask_sized_by_head_size(error, size):
    """The tril buffer made head_size × head_size: it fits T up to head_size only. The crash is at
    a graded size where T > head_size, and its message names T and head_size, a number that is
    no other size of that call."""
    message, frames = error.get("message", ""), error.get("frames", [])
    T, H = size["T"], size["head_size"]
    named = set(re.findall(r"\d+", message))
    others = {size["B"], size["n_embd"], size["block_size"], T}
    if frames and frames[-1][2] == "forward" and T > H and H not in others \
            and {str(T), str(H)} <= named:
        return Diagnosis("ex6.mask_sized_by_head_size",
                         f"掩码是按 head_size = {H} 建的，而不是按 block_size = {size['block_size']}："
                         f"torch.tril(torch.ones(head_size, head_size)) 只容得下 {H} 个位置，这次的序列有 T = {T} 个字。"
                         "掩码管的是位置，不是向量的长度：register_buffer(\"tril\", torch.tril(torch.ones(block_size, "
                         "block_size)))，用时切成 self.tril[:T, :T]",
                         f"The mask was built for head_size = {H}, not block_size = "
                         f"{size['block_size']}: torch.tril(torch.ones(head_size, head_size)) holds "
                         f"{H} positions, and this sequence has T = {T} characters. The mask is about "
                         "positions, not the length of a vector: register_buffer(\"tril\", "
                         "torch.tril(torch.ones(block_size, block_size))), sliced to "
                         "self.tril[:T, :T] when used")
    return None


def unsliced_at_other_sizes(probe):
    """The crash of an unsliced (block_size, block_size) mask, told apart from another crash that
    names the same sizes (at SHAPES[0] head_size is block_size: (B, head_size, head_size) scores
    from qᵀ @ k meet a sliced mask there): at a size where head_size is neither, the crash names
    block_size and T again, and where T is block_size the head runs."""
    shorter, full = next((s for s in SHAPES if s["T"] < s["block_size"] != s["head_size"]), None), \
        next((s for s in SHAPES if s["T"] == s["block_size"] != s["head_size"]), None)
    if shorter is None or full is None:
        return False
    try:
        at(probe, forward, shorter)
        return False
    except WorkerFailure as failure:
        error = failure.error if failure.kind == "raised" and isinstance(failure.error, dict) else {}
        if not error.get("sizes") or tril_not_sliced(error, error["sizes"]) is None:
            return False
    try:
        at(probe, forward, full)
    except WorkerFailure:
        return False
    return True


def tril_not_sliced(error, size):
    message, frames = error.get("message", ""), error.get("frames", [])
    block, T = size["block_size"], size["T"]
    if frames and frames[-1][2] == "forward" and block != T \
            and not error.get("not_the_unsliced_mask") \
            and set(re.findall(r"\((\d+)\)", message)) == {str(block), str(T)}:
        return Diagnosis("ex6.tril_not_sliced",
                         f"掩码没有切成 T × T：tril 是按 block_size = {block} 个位置建的，而这次的序列只有 "
                         f"T = {T} 个字。用之前把它的行和列都切到 T：self.tril[:T, :T]",
                         f"The mask was not cut to T × T: tril is built for block_size = {block} "
                         f"positions, but this sequence has only T = {T} characters. Cut both "
                         "its rows and its columns to T before using it: self.tril[:T, :T]")
    return None


def diagnose_error(error):
    """The cause of a crash. The causes that name sizes need the sizes of the call that crashed
    (`at` gives them): the learner sees that crash, and its sizes, first."""
    size = error.get("sizes")
    sized = size and (tril_not_sliced(error, size) or mask_sized_by_head_size(error, size)
                      or mask_sized_by_batch(error, size["B"], size["T"], "ex6"))
    return sized or inf_into_integers(error, "ex6") or layer_shape_diagnosis(error, "ex6") \
        or transposed_3d(error, "ex6") \
        or sqrt_of_int(error, "ex6") or undefined_head_size(
            error, "ex6",
            "__init__ 的参数 head_size 在 forward 里看不到。可以从张量上取：head_size = k.shape[-1]"
            "（或 q.shape[-1]），或者在 __init__ 里存下来：self.head_size = head_size",
            "__init__'s argument head_size is not a variable of forward. Take it from the "
            "tensors, head_size = k.shape[-1] (or q.shape[-1]), or keep it in __init__: "
            "self.head_size = head_size") or crash_cause(error, "ex6")
