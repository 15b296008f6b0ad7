"""练习 5 · 不能参考未来：因果掩码

第 3 个字（位置 2，位置从 0 数起）的任务是"依据前 3 个字，预测第 4 个字"，它绝不能看到第 4 个、
第 5 个字——那是答案。
所以每个位置只允许参考它自身以及它之前的字。借助下三角矩阵 tril：把评分表中"属于未来"的位置
（上三角部分）在 softmax 之前强制设为负无穷（float("-inf")），负无穷经过 softmax 之后变成 0；
再沿最后一维做 softmax，使每一行之和等于 1。

    scores: (B, T, T) → weights: (B, T, T)，每一行只有"当前位置及之前"非零，且一行之和为 1

会检查：形状不变（T 很长时也一样）；每一行之和为 1；上三角全为 0；第 0 行是 [1, 0, ...]；改动未来的分数不会改变
之前各行（逐个位置 t 检查），雅可比矩阵 ∂weights[t]/∂scores[s] 在 s > t 时约为 0；与参考答案在
多组随机输入上一致。

Exercise 5 · No peeking at the future: the causal mask

The 3rd character (position 2, counting from 0) must predict the 4th from the first 3; it must
never see the 4th and 5th, which are the answer. So each position may attend only to itself and what came before. With a
lower-triangular `tril`, set every future entry of the scores (the upper triangle) to minus infinity
(float("-inf")) *before* softmax, so that softmax turns them into 0; then softmax over the last
dimension, so that each row sums to 1.

    scores: (B, T, T) → weights: (B, T, T), each row non-zero only up to its own position, summing to 1

Checked: the shape is kept (for a long T too); rows sum to 1; the upper triangle is 0; row 0 is [1, 0, ...]; changing
future scores never changes earlier rows (for every position t), and the Jacobian
∂weights[t]/∂scores[s] is ≈ 0 for s > t; agreement with the reference on fresh random inputs.
"""
import torch
from torch.nn import functional as F


def causal_softmax(scores):
    """先屏蔽未来，再 softmax。 Mask the future, then softmax."""
    # scores: (B, T, T)
    # TODO: 在 softmax 之前把未来位置（上三角）设为负无穷，再沿最后一维做 softmax。
    # Set the future (upper triangle) to -inf before softmax, then softmax over the last dimension.
    raise NotImplementedError("ex5: mask the future and softmax in causal_softmax")
