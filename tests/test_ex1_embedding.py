"""Exercise 1 · token embedding (先升级表示): (B, T) ids → (B, T, n_embd) vectors."""
import torch

from grading.testkit import SHAPES, expect_close, expect_tensor, fail, hidden, public, randn, \
    set_embedding


# -- scenarios: run on the submission in a worker and on the solution in the judge ----------------

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


def trainable_shapes(ex, gen, vocab_size, n_embd):
    m = ex.TokenEmbedding(vocab_size, n_embd)
    return [list(p.shape) for p in m.parameters() if p.requires_grad]


def out_of_range(ex, gen, B, T, vocab_size, n_embd):
    """For each bad id, the name of the exception it raised, or "" when forward returned."""
    m = ex.TokenEmbedding(vocab_size, n_embd)
    m.eval()
    outcomes = []
    for bad in (vocab_size, vocab_size + 3, -1):
        idx = torch.randint(0, vocab_size, (B, T), generator=gen)
        idx[B - 1, T - 1] = bad
        try:
            with torch.no_grad():
                m(idx)
            outcomes.append("")
        except IndexError:
            outcomes.append("IndexError")
    return outcomes


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "vocab_size", "n_embd")}


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_shape(submission):
    """forward gives one n_embd vector per token: (B, T, n_embd)"""
    for shape in SHAPES:
        expect_tensor(submission(embed, **sizes(shape)), "forward(idx)",
                      (shape["B"], shape["T"], shape["n_embd"]), ("B", "T", "n_embd"))


@public(2)
def test_rows_of_the_table(submission):
    """each token's vector is its own row of token_embedding_table"""
    for shape in SHAPES:
        got = submission(embed, **sizes(shape))
        inputs = submission.inputs(draw, **sizes(shape))
        want = inputs["table"][inputs["idx"]]  # (B, T, n_embd): row idx[b, t] of the table
        expect_close(got, want, "forward(idx)", ("B", "T", "n_embd"),
                     source="its row of the table is")


@public(1)
def test_table_is_a_parameter(submission):
    """the vocab_size × n_embd table is a trainable parameter of the module"""
    vocab_size, n_embd = SHAPES[0]["vocab_size"], SHAPES[0]["n_embd"]
    shapes = submission(trainable_shapes, vocab_size=vocab_size, n_embd=n_embd)
    if [vocab_size, n_embd] not in shapes:
        fail(f"no trainable parameter of shape (vocab_size, n_embd) = ({vocab_size}, {n_embd}) "
             f"(the module's have shapes {shapes}): store the nn.Embedding on self")


@public(2)
def test_ids_out_of_range_raise(submission):
    """token ids outside [0, vocab_size) raise IndexError instead of being wrapped into range"""
    shape = SHAPES[0]
    outcomes = submission(out_of_range, **sizes(shape))
    for bad, outcome in zip((shape["vocab_size"], shape["vocab_size"] + 3, -1), outcomes):
        if outcome != "IndexError":
            fail(f"token id {bad} with vocab_size={shape['vocab_size']} should raise IndexError, "
                 "but forward returned a result: an id outside the vocabulary is a bug to report, "
                 "not to wrap into range")


@hidden(3)
def test_matches_reference(compare):
    """matches the reference on fresh random ids, three shape sets"""
    for shape in SHAPES:
        got, want = compare(embed, **sizes(shape))
        expect_close(got, want, "forward(idx)", ("B", "T", "n_embd"))
