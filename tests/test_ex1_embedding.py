"""Exercise 1 · token embedding (先升级表示): (B, T) ids → (B, T, n_embd) vectors."""
import torch

from grading.i18n import Bi
from grading.testkit import SHAPES, Diagnosis, close, expect_close, expect_tensor, fail, finite, \
    hidden, public, raises, randn, set_embedding, trainable_shapes


# -- scenarios: run on the submission in a worker and on the solution in the judge ---------------

def draw(gen, B, T, vocab_size, n_embd):
    """The test's inputs, drawn in a fixed order from the generator."""
    return {"table": randn(gen, vocab_size, n_embd),
            "idx": torch.randint(0, vocab_size, (B, T), generator=gen)}


def embed(ex, gen, B, T, vocab_size, n_embd):
    m = ex.TokenEmbedding(vocab_size, n_embd)
    inputs = draw(gen, B, T, vocab_size, n_embd)
    set_embedding(m, inputs["table"])
    m.eval()
    with torch.no_grad():
        return m(inputs["idx"])  # (B, T, n_embd)


def parameters(ex, gen, vocab_size, n_embd):
    return trainable_shapes(ex.TokenEmbedding(vocab_size, n_embd))


def out_of_range(ex, gen, B, T, vocab_size, n_embd):
    """For each bad id, the name of the exception it raised, or "" when forward returned."""
    m = ex.TokenEmbedding(vocab_size, n_embd)
    m.eval()
    outcomes = []
    for bad in (vocab_size, vocab_size + 3, -1):
        idx = torch.randint(0, vocab_size, (B, T), generator=gen)
        idx[B - 1, T - 1] = bad
        outcomes.append(raises(m, idx))
    return outcomes


def sizes(shape):
    return {k: shape[k] for k in ("B", "T", "vocab_size", "n_embd")}


# -- tests ----------------------------------------------------------------------------------------

@public(2)
def test_shape(submission):
    """forward gives one n_embd vector per token, (B, T, n_embd), of finite numbers
    forward 为每个字给出一个 n_embd 维向量，形状 (B, T, n_embd)，都是有限的数"""
    for shape in SHAPES:
        expect_tensor(submission(embed, **sizes(shape)), "forward(idx)",
                      (shape["B"], shape["T"], shape["n_embd"]), ("B", "T", "n_embd"))


@public(2)
def test_rows_of_the_table(submission):
    """each token's vector is its own row of token_embedding_table
    每个字的向量正是它在 token_embedding_table 中的那一行"""
    for shape in SHAPES:
        got = submission(embed, **sizes(shape))
        inputs = submission.inputs(draw, **sizes(shape))
        want = inputs["table"][inputs["idx"]]  # (B, T, n_embd): row idx[b, t] of the table
        expect_close(got, want, "forward(idx)", ("B", "T", "n_embd"),
                     source=Bi("表中对应的那一行是", "its row of the table is"))


@public(1)
def test_table_is_a_parameter(submission):
    """the vocab_size × n_embd table is a trainable parameter of the module
    vocab_size × n_embd 的表是模块的可训练参数"""
    vocab_size, n_embd = SHAPES[0]["vocab_size"], SHAPES[0]["n_embd"]
    shapes = submission(parameters, vocab_size=vocab_size, n_embd=n_embd)
    if [vocab_size, n_embd] not in shapes:
        fail(f"模块中没有形状为 (vocab_size, n_embd) = ({vocab_size}, {n_embd}) 的可训练参数"
             f"（现有参数的形状：{shapes}）：把 nn.Embedding 存在 self 上",
             f"no trainable parameter of shape (vocab_size, n_embd) = ({vocab_size}, {n_embd}) "
             f"(the module's have shapes {shapes}): store the nn.Embedding on self")


@public(2)
def test_ids_out_of_range_raise(submission):
    """token ids outside [0, vocab_size) raise IndexError instead of being wrapped into range
    超出 [0, vocab_size) 的编号报 IndexError，而不是被折回范围内"""
    shape = SHAPES[0]
    outcomes = submission(out_of_range, **sizes(shape))
    for bad, outcome in zip((shape["vocab_size"], shape["vocab_size"] + 3, -1), outcomes):
        if outcome == "":
            fail(f"vocab_size={shape['vocab_size']} 时，编号 {bad} 应当报 IndexError，forward 却返回了"
                 "结果：词表之外的编号是需要报告的错误，不能折回范围内",
                 f"token id {bad} with vocab_size={shape['vocab_size']} should raise IndexError, "
                 "but forward returned a result: an id outside the vocabulary is a bug to report, "
                 "not to wrap into range")
        if outcome != "IndexError":
            fail(f"vocab_size={shape['vocab_size']} 时，编号 {bad} 应当报 IndexError，forward 报的却是 "
                 f"{outcome}：让 nn.Embedding 自己查表，它会报 IndexError",
                 f"token id {bad} with vocab_size={shape['vocab_size']} should raise IndexError, "
                 f"but forward raised {outcome}: let nn.Embedding look it up, it raises IndexError")


@hidden(3)
def test_matches_reference(compare):
    """matches the reference on fresh random ids, three shape sets
    在三组形状的全新随机编号上与参考答案一致"""
    for shape in SHAPES:
        got, want = compare(embed, **sizes(shape))
        expect_close(got, want, "forward(idx)", ("B", "T", "n_embd"))


# -- diagnoses ------------------------------------------------------------------------------------

def diagnose(probe):
    shape = SHAPES[0]
    B, T, C = shape["B"], shape["T"], shape["n_embd"]
    got, _ = probe(embed, **sizes(shape))
    inputs = probe.inputs(draw, **sizes(shape))
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (B * T, C):
        return Diagnosis("ex1.flattened",
                         f"输出被压平成了 (B*T, n_embd) = ({B * T}, {C})。查表之后每个字变成一个向量，"
                         "数据的形状应当是 (B, T, n_embd)：B 个样本，每个样本 T 个字",
                         f"The output was flattened to (B*T, n_embd) = ({B * T}, {C}). After the "
                         "lookup each character becomes a vector and the data stays (B, T, n_embd): "
                         "B samples of T characters each")
    table = inputs["table"]  # (vocab_size, n_embd), set as the module's table
    if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(table.shape) \
            and close(got, table):
        return Diagnosis("ex1.whole_table",
                         f"forward 返回的是整张表 ({table.shape[0]}, {C})，没有用编号去查：每个字要取出它自己的那一行，"
                         "self.token_embedding_table(idx)，得到 (B, T, n_embd)",
                         f"forward returned the whole table ({table.shape[0]}, {C}) without "
                         "looking the ids up: each character takes its own row, "
                         "self.token_embedding_table(idx), giving (B, T, n_embd)")
    if finite(got, (B, T, C)) is None:  # no (B, T, n_embd) of numbers: no table's rows either
        return None
    if not close(got, table[inputs["idx"]]):
        return Diagnosis("ex1.not_the_table",
                         "输出的向量不是 self.token_embedding_table 里编号选中的那些行。表要在 __init__ 里建一次、"
                         "存在 self 上，forward 返回 self.token_embedding_table(idx)，也就是那些行本身：不要在 forward "
                         "里新建表（每次都不一样，也不会被训练），查到之后也不要再改动这些行",
                         "The vectors are not the rows of self.token_embedding_table that the ids "
                         "pick. Build the table once in __init__, keep it on self, and return "
                         "self.token_embedding_table(idx), those rows themselves: no table made "
                         "in forward (new at every call, never trained), and no change to the "
                         "rows after the lookup")
    # In range the lookup is right: what happens to ids outside the vocabulary?
    outcomes = probe.submission(out_of_range, **sizes(shape))  # for ids vocab_size, +3, −1
    if outcomes == ["IndexError", "IndexError", ""]:
        return Diagnosis("ex1.negative_ids",
                         "太大的编号会报 IndexError，编号 −1 却悄悄得到了结果：直接对张量取下标（例如 "
                         "self.token_embedding_table.weight[idx]）会像 Python 一样从末尾数，−1 就是最后一行。"
                         "用 nn.Embedding 本身查表：self.token_embedding_table(idx)，它对负数编号也报 IndexError",
                         "Ids that are too large raise IndexError, but id −1 quietly gives a "
                         "result: indexing a tensor directly (self.token_embedding_table.weight[idx], "
                         "say) counts from the end as Python does, so −1 is the last row. Look ids "
                         "up with the nn.Embedding itself, self.token_embedding_table(idx): it "
                         "raises IndexError for negative ids too")
    if outcomes == ["", "", ""]:
        return Diagnosis("ex1.wrapped_ids",
                         "词表之外的编号被换成了范围内的编号（例如 idx % vocab_size 或 clamp）。这样的编号说明数据有错，"
                         "应当让 nn.Embedding 报 IndexError，而不是悄悄换成另一个字",
                         "Ids outside the vocabulary are turned into ids in range (idx % vocab_size "
                         "or a clamp, say). Such an id means the data is wrong: let nn.Embedding "
                         "raise IndexError instead of quietly turning it into another character")
    return None


def diagnose_error(error):
    if error.get("key") != "embedding_shape":
        return None
    shape, vocab_size, n_embd = tuple(error["shape"]), error["vocab_size"], error["n_embd"]
    kind = error.get("kind", "")
    if kind and kind != "Embedding":
        return Diagnosis("ex1.not_an_embedding",
                         f"self.token_embedding_table 是 {kind}，不是 nn.Embedding。课文用一张 vocab_size × n_embd "
                         "的表按编号取行：nn.Embedding(vocab_size, n_embd)，每个字一行（nn.Linear 的权重是反过来存的，"
                         "(n_embd, vocab_size)，而且默认带偏置）",
                         f"self.token_embedding_table is a {kind}, not an nn.Embedding. The lesson "
                         "looks rows up by id in a vocab_size × n_embd table, "
                         "nn.Embedding(vocab_size, n_embd), a row per character (an nn.Linear "
                         "stores its weight the other way round, (n_embd, vocab_size), and has "
                         "a bias by default)")
    if shape == (vocab_size, vocab_size):
        return Diagnosis("ex1.vocab_by_vocab",
                         f"表是 vocab_size × vocab_size = {vocab_size} × {vocab_size} 的：那是 Bigram 模型的表，"
                         "那里每一行是下一个字的分数。这里每个字要变成一个长度为 n_embd 的向量："
                         "nn.Embedding(vocab_size, n_embd)",
                         f"The table is vocab_size × vocab_size = {vocab_size} × {vocab_size}: "
                         "that is the bigram model's table, whose rows were the next character's "
                         "scores. Here each character becomes a vector of n_embd numbers: "
                         "nn.Embedding(vocab_size, n_embd)")
    if shape == (n_embd, vocab_size):
        return Diagnosis("ex1.swapped_dims",
                         "表的两个维度写反了：nn.Embedding 的第一个参数是表的行数 vocab_size（每个字一行），"
                         "第二个是每行的长度 n_embd",
                         "The table's two dimensions are swapped: nn.Embedding takes the number of "
                         "rows first, vocab_size (a row per character), then the row length n_embd")
    return None
