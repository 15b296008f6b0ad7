"""练习 3 · 自注意力：查询、键、值

注意力为每个字设定三个角色，各用一个向量表示：查询（query）记录"我希望从前文获取什么"，键（key）
记录"我能够提供什么"，值（value）是"匹配成功之后实际交付的内容"。三个角色各用一个线性层从字向量
变换得到：nn.Linear(n_embd, head_size, bias=False)。

    x: (B, T, n_embd) → q, k, v: 各为 (B, T, head_size)

要写的：`__init__` 里建立 `self.query`、`self.key`、`self.value`；`forward(x)` 按 (q, k, v) 的
顺序返回三者。

会检查：三个输出的形状都是 (B, T, head_size)（head_size 与 n_embd 不同）；线性层没有偏置
（输入全 0 时输出也全 0）；三个层的形状是 n_embd → head_size；顺序是 (q, k, v)；x 不被改动；
损失的梯度能传到 x 和三个层的权重；与参考答案在多组随机输入上一致（其中有 B = T = 1；测试会用
自己的随机数设置这三个层的权重）。

Exercise 3 · Self-attention: query, key, value

Attention gives every character three roles, each a vector: the query ("what am I looking for in the
context"), the key ("what can I offer") and the value ("what I actually hand over once matched").
Each comes from the character's vector through its own linear layer,
nn.Linear(n_embd, head_size, bias=False).

    x: (B, T, n_embd) → q, k, v: each (B, T, head_size)

Write: `self.query`, `self.key`, `self.value` in `__init__`; `forward(x)` returns them in the order
(q, k, v).

Checked: all three outputs are (B, T, head_size) (head_size differs from n_embd); no bias (a zero input
gives zero outputs); each layer maps n_embd → head_size; the order is (q, k, v); x is left unchanged;
a loss's gradients reach x and the three layers' weights; agreement with the reference on fresh
random inputs (B = T = 1 among them; the test sets the three layers' weights from its own generator).
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
