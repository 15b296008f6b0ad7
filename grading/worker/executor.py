"""What a worker does for the judge: the primitive requests, on one exercise module.

Used by a worker on the submission (grading/worker/main.py serves them over the wire) and by the
judge on the solution (judge.remote.LocalChannel), so that both answer the same requests in the same
way. Imports torch and the wire, nothing of the judge side.
"""
import torch

from grading.wire.ops import EXECUTOR, Op
from grading.wire.protocol import Handle

MAX_RECORD = 4000  # operations of one traced call: a head takes about 30


# -- what a worker does for the judge -------------------------------------------------------------

class Executor:
    """The primitive requests, on one module. Used by a worker on the submission, and by the judge
    on the solution, so that both answer the same requests in the same way.

    Objects that the judge constructs stay here, by handle number; values go back as they are.
    Calls run under torch.no_grad(), as in evaluation; only `vjp` records gradients."""

    def __init__(self, module):
        self.module = module
        self.objects = []

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
        target = self._target(request["target"])
        with torch.no_grad():
            return self._result(target, target(*self._arguments(request),
                                               **request.get("kwargs", {})))

    def call_inputs(self, request):
        """A call, and its arguments as they are after it: {"output", "args"}, each tensor
        argument as the call left it (None for an argument that is no tensor), so that the judge
        can see whether the call changed its inputs in place."""
        args = self._arguments(request)  # the very objects the call gets
        output = self.call(request)
        return {"output": output, "args": [a if isinstance(a, torch.Tensor) else None
                                           for a in args]}

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
        args = [leaves[i] * 1 if i in leaves else a for i, a in enumerate(args)]
        owner = self.objects[request["target"]["handle"]] if "handle" in request["target"] \
            else None
        named = []  # (path, tensor) of the parameters named by the judge's attribute paths
        for path in request.get("parameters") or [] if owner is not None else []:
            obj, missing = self._resolve(request["target"]["handle"], path)
            if not missing and isinstance(obj, torch.Tensor) and obj.requires_grad:
                named.append((path, obj))
        with torch.enable_grad():
            out = target(*args)
            if type(out) is not torch.Tensor or not out.requires_grad:
                return {"output": out, "input_grads": None, "parameter_grads": None}
            wanted = [leaves[i] for i in request["wrt"]] + [p for _, p in named]
            # Σ grad_output · out, a scalar: the same gradients as grad_outputs=grad_output, without
            # the shape checks that import sympy (a second) on first use.
            loss = (out * request["grad_output"]).sum()
            grads = torch.autograd.grad(loss, wanted, allow_unused=True)
        count = len(request["wrt"])
        return {"output": out.detach(), "input_grads": list(grads[:count]),
                "parameter_grads": {n: g for (n, _), g in zip(named, grads[count:])}}

    def trace(self, request):
        """Run one call and show its work: every aten operation it reached, in order, as data
        (grading.judge.replay replays it in the judge, on inputs this process never sees).

        {"ops": [[name, args, kwargs], …], "output": a reference, "truncated": bool}, where each
        tensor in an argument or the output is a reference: {"in": i} the call's i-th argument,
        {"out": [k, j]} the j-th result of operation k, {"param": path} the object's tensor at one
        of the attribute paths the judge names (request["params"], e.g. "query.weight", in the
        order the judge set them: a tensor held under several paths, one layer under three
        names, is named by the last, whose value it holds), or
        {"const": tensor} any other tensor (a buffer, something made outside torch's operators).
        Nothing here is trusted: the judge checks the record by replaying it."""
        from torch.utils._python_dispatch import TorchDispatchMode
        target = self._target(request["target"])
        args = self._arguments(request)
        owner = self.objects[request["target"]["handle"]] if "handle" in request["target"] \
            else None
        known = {}  # id(tensor) -> its reference; `alive` keeps every one so ids stay unique
        alive = list(args)
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                known[id(a)] = {"in": i}
        for path in request.get("params", []):
            obj, missing = self._resolve(request["target"]["handle"], path) if owner is not None \
                else (None, path)
            if not missing and isinstance(obj, torch.Tensor) \
                    and known.get(id(obj), {}).get("in") is None:
                known[id(obj)] = {"param": path}  # the last path set: the value it holds
                alive.append(obj)
        ops, truncated = [], [False]

        def ref(value):
            if isinstance(value, torch.Tensor):
                if id(value) not in known:
                    alive.append(value)
                    known[id(value)] = {"const": torch.Tensor(value.detach()).clone()
                                        if value.layout == torch.strided else None}
                return known[id(value)]
            if isinstance(value, (list, tuple)):
                return [ref(v) for v in value]
            if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
                return {type(value).__name__: str(value).removeprefix("torch.")}
            if value is None or isinstance(value, (bool, int, float, str)):
                return value
            return {"opaque": type(value).__name__}

        class Recorder(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls):  # else its first use imports torch._dynamo: seconds
                return False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if len(ops) >= MAX_RECORD:
                    truncated[0] = True
                else:
                    ops.append([str(func), ref(list(args)), {k: ref(v) for k, v in kwargs.items()}])
                result = func(*args, **kwargs)
                if not truncated[0]:
                    number = len(ops) - 1
                    results = result if isinstance(result, (list, tuple)) else [result]
                    for j, value in enumerate(results):
                        if isinstance(value, torch.Tensor):
                            alive.append(value)
                            known[id(value)] = {"out": [number, j]}
                return result

        with torch.no_grad(), Recorder():
            returned = target(*args)
        return {"ops": ops, "output": ref(returned), "truncated": truncated[0]}
