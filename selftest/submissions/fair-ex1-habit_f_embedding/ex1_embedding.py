"""Right code with a habit (issue 32, written blind to the grader): Habit: functional lookup F.embedding(idx, self.token_embedding_table.weight) instead of calling the module.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)

    def forward(self, idx):
        # same lookup, written with the functional API
        return F.embedding(idx, self.token_embedding_table.weight)
