"""Exercise 1 · token embedding (先升级表示): (B, T) ids → (B, T, n_embd) vectors."""
import torch

from grading.checks import (
    NO_GRADIENT,
    SHAPES,
    expect_close,
    expect_inputs_unchanged,
    expect_tensor,
    fail,
    hidden,
    public,
    raises,
    randn,
    set_embedding,
    trainable_shapes,
    vjp,
)
from grading.i18n import Bi

# -- scenarios: run on the submission in a worker and on the solution in the judge ---------------

def draw(gen, B, T, vocab_size, n_embd):
    """The test's inputs, drawn in a fixed order from the generator."""
    return {"table": randn(gen, vocab_size, n_embd),
            "idx": torch.randint(0, vocab_size, (B, T), generator=gen)}


def embed(ex, gen, B, T, vocab_size, n_embd):
    m = ex.TokenEmbedding(vocab_size, n_embd)
    inputs = draw(gen, B, T, vocab_size, n_embd)
    set_embedding(m, inputs["table"])
    m.eval()
    with torch.no_grad():
        return m(inputs["idx"])  # (B, T, n_embd)


def inputs_after(ex, gen, B, T, vocab_size, n_embd):
    """The judge's copy of the ids, the ids as the learner's forward left them, and its output."""
    m = ex.TokenEmbedding(vocab_size, n_embd)
    inputs = draw(gen, B, T, vocab_size, n_embd)
    set_embedding(m, inputs["table"])
    m.eval()
    sent = [inputs["idx"].clone()]
    out, after = m.call_inputs(inputs["idx"])
    return sent, after, out


def ids_after(ex, gen, B, T, vocab_size, n_embd):
    """inputs_after without the output: the judge's ids and the ids as forward left them."""
    return inputs_after(ex, gen, B, T, vocab_size, n_embd)[:2]


def parameters(ex, gen, vocab_size, n_embd):
    return trainable_shapes(ex.TokenEmbedding(vocab_size, n_embd))


def frozen_shapes(ex, gen, vocab_size, n_embd):
    """The shapes of the module's parameters that do not train (requires_grad=False)."""
    return [shape for _, shape, trains in ex.TokenEmbedding(vocab_size, n_embd).parameters()
            if not trains]


def draw_learning(gen, vocab_size, n_embd):
    """Two rows of vocab_size ids, the first holding every id once, and a gradient for the
    output: what a training step sends back through the lookup."""
    inputs = draw(gen, 2, vocab_size, vocab_size, n_embd)
    inputs["idx"][0] = torch.randperm(vocab_size, generator=gen)
    inputs["grad_output"] = randn(gen, 2, vocab_size, n_embd)
    return inputs


def learning(ex, gen, vocab_size, n_embd, checked=True):
    """The gradient of Σ grad_output · forward(idx) for the table, or None when it has none."""
    m = ex.TokenEmbedding(vocab_size, n_embd)
    inputs = draw_learning(gen, vocab_size, n_embd)
    set_embedding(m, inputs["table"])
    m.eval()
    reply = vjp(m, [inputs["idx"]], wrt=[], grad_output=inputs["grad_output"],
                parameters=["token_embedding_table.weight"], what="TokenEmbedding.forward", checked=checked)
    grads = reply.get("parameter_grads") if isinstance(reply, dict) else None
    return grads.get("token_embedding_table.weight") if isinstance(grads, dict) else None


def gradient_of_a_lookup(inputs):
    """Row r's gradient is the sum of the output gradients at the positions of id r."""
    table, idx, grad_output = inputs["table"], inputs["idx"], inputs["grad_output"]
    return torch.zeros(table.shape, dtype=torch.float64).index_add_(
        0, idx.reshape(-1), grad_output.reshape(-1, table.shape[1]).double())


def table_in_forward(ex, gen, B, T, vocab_size, n_embd):
    """Whether the module has its table once built, and again once forward has run."""
    m = ex.TokenEmbedding(vocab_size, n_embd)
    built = "missing" not in m.inspect("token_embedding_table")
    raises(m, torch.randint(0, vocab_size, (B, T), generator=gen))
    return built, "missing" not in m.inspect("token_embedding_table")


def embed_twice(ex, gen, B, T, vocab_size, n_embd):
    """Two calls of forward with the same table set and the same ids, few of them (repeated)."""
    m = ex.TokenEmbedding(vocab_size, n_embd)
    set_embedding(m, randn(gen, vocab_size, n_embd))
    m.eval()
    idx = torch.randint(0, 3, (B, T), generator=gen)
    with torch.no_grad():
        return m(idx), m(idx), idx


def table_of_embed_twice(gen, B, T, vocab_size, n_embd):
    """The table embed_twice set, drawn again."""
    return randn(gen, vocab_size, n_embd)


def out_of_range(ex, gen, B, T, vocab_size, n_embd):
    """For each bad id, the name of the exception it raised, or "" when forward returned."""
    m = ex.TokenEmbedding(vocab_size, n_embd)
    m.eval()
    outcomes = []
    for bad in (vocab_size, vocab_size + 3, -1):
        idx = torch.randint(0, vocab_size, (B, T), generator=gen)
        idx[B - 1, T - 1] = bad
        outcomes.append(raises(m, idx))
    return outcomes


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "vocab_size", "n_embd")}


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_shape(submission):
    """forward gives one n_embd vector per token, (B, T, n_embd), of finite numbers
    forward 为每个字给出一个 n_embd 维向量，形状 (B, T, n_embd)，都是有限的数"""
    for shape in SHAPES:
        expect_tensor(submission(embed, **sizes(shape)), "forward(idx)",
                      (shape["B"], shape["T"], shape["n_embd"]), ("B", "T", "n_embd"))


@public(2)
def test_rows_of_the_table(submission):
    """each token's vector is its own row of token_embedding_table
    每个字的向量正是它在 token_embedding_table 中的那一行"""
    for shape in SHAPES:
        got = submission(embed, **sizes(shape))
        inputs = submission.inputs(draw, **sizes(shape))
        want = inputs["table"][inputs["idx"]]  # (B, T, n_embd): row idx[b, t] of the table
        expect_close(got, want, "forward(idx)", ("B", "T", "n_embd"),
                     source=Bi("表中对应的那一行是", "its row of the table is"))


@public(1)
def test_table_is_a_parameter(submission):
    """the vocab_size × n_embd table is a trainable parameter of the module
    vocab_size × n_embd 的表是模块的可训练参数"""
    vocab_size, n_embd = SHAPES[0]["vocab_size"], SHAPES[0]["n_embd"]
    shapes = submission(parameters, vocab_size=vocab_size, n_embd=n_embd)
    if [vocab_size, n_embd] in shapes:
        return
    if [vocab_size, n_embd] in submission(frozen_shapes, vocab_size=vocab_size, n_embd=n_embd):
        fail(f"(vocab_size, n_embd) = ({vocab_size}, {n_embd}) 的表在模块里，但它是冻结的"
             "（requires_grad=False），训练时不会被调整：nn.Embedding.from_pretrained 默认 "
             "freeze=True，要传 freeze=False",
             f"the (vocab_size, n_embd) = ({vocab_size}, {n_embd}) table is there but frozen "
             "(requires_grad=False), so training never adjusts it: nn.Embedding.from_pretrained "
             "has freeze=True by default, pass freeze=False")
    fail(f"模块中没有形状为 (vocab_size, n_embd) = ({vocab_size}, {n_embd}) 的可训练参数"
         f"（现有参数的形状：{shapes}）：在 __init__ 里建好 nn.Embedding，存在 self 上",
         f"no trainable parameter of shape (vocab_size, n_embd) = ({vocab_size}, {n_embd}) "
         f"(the module's have shapes {shapes}): build the nn.Embedding in __init__ and store it "
         "on self")


@public(1, after=["test_table_is_a_parameter", "test_rows_of_the_table"])
def test_every_row_learns(submission):
    """every row of the table gets its gradient: training can change each character's vector
    表的每一行都得到它的梯度：训练能调整每个字的向量"""
    shape = SHAPES[0]
    sizes_ = dict(vocab_size=shape["vocab_size"], n_embd=shape["n_embd"])
    grad = submission(learning, **sizes_)
    want = gradient_of_a_lookup(submission.inputs(draw_learning, **sizes_))
    what = "∂loss/∂token_embedding_table.weight"
    if not isinstance(grad, torch.Tensor):
        fail("self.token_embedding_table.weight 是可训练的参数，却没有得到梯度：forward 的输出和这张表断开了"
             "（torch.no_grad()、.detach() 或 .data），或者不是从它查出来的。训练时这张表就学不到东西",
             "self.token_embedding_table.weight is a trainable parameter but gets no gradient: "
             "forward's output is cut off from it (torch.no_grad(), .detach() or .data), or not "
             "looked up in it. Training could not change the table")
    grad = expect_tensor(grad, what, tuple(want.shape), ("vocab_size", "n_embd"))
    dead = [r for r in range(want.shape[0]) if grad[r].abs().max() <= NO_GRADIENT]
    if dead:
        rows = "、".join(map(str, dead))
        fail((f"表的第 {rows} 行没有得到梯度，尽管这些编号在输入里出现了：训练永远不会改变这些行" if len(dead) > 1
              else f"表的第 {rows} 行没有得到梯度，尽管编号 {rows} 在输入里出现了：训练永远不会改变这一行")
             + "。每个字的那一行都要能学习",
             (f"rows {', '.join(map(str, dead))} of the table get no gradient although "
              "those ids occur in the input: training would never change them" if len(dead) > 1
              else f"row {dead[0]} of the table gets no gradient although that id occurs in the "
              "input: training would never change it") + ". Every character's row must be able "
             "to learn")
    expect_close(grad, want, what, ("vocab_size", "n_embd"),
                 source=Bi("查到这一行的那些位置的输出梯度之和是",
                           "the sum of the output gradients where the row was looked up is"))


@public(1, after=["test_shape"])
def test_inputs_unchanged(submission):
    """forward leaves the ids as they were: no in-place operation on its input
    forward 不改动输入的编号：不对输入做原地运算"""
    for shape in SHAPES:
        sent, after, out = submission(inputs_after, **sizes(shape))
        expect_inputs_unchanged(sent, after, "forward(idx)", ("idx",))
        expect_tensor(out, "forward(idx)", (shape["B"], shape["T"], shape["n_embd"]),
                      ("B", "T", "n_embd"))


@public(1)
def test_ids_out_of_range_raise(submission):
    """token ids outside [0, vocab_size) raise IndexError instead of being wrapped into range
    超出 [0, vocab_size) 的编号报 IndexError，而不是被折回范围内"""
    shape = SHAPES[0]
    outcomes = submission(out_of_range, **sizes(shape))
    for bad, outcome in zip((shape["vocab_size"], shape["vocab_size"] + 3, -1), outcomes):
        if outcome == "":
            fail(f"vocab_size={shape['vocab_size']} 时，编号 {bad} 应当报 IndexError，forward 却返回了"
                 "结果：词表之外的编号是需要报告的错误，不能折回范围内",
                 f"token id {bad} with vocab_size={shape['vocab_size']} should raise IndexError, "
                 "but forward returned a result: an id outside the vocabulary is a bug to report, "
                 "not to wrap into range")
        if outcome != "IndexError":
            fail(f"vocab_size={shape['vocab_size']} 时，编号 {bad} 应当报 IndexError，forward 报的却是 "
                 f"{outcome}：让 nn.Embedding 自己查表，它会报 IndexError",
                 f"token id {bad} with vocab_size={shape['vocab_size']} should raise IndexError, "
                 f"but forward raised {outcome}: let nn.Embedding look it up, it raises IndexError")


@hidden(2)
def test_matches_reference(compare):
    """matches the reference on fresh random ids, four shape sets (B = T = 1 among them)
    在四组形状（其中一组 B = T = 1）的全新随机编号上与参考答案一致"""
    for shape in SHAPES:
        got, want = compare(embed, **sizes(shape))
        expect_close(got, want, "forward(idx)", ("B", "T", "n_embd"))
