"""What the test files use: grade marks, shape sets, scenario helpers and judge-side checks.

A *scenario* is a plain function `(exercise_module, generator, **params) -> tensors`. It runs in a
worker on the submission and in the judge on the solution, with generators seeded alike, and only
produces outputs: every comparison happens in the judge, where the submission cannot reach.
"""
import pytest
import torch

from grading.protocol import NotATensor

# Shape sets that expose silent bugs: B > 1, T < block_size, T != head_size,
# head_size != n_embd (both ways) and vocab_size != n_embd.
SHAPES = [
    dict(B=2, T=5, n_embd=12, head_size=8, block_size=8, vocab_size=11),
    dict(B=3, T=8, n_embd=16, head_size=4, block_size=8, vocab_size=20),
    dict(B=4, T=3, n_embd=6, head_size=10, block_size=9, vocab_size=5),
]


def public(points):
    """A public case: a property the lesson states, checkable without the solution."""
    return pytest.mark.grade(points=points, kind="public")


def hidden(points):
    """A hidden case: compares with the solution's outputs, so it needs solutions/."""
    return pytest.mark.grade(points=points, kind="hidden")


# -- scenario side (runs in the worker and in the judge) ------------------------------------------

class Mismatch(Exception):
    """The submission's module does not have the structure the exercise's API fixes."""


def randn(generator, *shape):
    return torch.randn(*shape, generator=generator)


def linear_weight(generator, n_in, n_out):
    """A weight for nn.Linear(n_in, n_out), shape (n_out, n_in), scaled like PyTorch's init."""
    return randn(generator, n_out, n_in) * n_in ** -0.5


def set_linear(module, name, weight):
    """Copy weight into module.<name>.weight, which must be an nn.Linear(n_embd, head_size)'s."""
    n_out, n_in = weight.shape
    layer = getattr(module, name, None)
    if layer is None:
        raise Mismatch(f"self.{name} is missing: the exercise needs self.{name} = "
                       f"nn.Linear(n_embd, head_size, bias=False)")
    current = getattr(layer, "weight", None)
    if not isinstance(current, torch.Tensor):
        raise Mismatch(f"self.{name} has no .weight: it should be an nn.Linear")
    if tuple(current.shape) != (n_out, n_in):
        raise Mismatch(f"self.{name}.weight has shape {tuple(current.shape)}, but "
                       f"nn.Linear(n_embd={n_in}, head_size={n_out}) has ({n_out}, {n_in})")
    with torch.no_grad():
        current.copy_(weight)


def set_embedding(module, weight):
    """Copy weight into module.token_embedding_table.weight, a (vocab_size, n_embd) table."""
    vocab_size, n_embd = weight.shape
    table = getattr(module, "token_embedding_table", None)
    current = getattr(table, "weight", None)
    if not isinstance(current, torch.Tensor):
        raise Mismatch("self.token_embedding_table is missing or is not an nn.Embedding")
    if tuple(current.shape) != (vocab_size, n_embd):
        raise Mismatch(f"self.token_embedding_table.weight has shape {tuple(current.shape)}, but "
                       f"nn.Embedding(vocab_size={vocab_size}, n_embd={n_embd}) has "
                       f"({vocab_size}, {n_embd}): are the two dimensions swapped?")
    with torch.no_grad():
        current.copy_(weight)


# -- judge side -----------------------------------------------------------------------------------

class CheckFailed(AssertionError):
    """A check on the submission's outputs failed; the message is what the learner reads."""


def fail(message):
    raise CheckFailed(message)


def shape_text(shape, names=None):
    values = "(" + ", ".join(str(n) for n in shape) + ")"
    return f"({', '.join(names)}) = {values}" if names else values


def index_text(index):
    return "[" + ", ".join(str(i) for i in index) + "]"


def entry(what, index):
    """'out[1, 2]' for a plain name, 'out[:, 0] at [1, 2]' for one that is already indexed."""
    return f"{what} at {index_text(index)}" if "[" in what else f"{what}{index_text(index)}"


def expect_tensor(value, what, shape=None, names=None):
    """The value is a plain tensor of the given shape with no NaN; returns it as float64."""
    if isinstance(value, NotATensor):
        fail(f"{what} should be a torch.Tensor, but your code returned a {value.type_name}: "
             "compute it with torch operations")
    if not isinstance(value, torch.Tensor):
        fail(f"{what} should be a torch.Tensor, but your code returned {_kind(value)}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(f"{what} should have shape {shape_text(shape, names)}, got {shape_text(value.shape)}")
    if value.is_complex():
        fail(f"{what} should be real, got {value.dtype}")
    value = value.to(torch.float64)
    bad = ~torch.isfinite(value)
    if bad.any():
        where = tuple(bad.nonzero()[0].tolist())
        fail(f"{entry(what, where)} is {value[where].item()}: "
             "the output must be finite (a row that is all -inf turns into NaN after softmax)")
    return value


def expect_close(got, want, what, names=None, atol=1e-5, rtol=1e-5, source="the reference gives",
                 hint=""):
    """got matches want elementwise within atol + rtol·|want|, like torch.testing.assert_close.
    `source` says where want comes from: the reference (hidden cases) or the lesson (public);
    `hint`, when given, is a second line that says what the check means."""
    got = expect_tensor(got, what, want.shape, names)
    want = want.to(torch.float64)
    diff = (got - want).abs()
    wrong = diff > atol + rtol * want.abs()
    if wrong.any():
        worst = tuple(torch.nonzero(diff == diff.max())[0].tolist())
        fail(f"{entry(what, worst)} is {got[worst].item():.4g}, {source} "
             f"{want[worst].item():.4g} ({int(wrong.sum())} of {want.numel()} entries differ, "
             f"by up to {diff.max().item():.2g})" + (f"\n{hint}" if hint else ""))


def expect_sequence(value, what, length):
    if not isinstance(value, (tuple, list)) or len(value) != length:
        fail(f"{what} should return {length} tensors, got {_kind(value)}")
    return value


def _kind(value):
    if isinstance(value, NotATensor):
        return f"a {value.type_name}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return "None" if value is None else f"a {type(value).__name__}"


def upper_triangle(t):
    """Mask of the entries above the diagonal of the last two dimensions (the future)."""
    T = t.shape[-1]
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
