"""Right code with a habit (issue 32, written blind to the grader): Habit: Python-side range check with int(idx.min()) / idx.max().item(), then indexing the weight matrix directly.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.vocab_size = vocab_size
        self.n_embd = n_embd
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)

    def forward(self, idx):
        lo, hi = int(idx.min()), idx.max().item()
        if lo < 0 or hi >= self.vocab_size:
            raise IndexError(f"ids must be in [0, {self.vocab_size}), got [{lo}, {hi}]")
        # rows of the table, picked by id
        return self.token_embedding_table.weight[idx]
