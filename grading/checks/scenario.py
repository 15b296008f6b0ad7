"""The scenario side of a test: grade marks, shape sets, drawing inputs, setting weights.

A *scenario* is a plain function `(ex, generator, **params) -> outputs`, where `ex` is an exercise
module: the learner's through grading.judge.remote (each call a request to the worker) or the
solution's. It runs in the judge both times, with generators seeded alike: drawing inputs,
perturbing them, every comparison happens in the judge, where the submission cannot reach.
"""
import pytest
import torch
import torch.nn as nn

from grading.errors import Mismatch, WorkerFailure
from grading.i18n import Bi

# Shape sets that expose silent bugs: B > 1, T < block_size, T != head_size,
# head_size != n_embd (both ways) and vocab_size != n_embd; and B = T = 1, where a squeeze()
# drops the batch and the time dimensions (a learner's text has one example of one token).
SHAPES = [
    dict(B=2, T=5, n_embd=12, head_size=8, block_size=8, vocab_size=11),
    dict(B=3, T=8, n_embd=16, head_size=4, block_size=8, vocab_size=20),
    dict(B=4, T=3, n_embd=6, head_size=10, block_size=9, vocab_size=5),
    dict(B=1, T=1, n_embd=10, head_size=6, block_size=4, vocab_size=13),
]


# A causality check changes the future of every position of a short sequence (up to
# MOST_POSITIONS); of a long one, of LONG_SAMPLE positions drawn afresh (a few: a loop over
# positions, slow but right, must stay well within its time).
MOST_POSITIONS, LONG_SAMPLE = 16, 2


def positions(gen, T):
    """The positions t whose future a causality check changes, in order: every one up to
    MOST_POSITIONS; beyond, LONG_SAMPLE of them, each with a future. Calls at the long T are
    graded like the others: code cannot be causal where the sequences are short alone."""
    if T <= MOST_POSITIONS:
        return list(range(T))
    return sorted(torch.randperm(T - 1, generator=gen)[:LONG_SAMPLE].tolist())


def public(points, after=()):
    """A public case: a property the lesson states, checkable without the solution.
    `after` names tests of the same file that must pass first: a quality (no loop, no shortcut)
    earns nothing on code that does not compute the right thing."""
    return pytest.mark.grade(points=points, kind="public", after=tuple(after))


def hidden(points):
    """A hidden case: compares with the solution's outputs, so it needs solutions/."""
    return pytest.mark.grade(points=points, kind="hidden")


def randn(generator, *shape):
    return torch.randn(*shape, generator=generator)


def linear_weight(generator, n_in, n_out):
    """A weight for nn.Linear(n_in, n_out), shape (n_out, n_in), scaled like PyTorch's init."""
    return randn(generator, n_out, n_in) * n_in ** -0.5


def draw_qkv(gen, B, T, n_embd, head_size):
    """Inputs for exercises 3 and 6, in a fixed order: the query, key and value weights, then x."""
    return {"query": linear_weight(gen, n_embd, head_size),
            "key": linear_weight(gen, n_embd, head_size),
            "value": linear_weight(gen, n_embd, head_size),
            "x": randn(gen, B, T, n_embd)}


def set_linear(module, name, weight):
    """Copy weight into module.<name>.weight, which must be an nn.Linear(n_embd, head_size)'s."""
    n_out, n_in = weight.shape
    found = module.set(f"{name}.weight", weight)
    if found.get("missing") == name:
        layers = [path[:-len(".weight")] for path, shape, _ in module.parameters()
                  if path.endswith(".weight") and shape == [n_out, n_in]]
        own = "、".join(f"self.{layer}" for layer in layers)
        raise Mismatch(Bi(f"{module.type_name}(…) 建好之后没有 self.{name}：这个练习规定了层的名字，"
                          f"要在 __init__ 里建好 self.{name} = nn.Linear(n_embd, head_size, bias=False)"
                          + (f"（现有的层是 {own}）" if layers else ""),
                          f"{module.type_name}(…) has no self.{name} once built: the exercise fixes the "
                          f"layers' names, and __init__ builds self.{name} = "
                          "nn.Linear(n_embd, head_size, bias=False)"
                          + (f" (its layers are {', '.join(f'self.{x}' for x in layers)})"
                             if layers else "")),
                       key="layer_missing", layer=name, layers=layers)
    if "shape" not in found:
        kind = module.inspect(name).get("type", "")
        raise Mismatch(Bi(f"self.{name} 没有 .weight：它应当是一个 nn.Linear",
                          f"self.{name} has no .weight: it should be an nn.Linear"),
                       key="linear_kind", layer=name, kind=kind)
    if found["shape"] != [n_out, n_in]:
        shape = tuple(found["shape"])
        raise Mismatch(Bi(f"self.{name}.weight 的形状是 {shape}，而 nn.Linear(n_embd="
                          f"{n_in}, head_size={n_out}) 的是 ({n_out}, {n_in})",
                          f"self.{name}.weight has shape {shape}, but "
                          f"nn.Linear(n_embd={n_in}, head_size={n_out}) has ({n_out}, {n_in})"),
                       key="linear_shape", shape=shape, n_embd=n_in, head_size=n_out, layer=name)


def set_embedding(module, weight):
    """Copy weight into module.token_embedding_table.weight, a (vocab_size, n_embd) table."""
    vocab_size, n_embd = weight.shape
    found = module.set("token_embedding_table.weight", weight)
    if found.get("missing") == "token_embedding_table":
        raise Mismatch(Bi("TokenEmbedding(vocab_size, n_embd) 建好之后没有 self.token_embedding_table：这张表要在 "
                          "__init__ 里建一次，self.token_embedding_table = nn.Embedding(vocab_size, n_embd)，"
                          "forward 里只负责查表",
                          "TokenEmbedding(vocab_size, n_embd) has no self.token_embedding_table once "
                          "built: the table belongs in __init__, built once, "
                          "self.token_embedding_table = nn.Embedding(vocab_size, n_embd); forward only "
                          "looks ids up in it"), key="embedding_missing")
    if "shape" not in found:
        kind = module.inspect("token_embedding_table").get("type", "")
        raise Mismatch(Bi(f"self.token_embedding_table 是 {kind}，没有 .weight 这张表：它应当是 "
                          "nn.Embedding(vocab_size, n_embd)",
                          f"self.token_embedding_table is a {kind} with no .weight table: it should be "
                          "an nn.Embedding(vocab_size, n_embd)"), key="embedding_kind", kind=kind)
    if found["shape"] != [vocab_size, n_embd]:
        shape = tuple(found["shape"])
        raise Mismatch(Bi(f"self.token_embedding_table.weight 的形状是 {shape}，而 "
                          f"nn.Embedding(vocab_size={vocab_size}, n_embd={n_embd}) 的是 "
                          f"({vocab_size}, {n_embd})",
                          f"self.token_embedding_table.weight has shape {shape}, but "
                          f"nn.Embedding(vocab_size={vocab_size}, n_embd={n_embd}) has "
                          f"({vocab_size}, {n_embd})"),
                       key="embedding_shape", shape=shape, vocab_size=vocab_size, n_embd=n_embd,
                       kind=module.inspect("token_embedding_table").get("type", ""))


def raises(call, *args):
    """The name of the exception the learner's call raised, or "" when it returned."""
    try:
        call(*args)
        return ""
    except WorkerFailure as failure:
        if failure.kind != "raised":
            raise
        return failure.error.get("type", "")


def trainable_shapes(module):
    return [shape for _, shape, requires_grad in module.parameters() if requires_grad]


def returned_or_raised(call, *args):
    """(what the learner's call returned, "") or (None, the name of the exception it raised)."""
    try:
        return call(*args), ""
    except WorkerFailure as failure:
        if failure.kind != "raised":
            raise
        return None, failure.error.get("type", "") or "Exception"


def perturbed_tokens(module, again, gen, B, T, n_embd, vocab_size):
    """Causality at the token level, as the lesson demands it: `module` called
    through a plain embedding drawn here, on idx, on idx with the tokens after t redrawn (each t
    of positions(gen, T)), on idx with token t itself changed (each t), on idx once more (is
    forward repeatable?), and on one more idx with the tokens after a random t redrawn, by
    `module` and by `again` (the same module built in a second worker: does an output depend on
    earlier calls?). (the positions, their 2·len + 4 outputs).
    No token appears twice in one call (the vocabulary is made large enough): each call's x is
    B·T distinct unit-Gaussian rows, as a fresh draw's is, so nothing in a call tells it from
    the calls the other checks make."""
    vocab_size = max(vocab_size, 4 * B * T)
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

    def at(t):  # idx with a different token at position t
        changed = idx.clone()
        changed[:, t] = fresh(B)
        return changed

    ts = positions(gen, T)
    with torch.no_grad():
        outs = [module(embedding(x)) for x in [idx, *map(after, ts), *map(at, ts), idx]]
        changed = after(int(torch.randint(0, T, (1,), generator=gen)))
        return ts, outs + [module(embedding(changed)), again(embedding(changed))]
