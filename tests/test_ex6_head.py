"""Exercise 6 · one attention head (一个完整的注意力头): (B, T, n_embd) → (B, T, head_size)."""
import itertools
import re

import torch
import torch.nn as nn

from grading.checks import (
    CLOSE,
    LONG_T,
    SHAPES,
    ZERO,
    Consistent,
    draw_qkv,
    expect_built_yourself,
    expect_calls_close,
    expect_close,
    expect_gradients,
    expect_inputs_unchanged,
    expect_no_loop,
    expect_repeatable,
    expect_row_gradients,
    expect_same_elsewhere,
    expect_tensor,
    fail,
    hidden,
    loops,
    public,
    randn,
    row_gradients,
    same,
    sequence_name,
    set_linear,
    shown_work,
    trainable_shapes,
    upper_triangle,
    vjp,
)
from grading.diagnosis import record_diff
from grading.diagnosis.causes import (
    Diagnosis,
    changed_everywhere,
    finite,
    modifies_input_diagnosis,
    shortcut_diagnosis,
)
from grading.diagnosis.crashes import crash_cause
from grading.diagnosis.pictures import Picture, weights_of
from grading.diagnosis.record_diff import Recorded
from grading.diagnosis.slips import Way, lesson, named_slips
from grading.errors import CheckFailed, WorkerFailure
from grading.i18n import Bi
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

OUT_NAMES = ("B", "T", "head_size")
LONG = {**SHAPES[0], "T": LONG_T, "block_size": LONG_T + 8}  # T far beyond the other shapes
WEIGHTS = ("query", "key", "value")


# -- scenarios ------------------------------------------------------------------------------------

draw = draw_qkv


def build(ex, inputs, n_embd, head_size, block_size):
    head = ex.Head(n_embd, head_size, block_size)
    for name in ("query", "key", "value"):
        set_linear(head, name, inputs[name])
    return head.eval()


def shown_forward(ex, gen, B, T, n_embd, head_size, block_size):
    """forward's output and its Call (its record, for a record diff): see forward."""
    inputs = draw(gen, B, T, n_embd, head_size)
    return build(ex, inputs, n_embd, head_size, block_size).shown(inputs["x"])


def forward(ex, gen, B, T, n_embd, head_size, block_size, zero_input=False):
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    x = torch.zeros_like(inputs["x"]) if zero_input else inputs["x"]
    with torch.no_grad():
        return head(x)  # (B, T, head_size)


def inputs_after(ex, gen, B, T, n_embd, head_size, block_size):
    """The judge's copy of x, and x as the learner's forward left it."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    sent = [inputs["x"].clone()]
    _, after = head.call_inputs(inputs["x"])
    return sent, after


def twice(ex, gen, B, T, n_embd, head_size, block_size):
    """forward's outputs for the same x, twice."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    return head(inputs["x"]), head(inputs["x"])


def tokens_after_t_changed(ex, gen, B, T, n_embd, head_size, block_size, vocab_size):
    """Through a plain embedding: outputs for idx, for idx with tokens after t redrawn (each t),
    for idx with token t itself changed (each t), for idx once more (is forward repeatable?), and
    for one more idx with the tokens after a random t redrawn, here and in a second worker (does
    an output depend on earlier calls?). 2T+4 tensors of (B, T, head_size).
    No token appears twice in one call (the vocabulary is made large enough): each call's x is
    B·T distinct unit-Gaussian rows, as a fresh draw's is, so nothing in a call tells it from
    the calls the other checks make."""
    vocab_size = max(vocab_size, 4 * B * T)
    inputs = draw(gen, B, T, n_embd, head_size)
    head = Consistent(build(ex, inputs, n_embd, head_size, block_size),
                      "Head.forward")  # one pure function
    embedding = nn.Embedding(vocab_size, n_embd)
    with torch.no_grad():
        embedding.weight.copy_(randn(gen, vocab_size, n_embd))
    ids = torch.randperm(vocab_size, generator=gen)
    idx, unused = ids[:B * T].view(B, T), ids[B * T:]

    def fresh(count):  # ids no position of idx holds, none twice
        return unused[torch.randperm(len(unused), generator=gen)[:count]]

    def after(t):  # idx with the tokens after t redrawn
        changed = idx.clone()
        changed[:, t + 1:] = fresh(B * (T - t - 1)).view(B, T - t - 1)
        return changed

    outs = []
    with torch.no_grad():
        outs.append(head(embedding(idx)))
        for t in range(T):
            outs.append(head(embedding(after(t))))
        for t in range(T):
            changed = idx.clone()
            changed[:, t] = fresh(B)  # a different token at position t
            outs.append(head(embedding(changed)))
        outs.append(head(embedding(idx)))
        # one of the changed calls again, in a second worker: what it gave above was its own
        again = build(ex.elsewhere(), inputs, n_embd, head_size, block_size)
        changed = after(int(torch.randint(0, T, (1,), generator=gen)))
        outs += [head(embedding(changed)), again(embedding(changed))]
    return outs


def gradients(ex, gen, B, T, n_embd, head_size, block_size):
    """Calls on fresh batches of B sequences; each sequence sends back the gradient of one row
    out[t], every t in turn (grading.checks.derivatives.row_gradients)."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = Consistent(build(ex, inputs, n_embd, head_size, block_size), "Head.forward")

    def after(t):  # (T, n_embd): the positions after t
        return (torch.arange(T) > t)[:, None].expand(T, n_embd)
    return row_gradients(head, lambda: randn(gen, B, T, n_embd), B, T, after, gen)


def learning(ex, gen, B, T, n_embd, head_size, block_size, checked=True):
    """What training would use: the gradients of a random loss for x and for the three weights."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    reply = vjp(head, [inputs["x"]], wrt=[0], grad_output=randn(gen, B, T, head_size),
                parameters=[f"{name}.weight" for name in WEIGHTS], what="Head.forward", checked=checked)
    if not isinstance(reply, dict):
        return {}
    grads = reply.get("parameter_grads") if isinstance(reply.get("parameter_grads"), dict) else {}
    x_grads = reply.get("input_grads")
    return {"x": x_grads[0] if isinstance(x_grads, list) and x_grads else None,
            **{f"self.{name}.weight": grads.get(f"{name}.weight") for name in WEIGHTS}}


def parameters(ex, gen, n_embd, head_size, block_size):
    return trainable_shapes(ex.Head(n_embd, head_size, block_size))


def parameter_names(ex, gen, n_embd, head_size, block_size):
    """The dotted names of the head's trainable parameters (query.weight, key.bias, …)."""
    return [path for path, _, trains in ex.Head(n_embd, head_size, block_size).parameters()
            if trains]


def calls(ex, gen):
    """The recorded work of forward at the sizes test_matches_reference grades (the long T
    among them: a loop of a fixed number of steps that is right there is a long one)."""
    def make(B, T, n_embd, head_size, block_size):
        head = build(ex, draw(gen, B, T, n_embd, head_size), n_embd, head_size, block_size)
        return head, lambda: (randn(gen, B, T, n_embd),)
    return shown_work(make, [sizes(shape) for shape in SHAPES + [LONG]], gen)


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "n_embd", "head_size", "block_size")}


def checked(value, shape):
    return expect_tensor(value, "forward(x)", (shape["B"], shape["T"], shape["head_size"]),
                         OUT_NAMES)


# -- tests ----------------------------------------------------------------------------------------

@public(3)
def test_shape(submission):
    """forward gives (B, T, head_size) of finite numbers, for T below block_size too, and long T
    forward 给出形状 (B, T, head_size)、都是有限的数的输出，T 小于 block_size 或很长时也一样"""
    for shape in SHAPES + [LONG]:  # (a size that fails shows here, not in a check using it)
        checked(submission(forward, **sizes(shape)), shape)


@public(5)
def test_causal_for_every_token(submission):
    """changing the tokens after t never changes the outputs up to t, for every t
    对每个 t：改动 t 之后的字，永远不会改变 t 及之前的输出"""
    for shape in SHAPES:
        T = shape["T"]
        outs = submission(tokens_after_t_changed, vocab_size=shape["vocab_size"], **sizes(shape))
        if not isinstance(outs, list) or len(outs) != 2 * T + 4:
            fail("forward 没有在每次调用时返回一个张量", "forward did not return one tensor per call")
        first = checked(outs[0], shape)
        expect_repeatable(first, checked(outs[2 * T + 1], shape), "forward")
        expect_same_elsewhere(checked(outs[-2], shape), checked(outs[-1], shape), "forward")
        for t in range(T):
            diff = (checked(outs[1 + t], shape)[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > CLOSE:
                s = int(diff.amax(dim=(0, 2)).argmax())
                fail(f"改动位置 {t} 之后的字，改变了位置 {s} 的输出：这个注意力头让未来漏了进来。"
                     "要看三处：softmax 之前，未来的分数填成 −∞（tril 切成 [:T, :T]，填 tril == 0 的位置）；"
                     "softmax 沿每一行做（dim=-1）；然后 weights @ v",
                     f"changing the tokens after position {t} changed the output at position "
                     f"{s}: the head lets the future in. Three places to look: before softmax, "
                     "the future's scores become −∞ (tril sliced to [:T, :T], filled where "
                     "tril == 0); the softmax runs along each row (dim=-1); then weights @ v")
        for t in range(T):
            if (checked(outs[1 + T + t], shape)[:, t] - first[:, t]).abs().max() <= ZERO:
                fail(f"改动位置 {t} 的字，位置 {t} 的输出却没有变：每个位置都要关注它自己，并对值向量加权求和",
                     f"changing the token at position {t} did not change the output at {t}: "
                     "each position must attend to itself and weight the values")


@public(3)
def test_jacobian(submission):
    """∂out[t] / ∂x[s] ≈ 0 whenever s is after t
    s 在 t 之后时，∂out[t] / ∂x[s] ≈ 0"""
    shape = SHAPES[0]
    B, T, H = shape["B"], shape["T"], shape["head_size"]
    grad = expect_row_gradients(submission(gradients, **sizes(shape)), "Head.forward",
                                "forward(x)", (B, T, H), OUT_NAMES)  # (T rows, T, n_embd)
    leak = grad.abs().amax(dim=2)  # (T, T): largest |∂out[t] / ∂x[s, :]| for row t, position s
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    if leak[future].max() > ZERO:
        t, s = (leak * future == (leak * future).max()).nonzero()[0].tolist()
        fail(f"out[{t}] 对在它之后的 x[{s}] 的导数是 {leak[t, s]:.3g}：未来渗进了过去",
             f"out[{t}] has a derivative of {leak[t, s]:.3g} with respect to x[{s}], which comes "
             "after it: the future leaks into the past")
    if leak[~future].min() <= ZERO:
        t, s = (leak == leak[~future].min()).nonzero()[0].tolist()
        fail(f"out[{t}] 对 x[{s}] 的导数为 0，而位置 {s} 不在它之后：每个位置都要看到它自己和它之前的字",
             f"out[{t}] has no derivative with respect to x[{s}], though position {s} is not "
             "after it: each position must see itself and what came before it")


@public(2)
def test_first_position_sees_itself(submission):
    """position 0 sees only itself, so its output is its own value vector
    位置 0 只能看见自己，所以它的输出就是它自己的值向量"""
    for shape in SHAPES:
        out = checked(submission(forward, **sizes(shape)), shape)
        inputs = submission.inputs(draw, **{k: shape[k] for k in ("B", "T", "n_embd", "head_size")})
        value_0 = inputs["x"][:, 0].double() @ inputs["value"].double().T  # (B, head_size)
        expect_close(out[:, 0], value_0, "out[:, 0]", ("B", "head_size"),
                     source=Bi("它自己的值向量 x[:, 0] @ self.value.weight.T（没有偏置）是",
                               "its own value vector, x[:, 0] @ self.value.weight.T (no bias), is"),
                     hint=Bi("因果掩码之后，权重的第 0 行是 [1, 0, …]：位置 0 只关注自己，所以输出是 value(x[:, 0])。",
                             "After the causal mask, row 0 of the weights is [1, 0, …]: position "
                             "0 attends only to itself, so its output is value(x[:, 0])."))


@public(2)
def test_no_bias(submission):
    """query, key and value have no bias: a zero input gives a zero output
    query、key、value 没有偏置：输入全为 0 时输出也全为 0"""
    for shape in SHAPES[:2]:
        out = checked(submission(forward, zero_input=True, **sizes(shape)), shape)
        if out.abs().max() > ZERO:
            fail("输入全为 0 时输出不是 0：有一个层带了偏置；课文用的是 nn.Linear(n_embd, head_size, bias=False)",
                 "the output is not 0 for an all-zero input: a layer adds a bias; the lesson uses "
                 "nn.Linear(n_embd, head_size, bias=False)")
        if checked(submission(forward, **sizes(shape)), shape).abs().max() <= ZERO:
            fail("随机输入时输出也全为 0：输出要由值向量加权求和得到",
                 "the output is 0 for a random input too: it must be a weighted sum of the values")


@public(2, after=["test_causal_for_every_token", "test_first_position_sees_itself"])
def test_vectorised(submission):
    """forward works on all positions at once, with no Python loop over them
    forward 一次处理所有位置，没有对位置的 Python 循环"""
    expect_no_loop(submission(calls), "Head.forward",
                   lambda: submission.source.loops("Head.forward"))


@public(1)
def test_mask_is_not_trained(submission):
    """the only trainable parameters are the three layers' weights: the mask is not one
    可训练的参数只有三个线性层的权重：掩码不是参数"""
    n_embd, head_size, block_size = 12, 8, 8
    shapes = submission(parameters, n_embd=n_embd, head_size=head_size,
                        block_size=block_size)
    layer = [head_size, n_embd]
    if shapes and all(s == layer for s in shapes) and len(shapes) < 3:
        fail(f"可训练参数只有 {len(shapes)} 个 (head_size, n_embd) = ({head_size}, {n_embd}) 的权重，应当有三个："
             "有几个层其实是同一个 nn.Linear（例如 self.query = self.key = self.value = nn.Linear(…)）。"
             "查询、键、值各要一个自己的层",
             f"there {'is only one' if len(shapes) == 1 else f'are only {len(shapes)}'} trainable "
             f"(head_size, n_embd) = ({head_size}, {n_embd}) "
             f"weight{'' if len(shapes) == 1 else 's'} where there should be three: some of the layers are one and the same "
             "nn.Linear (self.query = self.key = self.value = nn.Linear(…), say). Query, key and "
             "value each need a layer of their own")
    if sorted(shapes) != [layer] * 3:
        extra = [s for s in shapes if s != layer]
        why = (("掩码用 register_buffer 保存，它不参与训练", "keep the mask with register_buffer, it is "
                "not trained") if [block_size, block_size] in extra else
               ("多出来的 (head_size,) 是偏置：课文的三个层都是 bias=False", "the extra (head_size,) is "
                "a bias: the lesson's three layers all have bias=False") if [head_size] in extra else
               ("多出来的参数不属于这一课的注意力头", "the extra parameters are no part of this "
                "lesson's head"))
        fail(f"可训练参数的形状是 {shapes}，应当只有三个 (head_size, n_embd) = ({head_size}, {n_embd})：{why[0]}",
             f"the trainable parameters have shapes {shapes}; there should be just three "
             f"(head_size, n_embd) = ({head_size}, {n_embd}): {why[1]}")


@public(1, after=["test_causal_for_every_token", "test_first_position_sees_itself"])
def test_built_yourself(submission):
    """the head is built by hand, not from PyTorch's ready-made attention
    注意力头是亲手搭的，没有调用 PyTorch 现成的注意力"""
    expect_built_yourself(submission(calls), "Head.forward")


@public(1, after=["test_shape"])
def test_inputs_unchanged(submission):
    """forward leaves x as it was: no in-place operation on its input
    forward 不改动传进来的 x：不对输入做原地运算"""
    for shape in SHAPES:
        sent, after = submission(inputs_after, **sizes(shape))
        expect_inputs_unchanged(sent, after, "forward(x)", ("x",))


@hidden(3)
def test_matches_reference(compare):
    """matches the reference on fresh random inputs, four shape sets (B = T = 1 among them) and a long sequence
    在四组形状（其中一组 B = T = 1）和一个长序列的全新随机输入上与参考答案一致"""
    # the calls the how-checks read: every size above, two or three calls of one head each
    try:
        expect_calls_close(*compare(calls), "forward(x)", OUT_NAMES)
    except CheckFailed as failure:  # where the work parts from the solution's: the weights?
        extra = weights_compared(compare)
        raise CheckFailed(failure.text + extra if extra else failure.text, failure.key) from None


def weights_compared(compare):
    """A second line for a mismatch (a Bi, or None): how the head's attention weights (the last
    (T, T) matrix of its work, replayed from its record) compare with the solution's, for one
    sequence of five."""
    recorded = getattr(compare, "recorded", None)
    if recorded is None:
        return None
    shape = {**SHAPES[0], "B": 1}
    try:
        (out, mine), (want, theirs) = recorded(shown_forward, **sizes(shape))
    except (WorkerFailure, CheckFailed, TypeError, ValueError):  # no second line, then
        return None
    T = shape["T"]
    mine, theirs = weights_of(mine, out, T), weights_of(theirs, want, T)
    if mine is None or theirs is None or not isinstance(out, torch.Tensor):
        return None
    mine, theirs = mine.reshape(-1, T, T)[0].double(), theirs.reshape(-1, T, T)[0].double()
    if same(mine, theirs):
        return Bi("\n注意力权重（softmax 的输出）和参考答案的一样：差别在它之后，在值 v 或者乘上它的那一步",
                  "\nthe attention weights (softmax's output) match the reference's: the difference "
                  "comes after them, in the values v or in what multiplies them")
    if bool((upper_triangle(mine) & (mine.abs() > ZERO)).any()):
        return Bi("\n注意力权重已经和参考答案不同：对角线右上方（未来）分到了权重",
                  "\nthe attention weights already differ from the reference's: positions above "
                  "the diagonal (the future) get weight")
    peak, right = float(mine.max(-1).values.mean()), float(theirs.max(-1).values.mean())
    if abs(peak - right) > 0.1:
        sharper = peak > right
        return Bi(f"\n注意力权重已经和参考答案不同：每行最大的权重平均是 {peak:.2f}，参考答案是 {right:.2f}"
                  + ("：分数比应有的大" if sharper else "：分数比应有的小"),
                  f"\nthe attention weights already differ from the reference's: each row's largest "
                  f"weight is {peak:.2f} on average against {right:.2f}"
                  + (": the scores are larger than they should be" if sharper else
                     ": the scores are smaller than they should be"))
    return Bi("\n注意力权重已经和参考答案不同：差别在 softmax 之前（查询、键、它们的乘积）",
              "\nthe attention weights already differ from the reference's: the difference comes "
              "before softmax (the queries, the keys, their product)")


@hidden(2)
def test_gradients_match_reference(compare):
    """a loss's gradients for x and for the query, key and value weights match the reference's
    损失对 x 以及 query、key、value 权重的梯度与参考答案一致"""
    for k, shape in enumerate(SHAPES[:2]):
        got, want = compare(learning, checked=k == 0, **sizes(shape))
        expect_gradients(got, want)


# -- diagnoses ------------------------------------------------------------------------------------

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


def picture(probe):
    """The head's attention weights (the last (T, T) matrix of its work, replayed from its
    record) for one sequence of five, the learner's beside the solution's. Without the
    solutions, the future's non-zero weights marked."""
    shape = {**DIAGNOSE_SHAPE, "B": 1}
    found = probe.recorded(shown_forward, **sizes(shape))
    if found is None:
        out, call = probe.submission(shown_forward, **sizes(shape))
        mine = weights_of(call, out, shape["T"])
        if mine is None:
            return None
        mine = mine.reshape(-1, shape["T"], shape["T"])[0].double()
        return Picture(TITLE, mine, wrong=upper_triangle(mine) & (mine.abs() > ZERO))
    (out, mine), (want, theirs) = found
    mine, theirs = weights_of(mine, out, shape["T"]), weights_of(theirs, want, shape["T"])
    if mine is None or theirs is None:
        return None
    return Picture(TITLE, mine.reshape(-1, shape["T"], shape["T"])[0], theirs[0])


TITLE = Bi("Head 的注意力权重 weights[0]（T = 5）", "Head's attention weights[0] (T = 5)")


def diagnose(probe):
    return catalogued(probe) or record_diff.diagnosis(probe, RECORDED, "ex6")


def right_where_graded(probe):
    """For the diagnoses that say "the values are right": right at every graded size too."""
    for shape in SHAPES:
        got, _ = probe(forward, **sizes(shape))
        inputs = probe.inputs(draw, **{k: shape[k] for k in ("B", "T", "n_embd", "head_size")})
        if not same(got, head_computation(inputs, shape["block_size"])(lesson(HEAD_STEPS))):
            return False
    return True


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
    shape = DIAGNOSE_SHAPE
    # First the graded sizes, in test_shape's order: a crash here is the one the learner sees.
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
    found = returned_tuple(graded)
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
    found = named_slips(HEAD_STEPS, itertools.chain([(got, compute)], first), "ex6.", most=3)
    if found:
        return found
    layer_sizes = dict(n_embd=12, head_size=8, block_size=LONG_T + 8)
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
