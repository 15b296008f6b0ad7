"""The vocabulary of a record, shared by the worker that makes it and the judge that replays it.

A record is one call's aten operations, in order, as data (grading.worker.executor.Executor makes it
for every call it answers; grading.judge.replay replays it). Each tensor in it is a reference:
{"in": i} the call's i-th argument, {"out": [k, j]} the j-th result of operation k, {"param": path}
a weight the judge set on the called object, at its attribute path, {"const": t} any other tensor
that no operation of the call made (a number such as −∞ made into a tensor, a mask buffer, a
mask from numpy, a cache), shown by value, {"outside": shape} one too large to show.

Both sides fill uninitialised memory (torch.empty and its kin) alike, so that code which reads it
computes in the worker what its record computes in the judge.
"""
import math

UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "new_empty",
                           "new_empty_strided"})
MAX_ELEMENTS = 1 << 22  # entries one operation may make: the judge replays no larger one


TENSOR_KINDS = ("in", "out", "param", "const", "outside")  # what a record's tensors are
MAX_DEPTH = 10  # nesting a record's arguments may have (a deeper one is malformed)


def references(value):
    """Every tensor reference ({kind: x}, kind one of TENSOR_KINDS) inside a record's arguments
    or output, in order, as (kind, x): lists, tuples and other dicts (keyword arguments) are
    looked into, MAX_DEPTH deep. The judge's replay (made_outside) and the record diff both walk
    records with it."""
    found = []
    _collect(value, 0, found)
    return found


_KINDS = frozenset(TENSOR_KINDS)
_SCALARS = (int, float, str, bool, type(None))


def _collect(value, depth, found):
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        if len(value) == 1:
            (kind, x), = value.items()
            if kind in _KINDS:
                found.append((kind, x))
                return
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        return
    inline = depth < MAX_DEPTH  # a reference one level down is taken here: most of a record
    for item in items:
        kind = type(item)
        if kind in _SCALARS:
            continue
        if inline and kind is dict and len(item) == 1:
            (name, x), = item.items()
            if name in _KINDS:
                found.append((name, x))
                continue
        if isinstance(item, (list, tuple, dict)):
            _collect(item, depth + 1, found)


# Words in the name of PyTorch's ready-made attention, whatever its name: the public functions
# (scaled_dot_product_attention, multi_head_attention_forward), their private kernels
# (_scaled_dot_product_attention_math, _scaled_dot_product_flash_attention…), the aten operators
# of later releases (_safe_softmax). The worker notes the functions so named that a call reaches
# (before torch 2.5, where they decompose into plain operations); the judge, the operators.
ATTENTION = ("attention", "transformer_encoder", "_safe_softmax")


def is_attention(name):
    return any(word in name for word in ATTENTION)


def operator_name(name):
    """'aten.mm.default' → 'mm'; anything not in the aten namespace → ''."""
    parts = name.split(".") if isinstance(name, str) else []
    return parts[1] if len(parts) == 3 and parts[0] == "aten" else ""


def fill_uninitialised(made):
    """What an uninitialised allocation holds, on both sides: NaN (the largest integer for
    integers, True for bool), never what the memory happened to hold. One larger than the judge
    replays (MAX_ELEMENTS) is left as it is: its record fails anyway, and filling it would only
    spend the learner's time, and the machine's memory, on pages nothing reads."""
    import torch
    if made.numel() > MAX_ELEMENTS:
        return made
    if made.dtype == torch.bool:
        return made.fill_(True)
    if made.is_floating_point() or made.is_complex():
        return made.fill_(math.nan)
    return made.fill_(torch.iinfo(made.dtype).max)


def output_pairs(out, grad_output):
    """[(an output, its grad_output)] of a call's output and the gradient a loss sends back to it,
    or None when out is not grad_output's shape: a floating tensor for a tensor, a tuple of them
    for a tuple ((q, k, v)). The judge's replay and the worker's vjp pair them alike."""
    import torch
    if isinstance(grad_output, torch.Tensor):
        outs, wanted = [out], [grad_output]
    elif isinstance(out, (tuple, list)) and len(out) == len(grad_output):
        outs, wanted = list(out), list(grad_output)
    else:
        return None
    if not all(type(o) is torch.Tensor and o.is_floating_point() and o.shape == g.shape
               for o, g in zip(outs, wanted)):
        return None
    return list(zip(outs, wanted))
