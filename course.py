"""The course: every fact about its exercises, in one place; the grader derives the rest from it.

An exercise is one step of the lesson 《注意力机制：让模型看见上下文》, in three files of one name:
exercises/<name>.py (the stub), solutions/<name>.py and tests/test_<name>.py. Here it has
- `section`: the exercise's title, (中文, English), as reports name it;
- `heading`: the heading of the lesson's section that teaches it, (its exact text, English), as
  hints send the learner to it (checked against docs/lesson.zh.txt by the self-test);
- `points`: what the exercise is worth; the `grade` marks of its test file must add up to it
  (checked when the tests are collected; the course's total is the sum over all exercises);
- `api`: the names and signatures a submission is graded against, in the order of the file
  (checked by the self-test on both exercises/ and solutions/);
- `hints`: a nudge first, then the lesson's step in words, never solution code
  (`python grader.py hint N`);
- `uses`: the earlier exercises its files import (`from .ex6_head import Head`), and
  `graded_over`: whose copy of them it is graded with. "reference" (the default): the solutions',
  wherever they are (a course's grading), so that a mistake in ex6 costs ex6 alone; the learner's
  own where there are no solutions (the student copy), with a note when one of them fails.
  "own": always the learner's, so that ex6's mistakes cost the exercises built on it too.
Adding an exercise: `python selftest/scaffold.py ex7_name --api …` writes its entry here, its three
files and README rows; then its bodies, its mistakes in selftest/fixtures.py, `--check 7`.

Plain data, no import of the grader or of torch: the worker, the judge, the command line and the
self-test all read it.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Hint:
    zh: str
    en: str


@dataclass(frozen=True)
class Exercise:
    name: str  # "ex1_embedding": the file name, and "ex1" its number as the command line takes it
    section: tuple  # (中文, English)
    heading: tuple  # (the lesson's heading, English)
    points: int
    api: tuple  # "Class.method(self, arg)" or "function(arg)", in the file's order
    hints: tuple  # of Hint
    uses: tuple = ()  # names of earlier exercises its files import
    graded_over: str = "reference"  # or "own": whose copy of `uses` it is graded with

    @property
    def number(self):
        return int(self.name[2:].split("_")[0])


EXERCISES = (
    Exercise('ex1_embedding', section=('先升级表示', 'token embedding'),
             heading=('先升级表示：用向量表示每个字', 'first, better representations: a vector for each character'),
             points=10,
             api=('TokenEmbedding.__init__(self, vocab_size, n_embd)', 'TokenEmbedding.forward(self, idx)'),
             hints=(
                 Hint("还是查表，只是表里的每一行不再是一个数，而是 n_embd 个数。PyTorch 有一个现成的层就是这张表，"
                      "它在 __init__ 里建一次，存在 self 上，forward 里只负责查。",
                      "It is still a table lookup, only each row now holds n_embd numbers instead of one. PyTorch "
                      "has a layer that is exactly this table: build it once in __init__, keep it on self, and let "
                      "forward only look ids up."),
                 Hint("课文的写法：nn.Embedding 的两个参数依次是表的行数（字的个数 vocab_size）和每行的长度 n_embd；"
                      "把它赋给 self.token_embedding_table。forward 里用 idx 调用这张表，形状从 (B, T) 变成 "
                      "(B, T, n_embd)。超出范围的编号让 nn.Embedding 自己报 IndexError，不要取模。",
                      "The lesson's step: nn.Embedding takes the number of rows (vocab_size, one per character) "
                      "and then the row length n_embd; assign it to self.token_embedding_table. In forward, call "
                      "the table on idx: (B, T) becomes (B, T, n_embd). Let nn.Embedding raise IndexError for ids "
                      "out of range; do not wrap them with %."),)),
    Exercise('ex2_averaging', section=('对前文取平均', 'averaging the context'),
             heading=('一个初步的做法：对前文取平均', 'a first attempt: averaging the context'),
             points=15,
             api=('averaging_matrix(T)', 'average_context(x)'),
             hints=(
                 Hint("先想第 i 个位置要平均哪些位置：它自己和它之前的，一共 i+1 个。把\u201c参与平均的位置\u201d画成一张 "
                      "T × T 的 0/1 表，它是什么形状？再想怎样让每一行的和变成 1。",
                      "First think which positions position i averages: itself and those before it, i+1 in all. "
                      "Draw the positions that take part as a T × T table of 0s and 1s: what shape is it? Then "
                      "think how to make every row sum to 1."),
                 Hint("课文的步骤：torch.tril 作用在 torch.ones(T, T) 上得到下三角的全 1 矩阵 tril；每一行除以这一行的和"
                      "（sum 沿 dim=1，keepdim=True）就是 weights。average_context 里，一次矩阵乘法 weights @ x "
                      "就让 (T, T) 乘上 (B, T, C) 的每个样本，不需要循环。",
                      "The lesson's steps: torch.tril applied to torch.ones(T, T) gives the lower-triangular "
                      "matrix of ones, tril; dividing each row by its sum (sum over dim=1 with keepdim=True) gives "
                      "weights. In average_context, one matrix product weights @ x applies the (T, T) matrix to "
                      "every sample of the (B, T, C) input, with no loop."),)),
    Exercise('ex3_qkv', section=('查询、键、值', 'query, key, value'),
             heading=('自注意力：查询、键、值', 'self-attention: query, key, value'),
             points=15,
             api=('QKV.__init__(self, n_embd, head_size)', 'QKV.forward(self, x)'),
             hints=(
                 Hint("三个角色各有自己的一套参数：查询、键、值各用一个线性层从同一个字向量变换得到。每个层把 n_embd "
                      "个数变成 head_size 个数。",
                      "Each of the three roles has parameters of its own: query, key and value each come from the "
                      "same character vector through a linear layer of their own, mapping n_embd numbers to "
                      "head_size numbers."),
                 Hint("课文的写法：self.query、self.key、self.value 各是一个 nn.Linear，输入维度 n_embd，输出维度 "
                      "head_size，并且 bias=False（没有偏置）。forward 里把 x 分别送进这三个层，按 (q, k, v) 的顺序"
                      "返回三个张量。",
                      "The lesson's step: self.query, self.key and self.value are each an nn.Linear from n_embd "
                      "to head_size with bias=False (no bias). In forward, pass x through each of the three and "
                      "return the three tensors in the order (q, k, v)."),)),
    Exercise('ex4_scaling', section=('缩放', 'scaled scores'),
             heading=('自注意力：查询、键、值', 'self-attention: query, key, value'),
             points=15,
             api=('attention_scores(q, k)',),
             hints=(
                 Hint("第 i 行第 j 列是第 i 个字的查询与第 j 个字的键的点积。两个 (B, T, head_size) 的张量，怎样一次算出"
                      "所有 (i, j) 的点积？然后想一想：点积随 head_size 变大而变大，要除以什么才能拉回温和的范围？",
                      "Row i, column j is the dot product of query i with key j. How do you get every (i, j) "
                      "product of two (B, T, head_size) tensors at once? Then: dot products grow with head_size; "
                      "what do you divide by to bring them back to a gentle range?"),
                 Hint("课文的步骤：把 k 的最后两维交换（transpose(-2, -1)），让 q 左乘它，得到 (B, T, T)；再乘以 "
                      "head_size 的 -0.5 次方，也就是除以 head_size 的平方根。head_size 是 q 的最后一维。",
                      "The lesson's steps: swap k's last two dimensions (transpose(-2, -1)) and multiply q by it, "
                      "giving (B, T, T); then multiply by head_size to the power -0.5, that is divide by the "
                      "square root of head_size. head_size is q's last dimension."),)),
    Exercise('ex5_causal_mask', section=('因果掩码', 'the causal mask'),
             heading=('不能参考未来：因果掩码', 'no peeking at the future: the causal mask'),
             points=20,
             api=('causal_softmax(scores)',),
             hints=(
                 Hint("第 i 行是位置 i 对各个位置的关注程度。位置 i 之后的那些格子（对角线右上方）是未来，要在换算成权重"
                      "之前就让它们\u201c不可能被选中\u201d。什么数经过 softmax 会变成 0？",
                      "Row i is how much position i attends to each position. The cells after position i (above "
                      "the diagonal) are the future; before turning scores into weights, make them impossible to "
                      "pick. Which number does softmax turn into 0?"),
                 Hint("课文的步骤：用 torch.tril 作用在 (T, T) 的全 1 矩阵上得到 tril；用 masked_fill 把 tril 等于 0 "
                      "的位置填成 float(\"-inf\")；然后沿最后一维（dim=-1）做 F.softmax，每一行之和就是 1。顺序很重要："
                      "先掩码，再 softmax。",
                      "The lesson's steps: torch.tril applied to a (T, T) matrix of ones gives tril; masked_fill "
                      "puts float(\"-inf\") where tril is 0; then F.softmax over the last dimension (dim=-1) "
                      "makes every row sum to 1. The order matters: mask first, then softmax."),)),
    Exercise('ex6_head', section=('一个完整的注意力头', 'one attention head'),
             heading=('一个完整的注意力头', 'one complete attention head'),
             points=25,
             api=('Head.__init__(self, n_embd, head_size, block_size)', 'Head.forward(self, x)'),
             hints=(
                 Hint("把练习 3、4、5 串起来，最后再做一次练习 2 那样的加权求和——只是这次被加权的是值向量，权重来自查询与键。"
                      "掩码要适用于任何不超过 block_size 的长度 T。",
                      "Chain exercises 3, 4 and 5, then finish with a weighted sum like exercise 2's, only now "
                      "the values are summed and the weights come from queries and keys. The mask must work for "
                      "any length T up to block_size."),
                 Hint("课文的步骤：q、k、v 各由一个 nn.Linear(n_embd, head_size, bias=False) 得到；分数 = q 乘 k 的转置，"
                      "再乘 head_size 的 -0.5 次方；__init__ 里用 register_buffer 存一个 (block_size, block_size) 的 "
                      "tril（它不是参数），forward 里取它的 [:T, :T]，把等于 0 的位置填成 −∞；沿 dim=-1 做 softmax；"
                      "最后用权重乘 v。",
                      "The lesson's steps: q, k, v each come from an nn.Linear(n_embd, head_size, bias=False); "
                      "the scores are q times k transposed, times head_size to the power -0.5; in __init__, keep "
                      "a (block_size, block_size) tril with register_buffer (it is not a parameter), and in "
                      "forward take its [:T, :T] and fill where it is 0 with −∞; softmax over dim=-1; finally "
                      "multiply the weights by v."),)),
)

BY_NAME = {exercise.name: exercise for exercise in EXERCISES}
NAMES = [exercise.name for exercise in EXERCISES]
TOTAL = sum(exercise.points for exercise in EXERCISES)


def needs(name):
    """The exercises `name` imports, directly or through them, in course order."""
    found, todo = set(), list(BY_NAME[name].uses)
    while todo:
        used = todo.pop()
        if used not in found:
            found.add(used)
            todo.extend(BY_NAME[used].uses)
    return [n for n in NAMES if n in found]
