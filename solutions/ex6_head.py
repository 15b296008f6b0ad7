"""练习 6 · 一个完整的注意力头

把前面各步连接起来：计算查询键值、做点积、缩放、施加因果掩码、做 softmax，最后用权重对值做加权
求和：out = weights @ v。它的结构与"取平均"完全相同——依然是加权求和；唯一的进步在于权重不再是
固定的平均，而是模型依据每个字的查询与键自行计算得出的。

    x: (B, T, n_embd) → out: (B, T, head_size)，T 可以是不超过 block_size 的任意长度

要写的：`__init__` 里像练习 3 那样建立 `self.query`、`self.key`、`self.value`，再准备好因果掩码
（例如用 register_buffer 保存一个 (block_size, block_size) 的 tril，用时切成 [:T, :T]）；
`forward(x)` 完成整个流程。

会检查：输出形状 (B, T, head_size)，包括 T < block_size 和很长的 T；位置 0 只能看见自己，所以它的输出等于它
自己的值向量；改动 t 之后的字（经过一个词嵌入）永远不会改变 t 及之前的输出（逐个 t 检查）；雅可比
∂out[t]/∂x[s] 在 s > t 时约为 0；线性层没有偏置；与参考答案在多组随机输入上一致。

Exercise 6 · One complete attention head

Chain the steps: query, key and value; dot products; scaling; the causal mask; softmax; and finally
the weighted sum of the values, out = weights @ v. It is the same structure as the averaging of
exercise 2, a weighted sum; the one and only advance is that the weights are no longer a fixed
average but computed by the model from each character's query and key.

    x: (B, T, n_embd) → out: (B, T, head_size), for any T up to block_size

Write: in `__init__`, `self.query`, `self.key`, `self.value` as in exercise 3, and the causal mask
(for instance a (block_size, block_size) `tril` saved with register_buffer and sliced to [:T, :T]);
`forward(x)` does the whole computation.

Checked: the output shape (B, T, head_size), T < block_size and a long T included; position 0 sees only itself, so
its output is its own value vector; changing the tokens after t (through an embedding) never changes
outputs up to t, for every t; the Jacobian ∂out[t]/∂x[s] is ≈ 0 for s > t; no bias; agreement with the
reference on fresh random inputs.
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
