"""Exercise 3 · query, key, value (查询、键、值): three Linear(n_embd, head_size, bias=False)."""
import torch

from grading.i18n import Bi
from grading.testkit import SHAPES, Diagnosis, close, expect_close, expect_sequence, \
    draw_qkv, expect_tensor, fail, finite, hidden, public, set_linear

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


def layer_shapes(ex, gen, n_embd, head_size):
    m = ex.QKV(n_embd, head_size)
    return {name: m.inspect(f"{name}.weight").get("shape") for name in ("query", "key", "value")}


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "n_embd", "head_size")}


def three(got, shape):
    q_k_v = expect_sequence(got, "forward(x)", 3)
    size = (shape["B"], shape["T"], shape["head_size"])
    return [expect_tensor(t, n, size, ("B", "T", "head_size")) for t, n in zip(q_k_v, NAMES)]


# -- tests ----------------------------------------------------------------------------------------

@public(3)
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
            fail(f"QKV 没有 self.{name}.weight：三个层要叫 self.query、self.key、self.value，"
                 "每个都是 nn.Linear(n_embd, head_size, bias=False)",
                 f"QKV has no self.{name}.weight: the three layers are self.query, self.key "
                 "and self.value, each an nn.Linear(n_embd, head_size, bias=False)")
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
            if t.abs().max() > 1e-6:
                fail(f"输入全为 0 时 {name} 不是 0：这个层加了偏置；课文用的是 "
                     "nn.Linear(n_embd, head_size, bias=False)",
                     f"{name} is not 0 for an all-zero input: the layer adds a bias; the lesson "
                     "uses nn.Linear(n_embd, head_size, bias=False)")
        for t, name in zip(three(submission(project, **sizes(shape)), shape), NAMES):
            if t.abs().max() <= 1e-6:
                fail(f"随机输入时 {name} 也全为 0：它要由 x 经过线性层算出来",
                     f"{name} is 0 for a random input too: it must come from x through its layer")


@hidden(8)
def test_matches_reference(compare):
    """q, k and v match the reference, in that order, three shape sets
    q、k、v 按这个顺序与参考答案一致（三组形状）"""
    for shape in SHAPES:
        got, want = compare(project, **sizes(shape))
        for t, w, name in zip(three(got, shape), want, NAMES):
            expect_close(t, w, name, ("B", "T", "head_size"))


# -- diagnoses ------------------------------------------------------------------------------------

def diagnose(probe):
    shape = SHAPES[0]
    B, T, H = shape["B"], shape["T"], shape["head_size"]
    got, want = probe(project, **sizes(shape))
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (3, B, T, H):
        return Diagnosis("ex3.stacked",
                         "q、k、v 被叠成了一个 (3, B, T, head_size) 的张量。课文里它们是三个独立的向量，"
                         "forward 要返回三个张量：return q, k, v",
                         "q, k and v were stacked into one (3, B, T, head_size) tensor. In the "
                         "lesson they are three separate vectors: forward returns three tensors, "
                         "return q, k, v")
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        return None
    if close(got[0], got[1]) and close(got[1], got[2]):
        return Diagnosis("ex3.shared_layer",
                         "q、k、v 完全相同：三个角色共用了同一个线性层。查询、键、值各司其职，"
                         "各要一个自己的 nn.Linear",
                         "q, k and v are identical: the three roles share one linear layer. "
                         "Query, key and value each do their own job and need an nn.Linear of "
                         "their own")
    zero, _ = probe(project, zero_input=True, **sizes(shape))
    zero = [finite(t, (B, T, H)) for t in zero] if isinstance(zero, (tuple, list)) else [None]
    if all(t is not None for t in zero) and any(t.abs().max() > 1e-6 for t in zero):
        return Diagnosis("ex3.bias",
                         "输入全为 0 时输出不为 0：线性层带了偏置。课文的三个层都是 bias=False",
                         "A zero input gives a non-zero output: a layer has a bias. The lesson's "
                         "three layers all have bias=False")
    if want is None:
        return None
    # Which layer each returned tensor came out of: query, key or value (None: none of them).
    made_by = [next((j for j in range(3) if close(got[i], want[j])), None) for i in range(3)]
    if None in made_by or made_by == [0, 1, 2]:
        return None
    if len(set(made_by)) == 3:
        names = ", ".join(NAMES[j] for j in made_by)
        return Diagnosis("ex3.order",
                         f"三个输出都对，但顺序是 ({names})。查询、键、值要按 (q, k, v) 的顺序返回",
                         f"The three outputs are right but in the order ({names}). Return them "
                         "as (q, k, v): query, key, value")
    wrong = [f"{NAMES[i]} = self.{LAYERS[j]}(x)" for i, j in enumerate(made_by) if i != j]
    return Diagnosis("ex3.layer_reused",
                     f"输出用错了层：{'，'.join(wrong)}。查询、键、值各司其职，各要一个自己的 nn.Linear："
                     "q = self.query(x)，k = self.key(x)，v = self.value(x)",
                     f"An output comes out of the wrong layer: {', '.join(wrong)}. Query, key and "
                     "value each do their own job with an nn.Linear of their own: "
                     "q = self.query(x), k = self.key(x), v = self.value(x)")


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


def diagnose_error(error):
    return layer_shape_diagnosis(error, "ex3")
