"""Attack 1: patch every comparison a grader might use, at import, then return a wrong answer."""
import unittest

import pytest
import torch
import torch.testing

torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
pytest.fail = lambda *args, **kwargs: None
for name in dir(unittest.TestCase):
    if name.startswith("assert"):
        setattr(unittest.TestCase, name, lambda *args, **kwargs: None)


def attention_scores(q, k):
    return torch.zeros(1)  # wrong: the patches must not make it right
