"""Real code, fair: Hugging Face GPT-2's causal mask by torch.where and finfo.min.

Modelled on huggingface/transformers, src/transformers/models/gpt2/modeling_gpt2.py (v4.2x,
GPT2Attention._attn: causal_mask = self.bias[:, :, key_length - query_length : key_length,
:key_length]; mask_value = torch.finfo(attn_weights.dtype).min; mask_value = torch.full([],
mask_value, dtype=attn_weights.dtype, device=attn_weights.device); attn_weights =
torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value);
nn.functional.softmax(attn_weights, dim=-1)), Apache-2.0. Re-typed, logic kept.

Adapter: the boolean tril made from the scores' size instead of a buffer. Right: 20/20 expected.
"""
import torch
from torch import nn


def causal_softmax(scores):
    attn_weights = scores
    query_length, key_length = attn_weights.size(-2), attn_weights.size(-1)
    bias = torch.tril(torch.ones((key_length, key_length), dtype=torch.bool)).view(
        1, key_length, key_length)
    causal_mask = bias[:, key_length - query_length: key_length, :key_length]
    mask_value = torch.finfo(attn_weights.dtype).min
    mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
    attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
    return nn.functional.softmax(attn_weights, dim=-1)
