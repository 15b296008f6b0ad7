"""Right code with a habit (issue 32, written blind to the grader): Habit: explicit bounds check with (idx < 0).any() or (idx >= V).any() raising IndexError, then the table lookup.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.vocab_size = vocab_size
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)

    def forward(self, idx):
        V = self.vocab_size
        if (idx < 0).any() or (idx >= V).any():
            raise IndexError(f"token id out of range [0, {V})")
        return self.token_embedding_table(idx)
