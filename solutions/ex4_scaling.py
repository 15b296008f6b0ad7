"""练习 4 · 点积打分与缩放

每个字的查询，与所有字的键做点积，得到一张"重要性"评分表 weights，形状 (B, T, T)：第 i 行第 j 列
代表"第 i 个字对第 j 个字的关注程度"。点积的数值会随着向量长度增大而增大，数值过大的话，下一步的
softmax 会变得过于极端；所以乘以 head_size ** -0.5，即除以 head_size 的平方根。head_size 是 q、k
最后一维的长度：head_size = q.shape[-1]。

    q, k: (B, T, head_size) → weights: (B, T, T) = q @ kᵀ · head_size^-0.5

会检查：分数的形状是 (B, T, T)：每一对位置一个有限的分数；缩放后的分数保持温和，softmax 不会过于极端
：q、k 是单位高斯随机数时方差约为 1；分数是亲手算出来的，没有调用 PyTorch 现成的注意力；
attention_scores 不改动 q 和 k：不对输入做原地运算；在四组形状（其中一组 B = T = 1）的全新随机 q、k
上与参考答案一致；损失对 q 和 k 的梯度与参考答案一致：训练时梯度能传回去。

Exercise 4 · Dot-product scores and scaling

Each character's query is dotted with every character's key, giving a table of scores `weights` of
shape (B, T, T): row i, column j is how much character i attends to character j. Dot products grow
with the vector length, and large scores make the softmax that follows too extreme; so multiply by
head_size ** -0.5, that is divide by the square root of head_size. head_size is the length of the
last dimension of q and k: head_size = q.shape[-1].

    q, k: (B, T, head_size) → weights: (B, T, T) = q @ kᵀ · head_size^-0.5

Checked: scores have shape (B, T, T), one finite score per pair of positions; scaled scores stay
mild, so softmax is not too extreme: variance ≈ 1 for unit-Gaussian q and k; the scores are computed
by hand, not by PyTorch's ready-made attention; attention_scores leaves q and k as they were: no
in-place operation on its inputs; matches the reference on fresh random q and k, four shape sets (B
= T = 1 among them); a loss's gradients for q and for k match the reference's: training can send
them back.
"""
import torch


def attention_scores(q, k):
    """缩放后的点积分数。 Scaled dot-product scores."""
    # q, k: (B, T, head_size)
    head_size = q.shape[-1]
    weights = q @ k.transpose(-2, -1)  # (B, T, head_size) @ (B, head_size, T) → (B, T, T)
    weights = weights * head_size ** -0.5  # 缩放 / scale
    return weights
