"""练习 6 · 一个完整的注意力头

把前面各步连接起来：计算查询键值、做点积、缩放、施加因果掩码、做 softmax，最后用权重对值做加权
求和：out = weights @ v。它的结构与"取平均"完全相同——依然是加权求和；唯一的进步在于权重不再是
固定的平均，而是模型依据每个字的查询与键自行计算得出的。

    x: (B, T, n_embd) → out: (B, T, head_size)，T 可以是不超过 block_size 的任意长度

要写的：`__init__` 里像练习 3 那样建立 `self.query`、`self.key`、`self.value`，再准备好因果掩码
（例如用 register_buffer 保存一个 (block_size, block_size) 的 tril，用时切成 [:T, :T]）；
`forward(x)` 完成整个流程。

会检查：forward 给出形状 (B, T, head_size)、都是有限的数的输出，T 小于 block_size 或很长时也一样；对
每个 t：改动 t 之后的字，永远不会改变 t 及之前的输出；s 在 t 之后时，∂out[t] / ∂x[s] ≈ 0；位置 0 只
能看见自己，所以它的输出就是它自己的值向量；query、key、value 没有偏置：输入全为 0 时输出也全为 0；
forward 一次处理所有位置，没有对位置的 Python 循环；可训练的参数只有三个线性层的权重：掩码不是参数；
注意力头是亲手搭的，没有调用 PyTorch 现成的注意力；forward 不改动传进来的 x：不对输入做原地运算；在
四组形状（其中一组 B = T = 1）和一个长序列的全新随机输入上与参考答案一致；损失对 x 以及 query、key、
value 权重的梯度与参考答案一致。

Exercise 6 · One complete attention head

Chain the steps: query, key and value; dot products; scaling; the causal mask; softmax; and finally
the weighted sum of the values, out = weights @ v. It is the same structure as the averaging of
exercise 2, a weighted sum; the one and only advance is that the weights are no longer a fixed
average but computed by the model from each character's query and key.

    x: (B, T, n_embd) → out: (B, T, head_size), for any T up to block_size

Write: in `__init__`, `self.query`, `self.key`, `self.value` as in exercise 3, and the causal mask
(for instance a (block_size, block_size) `tril` saved with register_buffer and sliced to [:T, :T]);
`forward(x)` does the whole computation.

Checked: forward gives (B, T, head_size) of finite numbers, for T below block_size too, and long T;
changing the tokens after t never changes the outputs up to t, for every t; ∂out[t] / ∂x[s] ≈ 0
whenever s is after t; position 0 sees only itself, so its output is its own value vector; query,
key and value have no bias: a zero input gives a zero output; forward works on all positions at
once, with no Python loop over them; the only trainable parameters are the three layers' weights:
the mask is not one; the head is built by hand, not from PyTorch's ready-made attention; forward
leaves x as it was: no in-place operation on its input; matches the reference on fresh random
inputs, four shape sets (B = T = 1 among them) and a long sequence; a loss's gradients for x and for
the query, key and value weights match the reference's.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    """一个因果自注意力头。 One head of causal self-attention."""

    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        # 因果掩码：不是参数，不参与训练 / the mask is a buffer, not a trainable parameter
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape  # C = n_embd
        block_size = self.tril.shape[0]
        if T > block_size:
            raise ValueError(f"sequence length T={T} is longer than block_size={block_size}")
        q = self.query(x)  # (B, T, head_size)
        k = self.key(x)  # (B, T, head_size)
        v = self.value(x)  # (B, T, head_size)
        head_size = q.shape[-1]
        weights = q @ k.transpose(-2, -1) * head_size ** -0.5  # (B, T, T)，计算重要性
        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))  # 屏蔽未来
        weights = F.softmax(weights, dim=-1)  # (B, T, T)，换算成权重
        out = weights @ v  # (B, T, T) @ (B, T, head_size) → (B, T, head_size)
        return out
