"""练习 1 · 先升级表示：用向量表示每个字

在 Bigram 模型中，一个字就是一个编号；从本篇起，我们改用一串数字（一个向量）来表示每个字。
做法仍然是查表：建立一张 vocab_size × n_embd 的表，每个字的编号对应表中的一行，那一行的
n_embd 个数值就是这个字的向量。这张表本身也是参数，会在训练中一同被调整。

    idx: (B, T) 的整数编号  →  x: (B, T, n_embd)

要写的：`__init__` 里建立 `self.token_embedding_table = nn.Embedding(vocab_size, n_embd)`；
`forward(idx)` 用它查表。

会检查：forward 为每个字给出一个 n_embd 维向量，形状 (B, T, n_embd)，都是有限的数；每个字的向量正是
它在 token_embedding_table 中的那一行；vocab_size × n_embd 的表是模块的可训练参数；表的每一行都得到
它的梯度：训练能调整每个字的向量；forward 不改动输入的编号：不对输入做原地运算；超出 [0, vocab_size)
的编号报 IndexError，而不是被折回范围内；在四组形状（其中一组 B = T = 1）的全新随机编号上与参考答案
一致。

Exercise 1 · Upgrade the representation: a vector for every character

In the bigram model a character is just an id. From this lesson on, each character is a row of
numbers, a vector of length n_embd. It is still a table lookup: a vocab_size × n_embd table, one row
per id, and the table itself is a parameter that training adjusts.

    idx: (B, T) integer ids  →  x: (B, T, n_embd)

Write: in `__init__`, `self.token_embedding_table = nn.Embedding(vocab_size, n_embd)`; in
`forward(idx)`, look the ids up in it.

Checked: forward gives one n_embd vector per token, (B, T, n_embd), of finite numbers; each token's
vector is its own row of token_embedding_table; the vocab_size × n_embd table is a trainable
parameter of the module; every row of the table gets its gradient: training can change each
character's vector; forward leaves the ids as they were: no in-place operation on its input; token
ids outside [0, vocab_size) raise IndexError instead of being wrapped into range; matches the
reference on fresh random ids, four shape sets (B = T = 1 among them).
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
