"""Real code, fair: d2l's masked_softmax with the decoder's causal valid lengths.

Modelled on d2l-ai/d2l-en (def sequence_mask, `X[~mask] = value` in place; def masked_softmax
with 2-D valid_lens reshaped to (-1,) and -1e6 for masked entries; the transformer decoder's
dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch_size, 1)), MIT-0. Re-typed.
sequence_mask writes into X in place; in d2l, X is a fresh product of the queries and keys, so
causal_softmax here hands it a copy of the caller's scores (which it must leave as they are).
Right: 20/20 expected.
"""
import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    """Mask irrelevant entries in sequences."""
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)


def causal_softmax(scores):
    batch_size, num_steps, _ = scores.shape
    dec_valid_lens = torch.arange(1, num_steps + 1, device=scores.device).repeat(batch_size, 1)
    return masked_softmax(scores.clone(), dec_valid_lens)
