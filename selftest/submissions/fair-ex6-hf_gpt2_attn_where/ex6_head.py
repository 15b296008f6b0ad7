"""Real code, fair: Hugging Face GPT2Attention._attn (the eager path), one head.

Modelled on huggingface/transformers, src/transformers/models/gpt2/modeling_gpt2.py (v4.2x,
GPT2Attention: a boolean `bias` buffer torch.tril(torch.ones((max_positions, max_positions),
dtype=torch.bool)).view(1, 1, n, n); in _attn: attn_weights = torch.matmul(query,
key.transpose(-1, -2)); divided by torch.full([], value.size(-1) ** 0.5); causal_mask =
self.bias[:, :, key_length - query_length : key_length, :key_length]; mask_value =
torch.finfo(attn_weights.dtype).min as torch.full([]); attn_weights = torch.where(causal_mask,
attn_weights, mask_value); softmax; attn_dropout; torch.matmul(attn_weights, value); _split_heads
and _merge_heads by view + permute), Apache-2.0. Re-typed, logic kept.

Adapter: num_heads=1, q/k/v from the three API layers (GPT-2 fuses them in a Conv1D c_attn), no
c_proj, attn_dropout 0.0. Right: 25/25 expected.
"""
import torch
from torch import nn


class GPT2Attention(nn.Module):
    def __init__(self, n_embd, head_size, max_positions, num_heads=1):
        super().__init__()
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions),
            persistent=False)
        self.num_heads = num_heads
        self.head_dim = head_size // num_heads
        self.scale_attn_weights = True
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.attn_dropout = nn.Dropout(0.0)

    def _attn(self, query, key, value, attention_mask=None, head_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full(
                [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states):
        query = self._split_heads(self.query(hidden_states), self.num_heads, self.head_dim)
        key = self._split_heads(self.key(hidden_states), self.num_heads, self.head_dim)
        value = self._split_heads(self.value(hidden_states), self.num_heads, self.head_dim)
        attn_output, attn_weights = self._attn(query, key, value)
        return self._merge_heads(attn_output, self.num_heads, self.head_dim)


class Head(GPT2Attention):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, max_positions=block_size, num_heads=1)
