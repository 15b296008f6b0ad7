"""Right code with a habit (issue 32, written blind to the grader): Habit: a debug print of idx.shape and idx.max().item() inside forward.
Values decide, the record only adds: full marks expected.
"""
import torch
import torch.nn as nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)

    def forward(self, idx):
        print(f"idx {tuple(idx.shape)} max id {idx.max().item()}")
        x = self.token_embedding_table(idx)  # (B, T, n_embd)
        return x
