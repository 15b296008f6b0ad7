"""The judge's replay of a worker's record: verify how a call computes, don't guess it.

A worker shows the work of one call as data (grading.worker.executor.Executor.record): each aten operation
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
import hashlib
import json
import math
import time
from dataclasses import dataclass

import torch

from grading.errors import ReplayError
from grading.wire.record import (
    MAX_ELEMENTS,
    fill_uninitialised,
    is_attention,
    operator_name,
)
from grading.wire.record import references as tensor_references

MAX_OPS = 4000  # operations in one record (grading.worker.executor.MAX_RECORD)
MAX_WORK = 1 << 24  # bounds of all results together: a head at the longest T needs ~1e5
MAX_REFERENCES = 20_000  # tensors an operation of a record refers to, all together: a head's
# record refers to about a hundred, a loop over 128 positions to a few thousand
REPLAY_SECONDS = 5.0  # the judge's CPU time for one replay: a head's takes milliseconds
EXERCISE_REPLAY_SECONDS = 30.0  # the judge's CPU time for all replays of one exercise

# PyTorch's ready-made attention, by its own operators' names (never the learner's names):
# _scaled_dot_product_flash_attention_for_cpu, _native_multi_head_attention,
# _transformer_encoder_layer_fwd, …, and _safe_softmax, the softmax that sdpa's math path
# decomposes into. They are replayed like any pure operation, so that every other check still
# verifies what such code computes; only "built by hand" fails on them.

# The operations an attention head has use for: structural ones, reductions, products, factories
# that fill what they make, indexing, and elementary pointwise arithmetic. Each one's cost is
# bounded by its arguments' sizes (see _bound) — none by a value, as the degree of a special
# polynomial would be — so that what the judge replays is bounded by work, not only by sizes.
_NAMED = set("""
    view _unsafe_view reshape alias detach t transpose permute expand expand_as unsqueeze squeeze
    flatten unflatten contiguous clone copy copy_ _to_copy to lift_fresh lift_fresh_copy
    slice select narrow index index_select gather take_along_dim index_put
    index_put_ _index_put_impl_ masked_fill masked_fill_ where tril triu tril_ triu_ diagonal
    tril_indices triu_indices diag diag_embed masked_select nonzero movedim swapaxes mT mH split
    split_with_sizes chunk unbind cat stack hstack vstack flip roll repeat tile constant_pad_nd pad
    mm bmm matmul addmm baddbmm addbmm dot vdot mv outer einsum linear tensordot
    sum mean prod amax amin max min argmax argmin logsumexp var std var_mean std_mean norm
    linalg_vector_norm cumsum cumprod cummax cummin sort argsort topk all any count_nonzero
    softmax _softmax log_softmax _log_softmax
    ones zeros full arange eye scalar_tensor ones_like zeros_like full_like new_ones new_zeros
    new_full fill fill_ zero_ linspace
    embedding isinf isnan isfinite nan_to_num clamp clamp_min clamp_max clip
    add sub rsub mul div true_divide floor_divide remainder fmod neg negative positive abs
    reciprocal exp exp2 expm1 log log2 log10 log1p sqrt rsqrt pow square sigmoid tanh relu gelu
    silu softplus erf sign sgn floor ceil round trunc frac maximum minimum fmax fmin lerp addcmul
    addcdiv isclose eq ne lt le gt ge greater less greater_equal less_equal logical_and logical_or
    logical_not logical_xor bitwise_and bitwise_or bitwise_not bitwise_xor sin cos hardtanh
    leaky_relu elu threshold xlogy copysign _conj conj resolve_conj resolve_neg
    """.split())
# Reads of a tensor into Python (an assert, a print, a bounds check) replay: they are part of the
# program, and give a number nothing else depends on, or one the data path uses (see Work).
_READS = {"_local_scalar_dense", "item", "equal", "allclose", "is_nonzero", "is_same_size",
          "_is_all_true", "_is_any_true", "_assert_async", "_assert_scalar", "sym_constrain_range"}
_REFUSED = {"set_", "resize_", "as_strided", "as_strided_", "from_file", "_print"}
_UNINITIALISED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
_MATMUL = {"mm", "bmm", "matmul", "addmm", "baddbmm", "addbmm", "dot", "vdot", "mv", "outer",
           "einsum", "linear", "tensordot"}  # their results: at most the product of two inputs
_DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool)}
_LAYOUTS = {"strided": torch.strided}
_FORMATS = {str(f).removeprefix("torch."): f for f in (
    torch.contiguous_format, torch.preserve_format, torch.channels_last)}


_RESOLVED = {}  # name -> its overload, or the ReplayError it raises: a record repeats names


def resolve(name):
    """The aten operator overload a record names, if the judge replays it; else ReplayError."""
    found = _RESOLVED.get(name) if isinstance(name, str) else None
    if found is None:
        try:
            found = _resolve(name)
        except ReplayError as error:
            found = error
        if isinstance(name, str) and len(_RESOLVED) < 10_000:
            _RESOLVED[name] = found
    if isinstance(found, ReplayError):
        raise ReplayError(found.kind, str(found), found.name)
    return found


def _resolve(name):
    op = operator_name(name)[:80]  # (a name in a record is the worker's text: shown bounded)
    if not op:
        raise ReplayError("operation", f"{str(name)[:80]!r} is not one of PyTorch's aten "
                          "operators", str(name)[:80])
    if op in _REFUSED:
        raise ReplayError("operation", f"{op} is not replayed", op)
    try:
        overload = getattr(getattr(torch.ops.aten, op), name.split(".")[2])
    except (AttributeError, RuntimeError):
        raise ReplayError("operation", f"{name[:160]!r} is no operator of this PyTorch",
                          op) from None
    if not allowed(op, overload):
        raise ReplayError("operation", f"{op} is not replayed", op)
    return overload


def _filled(overload, fill):
    """An empty-like allocation filled as the worker fills it (grading.wire.record), never with
    what the memory held before; fill=0: zeros (to see whether a result reads it)."""
    def allocate(*args, **kwargs):
        made = overload(*args, **kwargs)
        return made.zero_() if fill == 0 else fill_uninitialised(made)
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
    """Named here (in place too: add_), or ready-made attention; never a random one."""
    if is_attention(op):
        return True
    if torch.Tag.nondeterministic_seeded in getattr(overload, "tags", ()):
        return False
    return op in _NAMED or op.rstrip("_") in _NAMED or op in _UNINITIALISED or op in _READS


def attention_used(record):
    """The ready-made attention a record names (each once, by its operator's own name), and the
    ready-made functions its call reached (record["ready_made"]: on a torch whose
    F.scaled_dot_product_attention decomposes into plain operations, 2.4, only that shows it)."""
    ops = record.get("ops") if isinstance(record, dict) else None
    names = [operator_name(op[0]) for op in ops if isinstance(op, list) and op] \
        if isinstance(ops, list) else []
    called = record.get("ready_made") if isinstance(record, dict) else None
    names += [n for n in called if isinstance(n, str)] if isinstance(called, list) else []
    return sorted({n[:80] for n in names if is_attention(n)})


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
    if sum(map(len, _walked(record))) > MAX_REFERENCES:
        raise ReplayError("size", f"more than {MAX_REFERENCES} tensors referred to in one call")
    for op in record["ops"]:
        if not (isinstance(op, list) and len(op) in (3, 4) and isinstance(op[0], str)
                and isinstance(op[1], list) and isinstance(op[2], dict)):
            raise ReplayError("malformed",
                              "an entry of the record is not [name, args, kwargs, where]")
    for name in dict.fromkeys(op[0] for op in record["ops"]):  # randomness first: it explains
        overload = _known(name)  # the rest (ready-made attention is tagged random: dropout)
        if overload is not None and torch.Tag.nondeterministic_seeded in overload.tags \
                and not is_attention(operator_name(name)):
            raise ReplayError("random", f"{operator_name(name)} draws random numbers",
                              operator_name(name))
    overloads = [resolve(op[0]) for op in record["ops"]]
    outside = made_outside(record)
    if outside is not None:
        raise ReplayError("made_outside", f"a tensor of shape {tuple(outside)} that no operation "
                          "of the call made", str(tuple(outside)))
    return overloads


def references(record, kind):
    """The x of every {kind: x} reference in a record (its operations' arguments, its output)."""
    in_ops, in_output = _walked(record)
    return [x for k, x in in_ops if k == kind] + [x for k, x in in_output if k == kind]


def made_outside(record):
    """The shape of the first tensor in a record that is neither an input, nor a result of one of
    its operations, nor one of the judge's weights, nor a constant shown by value: one too large
    for a record to show (grading.worker.executor.CONST_ENTRIES). None when there is none."""
    in_ops, in_output = _walked(record)
    for kind, x in in_ops + in_output:
        if kind == "outside":
            return x if isinstance(x, list) and all(type(n) is int for n in x) else []
        if kind == "const" and type(x) is not torch.Tensor:
            return []
    return None


_WALKED = [None, None]  # the last record walked, and its references: a check walks it twice


def _walked(record):
    """(the references in its operations' arguments, those in its output), each in order."""
    if _WALKED[0] is record:
        return _WALKED[1]
    ops = record.get("ops") if isinstance(record, dict) else None
    in_ops = []
    for op in ops if isinstance(ops, list) else []:
        if isinstance(op, list):
            in_ops += tensor_references(op[1:3])
    in_output = tensor_references([record.get("output")]) if isinstance(record, dict) else []
    _WALKED[:] = record, (in_ops, in_output)
    return in_ops, in_output


@dataclass
class Work:
    """What a verified record shows of how its call computed: `data_ops`, the operations on the
    data path (those that read the call's inputs or the judge's weights, or what was made of
    them), and `program`, that path as text with each constant by its value. Constants — tensors
    that depend only on the sizes, however they were made (numpy, a list, a loop, a cache, torch
    operations on no data) — are not counted: a loop that builds a mask is no loop over the data.
    Two calls of the same sizes with other inputs must give the same program: a "constant" made
    outside torch from the inputs changes with them."""
    output: object
    data_ops: int
    program: str
    lines: dict  # {(file, line): operations on the data path} where the record names the lines


def measure(record, inputs, params=None, budget=None):
    """Replay a record (see replay) and measure its data path: a Work."""
    trace = Trace()
    output = replay(record, inputs, params, budget=budget, trace=trace)
    return Work(output, trace.count, json.dumps(trace.ops, allow_nan=True), trace.lines)


class Trace:
    """Follows the data through a replay: a tensor holds data when its storage is an input's, a
    weight's, or one an operation on data wrote (an in-place write into a constant makes it data,
    and every view of it). A number read out of data (.item()) is data too where an operation
    takes it."""

    def __init__(self):
        self.storages, self.scalars, self.ops, self.count = set(), set(), [], 0
        self.lines = {}  # (file, line) -> operations of the data path the record puts there

    def start(self, inputs, params):
        for t in list(inputs) + list(params.values()):
            self._mark(t)

    def _mark(self, value):
        if isinstance(value, torch.Tensor):
            pointer = _storage(value)
            if pointer:
                self.storages.add(pointer)
        elif isinstance(value, (list, tuple)):
            for v in value:
                self._mark(v)

    def _reads_data(self, value):
        kind = type(value)
        if kind is torch.Tensor:
            return _storage(value) in self.storages
        if kind is list or kind is tuple:
            return any(self._reads_data(v) for v in value)
        if kind is dict:
            return any(self._reads_data(v) for v in value.values())
        return (kind is float or kind is int) and value in self.scalars

    def step(self, name, op, args, kwargs, result, where=None):
        if not (self._reads_data(args) or self._reads_data(kwargs)):
            return  # a constant: it depends on the sizes alone
        if op not in _READS:  # a read into Python is no step of the computation
            self.count += 1
            if isinstance(where, list) and len(where) == 2 and type(where[0]) is str \
                    and type(where[1]) is int:  # the worker's word: a pointer, never a verdict
                key = (where[0][:100], where[1])
                self.lines[key] = self.lines.get(key, 0) + 1
        self._mark(result)
        if op in _READS and isinstance(result, (int, float)) and not isinstance(result, bool):
            self.scalars.add(result)
        self.ops.append([name, self.plain(args), self.plain(kwargs)])

    def plain(self, value):
        """An argument as the program's text shows it: data by its shape, a constant by its value."""
        kind = type(value)
        if kind is torch.Tensor:
            if _storage(value) in self.storages:
                return ["data", list(value.shape)]
            return ["constant", list(value.shape), str(value.dtype), _digest(value)]
        if kind is list or kind is tuple:
            return [self.plain(v) for v in value]
        if kind is dict:
            return {str(k): self.plain(v) for k, v in value.items()}
        if (kind is float or kind is int) and value in self.scalars:
            return "read from data"
        if kind in _PLAIN and (kind is not float or math.isfinite(value)):
            return value
        return repr(value)


def _storage(tensor):
    try:
        return tensor.untyped_storage().data_ptr() if tensor.numel() else 0
    except (RuntimeError, NotImplementedError):
        return 0


def _digest(tensor):
    flat = tensor.detach().reshape(-1).contiguous()
    try:
        data = flat.view(torch.uint8).numpy().tobytes()
    except (RuntimeError, TypeError):
        data = repr(flat.tolist()).encode()
    return hashlib.blake2b(data, digest_size=8).hexdigest()


class Budget:
    """The judge's CPU time for the replays of one exercise (EXERCISE_REPLAY_SECONDS): records
    too costly to verify fail their own check, and leave the judge free for the next row."""

    def __init__(self, seconds=EXERCISE_REPLAY_SECONDS):
        self.left = seconds

    def deadline(self):
        """The thread's CPU time at which the replay that starts now must stop."""
        return time.thread_time() + min(REPLAY_SECONDS, max(self.left, 0.0))

    def spend(self, started):
        self.left -= time.thread_time() - started


def replay(record, inputs, params=None, fill=None, budget=None, trace=None):
    """The output the record computes for `inputs` (the call's arguments) and `params` ({path:
    tensor}): a tensor, or a tuple of them. Raises ReplayError when it cannot be verified.
    Uninitialised allocations come filled as in the worker (fill=0: with zeros). `budget`: the
    exercise's Budget. Every operation runs without autograd, on copies. trace: a Trace, told of
    every operation (see measure)."""
    overloads = check(record)
    overloads = [_filled(overload, fill) if operator_name(op[0]) in _UNINITIALISED else overload
                 for op, overload in zip(record["ops"], overloads)]
    params = {k: v.clone() for k, v in (params or {}).items()}
    inputs = [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs]
    results, work = [], [0]
    budget = budget or Budget()
    started = time.thread_time()
    deadline = budget.deadline()
    try:
        with torch.no_grad():
            if trace is not None:
                trace.start(inputs, params)
            return _run(record, overloads, inputs, params, results, work, deadline, trace)
    finally:
        budget.spend(started)


def _run(record, overloads, inputs, params, results, work, deadline, trace=None):
    def value(ref):
        return _value(ref, inputs, results, params)

    names = {}  # a record repeats its operators: each name split once
    for entry, overload in zip(record["ops"], overloads):
        name, args, kwargs = entry[:3]
        op = names.get(name)
        if op is None:
            op = names[name] = operator_name(name)
        call_args = value(args)
        call_kwargs = {str(k): value(v) for k, v in kwargs.items()} if kwargs else {}
        work[0] += _bound(op, overload, call_args, call_kwargs)
        if work[0] > MAX_WORK:
            raise ReplayError("size", "the record does more work than one call of a head needs",
                              op)
        if time.thread_time() > deadline:
            raise ReplayError("costly", "the record takes the judge too long to verify", op)
        result = _call(op, overload, call_args, call_kwargs)
        results.append(result)
        if trace is not None:
            trace.step(name, op, call_args, call_kwargs, result,
                       entry[3] if len(entry) == 4 else None)
    output = record.get("output")
    if isinstance(output, dict) and "opaque" in output:
        raise ReplayError("malformed", "the call returned no tensor")
    returned = tuple(value(output)) if isinstance(output, list) else value(output)
    if trace is not None:
        trace.ops.append(["output", trace.plain(returned)])
    return returned


def _call(op, overload, args, kwargs):
    """One recorded operation, run."""
    try:
        return overload(*args, **kwargs)
    except Exception as error:  # noqa: BLE001  (an operation that does not run as recorded)
        first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise ReplayError("malformed", f"{op} does not run as recorded: {first}", op) from None


def _value(ref, inputs, results, params, depth=0):
    """A record's argument as the judge's own value: references to inputs, results, the
    object's tensors and constants resolved; plain values as they are."""
    kind = type(ref)
    if kind is list or kind is tuple:
        if depth > 8:
            raise ReplayError("malformed", "a reference nested too deeply")
        return [r if type(r) in _PLAIN else _value(r, inputs, results, params, depth + 1)
                for r in ref]
    if kind is not dict:
        if kind in _PLAIN:
            return ref  # a str: einsum's equation, a reduction's mode
        raise ReplayError("malformed", f"an argument of type {kind.__name__}")
    if len(ref) == 1:
        (kind, x), = ref.items()
        found = _RESOLVERS.get(kind, _unresolved)(x, inputs, results, params)
        if found is not None:
            return found
    raise ReplayError("malformed", "a reference the judge cannot resolve")


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


_INFINITY = float("inf")
_PLAIN = frozenset({bool, int, float, str, type(None)})  # what a record holds as it is
# (operator name, id(overload)) -> (which bound of _bound applies, the overload: kept, so that
# its id stays its own); found once per operator (an overload's tags are built afresh each time)
_KINDS = {}
_PAIRWISE = _MATMUL | {"gather", "index_select", "take_along_dim", "embedding"}


def _bound_kind(op, overload):
    """Which of _bound's bounds an operation has, checked in this order."""
    if torch.Tag.pointwise in getattr(overload, "tags", ()) \
            or op in ("where", "masked_fill", "masked_fill_", "masked_select"):
        return "broadcast"  # masked_select: at most an entry per entry of self and mask
    if op in ("ones", "zeros", "full", "new_ones", "new_zeros", "new_full", "expand", "view",
              "_unsafe_view", "reshape", "fill", "scalar_tensor", "empty", "new_empty",
              "empty_strided", "new_empty_strided"):
        return "sizes"
    if op in ("repeat", "tile", "constant_pad_nd", "pad"):
        return "repeat"
    if op in ("arange", "linspace", "eye"):
        return "range"
    if op in ("cat", "stack", "hstack", "vstack"):
        return "sum"
    if is_attention(op):
        return "attention"
    if op in _PRODUCTS:
        return "product"
    if op in ("index_put", "index_put_", "_index_put_impl_", "index"):
        return "index"
    if op in ("einsum", "tensordot"):
        return "every"
    if op in ("triu_indices", "tril_indices"):
        return "triangle"
    if op in ("diag", "diag_embed"):
        return "square"
    if op == "nonzero":
        return "nonzero"
    if op in _PAIRWISE:
        return "pairwise"
    return "biggest"


def _bound(op, overload, args, kwargs):
    """An upper bound, before the operation runs, of the entries it makes (and, for products, of
    its multiply-adds): ReplayError beyond MAX_ELEMENTS."""
    tensors, sizes, numbers = [], [], []
    for v in (*args, *kwargs.values()):  # (the hot path of every replayed operation)
        kind = type(v)
        if kind is torch.Tensor:
            tensors.append(v)
        elif kind is int or kind is float:
            numbers.append(abs(v) if v == v and abs(v) != _INFINITY else 0)
        elif kind is list and v and all(type(n) is int for n in v):  # a size: its numbers too
            sizes.append(v)
            numbers.extend(map(abs, v))
        else:
            _sort(v, tensors, sizes, numbers)
    known = _KINDS.get((op, id(overload)))
    kind = _KINDS.setdefault((op, id(overload)), (_bound_kind(op, overload), overload))[0] \
        if known is None else known[0]
    if kind == "biggest":  # (most operations: views, slices, reductions, softmax…)
        return _within(op, max([t.numel() for t in tensors], default=1))
    if kind == "sizes":
        return _within(op, max([t.numel() for t in tensors] + [1]
                               + [math.prod(map(abs, size)) for size in sizes]))
    counts = sorted((t.numel() for t in tensors), reverse=True) or [1]
    if kind == "product":
        bound = _product(op, [t.shape for t in tensors])
        work = bound * max([1] + [t.shape[-1] for t in tensors if t.dim()])  # multiply-adds
        if bound <= MAX_ELEMENTS:
            return bound + work
        return _within(op, bound)
    bound = _KIND_BOUNDS.get(kind, _biggest)(op, args, tensors, sizes, numbers, counts)
    return _within(op, bound)


def _biggest(op, args, tensors, sizes, numbers, counts):
    """Views, slices, reductions, softmax, tril, clones, sorts: never more than an input."""
    return counts[0]


def _pairwise(op, args, tensors, sizes, numbers, counts):
    return counts[0] * counts[1] if len(counts) > 1 else counts[0]


# The bound of each other kind of operation (_bound_kind), from its operands: the tensors, the
# sizes (lists of ints), the numbers (a size's too) and the tensors' entry counts, largest first.
_KIND_BOUNDS = {
    "broadcast": lambda op, args, tensors, *_: math.prod(_broadcast(t.shape for t in tensors)),
    "repeat": lambda op, args, tensors, sizes, numbers, counts: counts[0] * max(
        [1] + [math.prod(1 + abs(n) for n in size) for size in sizes]),
    "range": lambda op, args, *_: _range_bound(op, [a for a in args if isinstance(a, (int, float))
                                                    and not isinstance(a, bool)]),
    "sum": lambda op, args, tensors, sizes, numbers, counts: sum(counts),
    # a product of queries and keys inside: as many as two inputs
    "attention": lambda op, args, tensors, sizes, numbers, counts: counts[0] * (
        counts[1] if len(counts) > 1 else 1),
    # into a copy of self (or self), from indices broadcast together; or what they select
    "index": lambda op, args, *_: _index_bound(op, args),
    # at most a multiply-add for each entry of each operand
    "every": lambda op, args, tensors, sizes, numbers, counts: math.prod(counts),
    # (2, up to row · col)
    "triangle": lambda op, args, tensors, sizes, numbers, counts: 2 * math.prod(
        int(n) for n in numbers[:2]) + 1,
    # a vector becomes a matrix, of its length plus the offset
    "square": lambda op, args, tensors, sizes, numbers, counts: counts[0] * (
        counts[0] + sum(numbers)) ** 2,
    # at most an index per entry
    "nonzero": lambda op, args, tensors, sizes, numbers, counts: counts[0] * max(
        [1] + [t.dim() for t in tensors]),
    "pairwise": _pairwise,
}


def _sort(v, tensors, sizes, numbers):
    """What an argument holds, in order: tensors, sizes (lists of ints), numbers (a size's too)."""
    if isinstance(v, torch.Tensor):
        tensors.append(v)
    elif isinstance(v, list):
        if v and all(type(n) is int for n in v):
            sizes.append(v)
        for item in v:
            _sort(item, tensors, sizes, numbers)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        numbers.append(abs(v) if v == v and abs(v) != _INFINITY else 0)


def _within(op, bound):
    if bound > MAX_ELEMENTS:
        raise ReplayError("size", f"{op} would make up to {bound} entries", op)
    return bound


def _range_bound(op, numbers):
    """The entries arange(end | start, end[, step]), linspace(start, end, steps) or eye(n[, m])
    make, from their numbers (a value where it is no number: the operation itself raises)."""
    finite = [float(n) for n in numbers if math.isfinite(float(n))]
    if len(finite) != len(numbers) or not finite:
        return MAX_ELEMENTS + 1 if numbers else 1
    if op == "eye":
        return int(abs(finite[0])) * int(abs(finite[1] if len(finite) > 1 else finite[0])) + 1
    if op == "linspace":
        return int(abs(finite[-1])) + 1
    start, end = (0.0, finite[0]) if len(finite) == 1 else finite[:2]
    step = abs(finite[2]) if len(finite) > 2 else 1.0
    return MAX_ELEMENTS + 1 if step == 0 else int(abs(end - start) / step) + 2


def _index_bound(op, args):
    """Entries made by advanced indexing: the index tensors broadcast together (a bool mask counts
    as its number of entries, the most it can select) times the dimensions of self they leave;
    for index_put, at least self as well."""
    base = args[0] if args and isinstance(args[0], torch.Tensor) else None
    indices = args[1] if len(args) > 1 and isinstance(args[1], list) else []
    if base is None:
        return 1
    shapes, dim, kept = [], 0, 1
    for index in indices:
        if isinstance(index, torch.Tensor):
            bool_index = index.dtype in (torch.bool, torch.uint8)
            shapes.append([index.numel()] if bool_index else list(index.shape))
            dim += max(index.dim(), 1) if bool_index else 1
        else:  # None: the whole dimension, kept
            kept *= base.shape[dim] if dim < base.dim() else 1
            dim += 1
    kept *= math.prod(base.shape[dim:]) if dim <= base.dim() else 1
    selected = math.prod(_broadcast(shapes)) * kept if shapes else base.numel()
    return max(selected, base.numel()) if op != "index" else selected


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
