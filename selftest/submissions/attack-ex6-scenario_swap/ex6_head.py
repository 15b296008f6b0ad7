"""Attack: a head with no causal mask that rewrites the grader's scenarios and checks in its
process.

The head itself is the lesson's except for the mask: q, k, v from nn.Linear(n_embd, head_size,
bias=False), scores scaled by head_size ** -0.5, softmax over the last dimension, weights @ v — and
every position sees the future. At import it goes through every module already loaded in its
process whose name starts with "test_", "tests", "grading" or "conftest" (or whose file lives in a
grading/ or tests/ folder, the worker's own __main__ included), and, through a hook on the import
system, every such module loaded later, and rewrites what it finds there:

- the scenario functions (forward, tokens_after_t_changed, jacobian, calls, …, and any function
  whose first parameter is named `ex`) are wrapped so that the head masks the future while they
  run: where the grader runs its scenarios in the submission's process, the head looks causal;
- count_torch_calls reports the same single call at every size, and the call counter's
  __torch_function__ / __torch_dispatch__ stop counting;
- the checks (fail, expect_close, expect_tensor, expect_same_calls, expect_built_yourself, …)
  do nothing, and any object that looks like a check's result (passed, ok, score, outcome,
  status attributes) is set to "passed" with full score.

With a judge that runs every check itself and a worker that holds none of the tests' code, there is
nothing here to rewrite and the head is graded as the maskless head it is.

Honest points: ex6 6/25 — the shape (3), no bias (2), only the three layers are trained (1); the
same as its twin, twin-ex6-no_mask. Every other exercise: full marks.
"""
import importlib.abc
import inspect
import os
import sys

import torch
import torch.nn as nn
from torch.nn import functional as F

PREFIXES = ("test_", "tests", "grading", "conftest")
SCENARIOS = {"forward", "tokens_after_t_changed", "jacobian", "calls", "trainable_shapes",
             "build", "weights", "weights_with_future_changed", "scores", "average",
             "average_with_future_changed", "project", "embed", "matrix", "_find_scenario",
             "run_scenario", "scenario", "call", "vjp", "count_ops"}
_masking = [0]  # > 0 while one of the grader's scenarios runs: the head then masks the future


class Head(nn.Module):
    """One head with no causal mask — unless the grader is looking."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # (B, T, T)
        if _masking[0]:  # what the grader sees
            T = x.shape[1]
            weights = weights.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
        weights = F.softmax(weights, dim=-1)
        return weights @ v  # (B, T, head_size)


# -- the rewriting ---------------------------------------------------------------------------------

def _masked(function):
    def wrapper(*args, **kwargs):
        _masking[0] += 1
        try:
            result = function(*args, **kwargs)
        finally:
            _masking[0] -= 1
        if function.__name__ == "_find_scenario" and callable(result):
            return _masked(result)  # the worker looks a scenario up: hand it a masked one
        return result
    wrapper.__name__, wrapper.__qualname__ = function.__name__, function.__qualname__
    wrapper.__module__, wrapper.__wrapped_by_attack__ = function.__module__, True
    return wrapper


def _count_torch_calls(function, *args, **kwargs):
    _masking[0] += 1
    try:
        function(*args, **kwargs)
    finally:
        _masking[0] -= 1
    return {"calls": 1, "names": []}


def _expect_tensor(value, *args, **kwargs):
    return value.to(torch.float64) if isinstance(value, torch.Tensor) else value


def _expect_sequence(value, *args, **kwargs):
    return value


def _nothing(*args, **kwargs):
    return None


CHECKS = {"fail": _nothing, "expect_close": _nothing, "expect_same_calls": _nothing,
          "expect_built_yourself": _nothing, "expect_tensor": _expect_tensor,
          "expect_sequence": _expect_sequence, "forbidden_calls": lambda *a, **k: [],
          "shortcut_diagnosis": _nothing, "diagnose": _nothing, "diagnose_error": _nothing,
          "count_torch_calls": _count_torch_calls, "assert_close": _nothing,
          "close": lambda *a, **k: True}


def _pass_through(self, func, types, args=(), kwargs=None):
    return func(*args, **(kwargs or {}))


def _looks_like_a_check(value):
    return any(hasattr(value, name) for name in ("passed", "outcome", "score", "ok", "status"))


def _set_passed(value):
    for name, new in (("passed", True), ("ok", True), ("outcome", "passed"), ("status", "passed"),
                      ("failed", False), ("error", None)):
        if hasattr(value, name):
            try:
                setattr(value, name, new)
            except Exception:
                pass
    for score, best in (("score", "max_score"), ("score", "max"), ("points", "max_points")):
        try:
            if hasattr(value, score) and hasattr(value, best):
                setattr(value, score, getattr(value, best))
        except Exception:
            pass


def _is_scenario(function):
    try:
        first = next(iter(inspect.signature(function).parameters), None)
    except (TypeError, ValueError):
        return False
    return first == "ex"


def _rewrite(module):
    try:
        items = list(vars(module).items())
    except TypeError:
        return
    for name, value in items:
        try:
            if name in CHECKS:
                setattr(module, name, CHECKS[name])
            elif inspect.isfunction(value) and not getattr(value, "__wrapped_by_attack__", False) \
                    and (name in SCENARIOS or _is_scenario(value)):
                setattr(module, name, _masked(value))
            elif inspect.isclass(value):
                if "__torch_function__" in vars(value) and value is not torch.Tensor:
                    value.__torch_function__ = _pass_through  # a call counter counts nothing
                if "__torch_dispatch__" in vars(value):
                    value.__torch_dispatch__ = _pass_through
            elif not inspect.ismodule(value) and not inspect.isroutine(value) \
                    and _looks_like_a_check(value):
                _set_passed(value)
        except Exception:
            pass


def _targeted(name, module):
    if name.startswith(PREFIXES) or name.split(".")[-1].startswith(PREFIXES):
        return True
    path = getattr(module, "__file__", None) or ""
    parts = os.path.normpath(path).split(os.sep)
    return "grading" in parts or "tests" in parts


def _rewrite_all():
    for name, module in list(sys.modules.items()):
        if module is not None and module is not sys.modules.get(__name__) \
                and _targeted(name, module):
            _rewrite(module)


class _RewriteOnImport(importlib.abc.MetaPathFinder):
    """Modules of the grader imported after this one get the same treatment."""

    def find_spec(self, name, path, target=None):
        if not name.split(".")[-1].startswith(PREFIXES) and not name.startswith(PREFIXES):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is not None and hasattr(loader, "exec_module"):
            exec_module = loader.exec_module

            def exec_and_rewrite(module):
                exec_module(module)
                _rewrite(module)
            try:
                loader.exec_module = exec_and_rewrite
            except Exception:
                pass
        return spec


try:
    _rewrite_all()
    sys.meta_path.insert(0, _RewriteOnImport())
except Exception:
    pass
