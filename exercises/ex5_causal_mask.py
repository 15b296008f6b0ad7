"""练习 5 · 不能参考未来：因果掩码

第 3 个字（位置 2，位置从 0 数起）的任务是"依据前 3 个字，预测第 4 个字"，它绝不能看到第 4 个、
第 5 个字——那是答案。
所以每个位置只允许参考它自身以及它之前的字。借助下三角矩阵 tril：把评分表中"属于未来"的位置
（上三角部分）在 softmax 之前强制设为负无穷（float("-inf")），负无穷经过 softmax 之后变成 0；
再沿最后一维做 softmax，使每一行之和等于 1。

    scores: (B, T, T) → weights: (B, T, T)，每一行只有"当前位置及之前"非零，且一行之和为 1

会检查：权重保持分数的形状 (B, T, T)，而且都是有限的数，T 很长、分数很大时也一样；权重的每一行之和为
1；权重的上三角（未来的位置）全为 0；第 0 行是 [1, 0, …]：位置 0 只能看见自己；改动 t 之后各位置的分
数，不会改变 t 及之前各行的权重；s 在 t 之后时，∂weights[t] / ∂scores[s] ≈ 0；掩码和 softmax 是亲手
写的，没有调用 PyTorch 现成的注意力；causal_softmax 不改动传进来的分数：不对输入做原地运算；在四组形
状（其中一组 B = T = 1）和一个长序列的全新随机分数上与参考答案一致。

Exercise 5 · No peeking at the future: the causal mask

The 3rd character (position 2, counting from 0) must predict the 4th from the first 3; it must
never see the 4th and 5th, which are the answer. So each position may attend only to itself and what came before. With a
lower-triangular `tril`, set every future entry of the scores (the upper triangle) to minus infinity
(float("-inf")) *before* softmax, so that softmax turns them into 0; then softmax over the last
dimension, so that each row sums to 1.

    scores: (B, T, T) → weights: (B, T, T), each row non-zero only up to its own position, summing to 1

Checked: the weights keep the scores' shape (B, T, T) and are finite numbers, long T and large
scores too; every row of weights sums to 1; the upper triangle (the future) of weights is 0; row 0
is [1, 0, …]: position 0 sees only itself; changing the scores of positions after t never changes
the weights of rows up to t; ∂weights[t] / ∂scores[s] ≈ 0 whenever s is after t; the mask and
softmax are written by hand, not by PyTorch's ready-made attention; causal_softmax leaves the scores
as they were: no in-place operation on its input; matches the reference on fresh random scores, four
shape sets (B = T = 1 among them) and a long sequence.
"""
import torch
from torch.nn import functional as F


def causal_softmax(scores):
    """先屏蔽未来，再 softmax。 Mask the future, then softmax."""
    # scores: (B, T, T)
    # TODO: 在 softmax 之前把未来位置（上三角）设为负无穷，再沿最后一维做 softmax。
    # Set the future (upper triangle) to -inf before softmax, then softmax over the last dimension.
    raise NotImplementedError("ex5: mask the future and softmax in causal_softmax")
