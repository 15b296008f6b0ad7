"""练习 1 · 先升级表示：用向量表示每个字

在 Bigram 模型中，一个字就是一个编号；从本篇起，我们改用一串数字（一个向量）来表示每个字。
做法仍然是查表：建立一张 vocab_size × n_embd 的表，每个字的编号对应表中的一行，那一行的
n_embd 个数值就是这个字的向量。这张表本身也是参数，会在训练中一同被调整。

    idx: (B, T) 的整数编号  →  x: (B, T, n_embd)

要写的：`__init__` 里建立 `self.token_embedding_table = nn.Embedding(vocab_size, n_embd)`；
`forward(idx)` 用它查表。

会检查：输出形状是 (B, T, n_embd)（vocab_size 与 n_embd 不同，维度写反会被发现）；每个字的向量
正是它在表中的那一行；这张表是可训练的参数；超出 [0, vocab_size) 的编号必须报 IndexError，而不是
被悄悄折回范围内；输入的编号不被改动；与参考答案在多组随机输入上一致（其中有 B = T = 1：
一个样本、一个字）。

Exercise 1 · Upgrade the representation: a vector for every character

In the bigram model a character is just an id. From this lesson on, each character is a row of
numbers, a vector of length n_embd. It is still a table lookup: a vocab_size × n_embd table, one row
per id, and the table itself is a parameter that training adjusts.

    idx: (B, T) integer ids  →  x: (B, T, n_embd)

Write: in `__init__`, `self.token_embedding_table = nn.Embedding(vocab_size, n_embd)`; in
`forward(idx)`, look the ids up in it.

Checked: the output shape (B, T, n_embd) (vocab_size differs from n_embd, so swapped dimensions show);
each token's vector is its row of the table; the table is a trainable parameter; ids outside
[0, vocab_size) raise IndexError instead of being wrapped into range; the ids are left unchanged;
agreement with the reference on fresh random inputs (B = T = 1 among them: one example, one token).
"""
import torch
import torch.nn as nn


class TokenEmbedding(nn.Module):
    """查表：编号 → 向量。 Lookup: ids → vectors."""

    def __init__(self, vocab_size, n_embd):
        super().__init__()
        # TODO: 建立 self.token_embedding_table：一张 vocab_size × n_embd 的表（nn.Embedding）。
        # Create self.token_embedding_table, a vocab_size × n_embd nn.Embedding.
        raise NotImplementedError("ex1: create self.token_embedding_table in TokenEmbedding.__init__")

    def forward(self, idx):
        # idx: (B, T) int64
        # TODO: 用这张表查出每个编号的向量：(B, T) → (B, T, n_embd)。
        # Look every id up in the table: (B, T) → (B, T, n_embd).
        raise NotImplementedError("ex1: look the ids up in TokenEmbedding.forward")
