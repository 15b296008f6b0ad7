"""练习 2 · 一个初步的做法：对前文取平均

让每个位置的向量，等于它自身与它之前所有字向量的平均。直接用循环来求平均效率较低：构造一个下三角
的全 1 矩阵 tril，对它的每一行做归一化（一行之和等于 1），得到 weights；再用 weights @ x，
第 i 个位置（从 0 数起）便自动得到了前 i+1 个字的平均。weights 的第 0 行是 [1, 0, 0, ...]，
第 1 行是 [0.5, 0.5, 0, ...]，第 2 行是 [0.33, 0.33, 0.33, 0, ...]。

    averaging_matrix(T) → weights: (T, T)
    average_context(x):  x: (B, T, C) → (B, T, C)

会检查：每一行之和为 1；上三角（未来的位置）全为 0；第 0 行是 [1, 0, ...]，第 i 行是前 i+1 个
1/(i+1)；位置 t 的输出是 x[:, :t+1] 的平均；改动 t 之后的输入不会改变 t 及之前的输出；x 不被改动；
损失对 x 的梯度能传回去；与参考答案在多组随机输入上一致（其中有 B = T = 1）。

Exercise 2 · A first attempt: average over the context

Make each position's vector the mean of itself and every vector before it. A Python loop is slow;
instead build a lower-triangular matrix of ones, `tril`, normalise each row so it sums to 1 (that is
`weights`), and compute `weights @ x`: position i (counting from 0) then holds the mean of the first
i+1 vectors. Row 0 of weights is [1, 0, 0, ...], row 1 is [0.5, 0.5, 0, ...], row 2 is
[0.33, 0.33, 0.33, 0, ...].

    averaging_matrix(T) → weights: (T, T)
    average_context(x):  x: (B, T, C) → (B, T, C)

Checked: rows sum to 1; the upper triangle (the future) is 0; row 0 is [1, 0, ...] and row i holds
i+1 entries of 1/(i+1); output t is the mean of x[:, :t+1]; changing inputs after t never changes
outputs up to t; x is left unchanged; a loss's gradient reaches x; agreement with the reference on
fresh random inputs (B = T = 1 among them).
"""
import torch


def averaging_matrix(T):
    """(T, T) 的平均矩阵：第 i 行前 i+1 个数都是 1/(i+1)。 Row i: 1/(i+1) on its first i+1 entries."""
    # 下三角的全 1 矩阵：第 i 行只有前 i+1 个位置为 1
    tril = torch.tril(torch.ones(T, T))  # (T, T)
    # 对每一行做归一化，使一行的数值之和等于 1
    weights = tril / tril.sum(dim=1, keepdim=True)  # (T, T)
    return weights


def average_context(x):
    """每个位置变为"自身与前文的平均"。 Each position becomes the mean of itself and its past."""
    B, T, C = x.shape
    weights = averaging_matrix(T)  # (T, T)
    x_averaged = weights @ x  # (T, T) @ (B, T, C) → (B, T, C)
    return x_averaged
