"""Exercise 3 · query, key, value (查询、键、值): three Linear(n_embd, head_size, bias=False)."""
import torch

from grading.testkit import SHAPES, expect_close, expect_sequence, expect_tensor, fail, hidden, \
    linear_weight, public, randn, set_linear

NAMES = ("q", "k", "v")


# -- scenarios ------------------------------------------------------------------------------------

def project(ex, gen, B, T, n_embd, head_size, zero_input=False):
    m = ex.QKV(n_embd, head_size)
    for name in ("query", "key", "value"):
        set_linear(m, name, linear_weight(gen, n_embd, head_size))
    m.eval()
    x = torch.zeros(B, T, n_embd) if zero_input else randn(gen, B, T, n_embd)
    with torch.no_grad():
        return m(x)


def layer_shapes(ex, gen, n_embd, head_size):
    m = ex.QKV(n_embd, head_size)
    return {name: list(getattr(getattr(m, name, None), "weight", torch.empty(0)).shape)
            for name in ("query", "key", "value")}


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "n_embd", "head_size")}


def three(got, shape):
    q_k_v = expect_sequence(got, "forward(x)", 3)
    size = (shape["B"], shape["T"], shape["head_size"])
    return [expect_tensor(t, n, size, ("B", "T", "head_size")) for t, n in zip(q_k_v, NAMES)]


# -- tests ----------------------------------------------------------------------------------------

@public(3)
def test_shapes(submission):
    """forward returns (q, k, v), each (B, T, head_size)"""
    for shape in SHAPES:
        three(submission(project, **sizes(shape)), shape)


@public(2)
def test_layers(submission):
    """query, key and value are nn.Linear(n_embd, head_size) layers"""
    shape = SHAPES[0]
    got = submission(layer_shapes, n_embd=shape["n_embd"], head_size=shape["head_size"])
    want = [shape["head_size"], shape["n_embd"]]
    for name in ("query", "key", "value"):
        if got[name] != want:
            fail(f"self.{name}.weight has shape {tuple(got[name])}; nn.Linear(n_embd, head_size) "
                 f"has weight shape (head_size, n_embd) = {tuple(want)}")


@public(2)
def test_no_bias(submission):
    """a zero input gives zero q, k and v (the layers have bias=False)"""
    for shape in SHAPES[:2]:
        for t, name in zip(three(submission(project, zero_input=True, **sizes(shape)), shape),
                           NAMES):
            if t.abs().max() > 1e-6:
                fail(f"{name} is not 0 for an all-zero input: the layer adds a bias; the lesson "
                     "uses nn.Linear(n_embd, head_size, bias=False)")


@hidden(8)
def test_matches_reference(compare):
    """q, k and v match the reference, in that order, three shape sets"""
    for shape in SHAPES:
        got, want = compare(project, **sizes(shape))
        got = three(got, shape)
        for t, w, name in zip(got, want, NAMES):
            expect_close(t, w, name, ("B", "T", "head_size"))
