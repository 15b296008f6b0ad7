"""Real code, fair: Peter Bloem's in-place mask_() by triu_indices, then softmax over dim 2.

Modelled on pbloem/former, former/util/util.py (def mask_(matrices, maskval=0.0,
mask_diagonal=True): indices = torch.triu_indices(h, w, offset=0 if mask_diagonal else 1);
matrices[:, indices[0], indices[1]] = maskval) and former/modules.py (mask_(dot,
maskval=float('-inf'), mask_diagonal=False); dot = F.softmax(dot, dim=2)), MIT. Re-typed.
Right: 20/20 expected.
"""
import torch
import torch.nn.functional as F


def mask_(matrices, maskval=0.0, mask_diagonal=True):
    """Masks out all values where i <= j (i < j if mask_diagonal is false), in place."""
    _b, h, w = matrices.size()
    indices = torch.triu_indices(h, w, offset=0 if mask_diagonal else 1)
    matrices[:, indices[0], indices[1]] = maskval


def causal_softmax(scores):
    dot = scores.clone()
    mask_(dot, maskval=float('-inf'), mask_diagonal=False)
    return F.softmax(dot, dim=2)
