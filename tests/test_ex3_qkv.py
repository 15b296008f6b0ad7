"""Exercise 3 · query, key, value (查询、键、值): three Linear(n_embd, head_size, bias=False)."""
import torch

from grading.checks import (
    SHAPES,
    ZERO,
    draw_qkv,
    expect_close,
    expect_gradients,
    expect_inputs_unchanged,
    expect_sequence,
    expect_tensor,
    fail,
    hidden,
    named_gradients,
    public,
    raises,
    randn,
    same,
    set_linear,
)

NAMES = ("q", "k", "v")
LAYERS = ("query", "key", "value")  # the layer that makes each


# -- scenarios ------------------------------------------------------------------------------------

draw = draw_qkv


def project(ex, gen, B, T, n_embd, head_size, zero_input=False):
    m = ex.QKV(n_embd, head_size)
    inputs = draw(gen, B, T, n_embd, head_size)
    for name in ("query", "key", "value"):
        set_linear(m, name, inputs[name])
    m.eval()
    x = torch.zeros_like(inputs["x"]) if zero_input else inputs["x"]
    with torch.no_grad():
        return m(x)


def built(ex, gen, B, T, n_embd, head_size):
    """A QKV with the drawn weights, in eval mode, and the drawn inputs."""
    m = ex.QKV(n_embd, head_size)
    inputs = draw(gen, B, T, n_embd, head_size)
    for name in LAYERS:
        set_linear(m, name, inputs[name])
    return m.eval(), inputs


def shown_project(ex, gen, B, T, n_embd, head_size):
    """forward(x) and its Call (its record, for a record diff)."""
    m, inputs = built(ex, gen, B, T, n_embd, head_size)
    return m.shown(inputs["x"])


def inputs_after(ex, gen, B, T, n_embd, head_size):
    """The judge's copy of x, and x as the learner's forward left it."""
    m, inputs = built(ex, gen, B, T, n_embd, head_size)
    sent = [inputs["x"].clone()]
    _, after = m.call_inputs(inputs["x"])
    return sent, after


def learning(ex, gen, B, T, n_embd, head_size, checked=True):
    """What training would use: the gradients of a loss of q, k and v for x and for the three
    weights."""
    m, inputs = built(ex, gen, B, T, n_embd, head_size)
    grad_output = [randn(gen, B, T, head_size) for _ in NAMES]
    return named_gradients(m, [inputs["x"]], ["x"], grad_output,
                           [f"{name}.weight" for name in LAYERS], "QKV.forward", checked)


def layer_shapes(ex, gen, n_embd, head_size):
    m = ex.QKV(n_embd, head_size)
    return {name: m.inspect(f"{name}.weight").get("shape") for name in ("query", "key", "value")}


def layers_found(ex, gen, B, T, n_embd, head_size):
    """The API's layers that QKV has once built, its parameters then, and its API layers once
    forward has run."""
    m = ex.QKV(n_embd, head_size)
    built = [name for name in LAYERS if "missing" not in m.inspect(name)]
    parameters = m.parameters()
    raises(m, randn(gen, B, T, n_embd))
    return built, parameters, [name for name in LAYERS if "missing" not in m.inspect(name)]


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "n_embd", "head_size")}


def three(got, shape):
    q_k_v = expect_sequence(got, "forward(x)", 3)
    size = (shape["B"], shape["T"], shape["head_size"])
    return [expect_tensor(t, n, size, ("B", "T", "head_size")) for t, n in zip(q_k_v, NAMES)]


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_shapes(submission):
    """forward returns (q, k, v), each (B, T, head_size), of finite numbers
    forward 返回 (q, k, v)，每个的形状都是 (B, T, head_size)，都是有限的数"""
    for shape in SHAPES:
        three(submission(project, **sizes(shape)), shape)


@public(2)
def test_layers(submission):
    """query, key and value are nn.Linear(n_embd, head_size) layers
    query、key、value 是 nn.Linear(n_embd, head_size) 线性层"""
    shape = SHAPES[0]
    got = submission(layer_shapes, n_embd=shape["n_embd"], head_size=shape["head_size"])
    want = [shape["head_size"], shape["n_embd"]]
    for name in ("query", "key", "value"):
        if got[name] is None:
            fail(f"QKV 没有 self.{name}.weight：三个层要叫 self.query、self.key、self.value，在 __init__ "
                 "里建好，每个都是 nn.Linear(n_embd, head_size, bias=False)",
                 f"QKV has no self.{name}.weight: the three layers are self.query, self.key "
                 "and self.value, built in __init__, each an nn.Linear(n_embd, head_size, "
                 "bias=False)")
        if got[name] != want:
            fail(f"self.{name}.weight 的形状是 {tuple(got[name])}；nn.Linear(n_embd, head_size) 的权重"
                 f"形状是 (head_size, n_embd) = {tuple(want)}",
                 f"self.{name}.weight has shape {tuple(got[name])}; nn.Linear(n_embd, head_size) "
                 f"has weight shape (head_size, n_embd) = {tuple(want)}")


@public(2)
def test_no_bias(submission):
    """a zero input gives zero q, k and v (the layers have bias=False)
    输入全为 0 时 q、k、v 也全为 0（线性层没有偏置）"""
    for shape in SHAPES[:2]:
        zero = three(submission(project, zero_input=True, **sizes(shape)), shape)
        for t, name in zip(zero, NAMES):
            if t.abs().max() > ZERO:
                fail(f"输入全为 0 时 {name} 不是 0：这个层加了偏置；课文用的是 "
                     "nn.Linear(n_embd, head_size, bias=False)",
                     f"{name} is not 0 for an all-zero input: the layer adds a bias; the lesson "
                     "uses nn.Linear(n_embd, head_size, bias=False)")
        for t, name in zip(three(submission(project, **sizes(shape)), shape), NAMES):
            if t.abs().max() <= ZERO:
                fail(f"随机输入时 {name} 也全为 0：它要由 x 经过线性层算出来",
                     f"{name} is 0 for a random input too: it must come from x through its layer")


@public(1, after=["test_shapes"])
def test_inputs_unchanged(submission):
    """forward leaves x as it was: no in-place operation on its input
    forward 不改动 x：不对输入做原地运算"""
    for shape in SHAPES:
        sent, after = submission(inputs_after, **sizes(shape))
        expect_inputs_unchanged(sent, after, "forward(x)", ("x",))


@hidden(6)
def test_matches_reference(compare):
    """q, k and v match the reference, in that order, four shape sets (B = T = 1 among them)
    q、k、v 按这个顺序与参考答案一致（四组形状，其中一组 B = T = 1）"""
    for shape in SHAPES:
        got, want = compare(project, **sizes(shape))
        got = three(got, shape)
        for i, (t, w, name) in enumerate(zip(got, want, NAMES)):
            other = next((j for j in range(3) if j != i and same(t, want[j])), None)
            if other is not None and not same(t, w):
                fail(f"{name} 正是参考答案的 {NAMES[other]}：它是由 self.{LAYERS[other]} 算出来的，"
                     f"或者返回的顺序不对。要按 (q, k, v) 的顺序返回，{name} = self.{LAYERS[i]}(x)",
                     f"{name} is exactly the reference's {NAMES[other]}: it came out of "
                     f"self.{LAYERS[other]}, or the three are returned in another order. Return "
                     f"(q, k, v), with {name} = self.{LAYERS[i]}(x)")
            expect_close(t, w, name, ("B", "T", "head_size"))


@hidden(2)
def test_gradients_match_reference(compare):
    """a loss's gradients for x and for the query, key and value weights match the reference's
    损失对 x 以及 query、key、value 权重的梯度与参考答案一致"""
    for k, shape in enumerate(SHAPES[:2]):
        got, want = compare(learning, checked=k == 0, **sizes(shape))
        expect_gradients(got, want)
