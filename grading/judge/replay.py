"""The judge's replay of a worker's record: verify how a call computes, don't guess it.

A worker shows the work of one call as data (grading.worker.executor.Executor.trace): each aten operation
it reached, in order, with its arguments as references to the call's inputs, to earlier results,
to the object's tensors at attribute paths the judge names, or constants. Nothing in a record is
trusted. The judge runs it itself, on inputs of its own:

- only operations of ALLOWED, pure tensor operations that read no file, draw no random number
  and are not PyTorch's ready-made attention; uninitialised memory (torch.empty, as Megatron's
  baddbmm with beta=0 uses) is made here already filled, with NaN, so the judge's old values never
  show and code that reads such memory never agrees with its replay;
- each operation's size bounded before it runs, from its arguments' shapes (MAX_ELEMENTS per
  result, MAX_WORK in all);
- on the judge's own tensors (copies: an in-place operation changes nothing of the judge's).

A record that replays to the values the learner's code returns for inputs it had not seen when it
made the record *is* that code's computation, as far as any grader can tell; a forged one passes
only if it is itself a right computation. Its length says whether the code loops (it grows with
T), its operations whether it used ready-made attention. What ran outside torch (numpy, Python
arithmetic on numbers read out of tensors) is in no record: the replay then gives other values on
new inputs, and the check says so.
"""
import math

import torch

from grading.errors import ReplayError

MAX_OPS = 4000  # operations in one record (grading.worker.executor.MAX_RECORD)
MAX_ELEMENTS = 1 << 22  # entries of one result
MAX_WORK = 1 << 26  # bounds of all results together

# PyTorch's ready-made attention, by its own operators' names (never the learner's names):
# _scaled_dot_product_flash_attention_for_cpu, _native_multi_head_attention,
# _transformer_encoder_layer_fwd, …, and _safe_softmax, the softmax that sdpa's math path
# decomposes into. They are replayed like any pure operation, so that every other check still
# verifies what such code computes; only "built by hand" fails on them.
ATTENTION = ("attention", "transformer_encoder", "_safe_softmax")

# Structural operations, reductions, products, factories that fill what they make, indexing.
# Pointwise operations (torch.Tag.pointwise) are allowed as well, except those that draw random
# numbers; see allowed().
_NAMED = set("""
    view _unsafe_view reshape alias detach t transpose permute expand expand_as unsqueeze squeeze
    flatten unflatten contiguous clone copy copy_ _to_copy to lift_fresh lift_fresh_copy
    slice select narrow index index_select gather take_along_dim index_put
    index_put_ _index_put_impl_ masked_fill masked_fill_ where tril triu tril_ triu_ diagonal
    tril_indices triu_indices diag diag_embed masked_select nonzero movedim swapaxes mT mH split split_with_sizes chunk unbind cat stack hstack
    vstack flip roll repeat tile constant_pad_nd pad
    mm bmm matmul addmm baddbmm addbmm dot vdot mv outer einsum linear tensordot
    sum mean prod amax amin max min argmax argmin logsumexp var std var_mean std_mean norm
    linalg_vector_norm cumsum cumprod cummax cummin sort argsort topk all any count_nonzero
    softmax _softmax log_softmax _log_softmax
    ones zeros full arange eye scalar_tensor ones_like zeros_like full_like new_ones new_zeros
    new_full fill fill_ zero_ linspace
    embedding isinf isnan isfinite nan_to_num clamp clamp_min clamp_max clip
    """.split())
_REFUSED = {"_local_scalar_dense", "item", "equal", "is_nonzero", "set_", "resize_",
            "as_strided", "as_strided_", "from_file", "_assert_async", "_print"}
# Allocations of uninitialised memory: replayed as allocations filled (see _filled).
_UNINITIALISED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
_MATMUL = {"mm", "bmm", "matmul", "addmm", "baddbmm", "addbmm", "dot", "vdot", "mv", "outer",
           "einsum", "linear", "tensordot"}  # their results: at most the product of two inputs
_DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool)}
_LAYOUTS = {"strided": torch.strided}
_FORMATS = {str(f).removeprefix("torch."): f for f in (
    torch.contiguous_format, torch.preserve_format, torch.channels_last)}


def operator_name(name):
    """'aten.mm.default' → 'mm'; anything not in the aten namespace → ''."""
    parts = name.split(".") if isinstance(name, str) else []
    return parts[1] if len(parts) == 3 and parts[0] == "aten" else ""


def resolve(name):
    """The aten operator overload a record names, if the judge replays it; else ReplayError."""
    op = operator_name(name)
    if not op:
        raise ReplayError("operation", f"{name!r} is not one of PyTorch's aten operators",
                          str(name)[:80])
    if op in _REFUSED:
        kind = "outside" if op in ("_local_scalar_dense", "item", "equal", "is_nonzero") \
            else "operation"
        raise ReplayError(kind, f"{op} is not replayed", op)
    try:
        overload = getattr(getattr(torch.ops.aten, op), name.split(".")[2])
    except (AttributeError, RuntimeError):
        raise ReplayError("operation", f"{name!r} is no operator of this PyTorch", op) from None
    if not allowed(op, overload):
        raise ReplayError("operation", f"{op} is not replayed", op)
    return overload


def _filled(overload, fill):
    """An empty-like allocation whose entries are NaN (the largest value for integers, True for
    bool), never what the memory held before; fill=0: zeros (to see whether a result reads it)."""
    def allocate(*args, **kwargs):
        made = overload(*args, **kwargs)
        if fill == 0:
            return made.zero_()
        if made.dtype == torch.bool:
            return made.fill_(True)
        return made.fill_(float("nan") if made.is_floating_point() or made.is_complex()
                          else torch.iinfo(made.dtype).max)
    return allocate


def reads_uninitialised(record, inputs, params=None):
    """True when the record's result depends on what its uninitialised allocations hold (the
    replay with them NaN and with them 0 differ): torch.empty read, baddbmm without beta=0."""
    ops = record.get("ops") if isinstance(record, dict) else None
    if not isinstance(ops, list) or not any(
            isinstance(op, list) and op and operator_name(op[0]) in _UNINITIALISED for op in ops):
        return False
    try:
        return not same(replay(record, inputs, params), replay(record, inputs, params, fill=0))
    except ReplayError:
        return False


def _known(name):
    """The aten overload a name gives, whether replayed or not; None if there is none."""
    op = operator_name(name)
    try:
        return getattr(getattr(torch.ops.aten, op), name.split(".")[2]) if op else None
    except (AttributeError, RuntimeError):
        return None


def allowed(op, overload):
    if op in _NAMED or op.rstrip("_") in _NAMED or op in _UNINITIALISED or is_attention(op):
        return True
    tags = getattr(overload, "tags", ())
    return torch.Tag.pointwise in tags and torch.Tag.nondeterministic_seeded not in tags


def attention_used(record):
    """The ready-made attention a record names (each once, by its operator's own name)."""
    ops = record.get("ops") if isinstance(record, dict) else None
    names = [operator_name(op[0]) for op in ops if isinstance(op, list) and op] \
        if isinstance(ops, list) else []
    return sorted({n for n in names if is_attention(n)})


def is_attention(op):
    return any(word in op for word in ATTENTION)


def length(record):
    ops = record.get("ops") if isinstance(record, dict) else None
    return len(ops) if isinstance(ops, list) else None


def check(record):
    """The operator of each entry; ReplayError if the record cannot be replayed at all (before
    any input is chosen)."""
    if not isinstance(record, dict) or not isinstance(record.get("ops"), list):
        raise ReplayError("malformed", "no record of operations came back")
    if record.get("truncated") is True or len(record["ops"]) > MAX_OPS:
        raise ReplayError("size", f"more than {MAX_OPS} operations in one call")
    for op in record["ops"]:
        if not (isinstance(op, list) and len(op) == 3 and isinstance(op[0], str)
                and isinstance(op[1], list) and isinstance(op[2], dict)):
            raise ReplayError("malformed", "an entry of the record is not [name, args, kwargs]")
    for op in record["ops"]:  # randomness first: it explains the rest (dropout's empty_like)
        overload = _known(op[0])
        if overload is not None and torch.Tag.nondeterministic_seeded in overload.tags:
            raise ReplayError("random", f"{operator_name(op[0])} draws random numbers",
                              operator_name(op[0]))
    return [resolve(op[0]) for op in record["ops"]]


def replay(record, inputs, params=None, fill=None):
    """The output the record computes for `inputs` (the call's arguments) and `params` ({path:
    tensor}): a tensor, or a tuple of them. Raises ReplayError when it cannot be verified.
    Uninitialised allocations come filled with NaN (fill=0: with zeros)."""
    overloads = check(record)
    overloads = [_filled(overload, fill) if operator_name(op[0]) in _UNINITIALISED else overload
                 for op, overload in zip(record["ops"], overloads)]
    params = {k: v.clone() for k, v in (params or {}).items()}
    inputs = [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs]
    results, work = [], [0]

    def value(ref, depth=0):
        kind = type(ref)
        if kind is list or kind is tuple:
            if depth > 8:
                raise ReplayError("malformed", "a reference nested too deeply")
            return [value(r, depth + 1) for r in ref]
        if kind is not dict:
            if ref is None or kind in (bool, int, float, str):
                return ref  # a str: einsum's equation, a reduction's mode
            raise ReplayError("malformed", f"an argument of type {kind.__name__}")
        if len(ref) == 1:
            (kind, x), = ref.items()
            found = _RESOLVERS.get(kind, _unresolved)(x, inputs, results, params)
            if found is not None:
                return found
        raise ReplayError("malformed", "a reference the judge cannot resolve")

    for (name, args, kwargs), overload in zip(record["ops"], overloads):
        op = operator_name(name)
        call_args, call_kwargs = value(args), {str(k): value(v) for k, v in kwargs.items()}
        work[0] += _bound(op, overload, call_args, call_kwargs)
        if work[0] > MAX_WORK:
            raise ReplayError("size", "the record does more work than one call of a head needs",
                              op)
        try:
            result = overload(*call_args, **call_kwargs)
        except Exception as error:  # noqa: BLE001  (an operation that does not run as recorded)
            first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            raise ReplayError("malformed", f"{op} does not run on new inputs: {first}",
                              op) from None
        results.append(result)
    output = record.get("output")
    if isinstance(output, dict) and "opaque" in output:
        raise ReplayError("malformed", "the call returned no tensor")
    return tuple(value(output)) if isinstance(output, list) else value(output)


def _output(x, inputs, results, params):
    if type(x) is list and len(x) == 2 and type(x[0]) is int and type(x[1]) is int \
            and 0 <= x[0] < len(results):
        produced = results[x[0]]
        produced = produced if isinstance(produced, (list, tuple)) else [produced]
        if 0 <= x[1] < len(produced) and isinstance(produced[x[1]], torch.Tensor):
            return produced[x[1]]
    return None


def _unresolved(x, inputs, results, params):
    return None


# How each kind of reference is resolved, or None: {"in": i}, {"out": [k, j]}, {"param": path},
# {"const": tensor}, and the non-tensor arguments torch's operators take.
_RESOLVERS = {
    "in": lambda x, inputs, results, params: inputs[x]
    if type(x) is int and 0 <= x < len(inputs) else None,
    "out": _output,
    "param": lambda x, inputs, results, params: params.get(x) if type(x) is str else None,
    "const": lambda x, inputs, results, params: x.clone() if type(x) is torch.Tensor else None,
    "dtype": lambda x, *_: _DTYPES.get(x) if type(x) is str else None,
    "device": lambda x, *_: torch.device("cpu") if x == "cpu" else None,
    "layout": lambda x, *_: _LAYOUTS.get(x) if type(x) is str else None,
    "memory_format": lambda x, *_: _FORMATS.get(x) if type(x) is str else None,
}


def _bound(op, overload, args, kwargs):
    """An upper bound, before the operation runs, of the entries it makes (and, for products, of
    its multiply-adds): ReplayError beyond MAX_ELEMENTS."""
    tensors, sizes, numbers = [], [], []

    def sort(v):
        if isinstance(v, torch.Tensor):
            tensors.append(v)
        elif isinstance(v, list):
            if v and all(type(n) is int for n in v):
                sizes.append(v)
            for item in v:
                sort(item)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            numbers.append(abs(v) if v == v and abs(v) != float("inf") else 0)

    for v in [*args, *kwargs.values()]:
        sort(v)
    counts = sorted((t.numel() for t in tensors), reverse=True) or [1]
    biggest = counts[0]
    if torch.Tag.pointwise in getattr(overload, "tags", ()) or op in ("where", "masked_fill",
                                                                       "masked_fill_"):
        bound = math.prod(_broadcast(t.shape for t in tensors))
    elif op in ("ones", "zeros", "full", "new_ones", "new_zeros", "new_full", "expand",
                "view", "_unsafe_view", "reshape", "fill", "scalar_tensor", "empty",
                "new_empty", "empty_strided", "new_empty_strided"):
        bound = max([biggest] + [math.prod(abs(n) for n in size) for size in sizes])
    elif op in ("repeat", "tile", "constant_pad_nd", "pad"):
        bound = biggest * max([1] + [math.prod(1 + abs(n) for n in size) for size in sizes])
    elif op in ("arange", "linspace", "eye"):
        bound = int(max([1] + numbers)) ** (2 if op == "eye" else 1) + 1
    elif op in ("cat", "stack", "hstack", "vstack"):
        bound = sum(counts)
    elif is_attention(op):  # a product of queries and keys inside: as many as two inputs
        bound = counts[0] * (counts[1] if len(counts) > 1 else 1)
    elif op in _PRODUCTS:
        bound = _product(op, [t.shape for t in tensors])
        work = bound * max([1] + [t.shape[-1] for t in tensors if t.dim()])  # multiply-adds
        if bound <= MAX_ELEMENTS:
            return bound + work
    elif op in ("index_put", "index_put_", "_index_put_impl_"):  # into a copy of self, or self
        bound = tensors[0].numel() if tensors else 1
    elif op in ("triu_indices", "tril_indices"):  # (2, up to row · col)
        bound = 2 * math.prod(int(n) for n in numbers[:2]) + 1
    elif op in ("diag", "diag_embed"):  # a vector becomes a matrix
        bound = biggest * biggest
    elif op in ("masked_select", "nonzero"):  # at most an entry (and its index) per entry
        bound = biggest * (1 if op == "masked_select" else max(t.dim() for t in tensors))
    elif len(counts) > 1 and op in _MATMUL | {"index", "gather", "index_select",
                                              "take_along_dim", "embedding"}:
        bound = counts[0] * counts[1]
    else:  # views, slices, reductions, softmax, tril, clones, sorts: never more than an input
        bound = biggest
    if bound > MAX_ELEMENTS:
        raise ReplayError("size", f"{op} would make up to {bound} entries", op)
    return bound


_PRODUCTS = {"mm", "bmm", "addmm", "baddbmm", "addbmm", "dot", "vdot", "mv"}


def _product(op, shapes):
    """The entries a matrix product makes, from its operands' shapes (the last two: a @ b)."""
    if op in ("dot", "vdot"):
        return 1
    a, b = (shapes[-2:] if len(shapes) >= 2 else [(1,), (1,)])
    if op == "mv" or len(a) < 2 or len(b) < 2:
        return a[0] if a else 1
    batch = a[0] if op in ("bmm", "baddbmm") and len(a) == 3 else 1
    return batch * a[-2] * b[-1]


def _broadcast(shapes):
    """The broadcast shape's sizes, or an upper bound of them where the shapes do not broadcast
    (then the operation itself raises). torch.broadcast_shapes would import sympy: a second."""
    sizes = []
    for shape in shapes:
        shape = list(shape)[::-1]
        sizes += [1] * (len(shape) - len(sizes))
        sizes = [max(a, b) for a, b in zip(sizes, shape + [1] * (len(sizes) - len(shape)))]
    return sizes


def same(a, b, atol=1e-5, rtol=1e-5):
    """Two outputs (tensors, or tuples of them) agree, NaN where NaN."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same(x, y, atol, rtol) for x, y in zip(a, b))
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape \
            or a.is_complex() or b.is_complex():
        return False
    a, b = a.detach().double(), b.detach().double()
    return bool(torch.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True))

