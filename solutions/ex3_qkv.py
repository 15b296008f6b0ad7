"""练习 3 · 自注意力：查询、键、值

注意力为每个字设定三个角色，各用一个向量表示：查询（query）记录"我希望从前文获取什么"，键（key）
记录"我能够提供什么"，值（value）是"匹配成功之后实际交付的内容"。三个角色各用一个线性层从字向量
变换得到：nn.Linear(n_embd, head_size, bias=False)。

    x: (B, T, n_embd) → q, k, v: 各为 (B, T, head_size)

要写的：`__init__` 里建立 `self.query`、`self.key`、`self.value`；`forward(x)` 按 (q, k, v) 的
顺序返回三者。

会检查：forward 返回 (q, k, v)，每个的形状都是 (B, T, head_size)，都是有限的数；query、key、value 是
nn.Linear(n_embd, head_size) 线性层；输入全为 0 时 q、k、v 也全为 0（线性层没有偏置）；forward 不改
动 x：不对输入做原地运算；q、k、v 按这个顺序与参考答案一致（四组形状，其中一组 B = T = 1）；损失对 x
以及 query、key、value 权重的梯度与参考答案一致。

Exercise 3 · Self-attention: query, key, value

Attention gives every character three roles, each a vector: the query ("what am I looking for in the
context"), the key ("what can I offer") and the value ("what I actually hand over once matched").
Each comes from the character's vector through its own linear layer,
nn.Linear(n_embd, head_size, bias=False).

    x: (B, T, n_embd) → q, k, v: each (B, T, head_size)

Write: `self.query`, `self.key`, `self.value` in `__init__`; `forward(x)` returns them in the order
(q, k, v).

Checked: forward returns (q, k, v), each (B, T, head_size), of finite numbers; query, key and value
are nn.Linear(n_embd, head_size) layers; a zero input gives zero q, k and v (the layers have
bias=False); forward leaves x as it was: no in-place operation on its input; q, k and v match the
reference, in that order, four shape sets (B = T = 1 among them); a loss's gradients for x and for
the query, key and value weights match the reference's.
"""
import torch
import torch.nn as nn


class QKV(nn.Module):
    """三个线性层：查询、键、值。 Three linear layers: query, key, value."""

    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        # x: (B, T, n_embd)
        q = self.query(x)  # (B, T, head_size)，每个字"希望获取什么"
        k = self.key(x)  # (B, T, head_size)，每个字"能够提供什么"
        v = self.value(x)  # (B, T, head_size)，每个字"实际交付的内容"
        return q, k, v
