"""Submissions the grader's own tests grade: known mistakes, fair variants, broken code.

A *mistake* is one plausible slip (or two, made together), written as an exact edit (or a few) of
the solution's text, so that it stays that slip: each `old` must occur exactly once in solutions/<exercise>.py (a changed solution that no
longer contains it fails the self-test loudly instead of silently testing nothing).
*Fair* and *broken* submissions are whole files in selftest/submissions/<name>/, laid over a copy of
solutions/, so that the other exercises are right.
"""
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOLUTIONS = HERE.parent / "solutions"
SUBMISSIONS = HERE / "submissions"


@dataclass(frozen=True)
class Mistake:
    name: str
    exercise: str
    old: str  # or a tuple of texts, for a mistake of several edits (two slips in one file)
    new: str  # the same number of replacements as `old`
    why: str
    diagnosis: str  # the key of the diagnosis the learner must see for it (None: must see none)
    caught_by: tuple = ()  # the tests (function names) whose own assertion must catch it
    says: str = ""  # a phrase the first failing check's message must hold (when it matters)


MISTAKES = [
    Mistake("swapped_dims", "ex1_embedding",
            "nn.Embedding(vocab_size, n_embd)\n", "nn.Embedding(n_embd, vocab_size)\n",
            "the table's two dimensions swapped",
            diagnosis="ex1.swapped_dims",
            caught_by=("test_table_is_a_parameter",)),
    Mistake("wrapped_ids", "ex1_embedding",
            "self.token_embedding_table(idx)",
            "self.token_embedding_table(idx % self.token_embedding_table.num_embeddings)",
            "ids outside the vocabulary wrapped into range instead of rejected",
            diagnosis="ex1.wrapped_ids",
            caught_by=("test_ids_out_of_range_raise",)),
    Mistake("flattened", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #",
            "x = self.token_embedding_table(idx).flatten(0, 1)  #",
            "the output flattened to (B*T, n_embd)",
            diagnosis="ex1.flattened",
            caught_by=("test_shape", "test_rows_of_the_table", "test_matches_reference")),
    Mistake("table_made_in_forward", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #",
            "x = nn.Embedding(*self.token_embedding_table.weight.shape)(idx)  #",
            "a fresh table made in forward: its rows are not the module's table",
            diagnosis="ex1.table_made_in_forward",
            caught_by=("test_rows_of_the_table", "test_matches_reference")),
    Mistake("column_normalised", "ex2_averaging",
            "tril.sum(dim=1, keepdim=True)", "tril.sum(dim=0, keepdim=True)",
            "the averaging matrix normalised by columns",
            diagnosis="ex2.column_normalised",
            caught_by=("test_rows_sum_to_one", "test_row_i_is_one_over_i_plus_one",
                       "test_mean_of_the_past", "test_matrix_matches_reference",
                       "test_average_matches_reference")),
    Mistake("upper_triangular", "ex2_averaging",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.triu(torch.ones(T, T))",
            "an upper-triangular averaging matrix: the future is averaged in",
            diagnosis="ex2.upper_triangular",
            caught_by=("test_future_is_zero", "test_causal", "test_row_i_is_one_over_i_plus_one")),
    Mistake("all_ones", "ex2_averaging",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.ones(T, T)",
            "an all-ones averaging matrix: every position averages the future in",
            diagnosis="ex2.all_ones",
            caught_by=("test_future_is_zero", "test_row_i_is_one_over_i_plus_one",
                       "test_mean_of_the_past", "test_causal")),
    Mistake("x_at_weights", "ex2_averaging",
            "x_averaged = weights @ x  #", "x_averaged = x @ weights  #",
            "x @ weights instead of weights @ x: the channels are mixed, not the positions",
            diagnosis="ex2.x_at_weights"),
    Mistake("loop", "ex2_averaging",
            "x_averaged = weights @ x  #",
            "x_averaged = torch.stack([x[:, :t + 1].mean(dim=1) for t in range(T)], dim=1)  #",
            "right values from a Python loop over positions",
            diagnosis="ex2.loop", caught_by=("test_vectorised",)),
    Mistake("bias_true", "ex3_qkv",
            "self.query = nn.Linear(n_embd, head_size, bias=False)",
            "self.query = nn.Linear(n_embd, head_size, bias=True)",
            "the query layer has a bias",
            diagnosis="ex3.bias",
            caught_by=("test_no_bias", "test_matches_reference")),
    Mistake("wrong_order", "ex3_qkv",
            "return q, k, v", "return k, q, v",
            "q, k, v returned in the wrong order",
            diagnosis="ex3.order",
            caught_by=("test_matches_reference",)),
    Mistake("stacked", "ex3_qkv",
            "return q, k, v", "return torch.stack((q, k, v))",
            "q, k, v stacked into one tensor instead of returned as three",
            diagnosis="ex3.stacked",
            caught_by=("test_shapes",)),
    Mistake("swapped_layer", "ex3_qkv",
            "self.key = nn.Linear(n_embd, head_size, bias=False)",
            "self.key = nn.Linear(head_size, n_embd, bias=False)",
            "the key layer maps head_size → n_embd",
            diagnosis="ex3.layer_shape",
            caught_by=("test_layers",)),
    Mistake("transposed_q", "ex4_scaling",
            "weights = q @ k.transpose(-2, -1)", "weights = q.transpose(-2, -1) @ k",
            "q transposed instead of k: (B, head_size, head_size) instead of (B, T, T)",
            diagnosis="ex4.transposed_q",
            caught_by=("test_shape", "test_variance_is_about_one", "test_matches_reference")),
    Mistake("shared_linear", "ex3_qkv",
            "self.key = nn.Linear(n_embd, head_size, bias=False)\n"
            "        self.value = nn.Linear(n_embd, head_size, bias=False)",
            "self.key = self.query\n        self.value = self.query",
            "one Linear shared by query, key and value",
            diagnosis="ex3.shared_layer", caught_by=("test_matches_reference",)),
    Mistake("scale_by_T", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights * q.shape[1] ** -0.5",
            "scaled by T (q.shape[1]) instead of head_size",
            diagnosis="ex4.scaled_by_T",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("k_at_q", "ex4_scaling",
            "weights = q @ k.transpose(-2, -1)", "weights = k @ q.transpose(-2, -1)",
            "k @ qᵀ instead of q @ kᵀ: the table of scores transposed",
            diagnosis="ex4.k_at_q", caught_by=("test_matches_reference",), says="transposed"),
    Mistake("shortcut", "ex4_scaling",
            "    return weights\n",
            "    torch.nn.functional.scaled_dot_product_attention(q, k, k)  # checked against PyTorch\n"
            "    return weights\n",
            "PyTorch's ready-made attention called (to compare with)",
            diagnosis="ex4.shortcut", caught_by=("test_built_yourself",)),
    Mistake("no_scaling", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights",
            "the scores are not scaled",
            diagnosis="ex4.not_scaled",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("scale_by_head_size", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights / head_size",
            "scaled by head_size instead of its square root",
            diagnosis="ex4.head_size_not_sqrt",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("mask_with_zero", "ex5_causal_mask",
            'masked_fill(tril == 0, float("-inf"))', "masked_fill(tril == 0, 0.0)",
            "the future masked with 0 instead of −∞: it keeps a weight after softmax",
            diagnosis="ex5.masked_with_zero",
            caught_by=("test_future_is_zero", "test_first_row", "test_matches_reference")),
    Mistake("triu", "ex5_causal_mask",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.triu(torch.ones(T, T))",
            "triu instead of tril: the past is masked and the future shown",
            diagnosis="ex5.triu",
            caught_by=("test_future_is_zero", "test_causal_for_every_position", "test_jacobian",
                       "test_first_row")),
    Mistake("mask_after_softmax", "ex5_causal_mask",
            'weights = scores.masked_fill(tril == 0, float("-inf"))\n'
            "    # softmax：把每一行的评分换算成相加为 1 的权重\n"
            "    weights = F.softmax(weights, dim=-1)",
            "weights = F.softmax(scores, dim=-1)\n"
            "    weights = weights.masked_fill(tril == 0, 0.0)",
            "the mask applied after softmax",
            diagnosis="ex5.mask_after_softmax",
            caught_by=("test_rows_sum_to_one", "test_causal_for_every_position", "test_jacobian")),
    Mistake("softmax_dim1", "ex5_causal_mask",
            "F.softmax(weights, dim=-1)", "F.softmax(weights, dim=1)",
            "softmax over dim 1 (the columns) instead of the last dimension",
            diagnosis="ex5.softmax_dim1",
            caught_by=("test_rows_sum_to_one", "test_causal_for_every_position", "test_jacobian")),
    Mistake("no_mask", "ex5_causal_mask",
            'weights = scores.masked_fill(tril == 0, float("-inf"))', "weights = scores",
            "no causal mask",
            diagnosis="ex5.no_mask",
            caught_by=("test_future_is_zero", "test_causal_for_every_position", "test_jacobian")),
    Mistake("batch_loop_stacked_on_dim1", "ex5_causal_mask",
            'weights = scores.masked_fill(tril == 0, float("-inf"))\n'
            "    # softmax：把每一行的评分换算成相加为 1 的权重\n"
            "    weights = F.softmax(weights, dim=-1)",
            'rows = [F.softmax(s.masked_fill(tril == 0, float("-inf")), dim=-1) for s in scores]\n'
            "    weights = torch.stack(rows, dim=1)",
            "a loop over the batch, stacked on dim 1: (T, B, T) instead of (B, T, T)",
            diagnosis="ex5.batch_axis",
            caught_by=("test_shape",)),
    Mistake("inverted_mask", "ex5_causal_mask",
            'masked_fill(tril == 0, float("-inf"))', 'masked_fill(tril == 1, float("-inf"))',
            "the mask inverted (tril == 1): the past hidden, the future kept",
            diagnosis="ex5.inverted_mask", caught_by=("test_rows_sum_to_one",)),
    Mistake("shortcut", "ex5_causal_mask",
            'weights = scores.masked_fill(tril == 0, float("-inf"))\n'
            "    # softmax：把每一行的评分换算成相加为 1 的权重\n"
            "    weights = F.softmax(weights, dim=-1)",
            "eye = torch.eye(T).expand_as(scores)\n"
            "    weights = F.scaled_dot_product_attention(scores, eye * T ** 0.5, eye, "
            "is_causal=True)",
            "causal softmax obtained from PyTorch's scaled_dot_product_attention",
            diagnosis="ex5.shortcut", caught_by=("test_built_yourself",)),
    Mistake("one_layer_three_names", "ex6_head",
            ("self.query = nn.Linear(n_embd, head_size, bias=False)\n",
             "        self.key = nn.Linear(n_embd, head_size, bias=False)\n",
             "        self.value = nn.Linear(n_embd, head_size, bias=False)\n"),
            ("self.query = self.key = self.value = nn.Linear(n_embd, head_size, bias=False)\n",
             "", ""),
            "one nn.Linear under three names (chained assignment): causal, but q = k = v",
            diagnosis="ex6.qkv_all_value", caught_by=("test_mask_is_not_trained",),
            says="one and the same nn.Linear"),
    Mistake("scale_by_n_embd", "ex6_head",
            "* head_size ** -0.5", "* C ** -0.5",
            "scaled by n_embd (C) instead of head_size",
            diagnosis="ex6.scaled_by_n_embd",
            caught_by=("test_matches_reference",)),
    Mistake("weights_at_x", "ex6_head",
            "out = weights @ v  #", "out = weights @ x  #",
            "the weights applied to x instead of the values v",
            diagnosis="ex6.weights_at_x",
            caught_by=("test_shape",)),
    Mistake("tril_not_sliced", "ex6_head",
            "self.tril[:T, :T] == 0", "self.tril == 0",
            "the tril buffer not sliced to [:T, :T]",
            diagnosis="ex6.tril_not_sliced",
            caught_by=()),
    Mistake("bias_true", "ex6_head",
            "self.value = nn.Linear(n_embd, head_size, bias=False)",
            "self.value = nn.Linear(n_embd, head_size, bias=True)",
            "the value layer has a bias",
            diagnosis="ex6.bias",
            caught_by=("test_no_bias", "test_first_position_sees_itself",
                       "test_matches_reference")),
    Mistake("mask_trainable", "ex6_head",
            'self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))',
            "self.tril = nn.Parameter(torch.tril(torch.ones(block_size, block_size)))",
            "the tril mask kept as a trainable nn.Parameter",
            diagnosis="ex6.mask_trainable", caught_by=("test_mask_is_not_trained",)),
    Mistake("loop", "ex6_head",
            "out = weights @ v  #",
            "out = torch.stack([(weights[:, t:t + 1] @ v)[:, 0] for t in range(T)], dim=1)  #",
            "right values from a Python loop over positions",
            diagnosis="ex6.loop", caught_by=("test_vectorised",)),
    Mistake("loop_fixed_steps", "ex6_head",
            "out = weights @ v  #",
            "out = torch.stack([(weights[:, t:t + 1] @ v)[:, 0] for t in range(min(T, 8))], dim=1)  #",
            "a Python loop over at most the lesson example's 8 positions: right up to T = 8 alone",
            diagnosis="ex6.loop_fixed_steps",
            caught_by=("test_shape", "test_matches_reference")),
    Mistake("shortcut", "ex6_head",
            "out = weights @ v  #", "out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  #",
            "PyTorch's scaled_dot_product_attention instead of the head's own steps",
            diagnosis="ex6.shortcut", caught_by=("test_built_yourself",),
            says="(F.scaled_dot_product_attention)"),  # what the learner wrote, not _safe_softmax
    Mistake("no_mask", "ex6_head",
            'weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
            "weights = weights",
            "the head has no causal mask",
            diagnosis="ex6.no_mask",
            caught_by=("test_causal_for_every_token", "test_jacobian",
                       "test_first_position_sees_itself")),
    Mistake("detached_weights", "ex6_head",
            "q = self.query(x)  #", "q = x @ self.query.weight.detach().T  #",
            "the query weight detached: right values, but it cannot learn",
            diagnosis="ex6.detached", caught_by=("test_gradients_match_reference",)),
    # -- slips found by searching each exercise's mistake space, and mistakes of structure ------
    Mistake("vocab_by_vocab", "ex1_embedding",
            "nn.Embedding(vocab_size, n_embd)\n", "nn.Embedding(vocab_size, vocab_size)\n",
            "the bigram lesson's vocab_size × vocab_size table",
            diagnosis="ex1.vocab_by_vocab"),
    Mistake("weight_indexed", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #",
            "x = self.token_embedding_table.weight[idx]  #",
            "the weight indexed directly: id −1 quietly gives the last row",
            diagnosis="ex1.negative_ids", caught_by=("test_ids_out_of_range_raise",)),
    Mistake("clamped_ids", "ex1_embedding",
            "self.token_embedding_table(idx)",
            "self.token_embedding_table(\n"
            "            idx.clamp(0, self.token_embedding_table.num_embeddings - 1))",
            "ids outside the vocabulary clamped into range",
            diagnosis="ex1.wrapped_ids", caught_by=("test_ids_out_of_range_raise",)),
    Mistake("off_by_one", "ex2_averaging",
            "tril / tril.sum(dim=1, keepdim=True)", "tril / torch.arange(T)[:, None]",
            "row i divided by i (arange from 0): row 0 divided by 0",
            diagnosis="ex2.off_by_one", caught_by=("test_rows_sum_to_one",)),
    Mistake("no_keepdim", "ex2_averaging",
            "tril.sum(dim=1, keepdim=True)", "tril.sum(dim=1)",
            "the row sums without keepdim: broadcast across the columns",
            diagnosis="ex2.sums_broadcast_as_a_row",
            caught_by=("test_rows_sum_to_one", "test_row_i_is_one_over_i_plus_one")),
    Mistake("divided_by_T", "ex2_averaging",
            "tril / tril.sum(dim=1, keepdim=True)", "tril / T",
            "every row divided by T",
            diagnosis="ex2.divided_by_T", caught_by=("test_rows_sum_to_one",)),
    Mistake("softmax_of_tril", "ex2_averaging",
            "weights = tril / tril.sum(dim=1, keepdim=True)",
            "weights = torch.softmax(tril, dim=-1)",
            "a softmax of the 0/1 tril itself, without −∞ for the future",
            diagnosis="ex2.softmax_of_zeros_and_ones",
            caught_by=("test_future_is_zero", "test_row_i_is_one_over_i_plus_one")),
    Mistake("triu_and_columns", "ex2_averaging",
            ("tril = torch.tril(torch.ones(T, T))", "tril.sum(dim=1, keepdim=True)"),
            ("tril = torch.triu(torch.ones(T, T))", "tril.sum(dim=0, keepdim=True)"),
            "two slips: triu, and normalised by columns",
            diagnosis="ex2.column_normalised+upper_triangular",
            caught_by=("test_rows_sum_to_one", "test_row_i_is_one_over_i_plus_one")),
    Mistake("out_n_embd", "ex3_qkv",
            "self.value = nn.Linear(n_embd, head_size, bias=False)",
            "self.value = nn.Linear(n_embd, n_embd, bias=False)",
            "the value layer maps n_embd → n_embd",
            diagnosis="ex3.layer_out_n_embd", caught_by=("test_layers",)),
    Mistake("order_q_v_k", "ex3_qkv",
            "return q, k, v", "return q, v, k",
            "k and v returned in each other's place",
            diagnosis="ex3.order", caught_by=("test_matches_reference",)),
    Mistake("two_biases", "ex3_qkv",
            ("self.query = nn.Linear(n_embd, head_size, bias=False)",
             "self.key = nn.Linear(n_embd, head_size, bias=False)"),
            ("self.query = nn.Linear(n_embd, head_size)",
             "self.key = nn.Linear(n_embd, head_size)"),
            "query and key left with nn.Linear's default bias",
            diagnosis="ex3.bias", caught_by=("test_no_bias",)),
    Mistake("times_sqrt", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights / head_size ** -0.5",
            "divided by head_size ** -0.5: multiplied by √head_size",
            diagnosis="ex4.times_sqrt_head_size",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("scale_by_B", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights * q.shape[0] ** -0.5",
            "scaled by the batch size (q.shape[0]) instead of head_size",
            diagnosis="ex4.scaled_by_B",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("dot_T", "ex4_scaling",
            "weights = q @ k.transpose(-2, -1)", "weights = q @ k.T",
            "k.T on a 3-D tensor reverses all three dimensions",
            diagnosis="ex4.T_on_3d"),
    Mistake("head_size_undefined", "ex4_scaling",
            "    head_size = q.shape[-1]\n", "",
            "head_size used but never defined in attention_scores",
            diagnosis="ex4.head_size_undefined"),
    Mistake("k_at_q_not_scaled", "ex4_scaling",
            ("weights = q @ k.transpose(-2, -1)", "weights = weights * head_size ** -0.5"),
            ("weights = k @ q.transpose(-2, -1)", "weights = weights"),
            "two slips: k @ qᵀ, and not scaled",
            diagnosis="ex4.k_at_q+not_scaled",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("softmax_no_dim", "ex5_causal_mask",
            "F.softmax(weights, dim=-1)", "F.softmax(weights)",
            "softmax without dim: PyTorch picks dim 0, the batch",
            diagnosis="ex5.softmax_no_dim", caught_by=("test_rows_sum_to_one",)),
    Mistake("log_softmax", "ex5_causal_mask",
            "F.softmax(weights, dim=-1)", "F.log_softmax(weights, dim=-1)",
            "log_softmax instead of softmax",
            diagnosis="ex5.log_softmax", caught_by=("test_rows_sum_to_one",)),
    Mistake("T_from_batch", "ex5_causal_mask",
            "T = scores.shape[-1]", "T = scores.shape[0]",
            "the mask sized by scores.shape[0], the batch size",
            diagnosis="ex5.mask_sized_by_B"),
    Mistake("detached", "ex5_causal_mask",
            "weights = F.softmax(weights, dim=-1)  #",
            "weights = F.softmax(weights, dim=-1).detach()  #",
            "the weights detached: right values, no gradient",
            diagnosis="ex5.detached", caught_by=("test_jacobian",)),
    Mistake("mask_bool_inverted", "ex5_causal_mask",
            'masked_fill(tril == 0, float("-inf"))', 'masked_fill(tril.bool(), float("-inf"))',
            "masked where tril is 1 (tril.bool()): the mask inverted",
            diagnosis="ex5.inverted_mask", caught_by=("test_rows_sum_to_one",)),
    Mistake("zero_fill_dim1", "ex5_causal_mask",
            ('masked_fill(tril == 0, float("-inf"))', "F.softmax(weights, dim=-1)"),
            ("masked_fill(tril == 0, 0)", "F.softmax(weights, dim=1)"),
            "two slips: the future filled with 0, and softmax over dim 1",
            diagnosis="ex5.masked_with_zero+softmax_dim1",
            caught_by=("test_rows_sum_to_one", "test_matches_reference")),
    Mistake("triu_zero_fill", "ex5_causal_mask",
            ("tril = torch.tril(torch.ones(T, T))", 'masked_fill(tril == 0, float("-inf"))'),
            ("tril = torch.triu(torch.ones(T, T))", "masked_fill(tril == 0, 0.0)"),
            "two slips: triu, and the masked scores filled with 0",
            diagnosis="ex5.masked_with_zero+triu",
            caught_by=("test_future_is_zero", "test_matches_reference")),
    Mistake("not_scaled_zero_fill", "ex6_head",
            ("q @ k.transpose(-2, -1) * head_size ** -0.5", 'float("-inf"))  # 屏蔽未来'),
            ("q @ k.transpose(-2, -1)", "0.0)  # 屏蔽未来"),
            "two slips: not scaled, and the future filled with 0",
            diagnosis="ex6.masked_with_zero+not_scaled",
            caught_by=("test_causal_for_every_token", "test_matches_reference")),
    Mistake("weights_at_k", "ex6_head",
            "out = weights @ v  #", "out = weights @ k  #",
            "the weights applied to the keys instead of the values",
            diagnosis="ex6.weights_at_k",
            caught_by=("test_first_position_sees_itself", "test_matches_reference")),
    Mistake("q_k_layers_swapped", "ex6_head",
            ("q = self.query(x)  #", "k = self.key(x)  #"),
            ("q = self.key(x)  #", "k = self.query(x)  #"),
            "q made by self.key and k by self.query: the scores transposed",
            diagnosis="ex6.k_at_q", caught_by=("test_matches_reference",)),
    Mistake("softmax_no_dim", "ex6_head",
            "F.softmax(weights, dim=-1)", "F.softmax(weights)",
            "softmax without dim inside the head: over the batch",
            diagnosis="ex6.softmax_no_dim", caught_by=("test_causal_for_every_token",)),
    Mistake("head_size_undefined", "ex6_head",
            "        head_size = q.shape[-1]\n", "",
            "head_size (an __init__ argument) used in forward without being defined there",
            diagnosis="ex6.head_size_undefined"),
    Mistake("detached_softmax", "ex6_head",
            "weights = F.softmax(weights, dim=-1)  #",
            "weights = F.softmax(weights, dim=-1).detach()  #",
            "the attention weights detached: query and key cannot learn",
            diagnosis="ex6.detached", caught_by=("test_gradients_match_reference",)),
    Mistake("three_slips", "ex6_head",
            ("q @ k.transpose(-2, -1) * head_size ** -0.5", 'float("-inf"))  # 屏蔽未来',
             "F.softmax(weights, dim=-1)"),
            ("q @ k.transpose(-2, -1)", "0.0)  # 屏蔽未来", "F.softmax(weights, dim=1)"),
            "three slips: not scaled, the future filled with 0, softmax over dim 1",
            diagnosis="ex6.masked_with_zero+not_scaled+softmax_dim1",
            caught_by=("test_causal_for_every_token", "test_matches_reference")),
    # -- written by hand as a learner would, outside the catalogue, then added to it ------------
    Mistake("head_size_not_sqrt_zero_fill", "ex6_head",
            ("q @ k.transpose(-2, -1) * head_size ** -0.5", 'float("-inf"))  # 屏蔽未来'),
            ("q @ k.transpose(-2, -1) / head_size", "0)  # 屏蔽未来"),
            "two slips: divided by head_size, and the future filled with 0",
            diagnosis="ex6.head_size_not_sqrt+masked_with_zero",
            caught_by=("test_causal_for_every_token", "test_matches_reference")),
    Mistake("scaled_by_T_weights_at_q", "ex6_head",
            ("* head_size ** -0.5", "out = weights @ v  #"),
            ("* T ** -0.5", "out = weights @ q  #"),
            "two slips: scaled by T, and the weights applied to the queries",
            diagnosis="ex6.scaled_by_T+weights_at_q",
            caught_by=("test_first_position_sees_itself", "test_matches_reference")),
    Mistake("arange_as_a_row", "ex2_averaging",
            "tril / tril.sum(dim=1, keepdim=True)", "tril / torch.arange(1, T + 1)",
            "the counts 1…T broadcast as a row: column j divided by j+1",
            diagnosis="ex2.sums_broadcast_as_a_row",
            caught_by=("test_rows_sum_to_one", "test_row_i_is_one_over_i_plus_one")),
    Mistake("size_minus_one", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights / q.size(-1)",
            "divided by q.size(-1), head_size itself, not its square root",
            diagnosis="ex4.head_size_not_sqrt",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("where_zero", "ex5_causal_mask",
            'weights = scores.masked_fill(tril == 0, float("-inf"))',
            "weights = torch.where(tril == 0, 0, scores)",
            "torch.where puts 0 in the future instead of −∞",
            diagnosis="ex5.masked_with_zero",
            caught_by=("test_future_is_zero", "test_matches_reference")),
    # Round three: mistakes tried as a new learner, outside the catalogue before
    Mistake("returns_whole_table", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #", "x = self.token_embedding_table.weight  #",
            "forward returns the whole table instead of looking the ids up",
            diagnosis="ex1.whole_table", caught_by=("test_shape",)),
    Mistake("tril_below_diagonal", "ex2_averaging",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(T, T), diagonal=-1)",
            "the triangle leaves out the diagonal: row 0 is 0/0",
            diagnosis="ex2.diagonal_excluded", caught_by=("test_rows_sum_to_one",)),
    Mistake("tril_above_diagonal", "ex2_averaging",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(T, T), diagonal=1)",
            "the triangle reaches one step into the future",
            diagnosis="ex2.one_step_of_future", caught_by=("test_future_is_zero",)),
    Mistake("cumsum_over_T", "ex2_averaging",
            "x_averaged = weights @ x  #", "x_averaged = x.cumsum(dim=1) / T  #",
            "average_context divides running sums by T instead of by i+1",
            diagnosis="ex2.divided_by_T", caught_by=("test_mean_of_the_past",)),
    Mistake("matrix_of_B", "ex2_averaging",
            "weights = averaging_matrix(T)  #", "weights = averaging_matrix(B)  #",
            "average_context sizes the averaging matrix by the batch size (an error)",
            diagnosis="ex2.matrix_sized_by_B"),
    Mistake("value_from_query", "ex3_qkv",
            "v = self.value(x)  #", "v = self.query(x)  #",
            "v is made by the query layer",
            diagnosis="ex3.layer_reused", caught_by=("test_matches_reference",)),
    Mistake("q_at_q", "ex4_scaling",
            "q @ k.transpose(-2, -1)", "q @ q.transpose(-2, -1)",
            "the queries dotted with the queries, the keys unused",
            diagnosis="ex4.q_at_q", caught_by=("test_matches_reference",)),
    Mistake("diagonal_masked", "ex5_causal_mask",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(T, T), diagonal=-1)",
            "the mask hides the diagonal too: row 0 is all −∞",
            diagnosis="ex5.diagonal_masked", caught_by=("test_shape",)),
    Mistake("one_step_of_future", "ex5_causal_mask",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(T, T), diagonal=1)",
            "the mask leaves the next position visible",
            diagnosis="ex5.one_step_of_future", caught_by=("test_future_is_zero",)),
    Mistake("softmax_dim0", "ex5_causal_mask",
            "weights = F.softmax(weights, dim=-1)  #", "weights = F.softmax(weights, dim=0)  #",
            "softmax over the batch, dim=0 written out",
            diagnosis="ex5.softmax_no_dim"),
    Mistake("triu_as_the_mask", "ex6_head",
            'weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
            'weights = weights.masked_fill(torch.triu(torch.ones(T, T)) == 1, float("-inf"))',
            "torch.triu without diagonal=1 as what to hide: the diagonal is hidden too",
            diagnosis="ex6.diagonal_masked", caught_by=("test_shape",)),
    Mistake("one_step_of_future", "ex6_head",
            "torch.tril(torch.ones(block_size, block_size))",
            "torch.tril(torch.ones(block_size, block_size), diagonal=1)",
            "the head's mask leaves the next position visible",
            diagnosis="ex6.one_step_of_future", caught_by=("test_causal_for_every_token",)),
    Mistake("k_from_query", "ex6_head",
            "k = self.key(x)  #", "k = self.query(x)  #",
            "k is made by the query layer: the scores are q @ qᵀ",
            diagnosis="ex6.k_from_query", caught_by=("test_matches_reference",)),
    Mistake("v_from_key", "ex6_head",
            "v = self.value(x)  #", "v = self.key(x)  #",
            "v is made by the key layer",
            diagnosis="ex6.weights_at_k", caught_by=("test_first_position_sees_itself",)),
    Mistake("masked_fill_dropped", "ex6_head",
            'weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
            'weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
            "masked_fill's result is thrown away (it returns a new tensor): no mask",
            diagnosis="ex6.no_mask", caught_by=("test_causal_for_every_token",)),
    # Round four: equivalent rewrites and constants that a slip of the lesson must not claim
    Mistake("transposed_weights", "ex6_head",
            "out = weights @ v  #", "out = weights.transpose(-2, -1) @ v  #",
            "the weighted sum with the weights transposed (once named as three other slips)",
            diagnosis="ex6.weights_transposed", caught_by=("test_causal_for_every_token",)),
    Mistake("transpose_sandwich", "ex2_averaging",
            "x_averaged = weights @ x  #",
            "x_averaged = (x.transpose(1, 2) @ weights).transpose(1, 2)  #",
            "(xᵀ @ weights)ᵀ, which is weightsᵀ @ x (once named as two matrix slips)",
            diagnosis="ex2.transposed_weights", caught_by=("test_causal",)),
    Mistake("divided_by_8", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights / 8",
            "a hard-coded 8 (√64): equal to head_size in one shape; the record diff names it",
            diagnosis="ex4.differs_replace_div", caught_by=("test_variance_is_about_one",)),
    Mistake("divided_by_8", "ex6_head",
            "weights = q @ k.transpose(-2, -1) * head_size ** -0.5",
            "weights = q @ k.transpose(-2, -1) / 8",
            "a hard-coded 8 in the head: no slip of the lesson; the record diff names it",
            diagnosis="ex6.differs_replace_div", caught_by=("test_matches_reference",)),
    Mistake("one_hot_linear", "ex1_embedding",
            ("nn.Embedding(vocab_size, n_embd)\n", "x = self.token_embedding_table(idx)  #"),
            ("nn.Linear(vocab_size, n_embd, bias=False)\n",
             "x = self.token_embedding_table(nn.functional.one_hot(idx, "
             "self.token_embedding_table.in_features).float())  #"),
            "a Linear on one-hot vectors: right values, but not the lesson's nn.Embedding table",
            diagnosis="ex1.not_an_embedding"),
    Mistake("dropout_always_on", "ex6_head",
            "weights = F.softmax(weights, dim=-1)  #",
            "weights = F.dropout(F.softmax(weights, dim=-1), p=0.1)  #",
            "F.dropout without training=self.training: random even in eval() mode",
            diagnosis="ex6.differs_remove_dropout", caught_by=("test_causal_for_every_token", "test_jacobian"),
            says="two different outputs for the same input"),
    Mistake("scaled_by_block_size", "ex6_head",
            "weights = q @ k.transpose(-2, -1) * head_size ** -0.5",
            "weights = q @ k.transpose(-2, -1) * self.tril.shape[0] ** -0.5",
            "the head scaled by block_size",
            diagnosis="ex6.scaled_by_block_size", caught_by=("test_matches_reference",)),
    Mistake("softmax_too_early", "ex4_scaling",
            "    return weights\n", "    return torch.softmax(weights, dim=-1)\n",
            "attention_scores applies softmax already",
            diagnosis="ex4.softmax_too_early", caught_by=("test_matches_reference",)),
    Mistake("sigmoid", "ex5_causal_mask",
            "weights = F.softmax(weights, dim=-1)  #", "weights = torch.sigmoid(weights)  #",
            "sigmoid instead of softmax",
            diagnosis="ex5.sigmoid", caught_by=("test_rows_sum_to_one",)),
    Mistake("inf_after_softmax", "ex5_causal_mask",
            ('weights = scores.masked_fill(tril == 0, float("-inf"))',
             "weights = F.softmax(weights, dim=-1)  #"),
            ("weights = F.softmax(scores, dim=-1)",
             'weights = weights.masked_fill(tril == 0, float("-inf"))  #'),
            "softmax first, then the future filled with −∞",
            diagnosis="ex5.inf_after_softmax"),
    # Issue 19: mistakes of structure and of copied code, each with its own diagnosis
    Mistake("table_assigned_in_forward", "ex1_embedding",
            ("self.token_embedding_table = nn.Embedding(vocab_size, n_embd)\n",
             "x = self.token_embedding_table(idx)  #"),
            ("self.vocab_size, self.n_embd = vocab_size, n_embd\n",
             "self.token_embedding_table = nn.Embedding(self.vocab_size, self.n_embd)\n"
             "        x = self.token_embedding_table(idx)  #"),
            "the table assigned to self in forward, not in __init__",
            diagnosis="ex1.table_made_in_forward", caught_by=("test_table_is_a_parameter",),
            says="belongs in __init__"),
    Mistake("from_pretrained", "ex1_embedding",
            "nn.Embedding(vocab_size, n_embd)\n",
            "nn.Embedding.from_pretrained(torch.randn(vocab_size, n_embd))\n",
            "nn.Embedding.from_pretrained: the table is frozen by default",
            diagnosis="ex1.frozen_table", caught_by=("test_table_is_a_parameter",),
            says="freeze=False"),
    Mistake("padding_idx", "ex1_embedding",
            "nn.Embedding(vocab_size, n_embd)\n", "nn.Embedding(vocab_size, n_embd, padding_idx=0)\n",
            "padding_idx=0 copied from seq2seq code: row 0 never trains",
            diagnosis="ex1.padding_idx", caught_by=("test_every_row_learns",)),
    Mistake("ids_transposed", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #", "x = self.token_embedding_table(idx.T)  #",
            "the ids transposed to (T, B) before the lookup, as in seq-first code",
            diagnosis="ex1.ids_transposed", caught_by=("test_shape",)),
    Mistake("scaled_by_sqrt_n_embd", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #",
            "x = self.token_embedding_table(idx) * self.token_embedding_table.embedding_dim ** 0.5  #",
            "the rows multiplied by √n_embd after the lookup, as in the Transformer paper",
            diagnosis="ex1.not_the_table", caught_by=("test_rows_of_the_table",)),
    Mistake("cumsum_from_zero", "ex2_averaging",
            "x_averaged = weights @ x  #", "x_averaged = x.cumsum(dim=1) / torch.arange(T)[:, None]  #",
            "running sums divided by torch.arange(T), from 0: position 0 divided by 0",
            diagnosis="ex2.counts_from_zero", caught_by=("test_mean_of_the_past",)),
    Mistake("cumsum_over_channels", "ex2_averaging",
            "x_averaged = weights @ x  #", "x_averaged = x.cumsum(dim=1) / torch.arange(1, T + 1)  #",
            "running sums divided by counts broadcast along the channels (an error where C != T)",
            diagnosis="ex2.counts_over_channels"),
    Mistake("fixed_8_sliced", "ex2_averaging",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(8, 8))[:T, :T]",
            "the lesson's example's T = 8 written as a number, sliced: right up to T = 8 only",
            diagnosis="ex2.fixed_size", caught_by=("test_rows_sum_to_one",)),
    Mistake("fixed_8", "ex2_averaging",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(8, 8))",
            "an 8 × 8 matrix whatever T is",
            diagnosis="ex2.fixed_size", caught_by=("test_rows_sum_to_one",)),
    Mistake("numpy_float64_matrix", "ex2_averaging",
            ("import torch\n", "weights = tril / tril.sum(dim=1, keepdim=True)  #"),
            ("import numpy as np\nimport torch\n",
             "weights = torch.from_numpy(np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None])  #"),
            "the averaging matrix made with numpy: float64, which weights @ x refuses",
            diagnosis="ex2.float64_matrix", caught_by=("test_rows_sum_to_one",)),
    Mistake("numpy_float64_average", "ex2_averaging",
            ("import torch\n", "x_averaged = weights @ x  #"),
            ("import numpy as np\nimport torch\n",
             "x_averaged = torch.from_numpy(np.cumsum(x.numpy(), axis=1) / np.arange(1, T + 1)[:, None])  #"),
            "running sums in numpy: the right numbers, returned as float64",
            diagnosis="ex2.float64_average", caught_by=("test_mean_of_the_past",)),
    Mistake("raschka_names", "ex3_qkv",
            ("self.query = nn.Linear", "self.key = nn.Linear", "self.value = nn.Linear",
             "q = self.query(x)", "k = self.key(x)", "v = self.value(x)"),
            ("self.W_query = nn.Linear", "self.W_key = nn.Linear", "self.W_value = nn.Linear",
             "q = self.W_query(x)", "k = self.W_key(x)", "v = self.W_value(x)"),
            "the layers named W_query, W_key, W_value as in Raschka's book",
            diagnosis="ex3.layer_names", caught_by=("test_layers",), says="W_query"),
    Mistake("layers_in_forward", "ex3_qkv",
            ("self.query = nn.Linear(n_embd, head_size, bias=False)\n"
             "        self.key = nn.Linear(n_embd, head_size, bias=False)\n"
             "        self.value = nn.Linear(n_embd, head_size, bias=False)\n",
             "# x: (B, T, n_embd)\n"),
            ("self.n_embd, self.head_size = n_embd, head_size\n",
             "# x: (B, T, n_embd)\n"
             "        self.query = nn.Linear(self.n_embd, self.head_size, bias=False)\n"
             "        self.key = nn.Linear(self.n_embd, self.head_size, bias=False)\n"
             "        self.value = nn.Linear(self.n_embd, self.head_size, bias=False)\n"),
            "the three layers made in forward, not in __init__",
            diagnosis="ex3.layers_made_in_forward", caught_by=("test_layers",)),
    # Round five (issue 19): scaling slips, in-place inputs, masks of the wrong size, the head's
    # return value and layers
    Mistake("precedence", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights * head_size ** -1/2",
            "head_size ** -1/2: ** before /, so (head_size ** -1) / 2",
            diagnosis="ex4.head_size_over_2",
            caught_by=("test_variance_is_about_one", "test_matches_reference")),
    Mistake("elementwise_product", "ex4_scaling",
            "weights = q @ k.transpose(-2, -1)", "weights = (q * k).sum(-1)",
            "(q * k).sum(-1): only the diagonal of the scores, (B, T)",
            diagnosis="ex4.elementwise_product", caught_by=("test_shape",)),
    Mistake("sqrt_of_int", "ex4_scaling",
            "weights = weights * head_size ** -0.5", "weights = weights / torch.sqrt(head_size)",
            "torch.sqrt of the Python int head_size: a TypeError",
            diagnosis="ex4.sqrt_of_int"),
    Mistake("q_scaled_in_place", "ex4_scaling",
            ("weights = q @ k.transpose(-2, -1)", "weights = weights * head_size ** -0.5"),
            ("q *= head_size ** -0.5\n    weights = q @ k.transpose(-2, -1)", "weights = weights"),
            "q *= head_size ** -0.5: right scores, and the caller's q changed in place",
            diagnosis="ex4.modifies_input", caught_by=("test_inputs_unchanged",)),
    Mistake("masked_fill_in_place", "ex5_causal_mask",
            "weights = scores.masked_fill(tril == 0", "weights = scores.masked_fill_(tril == 0",
            "scores.masked_fill_: right weights, and the caller's scores changed in place (a fair "
            "fixture until issue 19)",
            diagnosis="ex5.modifies_input", caught_by=("test_inputs_unchanged",)),
    Mistake("ids_unsqueezed_in_place", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #",
            "x = self.token_embedding_table(idx.unsqueeze_(-1))[..., 0, :]  #",
            "idx.unsqueeze_(-1): the right vectors, and the caller's ids reshaped in place",
            diagnosis="ex1.modifies_input", caught_by=("test_inputs_unchanged",)),
    Mistake("cumsum_in_place", "ex2_averaging",
            "x_averaged = weights @ x  #",
            "x_averaged = x.cumsum_(dim=1) / torch.arange(1, T + 1).view(1, T, 1)  #",
            "x.cumsum_: the right averages, and the caller's x turned into running sums",
            diagnosis="ex2.modifies_input", caught_by=("test_inputs_unchanged",)),
    Mistake("x_detached", "ex2_averaging",
            "x_averaged = weights @ x  #", "x_averaged = weights @ x.detach()  #",
            "weights @ x.detach(): the right averages, no gradient for x",
            diagnosis="ex2.detached", caught_by=("test_gradients_match_reference",)),
    Mistake("x_scaled_in_place", "ex3_qkv",
            ("q = self.query(x)  #", "k = self.key(x)  #", "v = self.value(x)  #"),
            ("x *= 2.0\n        q = self.query(x) / 2.0  #", "k = self.key(x) / 2.0  #",
             "v = self.value(x) / 2.0  #"),
            "x *= 2 and the outputs halved: the right q, k, v, and the caller's x doubled",
            diagnosis="ex3.modifies_input", caught_by=("test_inputs_unchanged",)),
    Mistake("projections_without_grad", "ex3_qkv",
            ("q = self.query(x)  #", "k = self.key(x)  #", "v = self.value(x)  #"),
            ("q = self.query(x).detach()  #", "k = self.key(x).detach()  #",
             "v = self.value(x).detach()  #"),
            "q, k and v detached: the right values, and no layer can learn",
            diagnosis="ex3.detached", caught_by=("test_gradients_match_reference",)),
    Mistake("scores_detached", "ex4_scaling",
            "weights = weights * head_size ** -0.5  #",
            "weights = (weights * head_size ** -0.5).detach()  #",
            "the scores detached: the right values, no gradient for q and k",
            diagnosis="ex4.detached", caught_by=("test_gradients_match_reference",)),
    # Named by the record diff (grading.diagnosis.record_diff): no catalogued slip is needed.
    Mistake("fill_minus_one", "ex6_head",
            '.masked_fill(self.tril[:T, :T] == 0, float("-inf"))', ".masked_fill(self.tril[:T, :T] == 0, -1.0)",
            "the future filled with -1 instead of -inf",
            diagnosis="ex6.differs_argument_masked_fill",
            caught_by=("test_causal_for_every_token",)),
    Mistake("no_softmax_at_all", "ex5_causal_mask",
            "weights = F.softmax(weights, dim=-1)  #", "weights = weights  #",
            "the masked scores returned as they are: no softmax",
            diagnosis="ex5.differs_insert__softmax", caught_by=("test_rows_sum_to_one",)),
    Mistake("output_rounded", "ex6_head",
            "        return out", "        return torch.round(out, decimals=2)",
            "the output rounded to 2 decimals",
            diagnosis="ex6.differs_remove_round", caught_by=("test_matches_reference",)),
    Mistake("scores_tanh", "ex4_scaling",
            "weights = weights * head_size ** -0.5  #", "weights = torch.tanh(weights * head_size ** -0.5)  #",
            "the scaled scores squashed by tanh",
            diagnosis="ex4.differs_remove_tanh", caught_by=("test_variance_is_about_one",)),
    # Named from the crash (grading.diagnosis.crashes).
    Mistake("weight_not_transposed", "ex3_qkv",
            "q = self.query(x)  #", "q = x @ self.query.weight  #",
            "x @ self.query.weight: nn.Linear keeps its weight as (head_size, n_embd)",
            diagnosis="ex3.crash_weight_not_transposed"),
    Mistake("no_super_init", "ex6_head",
            "        super().__init__()", "        pass",
            "super().__init__() left out of __init__",
            diagnosis="ex6.crash_super_init_missing"),
    Mistake("forward_misspelt", "ex6_head",
            "    def forward(self, x):", "    def foward(self, x):",
            "forward misspelt: nn.Module finds no forward",
            diagnosis="ex6.crash_forward_missing"),
    Mistake("k_transposed_0_1", "ex4_scaling",
            "weights = q @ k.transpose(-2, -1)", "weights = q @ k.transpose(0, 1)",
            "k.transpose(0, 1): the batch and the time swapped",
            diagnosis="ex4.crash_transposed_batch"),
    Mistake("float_mask", "ex5_causal_mask",
            "weights = scores.masked_fill(tril == 0", "weights = scores.masked_fill(tril",
            "the float tril given to masked_fill as its mask",
            diagnosis="ex5.crash_mask_not_bool"),
    Mistake("fixed_size_mask", "ex5_causal_mask",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(8, 8))[:T, :T]",
            "a mask of a fixed 8 × 8: right up to T = 8, a crash beyond",
            diagnosis="ex5.fixed_size_mask"),
    Mistake("times_sqrt", "ex6_head",
            "* head_size ** -0.5", "* head_size ** 0.5",
            "the head multiplies by √head_size instead of dividing",
            diagnosis="ex6.times_sqrt_head_size", caught_by=("test_matches_reference",)),
    Mistake("scaled_twice", "ex6_head",
            "        head_size = q.shape[-1]\n",
            "        head_size = q.shape[-1]\n        q = q * head_size ** -0.5  # 先缩放 q\n",
            "q already scaled, then the scores scaled again: divided by head_size",
            diagnosis="ex6.head_size_not_sqrt", caught_by=("test_matches_reference",)),
    Mistake("scaled_after_softmax", "ex6_head",
            ("weights = q @ k.transpose(-2, -1) * head_size ** -0.5",
             "weights = F.softmax(weights, dim=-1)  #"),
            ("weights = q @ k.transpose(-2, -1)",
             "weights = F.softmax(weights, dim=-1) * head_size ** -0.5  #"),
            "the weights scaled after softmax instead of the scores before it",
            diagnosis="ex6.scaled_after_softmax",
            caught_by=("test_first_position_sees_itself", "test_matches_reference")),
    Mistake("returns_a_tuple", "ex6_head",
            "        return out\n", "        return out, weights\n",
            "forward returns (out, weights), as Hugging Face's and Raschka's heads do",
            diagnosis="ex6.returns_a_tuple", caught_by=("test_shape",)),
    Mistake("mask_sized_by_head_size", "ex6_head",
            "torch.tril(torch.ones(block_size, block_size))",
            "torch.tril(torch.ones(head_size, head_size))",
            "the tril buffer head_size × head_size: the solution's own check refuses T > head_size",
            diagnosis="ex6.mask_sized_by_head_size"),
    Mistake("mask_sized_by_head_size_unchecked", "ex6_head",
            ("torch.tril(torch.ones(block_size, block_size))",
             "        if T > block_size:\n"
             "            raise ValueError(f\"sequence length T={T} is longer than "
             "block_size={block_size}\")\n"),
            ("torch.tril(torch.ones(head_size, head_size))", ""),
            "the tril buffer head_size × head_size, sliced: a crash where T > head_size",
            diagnosis="ex6.mask_sized_by_head_size"),
    Mistake("layers_in_forward", "ex6_head",
            "q = self.query(x)  #", "q = nn.Linear(C, self.query.out_features, bias=False)(x)  #",
            "a new query layer made in forward: random weights each call, self.query unused",
            diagnosis="ex6.layers_in_forward", caught_by=("test_causal_for_every_token",)),
    Mistake("x_changed_in_place", "ex6_head",
            "v = self.value(x)  #", "v = self.value(x)  # (B, T, head_size)\n        x.zero_()  #",
            "x.zero_() once x is used up (as if it freed memory): right values, and the "
            "caller's x changed in place",
            diagnosis="ex6.modifies_input", caught_by=("test_inputs_unchanged",)),
    # From the blind pass (a new learner's slips, graded before the catalogue was read):
    Mistake("mask_not_assigned", "ex5_causal_mask",
            'weights = scores.masked_fill(tril == 0, float("-inf"))',
            'scores.masked_fill(tril == 0, float("-inf"))\n    weights = scores',
            "masked_fill's result not assigned: it returns a new tensor, so nothing is masked",
            diagnosis="ex5.no_mask", caught_by=("test_future_is_zero",)),
    Mistake("mask_of_one_size", "ex5_causal_mask",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(8, 8))",
            "the mask built for the lesson's T = 8 and not cut: a crash at every other T",
            diagnosis="ex5.mask_of_one_size"),
    Mistake("mask_one_too_long", "ex5_causal_mask",
            "tril = torch.tril(torch.ones(T, T))", "tril = torch.tril(torch.ones(T + 1, T + 1))",
            "a (T+1, T+1) mask: a crash naming a size that is not fixed, so no fixed-size cause; "
            "the crash's own sizes are named",
            diagnosis="ex5.crash_sizes_differ"),
    Mistake("inf_into_integers", "ex5_causal_mask",
            ('tril = torch.tril(torch.ones(T, T))',
             'weights = scores.masked_fill(tril == 0, float("-inf"))'),
            ('tril = torch.tril(torch.ones(T, T, dtype=torch.long))',
             'bias = torch.zeros(T, T, dtype=torch.long).masked_fill(tril == 0, float("-inf"))\n'
             '    weights = scores + bias'),
            "an additive mask made as an integer tensor: −∞ cannot be filled into it",
            diagnosis="ex5.inf_into_integers"),
    Mistake("mask_not_assigned", "ex6_head",
            'weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
            'weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
            "masked_fill's result not assigned: the head has no causal mask",
            diagnosis="ex6.no_mask", caught_by=("test_causal_for_every_token",)),
    Mistake("inf_into_integers", "ex6_head",
            ("torch.tril(torch.ones(block_size, block_size))",
             'weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))'),
            ("torch.tril(torch.ones(block_size, block_size, dtype=torch.long))",
             'mask = torch.zeros(T, T, dtype=torch.long).masked_fill(self.tril[:T, :T] == 0, '
             'float("-inf"))\n        weights = weights + mask'),
            "an integer tril and an integer additive mask: −∞ cannot be filled into it",
            diagnosis="ex6.inf_into_integers"),
    Mistake("q_transposed_at_k", "ex6_head",
            "weights = q @ k.transpose(-2, -1) * head_size", "weights = q.transpose(-2, -1) @ k * head_size",
            "qᵀ @ k: (B, head_size, head_size) scores meet the sliced mask; at SHAPES[0] "
            "head_size is block_size, and the crash is no unsliced mask; the crash's own sizes "
            "are named", diagnosis="ex6.crash_sizes_differ"),
    # Issue 33: a new blind class's mistakes that had no cause, a generic one or a false one.
    Mistake("no_return", "ex1_embedding", "        return x\n", "",
            "forward computes the lookup and has no return statement",
            diagnosis="ex1.no_return"),
    Mistake("table_plain_tensor", "ex1_embedding",
            ("nn.Embedding(vocab_size, n_embd)\n", "self.token_embedding_table(idx)"),
            ("torch.randn(vocab_size, n_embd)\n", "self.token_embedding_table[idx]"),
            "a plain tensor as the table, indexed with [idx]: not a parameter",
            diagnosis="ex1.table_not_a_layer"),
    Mistake("max_norm", "ex1_embedding",
            "nn.Embedding(vocab_size, n_embd)\n", "nn.Embedding(vocab_size, n_embd, max_norm=1.0)\n",
            "nn.Embedding with max_norm: the looked-up rows come out shrunk",
            diagnosis="ex1.max_norm", caught_by=("test_rows_of_the_table",)),
    Mistake("detached_lookup", "ex1_embedding",
            "x = self.token_embedding_table(idx)  #",
            "x = self.token_embedding_table(idx).detach()  #",
            "the lookup detached: the table, a trainable parameter, gets no gradient",
            diagnosis="ex1.detached", caught_by=("test_every_row_learns",), says="cut off"),
    Mistake("integer_floor_division", "ex2_averaging",
            ("tril = torch.tril(torch.ones(T, T))", "tril / tril.sum"),
            ("tril = torch.tril(torch.ones(T, T, dtype=torch.long))", "tril // tril.sum"),
            "an integer matrix divided with //: an integer tensor meets float32 x",
            diagnosis="ex2.crash_integer_tensor"),
    Mistake("value_is_x", "ex3_qkv", "v = self.value(x)  #", "v = x  #",
            "v = x: the value is the input itself, not a projection",
            diagnosis="ex3.output_is_x"),
    Mistake("relu_after_layers", "ex3_qkv",
            ("q = self.query(x)  #", "k = self.key(x)  #", "v = self.value(x)  #"),
            ("q = torch.relu(self.query(x))  #", "k = torch.relu(self.key(x))  #",
             "v = torch.relu(self.value(x))  #"),
            "a ReLU after each of the three layers",
            diagnosis="ex3.after_the_layers", says="ReLU"),
    Mistake("fused_c_attn_unused", "ex3_qkv",
            ("        self.value = nn.Linear(n_embd, head_size, bias=False)\n",
             "q = self.query(x)  #", "k = self.key(x)  #", "v = self.value(x)  #"),
            ("        self.value = nn.Linear(n_embd, head_size, bias=False)\n"
             "        self.c_attn = nn.Linear(n_embd, 3 * head_size, bias=False)\n",
             "q, k, v = self.c_attn(x).chunk(3, dim=-1)  #", "#", "#"),
            "nanoGPT's fused c_attn makes q, k, v; the three API layers are built but unused",
            diagnosis="ex3.layers_unused"),
    Mistake("nan_to_num_input", "ex3_qkv", "q = self.query(x)  #",
            "q = self.query(x.nan_to_num_())  #",
            "an in-place operation on the input that leaves its values as they were",
            diagnosis="ex3.modifies_input", caught_by=("test_inputs_unchanged",),
            says="in-place operation"),
    Mistake("tf_transpose_b", "ex4_scaling",
            "weights = q @ k.transpose(-2, -1)  #",
            "weights = torch.matmul(q, k, transpose_b=True)  #",
            "TensorFlow's transpose_b keyword given to torch.matmul",
            diagnosis="ex4.crash_foreign_keyword"),
    Mistake("mask_fill_typo", "ex5_causal_mask", "scores.masked_fill(", "scores.mask_fill(",
            "mask_fill for masked_fill", diagnosis="ex5.crash_misspelt"),
    Mistake("additive_mask_nan", "ex5_causal_mask",
            'weights = scores.masked_fill(tril == 0, float("-inf"))',
            'weights = scores + (tril == 0) * float("-inf")',
            "an additive mask made as (tril == 0) * -inf: 0 × −∞ is NaN",
            diagnosis="ex5.zero_times_inf", caught_by=("test_shape",)),
    Mistake("divided_by_row_sum", "ex5_causal_mask",
            ('scores.masked_fill(tril == 0, float("-inf"))', "F.softmax(weights, dim=-1)"),
            ("scores.masked_fill(tril == 0, 0.0)", "weights / weights.sum(dim=-1, keepdim=True)"),
            "the future zeroed and each row divided by its sum instead of a softmax",
            diagnosis="ex5.divided_by_row_sum"),
    Mistake("row_loop_past_only", "ex5_causal_mask",
            ('weights = scores.masked_fill(tril == 0, float("-inf"))',
             "weights = F.softmax(weights, dim=-1)  #"),
            ("weights = torch.zeros_like(scores)\n    for t in range(T):\n"
             "        weights[:, t, :t] = F.softmax(scores[:, t, :t], dim=-1)",
             "weights = weights  #"),
            "rows filled in a loop with softmax(scores[:, t, :t]): the +1 is missing",
            diagnosis="ex5.past_only"),
    Mistake("softmax_overflow", "ex5_causal_mask", "F.softmax(weights, dim=-1)",
            "(weights.exp() / weights.exp().sum(dim=-1, keepdim=True))",
            "a softmax by hand without subtracting the row maximum: exp overflows",
            diagnosis="ex5.softmax_overflow", caught_by=("test_shape",), says="own largest score"),
    Mistake("T_undefined", "ex5_causal_mask", "    T = scores.shape[-1]\n", "",
            "T used in a plain function that never defines it",
            diagnosis="ex5.crash_name_undefined", says="'T' is not defined"),
    Mistake("sum_without_keepdim", "ex5_causal_mask", "F.softmax(weights, dim=-1)",
            "(weights - weights.amax(-1, keepdim=True)).exp() / "
            "(weights - weights.amax(-1, keepdim=True)).exp().sum(dim=-1)",
            "a softmax by hand whose row sums lose their dimension (no keepdim)",
            diagnosis="ex5.crash_sum_without_keepdim"),
    Mistake("returns_weights", "ex6_head", "        return out\n", "        return weights\n",
            "forward computes out and returns the weights", diagnosis="ex6.weights_returned"),
    Mistake("register_buffer_no_name", "ex6_head",
            'self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))',
            "self.register_buffer(torch.tril(torch.ones(block_size, block_size)))",
            "register_buffer given the tensor without a name",
            diagnosis="ex6.crash_register_buffer_name"),
    Mistake("tril_element", "ex6_head", "self.tril[:T, :T] == 0", "self.tril[T, T] == 0",
            "self.tril[T, T], one element, for self.tril[:T, :T]",
            diagnosis="ex6.crash_element_not_slice"),
    Mistake("assert_strict", "ex6_head",
            "        if T > block_size:\n            raise ValueError(",
            "        assert T < block_size, (",
            "the learner's own assert T < block_size rejects T == block_size",
            diagnosis="ex6.crash_assert_strict"),
    Mistake("T_from_channels", "ex6_head", "B, T, C = x.shape  # C = n_embd",
            "B, _, C = x.shape  # C = n_embd\n        T = x.shape[-1]",
            "T read from x's last dimension, n_embd", diagnosis="ex6.crash_time_from_channels"),
    Mistake("softmx_typo", "ex6_head", "F.softmax(weights, dim=-1)  #", "F.softmx(weights, dim=-1)  #",
            "F.softmx for F.softmax", diagnosis="ex6.crash_misspelt"),
    # Issue 33: the held-out class's classes that had no cause.
    Mistake("returns_tuple", "ex1_embedding", "        return x\n", "        return x, None\n",
            "forward returns (x, None), as nanoGPT's returns (logits, loss)",
            diagnosis="ex1.returned_tuple"),
    Mistake("table_named_otherwise", "ex1_embedding",
            ("        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)\n",
             "x = self.token_embedding_table(idx)  #"),
            ("        self.embedding = nn.Embedding(vocab_size, n_embd)\n", "x = self.embedding(idx)  #"),
            "the table built as self.embedding", diagnosis="ex1.layers_named_otherwise"),
    Mistake("lookup_transposed", "ex1_embedding", "x = self.token_embedding_table(idx)  #",
            "x = torch.nn.functional.embedding(idx, self.token_embedding_table.weight.T)  #",
            "ids looked up in the transposed table", diagnosis="ex1.lookup_transposed"),
    Mistake("inplace_int_division", "ex2_averaging",
            ("tril = torch.tril(torch.ones(T, T))", "weights = tril / tril.sum(dim=1, keepdim=True)"),
            ("tril = torch.tril(torch.ones(T, T, dtype=torch.long))",
             "tril /= tril.sum(dim=1, keepdim=True)\n    weights = tril"),
            "an integer tril divided in place", diagnosis="ex2.crash_inplace_on_integers"),
    Mistake("softmax_mask_inverted", "ex2_averaging",
            "weights = tril / tril.sum(dim=1, keepdim=True)",
            "weights = torch.softmax(torch.zeros(T, T).masked_fill(tril == 1, float('-inf')), dim=-1)",
            "the lesson's softmax version with the mask's condition inverted",
            diagnosis="ex2.softmax_mask_inverted"),
    Mistake("concatenated", "ex3_qkv", "        return q, k, v\n",
            "        return torch.cat([q, k, v], dim=-1)\n",
            "q, k, v returned as one concatenated tensor", diagnosis="ex3.concatenated"),
    Mistake("keras_kernels", "ex3_qkv",
            ("self.query = nn.Linear(n_embd, head_size, bias=False)", "q = self.query(x)  #"),
            ("self.query = nn.Parameter(torch.randn(n_embd, head_size))", "q = x @ self.query  #"),
            "a bare (n_embd, head_size) Parameter as the query layer, as a Keras kernel",
            diagnosis="ex3.layer_not_a_linear"),
    Mistake("c_attn_only", "ex3_qkv",
            ("self.query = nn.Linear(n_embd, head_size, bias=False)\n"
             "        self.key = nn.Linear(n_embd, head_size, bias=False)\n"
             "        self.value = nn.Linear(n_embd, head_size, bias=False)\n",
             "q = self.query(x)  #", "k = self.key(x)  #", "v = self.value(x)  #"),
            ("self.c_attn = nn.Linear(n_embd, 3 * head_size, bias=False)\n",
             "q, k, v = self.c_attn(x).chunk(3, dim=-1)  #", "#", "#"),
            "nanoGPT's fused c_attn alone, split in three", diagnosis="ex3.layers_named_otherwise"),
    Mistake("half_fill", "ex5_causal_mask", 'weights = scores.masked_fill(tril == 0, float("-inf"))',
            "weights = scores.half().masked_fill(tril == 0, -1e9).float()",
            "the mask filled with -1e9 in float16", diagnosis="ex5.crash_fill_beyond_half"),
    Mistake("key_bias", "ex6_head", "self.key = nn.Linear(n_embd, head_size, bias=False)",
            "self.key = nn.Linear(n_embd, head_size)",
            "a bias on the key alone: it cancels in the softmax, only the parameters show it",
            diagnosis="ex6.bias", caught_by=("test_mask_is_not_trained",)),
    Mistake("x_scaled_in_place", "ex6_head", "q = self.query(x)  #",
            "x /= C ** 0.5\n        q = self.query(x)  #",
            "x divided in place before the projections: wrong values, and the caller's x changed",
            diagnosis="ex6.modifies_input", caught_by=("test_inputs_unchanged",)),
    Mistake("float_ids", "ex1_embedding", "x = self.token_embedding_table(idx)  #",
            "x = self.token_embedding_table(idx.float())  #",
            "the ids turned into floats before the lookup", diagnosis="ex1.crash_float_ids"),
    Mistake("output_projection", "ex6_head",
            ("        self.value = nn.Linear(n_embd, head_size, bias=False)\n", "        return out\n"),
            ("        self.value = nn.Linear(n_embd, head_size, bias=False)\n"
             "        self.proj = nn.Linear(head_size, head_size)\n", "        return self.proj(out)\n"),
            "an output projection (with a bias) after the weighted sum",
            diagnosis="ex6.extra_layer"),
]
# `python grader.py --check N`: the self-test of exercise N alone (commands/check.py sets it).
ALL_MISTAKES = list(MISTAKES)  # the whole catalogue, whatever --check N keeps (long runs use one)
ONLY = os.environ.get("SELFTEST_EXERCISE") or None
if ONLY:
    MISTAKES = [mistake for mistake in MISTAKES if mistake.exercise == ONLY]


def about(exercise):
    """A mark for a test about one exercise's fixtures: skipped under --check of another."""
    import pytest
    return pytest.mark.skipif(ONLY not in (None, exercise),
                              reason=f"--check of {ONLY}: this test is about {exercise}")


def mistake_id(mistake):
    return f"mistake-{mistake.exercise.split('_')[0]}-{mistake.name}"


# Attacks whose honest twin (the same answer without the attack) is shared; any other attack-X has
# twin-X, or honest points fixed in test_attacks.HONEST.
SHARED_TWINS = {
    **dict.fromkeys(["attack-ex5-portable_fork_exec", "attack-ex5-portable_walls_global",
                     "attack-ex5-portable_dirfd", "attack-ex5-portable_from_file",
                     "attack-ex5-portable_torchscript", "attack-ex5-portable_write_rows",
                     "attack-ex5-portable_pth", "attack-ex5-portable_meta_path"],
                    "twin-ex5-no_mask"),
    "attack-ex5-count_reply_int": "twin-ex5-right",
    **dict.fromkeys(["attack-ex5-forged_deep", "attack-ex5-forged_frames", "attack-ex5-forged_huge",
                     "attack-ex5-forged_internal", "attack-ex5-sdpa_weights"], "twin-ex5-right"),
    **dict.fromkeys(["attack-ex6-scenario_swap", "attack-ex6-jacobian_patch",
                     "attack-ex6-randint_patch"], "twin-ex6-no_mask"),
    **dict.fromkeys(["attack-ex6-loop_disable_torch_function",
                     "attack-ex6-loop_class_alias", "attack-ex6-loop_getattr_recursion"],
                    "twin-ex6-loop"),
    # Vectorised whenever a dispatch mode is active: the record it shows is the honest by-hand head
    "attack-ex6-loop_if_no_mode": "twin-ex6-by_hand",
    **dict.fromkeys(["attack-ex6-sdpa_aten_default", "attack-ex6-sdpa_disable_torch_function",
                     "attack-ex6-sdpa_math", "attack-ex6-sdpa_obfuscated"], "twin-ex6-by_hand"),
    # Loops hidden from the source reader (issue 16): a loop of T steps, or of block_size or 64
    # steps at every T (as many operations whatever T is), beside the same loop written plainly.
    "attack-ex6-loop_range64_break": "twin-ex6-loop",
    **dict.fromkeys(["attack-ex6-loop_range64_padded", "attack-ex6-loop_sorted_key",
                     "attack-ex6-loop_pyc_beside_stub",
                     "attack-ex6-loop_method_via_tuple", "attack-ex6-loop_subpackage",
                     "attack-ex6-loop_importlib", "attack-ex6-loop_marshal_code"],
                    "twin-ex6-loop_block_size"),
    "attack-ex2-loop_numpy_apply_along_axis": "twin-ex2-loop_numpy",
    "attack-ex6-sdpa_vars_F": "twin-ex6-sdpa_reversed_name",  # sdpa named plainly: 24/25
    "attack-ex6-stateful_prefix_memory": "twin-ex6-no_mask",
    # Issue 23: code that behaves only on the first call of a size; a custom backward, and a
    # forward and a gradient of two computations; the judge's replay made costly.
    "attack-ex6-first_call_loop": "twin-ex6-loop",
    "attack-ex6-mask_hidden_dispatch": "twin-ex6-mask_loop",  # a loop hidden from the record
    "attack-ex2-weights_hidden_dispatch": "twin-ex2-weights_loop",
    "attack-ex6-first_call_sdpa": "twin-ex6-sdpa_reversed_name",
    **dict.fromkeys(["attack-ex6-loop_fixed_48", "attack-ex6-loop_fixed_long"],
                    "twin-ex6-loop_block_size"),
    **dict.fromkeys(["attack-ex6-custom_backward", "attack-ex6-straight_through"],
                    "twin-ex6-no_mask"),
    **dict.fromkeys(["attack-ex6-judge_cost_polynomial", "attack-ex6-judge_memory_index"],
                    "twin-ex6-by_hand"),
    # Issue 32: calls told apart by their sizes, their structure, autograd or the request; a
    # worker that stops itself.
    "attack-ex6-wrong_at_how_sizes": "twin-ex6-loop",
    "attack-ex6-sdpa_by_hand_at_how_sizes": "twin-ex6-sdpa_reversed_name",
    **dict.fromkeys(["attack-ex6-mask_when_grad", "attack-ex6-mask_when_structured",
                     "attack-ex6-sigstop_at_probe"], "twin-ex6-no_mask"),
}


def twin_of(attack):
    """The honest twin's folder of an attack fixture (it may not exist: see test_attacks.HONEST)."""
    return SUBMISSIONS / SHARED_TWINS.get(attack.name, attack.name.replace("attack-", "twin-", 1))


def fixture_dirs(kind):
    """The folders of whole-file fixtures of one kind: 'fair' or 'broken' (of exercise ONLY's
    alone, under --check N). --check without --full leaves the right answers with habits and
    the attacks with their twins to --check --full (CI): the grader's own defences, not what a
    change to solutions/ or tests/ breaks, and half of the rows --check would grade."""
    quick = os.environ.get("SELFTEST_QUICK") == "1"  # --check without --full: see conftest
    if quick and kind in ("attack", "twin"):
        return []
    return sorted(p for p in SUBMISSIONS.glob(f"{kind}-*")
                  if p.is_dir() and (ONLY is None or exercise_of_fixture(p) == ONLY)
                  and not (quick and "-habit_" in p.name))


def exercise_of_fixture(folder):
    """The exercise a fair or broken fixture is about: the first ex*.py it holds."""
    return sorted(p.stem for p in folder.glob("ex*.py"))[0]


def family(exercise):
    """The first exercise of the chain `exercise` is graded over the learner's own copy of (or
    itself): exercises of one family are not graded apart."""
    import course
    if exercise not in course.BY_NAME:
        return exercise
    needs = course.needs(exercise)
    return needs[0] if needs and course.BY_NAME[exercise].graded_over == "own" else exercise


def materialise_mistake(mistake, target):
    """A full submission in `target`: the solutions with the mistake's one edit."""
    materialise_together([mistake], [], target)


def materialise_files(folder, target):
    """A full submission in `target`: the solutions with the fixture's files laid over them."""
    materialise_together([], [folder], target)


def materialise_together(mistakes, folders, target, only=None):
    """One submission holding several fixtures, each in an exercise of its own (the exercises are
    graded apart, each in its own worker): the solutions, each mistake's edit, each folder's
    files laid over them. `only`: the exercises whose solutions it holds (None: all)."""
    if only is None:
        shutil.copytree(SOLUTIONS, target)
    else:  # the package's __init__ and the exercises asked for, with those they import (by
        # course.py's uses, or by name in a fixture's own text: fair-ex6-reuses_ex5_absolute)
        import course
        target.mkdir(parents=True)
        shutil.copy(SOLUTIONS / "__init__.py", target / "__init__.py")
        texts = [m.new if isinstance(m.new, str) else " ".join(m.new) for m in mistakes] + [
            f.read_text(encoding="utf-8", errors="replace")
            for folder in folders for f in folder.rglob("*.py")]
        only = set(only) | {n for n in course.NAMES if any(n in text for text in texts)}
        for name in {n for exercise in only for n in (exercise, *course.needs(exercise))}:
            shutil.copy(SOLUTIONS / f"{name}.py", Path(target) / f"{name}.py")
    for mistake in mistakes:
        path = Path(target) / f"{mistake.exercise}.py"
        path.write_text(apply_edits(mistake, path.read_text(encoding="utf-8")), encoding="utf-8")
    for folder in folders:
        for file in folder.iterdir():
            if file.is_file():
                shutil.copy(file, Path(target) / file.name)
            elif file.is_dir():  # a sub-package (attack-ex6-loop_subpackage), a __pycache__
                shutil.copytree(file, Path(target) / file.name, dirs_exist_ok=True)


class StaleMistake(AssertionError):
    """A known mistake's edit no longer applies to its solution: the text it replaces is not
    there exactly once. Either the solution is broken there, or it was rewritten on purpose."""

    def __init__(self, mistake, old, count):
        self.mistake, self.old, self.count = mistake, old, count
        super().__init__(
            f"solutions/{mistake.exercise}.py no longer holds, exactly once, the text that the "
            f"known mistake {mistake_id(mistake)} edits ({old.strip()!r}: found {count} times). "
            f"That mistake is: {mistake.why}. If the solution is broken there, restore it; if "
            f"you rewrote it on purpose, update that mistake's `old` in selftest/fixtures.py.")


def apply_edits(mistake, text):
    """The solution's text with the mistake's edits made, one after the other; StaleMistake when
    a text to replace is not there exactly once."""
    for old, new in edits(mistake):
        count = text.count(old)
        if count != 1:
            raise StaleMistake(mistake, old, count)
        text = text.replace(old, new)
    return text


def stale_mistakes(solutions=SOLUTIONS):
    """[StaleMistake, …]: the known mistakes whose edits no longer apply to `solutions`."""
    found = []
    for mistake in MISTAKES:
        path = Path(solutions) / f"{mistake.exercise}.py"
        try:
            apply_edits(mistake, path.read_text(encoding="utf-8"))
        except StaleMistake as stale:
            found.append(stale)
        except OSError:
            found.append(StaleMistake(mistake, "(the file itself)", 0))
    return found


def edits(mistake):
    """[(old, new), …]: a mistake's edits, made one after the other."""
    if isinstance(mistake.old, str):
        return [(mistake.old, mistake.new)]
    assert len(mistake.old) == len(mistake.new), mistake_id(mistake)
    return list(zip(mistake.old, mistake.new))


def one_per_exercise(fixtures, exercise_of):
    """Fixtures dealt into groups that hold at most one fixture of each exercise, and of each
    family: an exercise graded over the learner's own copies of those it uses (course.py's
    graded_over="own") shares its slot with them, since their mistakes change its grade."""
    groups = []
    for fixture in fixtures:
        slot = family(exercise_of(fixture))
        group = next((g for g in groups if slot not in {family(e) for e in g}), None)
        if group is None:
            groups.append(group := {})
        group[exercise_of(fixture)] = fixture
    return groups
