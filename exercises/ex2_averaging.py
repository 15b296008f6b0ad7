"""练习 2 · 一个初步的做法：对前文取平均

让每个位置的向量，等于它自身与它之前所有字向量的平均。直接用循环来求平均效率较低：构造一个下三角
的全 1 矩阵 tril，对它的每一行做归一化（一行之和等于 1），得到 weights；再用 weights @ x，
第 i 个位置（从 0 数起）便自动得到了前 i+1 个字的平均。weights 的第 0 行是 [1, 0, 0, ...]，
第 1 行是 [0.5, 0.5, 0, ...]，第 2 行是 [0.33, 0.33, 0.33, 0, ...]。

    averaging_matrix(T) → weights: (T, T)
    average_context(x):  x: (B, T, C) → (B, T, C)

会检查：averaging_matrix：每一行之和为 1；averaging_matrix：上三角（未来的位置）全为 0；
averaging_matrix：第 0 行是 [1, 0, …]，第 i 行的前 i+1 个数都是 1/(i+1)；average_context：位置 t 的
输出是 x[:, :t+1] 的平均；average_context：改动位置 t 之后的 x，不会改变 t 及之前的输出；
average_context 是一次矩阵乘法，没有对位置的 Python 循环；average_context 不改动 x：不对输入做原地运
算；T = 1、5、8、12 时 averaging_matrix 与参考答案一致；在四组形状（其中一组 B = T = 1）和一个长序列
的全新随机 x 上 average_context 与参考答案一致；损失对 x 的梯度与参考答案一致：训练时梯度能传回去。

Exercise 2 · A first attempt: average over the context

Make each position's vector the mean of itself and every vector before it. A Python loop is slow;
instead build a lower-triangular matrix of ones, `tril`, normalise each row so it sums to 1 (that is
`weights`), and compute `weights @ x`: position i (counting from 0) then holds the mean of the first
i+1 vectors. Row 0 of weights is [1, 0, 0, ...], row 1 is [0.5, 0.5, 0, ...], row 2 is
[0.33, 0.33, 0.33, 0, ...].

    averaging_matrix(T) → weights: (T, T)
    average_context(x):  x: (B, T, C) → (B, T, C)

Checked: averaging_matrix: every row sums to 1; averaging_matrix: the upper triangle (the future) is
0; averaging_matrix: row 0 is [1, 0, …], row i is 1/(i+1) on its first i+1 entries; average_context:
position t is the mean of x[:, :t+1]; average_context: changing x after position t never changes
outputs up to t; average_context is one matrix product, with no Python loop over positions;
average_context leaves x as it was: no in-place operation on its input; averaging_matrix matches the
reference for T = 1, 5, 8, 12; average_context matches the reference on fresh random x, four shape
sets (B = T = 1 among them) and a long one; a loss's gradient for x matches the reference's:
training can send it back through.
"""
import torch


def averaging_matrix(T):
    """(T, T) 的平均矩阵：第 i 行前 i+1 个数都是 1/(i+1)。 Row i: 1/(i+1) on its first i+1 entries."""
    # 下三角的全 1 矩阵：第 i 行只有前 i+1 个位置为 1
    # TODO: 构造下三角的全 1 矩阵 tril，再把每一行归一化，使一行之和等于 1。
    # Build tril (lower-triangular ones) and normalise each row to sum to 1.
    raise NotImplementedError("ex2: build the (T, T) averaging matrix in averaging_matrix")


def average_context(x):
    """每个位置变为"自身与前文的平均"。 Each position becomes the mean of itself and its past."""
    # TODO: 用平均矩阵乘 x，不要写循环：(T, T) @ (B, T, C) → (B, T, C)。
    # Multiply x by the averaging matrix, no Python loop: (T, T) @ (B, T, C) → (B, T, C).
    raise NotImplementedError("ex2: average each position with its past in average_context")
