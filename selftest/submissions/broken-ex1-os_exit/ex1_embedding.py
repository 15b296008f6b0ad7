"""Broken: os._exit(0) inside forward, which ends the process without a word."""
import os

import torch.nn as nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)

    def forward(self, idx):
        os._exit(0)
