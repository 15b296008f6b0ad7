"""Exercise 6 · one attention head (一个完整的注意力头): (B, T, n_embd) → (B, T, head_size)."""
import torch
import torch.nn as nn

from grading.testkit import SHAPES, expect_close, expect_tensor, fail, hidden, linear_weight, \
    public, randn, set_linear

OUT_NAMES = ("B", "T", "head_size")


# -- scenarios ------------------------------------------------------------------------------------

def draw(gen, B, T, n_embd, head_size):
    """The test's inputs, in a fixed order: the three layers' weights, then x."""
    return {"query": linear_weight(gen, n_embd, head_size),
            "key": linear_weight(gen, n_embd, head_size),
            "value": linear_weight(gen, n_embd, head_size),
            "x": randn(gen, B, T, n_embd)}


def build(ex, inputs, n_embd, head_size, block_size):
    head = ex.Head(n_embd, head_size, block_size)
    for name in ("query", "key", "value"):
        set_linear(head, name, inputs[name])
    return head.eval()


def forward(ex, gen, B, T, n_embd, head_size, block_size, zero_input=False):
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    x = torch.zeros_like(inputs["x"]) if zero_input else inputs["x"]
    with torch.no_grad():
        return head(x)  # (B, T, head_size)


def tokens_after_t_changed(ex, gen, B, T, n_embd, head_size, block_size, vocab_size):
    """Through a plain embedding: outputs for idx, for idx with tokens after t redrawn (each t),
    and for idx with token t itself changed (each t). 2T+1 tensors of (B, T, head_size)."""
    inputs = draw(gen, B, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    embedding = nn.Embedding(vocab_size, n_embd)
    with torch.no_grad():
        embedding.weight.copy_(randn(gen, vocab_size, n_embd))
    idx = torch.randint(0, vocab_size, (B, T), generator=gen)
    outs = []
    with torch.no_grad():
        outs.append(head(embedding(idx)))
        for t in range(T):
            changed = idx.clone()
            changed[:, t + 1:] = torch.randint(0, vocab_size, (B, T - t - 1), generator=gen)
            outs.append(head(embedding(changed)))
        for t in range(T):
            changed = idx.clone()
            changed[:, t] = (idx[:, t] + 1) % vocab_size  # a different token at position t
            outs.append(head(embedding(changed)))
    return outs


def jacobian(ex, gen, T, n_embd, head_size, block_size):
    """∂out[0, t, :] / ∂x[0, s, :]: shape (T, head_size, T, n_embd)."""
    inputs = draw(gen, 1, T, n_embd, head_size)
    head = build(ex, inputs, n_embd, head_size, block_size)
    return torch.autograd.functional.jacobian(head, inputs["x"])[0, :, :, 0]


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "n_embd", "head_size", "block_size")}


def checked(value, shape):
    return expect_tensor(value, "forward(x)", (shape["B"], shape["T"], shape["head_size"]),
                         OUT_NAMES)


# -- tests ----------------------------------------------------------------------------------------

@public(3)
def test_shape(submission):
    """forward gives (B, T, head_size), for T below block_size too"""
    for shape in SHAPES:
        checked(submission(forward, **sizes(shape)), shape)


@public(5)
def test_causal_for_every_token(submission):
    """changing the tokens after t never changes the outputs up to t, for every t"""
    for shape in SHAPES:
        T = shape["T"]
        outs = submission(tokens_after_t_changed, vocab_size=shape["vocab_size"], **sizes(shape))
        if not isinstance(outs, list) or len(outs) != 2 * T + 1:
            fail("forward did not return one tensor per call")
        first = checked(outs[0], shape)
        for t in range(T):
            diff = (checked(outs[1 + t], shape)[:, :t + 1] - first[:, :t + 1]).abs()
            if diff.max() > 1e-5:
                s = int(diff.amax(dim=(0, 2)).argmax())
                fail(f"changing the tokens after position {t} changed the output at position {s}: "
                     "the head lets the future in. Mask the scores with tril (sliced to [:T, :T]) "
                     "and −∞ before softmax")
        for t in range(T):
            if (checked(outs[1 + T + t], shape)[:, t] - first[:, t]).abs().max() <= 1e-6:
                fail(f"changing the token at position {t} did not change the output at {t}: "
                     "each position must attend to itself and weight the values")


@public(3)
def test_jacobian(submission):
    """∂out[t] / ∂x[s] ≈ 0 whenever s is after t"""
    shape = SHAPES[0]
    T, H, C = shape["T"], shape["head_size"], shape["n_embd"]
    J = expect_tensor(submission(jacobian, T=T, n_embd=C, head_size=H,
                                 block_size=shape["block_size"]),
                      "the Jacobian of forward", (T, H, T, C))
    leak = J.abs().amax(dim=(1, 3))  # (T, T): largest |∂out[t, :] / ∂x[s, :]|
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    if leak[future].max() > 1e-6:
        t, s = (leak * future == (leak * future).max()).nonzero()[0].tolist()
        fail(f"out[{t}] has a derivative of {leak[t, s]:.3g} with respect to x[{s}], which comes "
             "after it: the future leaks into the past")


@public(2)
def test_first_position_sees_itself(submission):
    """position 0 sees only itself, so its output is its own value vector"""
    for shape in SHAPES:
        out = checked(submission(forward, **sizes(shape)), shape)
        inputs = submission.inputs(draw, **{k: shape[k] for k in ("B", "T", "n_embd", "head_size")})
        value_0 = inputs["x"][:, 0].double() @ inputs["value"].double().T  # (B, head_size)
        expect_close(out[:, 0], value_0, "out[:, 0]", ("B", "head_size"),
                     source="its own value vector is",
                     hint="After the causal mask, row 0 of the weights is [1, 0, …]: position 0 "
                          "attends only to itself, so its output is value(x[:, 0]).")


@public(2)
def test_no_bias(submission):
    """query, key and value have no bias: a zero input gives a zero output"""
    for shape in SHAPES[:2]:
        out = checked(submission(forward, zero_input=True, **sizes(shape)), shape)
        if out.abs().max() > 1e-6:
            fail("the output is not 0 for an all-zero input: a layer adds a bias; the lesson uses "
                 "nn.Linear(n_embd, head_size, bias=False)")


@hidden(10)
def test_matches_reference(compare):
    """matches the reference on fresh random inputs, three shape sets"""
    for shape in SHAPES:
        got, want = compare(forward, **sizes(shape))
        expect_close(got, want, "forward(x)", OUT_NAMES)
