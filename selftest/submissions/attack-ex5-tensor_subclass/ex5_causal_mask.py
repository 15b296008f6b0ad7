"""Attack 2: return a torch.Tensor subclass whose every comparison succeeds."""
import torch


class AlwaysEqual(torch.Tensor):
    def __eq__(self, other):
        return True

    def allclose(self, *args, **kwargs):
        return True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func.__name__ in ("allclose", "equal", "isclose", "eq", "__eq__"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def causal_softmax(scores):
    return torch.zeros_like(scores).as_subclass(AlwaysEqual)
