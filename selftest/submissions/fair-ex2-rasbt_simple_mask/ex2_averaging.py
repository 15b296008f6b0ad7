"""Real code, fair: Raschka's "simple mask" renormalisation, applied to uniform weights.

Modelled on rasbt/LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (section 3.5.1:
mask_simple = torch.tril(torch.ones(context_length, context_length)); masked_simple =
attn_weights*mask_simple; row_sums = masked_simple.sum(dim=-1, keepdim=True);
masked_simple_norm = masked_simple / row_sums), Apache-2.0. Re-typed, logic kept.

Adapter: the attention weights it masks are uniform (a softmax of zero scores), so the
renormalised rows are the averaging matrix. Right: 15/15 expected.
"""
import torch


def averaging_matrix(T):
    context_length = T
    attn_weights = torch.softmax(torch.zeros(context_length, context_length), dim=-1)
    mask_simple = torch.tril(torch.ones(context_length, context_length))
    masked_simple = attn_weights * mask_simple
    row_sums = masked_simple.sum(dim=-1, keepdim=True)
    masked_simple_norm = masked_simple / row_sums
    return masked_simple_norm


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x
