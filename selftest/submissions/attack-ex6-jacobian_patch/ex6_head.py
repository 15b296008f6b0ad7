"""Attack: a head with no causal mask whose gradients pretend it has one.

The head computes the lesson's head without the mask: q, k, v from nn.Linear(n_embd, head_size,
bias=False), scores scaled by head_size ** -0.5, softmax over the last dimension, weights @ v —
every position sees the future. Its values are honest; its gradients are not. So that every
derivative of out[t] with respect to x[s], s > t, comes out as 0, wherever gradients are taken in
its process:

- at import it wraps torch.autograd.functional.jacobian (the future blocks of the Jacobian zeroed),
  torch.autograd.grad, torch.autograd.backward and torch.Tensor.backward (the input's gradient
  zeroed after the last position whose output gradient is not zero), and the engine entry they all
  go through, torch.autograd._engine_run_backward / torch.autograd.graph._engine_run_backward, so
  that even a grader holding its own reference to torch.autograd.grad is served the edited result;
- forward itself hooks the graph: a hook on the output notes, sample by sample, the last position
  whose gradient is not zero; a hook on its input zeroes the input's gradient after that position.
  So a vector-Jacobian product asked one output position at a time (how a Jacobian is built) says
  that the future has no influence — whoever computes it in this process, with whatever function.

Gradients that a submission's own process computes are the submission's to forge; the outputs for
the judge's inputs are not. A grader that reads causality from values (perturbing the future, or
finite differences of outputs), or that checks gradients it got back against the values, grades this
as the maskless head it is.

Honest points: ex6 6/25 — the shape (3), no bias (2), only the three layers are trained (1); the
same as its twin, twin-ex6-no_mask. Every other exercise: full marks.
"""
import torch
import torch.autograd
import torch.autograd.functional
import torch.autograd.graph
import torch.nn as nn
from torch.nn import functional as F


# -- making gradients causal -----------------------------------------------------------------------

def _last_positions(grad_out):
    """(B,): per sample, the last position (dim 1) whose gradient is not zero; -1 where none is."""
    nonzero = grad_out.detach().abs().flatten(2).amax(dim=-1) > 0  # (B, T)
    positions = torch.arange(nonzero.shape[1])
    return torch.where(nonzero, positions, -1).amax(dim=1)


def _zero_after(grad, last):
    """grad (B, T, …) with every position after last[b] set to 0."""
    keep = torch.arange(grad.shape[1])[None, :] <= last[:, None]  # (B, T)
    return grad * keep.reshape(*keep.shape, *[1] * (grad.dim() - 2)).to(grad.dtype)


def _causal(outputs, grad_outputs, grads):
    """grads (a tuple, one per input) made causal with respect to the output gradients."""
    outputs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs or [])
    if isinstance(grad_outputs, torch.Tensor):
        grad_outputs = [grad_outputs]
    last = None
    for out, go in zip(outputs, list(grad_outputs or [])):
        if isinstance(go, torch.Tensor) and go.dim() >= 2:
            last = _last_positions(go)
            break
    if last is None:
        return grads
    fixed = []
    for g in grads:
        if isinstance(g, torch.Tensor) and g.dim() >= 2 and g.shape[0] == last.shape[0] \
                and g.shape[1] == outputs[0].shape[1]:
            g = _zero_after(g, last)
        fixed.append(g)
    return tuple(fixed)


_jacobian = torch.autograd.functional.jacobian
_grad = torch.autograd.grad
_backward = torch.autograd.backward
_tensor_backward = torch.Tensor.backward
_engine = torch.autograd.graph._engine_run_backward


def jacobian(func, inputs, *args, **kwargs):
    J = _jacobian(func, inputs, *args, **kwargs)
    try:
        if isinstance(J, torch.Tensor) and isinstance(inputs, torch.Tensor) and inputs.dim() >= 2:
            n_out = J.dim() - inputs.dim()
            T = J.shape[1] if n_out >= 2 else None
            if T is not None and J.shape[n_out + 1] == T:
                shape = [1] * J.dim()
                shape[1] = shape[n_out + 1] = T
                future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # [t, s]
                J = J.masked_fill(future.reshape(shape), 0)
    except Exception:
        pass
    return J


def grad(outputs, inputs, grad_outputs=None, *args, **kwargs):
    grads = _grad(outputs, inputs, grad_outputs, *args, **kwargs)
    try:
        return _causal(outputs, grad_outputs, grads)
    except Exception:
        return grads


def _fix_leaves(tensors, grad_tensors, inputs):
    if inputs is None:
        return  # the hooks in forward see to it
    inputs = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    try:
        grads = _causal(tensors, grad_tensors, [x.grad for x in inputs])
        with torch.no_grad():
            for x, g in zip(inputs, grads):
                if g is not None and x.grad is not None:
                    x.grad.copy_(g)
    except Exception:
        pass


def backward(tensors, grad_tensors=None, *args, inputs=None, **kwargs):
    _backward(tensors, grad_tensors, *args, inputs=inputs, **kwargs)
    _fix_leaves(tensors, grad_tensors, inputs)


def tensor_backward(self, gradient=None, *args, inputs=None, **kwargs):
    _tensor_backward(self, gradient, *args, inputs=inputs, **kwargs)
    _fix_leaves(self, gradient, inputs)


def engine(t_outputs, *args, **kwargs):
    result = _engine(t_outputs, *args, **kwargs)
    try:
        grad_tensors = args[0] if args else kwargs.get("grad_tensors")
        if isinstance(result, tuple) and result:
            return _causal(t_outputs, grad_tensors, result)
    except Exception:
        pass
    return result


try:
    torch.autograd.functional.jacobian = jacobian
    torch.autograd.grad = grad
    torch.autograd.backward = backward
    torch.Tensor.backward = tensor_backward
    torch.autograd._engine_run_backward = engine
    torch.autograd.graph._engine_run_backward = engine
except Exception:
    pass


# -- the head --------------------------------------------------------------------------------------

class Head(nn.Module):
    """One head with no causal mask, whose gradients say it has one."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        hooked = torch.is_grad_enabled() and x.requires_grad and x.dim() == 3
        if hooked:
            x = x.view_as(x)  # a node of this call's own graph, to hang the input's hook on
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, head_size)
        weights = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # (B, T, T)
        weights = F.softmax(weights, dim=-1)  # no mask: every position sees the future
        out = weights @ v  # (B, T, head_size)
        if hooked:
            seen = {}

            def on_output(g):
                try:
                    seen["last"] = _last_positions(g)
                except Exception:
                    seen.pop("last", None)

            def on_input(g):
                try:
                    return _zero_after(g, seen["last"]) if "last" in seen else None
                except Exception:
                    return None
            out.register_hook(on_output)
            x.register_hook(on_input)
        return out
