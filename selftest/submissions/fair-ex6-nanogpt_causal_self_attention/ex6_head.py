"""Real code, fair: nanoGPT's CausalSelfAttention, on its "slow attention" path, one head.

Modelled on karpathy/nanoGPT, model.py (class CausalSelfAttention; the stored version, commit
0011cd44, is a fork's with a Softermax option), MIT. Kept: `self.flash = hasattr(torch.nn.
functional, 'scaled_dot_product_attention')`, the branch on it, the `bias` tril buffer of shape
(1, 1, block_size, block_size), the heads split with view + transpose(1, 2), att = (q @ kᵀ) *
(1.0 / math.sqrt(k.size(-1))), masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf')),
softmax, attn_dropout, y = att @ v, re-assembled with transpose + contiguous + view. Re-typed.

Adapter, as the fork's own `use_softermax` option does: self.flash = False, so the manual path
runs and PyTorch's attention is never called (it is only named, in a hasattr and a dead branch).
nanoGPT fuses q, k, v in one c_attn Linear and views by C = n_embd; the API has three separate
layers of head_size != n_embd, so q, k, v come from them and the views use the head size hs.
The output projection c_proj (outside the lesson's head) is left out. Right: 25/25 expected.
"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):

    def __init__(self, n_embd, head_size, block_size, n_head=1, dropout=0.0):
        super().__init__()
        assert head_size % n_head == 0
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.dropout = dropout
        # flash attention make GPU go brrrrr but support is only in PyTorch >= 2.0
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        self.flash = False  # the manual implementation, as with the fork's use_softermax option
        if not self.flash:
            # causal mask to ensure that attention is only applied to the left in the input sequence
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.query(x), self.key(x), self.value(x)
        hs = q.size(-1)
        k = k.view(B, T, self.n_head, hs // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, hs // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            # manual implementation of attention
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, hs)  # heads side by side
        return y


class Head(CausalSelfAttention):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, block_size, n_head=1, dropout=0.0)
