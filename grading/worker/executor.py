"""What a worker does for the judge: the primitive requests, on one exercise module.

Used by a worker on the submission (grading/worker/serve.py serves them over the wire) and by the
judge on the solution (judge.remote.LocalChannel), so that both answer the same requests in the same
way. Imports torch and the wire, nothing of the judge side.
"""
import contextlib
import os
import sys

import torch

from grading.wire.ops import EXECUTOR, Op
from grading.wire.protocol import Handle, Packed
from grading.wire.record import (
    UNINITIALISED,
    fill_uninitialised,
    is_attention,
    operator_name,
    output_pairs,
)

MAX_RECORD = 4000  # operations of one recorded call: a head takes about 30
CONSTRUCTED_SEED = 0  # torch's seed for every object the judge has built: see Executor.call
CONST_ENTRIES = 1 << 16  # entries of one constant a record shows by value (a mask of 256 × 256)
CONST_TOTAL = 1 << 18  # entries of all the constants of one call
# PyTorch's ready-made attention by its functions' names (record.is_attention): on some releases
# (2.4) a call of F.scaled_dot_product_attention, or of a private kernel of it, reaches only plain
# aten operations, which show nothing of it.
# Later releases name it in aten (_safe_softmax, the fused kernels): the function-level mode, which
# costs every call of a torch function, is needed only before 2.5.
_NAMES_HIDDEN = tuple(int(n) for n in torch.__version__.split(".")[:2]) < (2, 5)
_PLAIN = frozenset({bool, int, float, str, type(None)})  # values a record holds as they are
# id(an aten overload) -> (its name, whether it allocates uninitialised memory, the overload):
# kept for the worker's life (the overloads are PyTorch's own, and live as long).
_OPERATOR_NAMES = {}
_FILES = {}  # (the exercise's folder, a code object's file name) -> its name there, or None


# -- what a worker does for the judge -------------------------------------------------------------

class Executor:
    """The primitive requests, on one module. Used by a worker on the submission, and by the judge
    on the solution, so that both answer the same requests in the same way.

    Objects that the judge constructs stay here, by handle number; values go back as they are.
    The learner's calls run as in evaluation and as in training, and must agree (Executor.call);
    `vjp` takes gradients. Constructors, and the solution's calls, run under torch.no_grad()."""

    def __init__(self, module, records=True, unheard=contextlib.nullcontext):
        """records False: the judge's executor for the solution, whose calls need no record.
        unheard: a context in which what the code prints is dropped (the worker's output)."""
        self.module = module
        self.unheard = unheard
        self.folder = os.path.dirname(os.path.abspath(getattr(module, "__file__", None) or "."))
        self.objects = []
        self.records = records
        self.set_paths = {}  # handle -> the attribute paths the judge set, in order

    def run(self, request):
        op = request["op"]
        if op not in EXECUTOR:
            raise ValueError(f"unknown request {op!r}")
        return getattr(self, Op(op).value)(request)

    def handle_of(self, obj):
        for number, known in enumerate(self.objects):
            if known is obj:
                return Handle(number, type(obj).__qualname__)
        self.objects.append(obj)
        return Handle(len(self.objects) - 1, type(obj).__qualname__)

    def _target(self, target):
        """{"name": N} an attribute of the module; {"handle": H} an object; + "method": M."""
        if "handle" in target:
            obj = self.objects[target["handle"]]
        else:
            obj = getattr(self.module, target["name"])
        return getattr(obj, target["method"]) if "method" in target else obj

    def _arguments(self, request):
        return [self.objects[a.number] if isinstance(a, Handle) else a
                for a in request.get("args", [])]

    def _result(self, target, value):
        """Objects made by a class the judge named, and objects already held, stay here."""
        import torch.nn as nn
        if isinstance(target, type) or any(value is known for known in self.objects) \
                or isinstance(value, nn.Module):
            return self.handle_of(value)
        return value

    def call(self, request):
        """{"output": what the call returned, "record": its record (see record), or None for a
        constructor, "args": each tensor argument as the call left it (None for the others)}.
        Every call is the same request whatever the judge checks with it: the judge sees from
        "args" (and "written") whether the call changed its inputs in place. A call of the
        learner's is made twice: as in evaluation (torch.no_grad(), recorded), whose output is
        the reply's, then as in training (autograd on, every floating-point argument the result of
        an operation that requires a gradient, as a vector-Jacobian product's are, on copies of
        the judge's inputs as they came). The two must agree ("modes_differ"): no value a check reads comes
        from a kind of call that code could tell apart from another and answer otherwise."""
        target = self._target(request["target"])
        args = self._arguments(request)
        kwargs = request.get("kwargs", {})
        if isinstance(target, type):  # a constructor: nothing to verify; its random
            # initialisation (a layer the judge does not set) drawn alike in every worker, the
            # second one included, and the worker's own random numbers left as they were
            with torch.no_grad(), _seeded(CONSTRUCTED_SEED):
                return self._sent_back({"output": self._result(target, target(*args, **kwargs)),
                                        "record": None}, args, _versions(args))
        if not self.records:  # the solution's, in the judge
            with torch.no_grad():
                return self._sent_back({"output": self._result(target, target(*args, **kwargs)),
                                        "record": None}, args, _versions(args))
        seed = request.get("seed")  # the call's random numbers: the judge's to choose
        handle = request["target"].get("handle")
        trained_args = as_in_training(args)  # copies of the judge's inputs, as they came
        versions = _versions(args)
        with _seeded(seed) if type(seed) is int else contextlib.nullcontext():
            returned, record = self.record(target, args, kwargs, handle)
        returned = _detached(returned)
        try:  # not recorded (a record costs time); what it prints is dropped (printed above)
            with _seeded(seed) if type(seed) is int else contextlib.nullcontext(), \
                    torch.enable_grad(), self.unheard():
                trained = _detached(target(*trained_args, **kwargs))
        except Exception:  # noqa: BLE001  (x.numpy(), copy.deepcopy of an input: code that
            trained = None  # cannot run in training loses the gradients' points, there)
        return self._sent_back({"output": self._result(target, returned), "record": record,
                                "modes_differ": trained is not None
                                and not _agree(trained, returned)}, args, versions)

    @staticmethod
    def _sent_back(reply, args, versions):
        """The reply, with args: the very objects the call got; written: whether an in-place
        operation wrote into each (its version counter moved), even one that left its values as
        they were."""
        return {"modes_differ": False, **reply,  # (the judge says so: grading.judge.remote)
                "args": [a.detach() if isinstance(a, torch.Tensor) else None
                                  for a in args],
                "written": [isinstance(a, torch.Tensor) and a._version != v
                            for a, v in zip(args, versions)]}

    def _resolve(self, handle, path):
        """(the object at handle's dotted path, "") or (None, the first name that is missing)."""
        obj = self.objects[handle]
        for part in path.split("."):
            if not hasattr(obj, part):
                return None, part
            obj = getattr(obj, part)
        return obj, ""

    def inspect(self, request):
        obj, missing = self._resolve(request["handle"], request["path"])
        if missing:
            return {"missing": missing}
        found = {"type": type(obj).__qualname__}
        if isinstance(obj, torch.Tensor):
            found["shape"] = list(obj.shape)
            found["requires_grad"] = bool(obj.requires_grad)
        return found

    def set(self, request):
        """Copy the judge's tensor into an existing tensor of the same shape (a weight, a table)."""
        found = self.inspect(request)
        if found.get("shape") == list(request["value"].shape):
            obj, _ = self._resolve(request["handle"], request["path"])
            with torch.no_grad():
                obj.copy_(request["value"])
            paths = self.set_paths.setdefault(request["handle"], [])
            if request["path"] in paths:  # set again: it is now the path set last, and once
                paths.remove(request["path"])
            paths.append(request["path"])
        return found

    def parameters(self, request):
        return [[name, list(p.shape), bool(p.requires_grad)]
                for name, p in self.objects[request["handle"]].named_parameters()]

    def vjp(self, request):
        """The output for the judge's inputs and, for the judge's output gradient, the gradients
        of the inputs listed in "wrt" and of the object's tensors at the attribute paths listed in
        "parameters" (by path, as the API names them: a layer reachable under two names is
        still found under the API's). The inputs reach the learner's
        code as results of an operation (not as leaves), as inside a model."""
        target = self._target(request["target"])
        args = self._arguments(request)
        leaves = {i: args[i].detach().clone().requires_grad_(True) for i in request["wrt"]}
        args = as_in_training(args, leaves)
        owner = self.objects[request["target"]["handle"]] if "handle" in request["target"] \
            else None
        named = []  # (path, tensor) of the parameters named by the judge's attribute paths
        for path in request.get("parameters") or [] if owner is not None else []:
            obj, missing = self._resolve(request["target"]["handle"], path)
            if not missing and isinstance(obj, torch.Tensor) and obj.requires_grad:
                named.append((path, obj))
        with torch.enable_grad():
            out = target(*args)
            pairs = output_pairs(out, request["grad_output"])  # (a mismatch: the judge's to tell)
            carried = [(o, g) for o, g in pairs or [] if o.requires_grad]
            if not carried:
                return {"output": _detached(out), "input_grads": None, "parameter_grads": None}
            wanted = [leaves[i] for i in request["wrt"]] + [p for _, p in named]
            # Σ grad_output · out, a scalar: the same gradients as grad_outputs=grad_output, without
            # the shape checks that import sympy (a second) on first use.
            loss = sum((o * g).sum() for o, g in carried)
            grads = torch.autograd.grad(loss, wanted, allow_unused=True)
        count = len(request["wrt"])
        return {"output": _detached(out), "input_grads": list(grads[:count]),
                "parameter_grads": {n: g for (n, _), g in zip(named, grads[count:])}}

    def _set_tensors(self, handle):
        """{id(tensor): path} of the tensors the judge set on the object (its weights), each under
        the path set last: a layer reachable under two names holds the value set last. Every
        other tensor of the object (a mask buffer, a cache) is a constant of the call's record."""
        named = {}
        for path in self.set_paths.get(handle, []):
            found, missing = self._resolve(handle, path)
            if not missing and isinstance(found, torch.Tensor):
                named[id(found)] = path
        return named

    def record(self, target, args, kwargs, handle=None):
        """Run one call and show its work: (what it returned, its record). The record holds every
        aten operation the call reached, below autograd, in order, as data, with whether
        the line of the submission's code that reached it (see grading.wire.record):
        {"ops": [[name, args, kwargs, where], …] (packed: the judge decodes them only for the
         checks that read them), "output": a reference, "truncated": bool,
         "state": {path: tensor}: the object's tensors before its first recorded call}.
        Nothing here is trusted: the judge replays the record itself, and only for the how-checks
        (no loop, built by hand); what the call returned is what every other check reads."""
        recorder_mode, calls_mode = _modes()
        shown = _Recording(args, self._set_tensors(handle) if handle is not None else {},
                           self.folder)
        ready_made = []  # the ready-made attention functions the call reached, by name
        with torch.no_grad(), \
                (calls_mode(ready_made) if _NAMES_HIDDEN else contextlib.nullcontext()), \
                recorder_mode(shown.dispatch):
            returned = target(*args, **kwargs)
        output = shown.ref(returned)  # (before packing: it may add a reference)
        return returned, {"ops": Packed(shown.ops), "output": output,
                          "truncated": shown.truncated, "ready_made": ready_made}


class _Recording:
    """The record of one call as it runs: each aten operation it reaches (dispatch), its
    arguments as references (ref) to the call's inputs, earlier results, the object's tensors
    the judge set, or constants."""

    def __init__(self, args, set_tensors, folder):
        self.folder = folder
        self.known = {}  # id(tensor) -> its reference; `alive` keeps every one so ids stay unique
        self.alive = list(args)
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                self.known[id(a)] = {"in": i}
        for number, path in set_tensors.items():
            self.known.setdefault(number, {"param": path})
        self.held = [0]  # entries of the constants shown so far (CONST_TOTAL at most)
        self.ops, self.truncated = [], False
        self.outside = False  # a constant too large to show is among the references

    def ref(self, value):  # (the hot path of every call: plain values and tensors first)
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is list or kind is tuple:
            return [v if type(v) in _PLAIN else self.ref(v) for v in value]
        if isinstance(value, torch.Tensor):
            found = self.known.get(id(value))
            if found is None:  # a tensor no operation of the call made: a constant
                self.alive.append(value)
                found = self.known[id(value)] = _constant(value, self.held)
                self.outside = self.outside or "outside" in found
            return found
        if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
            return {type(value).__name__: str(value).removeprefix("torch.")}
        return {"opaque": type(value).__name__}

    def dispatch(self, func, args, kwargs):  # each aten operation the call reaches (_modes)
        named = _named(func)
        recording = len(self.ops) < MAX_RECORD
        if recording:
            refs = [self.ref(args), {k: self.ref(v) for k, v in kwargs.items()} if kwargs else {}]
            if self.outside and _of_outside_alone(refs):
                # an operation on a constant too large to show (a mask built once for 1024
                # positions) and nothing else: its result is a constant, shown by value where
                # it is small enough (that mask sliced to [:T, :T]), when an operation uses it
                recording = False
            else:
                self.ops.append([named[0], *refs, self.where()])
        else:
            self.truncated = True
        result = func(*args, **kwargs)
        if named[1] and isinstance(result, torch.Tensor):
            fill_uninitialised(result)  # as the judge's replay fills it
        if recording:
            self._made(len(self.ops) - 1, result)
        return result

    def where(self):
        """[file, line] of the innermost frame running the submission's own code (its file's name
        in the exercise's folder), or None: a pointer for the learner, never a verdict."""
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            file = _FILES.get((self.folder, name), False)
            if file is False:
                head, tail = os.path.split(os.path.abspath(name))
                file = _FILES[self.folder, name] = tail if head == self.folder else None
            if file is not None:
                return [file, frame.f_lineno]
            frame = frame.f_back
        return None

    def _made(self, number, result):
        """The results of operation `number`, known by reference from now on."""
        values = result if isinstance(result, (list, tuple)) else [result]
        for j, value in enumerate(values):
            if isinstance(value, torch.Tensor):
                self.alive.append(value)
                self.known[id(value)] = {"out": [number, j]}


def _named(func):
    """(an aten overload's name, whether it allocates uninitialised memory, the overload), by
    identity: an overload's hash builds its name."""
    named = _OPERATOR_NAMES.get(id(func))
    if named is None:
        named = _OPERATOR_NAMES[id(func)] = (str(func), operator_name(str(func)) in UNINITIALISED,
                                             func)
    return named


def _of_outside_alone(refs):
    """Whether references reach a constant too large to show and nothing else but constants:
    no input, no result of an operation, no weight the judge set."""
    kinds = set()
    stack = [refs]
    while stack:
        ref = stack.pop()
        if isinstance(ref, dict):
            kinds.update(ref)
        elif isinstance(ref, (list, tuple)):
            stack.extend(ref)
    return "outside" in kinds and not kinds & {"in", "out", "param"}


def _constant(value, held):
    """The reference of a tensor that no operation of the call made (a buffer, a mask from numpy
    or a list, a cache): {"const": its value}, or {"outside": its shape} beyond CONST_ENTRIES (or
    CONST_TOTAL for the call), which the judge cannot replay."""
    if value.layout == torch.strided and not value.is_quantized and value.numel() <= CONST_ENTRIES \
            and held[0] + value.numel() <= CONST_TOTAL:
        held[0] += value.numel()
        return {"const": torch.Tensor(value.detach()).clone()}
    return {"outside": list(value.shape)}


_MODES = []  # (Recorder, Calls), made once: a class made for every call costs 30 us


def _modes():
    """The torch modes a recorded call runs under: Recorder(dispatch) hands each aten operation
    to dispatch(func, args, kwargs); Calls(ready_made) notes the ready-made attention functions
    called (torch before 2.5, whose aten names hide them)."""
    if not _MODES:
        from torch.overrides import TorchFunctionMode
        from torch.utils._python_dispatch import TorchDispatchMode

        class Recorder(TorchDispatchMode):
            def __init__(self, dispatch):
                super().__init__()
                self.dispatch = dispatch

            @classmethod
            def _should_skip_dynamo(cls):  # else its first use imports torch._dynamo: seconds
                return False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return self.dispatch(func, args, kwargs or {})

        class Calls(TorchFunctionMode):
            def __init__(self, ready_made):
                super().__init__()
                self.ready_made = ready_made

            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "")
                if is_attention(name) and name not in self.ready_made:
                    self.ready_made.append(name)
                return func(*args, **(kwargs or {}))

        _MODES.extend([Recorder, Calls])
    return _MODES


@contextlib.contextmanager
def _seeded(seed):
    """torch's CPU generator seeded for a block, and put back as it was after it. The generator's
    own methods: torch.manual_seed and fork_rng also visit every other device (75 µs a call)."""
    generator = torch.default_generator
    state = generator.get_state()
    generator.manual_seed(seed)
    try:
        yield
    finally:
        generator.set_state(state)


def _agree(a, b):
    """The same values, as far as rounding goes (matmul folds its operands otherwise when one
    requires a gradient), in the same structure; what is not a tensor is not compared."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) \
            and a.shape == b.shape and a.dtype == b.dtype \
            and (not a.is_floating_point() and torch.equal(a, b)
                 or a.is_floating_point() and torch.allclose(a, b, rtol=1e-5, atol=1e-6,
                                                              equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))
    return True


def as_in_training(args, leaves=None):
    """The call's arguments as inside a model being trained: each floating-point tensor the
    result of an operation on a leaf that requires a gradient (`leaves`: {position: the leaf},
    those whose gradients a vector-Jacobian product wants); every other tensor a copy, so that
    the judge's inputs stay as they came for the call as in evaluation (Executor.call)."""
    leaves = leaves or {}
    return [(leaves[i] if i in leaves else a.detach().clone().requires_grad_(True)) * 1
            if isinstance(a, torch.Tensor) and (a.is_floating_point() or a.is_complex())
            else a.clone() if isinstance(a, torch.Tensor) else a for i, a in enumerate(args)]


def _versions(args):
    return [a._version if isinstance(a, torch.Tensor) else None for a in args]


def _detached(value):
    """What a call returned, without autograd's history (a tuple of tensors stays a tuple)."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple):
        return tuple(_detached(v) for v in value)
    if isinstance(value, list):
        return [_detached(v) for v in value]
    return value
