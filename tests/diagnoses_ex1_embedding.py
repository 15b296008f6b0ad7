"""Exercise 1's diagnoses: the causes its failing outputs and crashes point to (diagnose,
diagnose_error; the judge's plugin calls them once a check of ex1_embedding fails). tests/test_ex1_embedding.py
holds its checks. Not in the student copy: the lesson's steps they search are the answers."""
import torch
from test_ex1_embedding import (
    draw,
    draw_learning,
    embed,
    embed_twice,
    frozen_shapes,
    gradient_of_a_lookup,
    ids_after,
    learning,
    out_of_range,
    parameters,
    sizes,
    table_in_forward,
    table_of_embed_twice,
)

from grading.checks import NO_GRADIENT, SHAPES
from grading.diagnosis import (
    Diagnosis,
    changed_everywhere,
    close,
    crash_cause,
    detached_diagnosis,
    finite,
    modifies_input_diagnosis,
)

TABLE_IN_INIT = ("表要在 __init__ 里建一次、存在 self 上：self.token_embedding_table = "
                 "nn.Embedding(vocab_size, n_embd)；forward 里只查表",
                 "Build the table once in __init__ and keep it on self, "
                 "self.token_embedding_table = nn.Embedding(vocab_size, n_embd); forward only "
                 "looks ids up")


def diagnose(probe):
    shape = SHAPES[0]
    B, T, C = shape["B"], shape["T"], shape["n_embd"]
    built, after_forward = probe.submission(table_in_forward, **sizes(shape))
    if not built and after_forward:
        return Diagnosis("ex1.table_made_in_forward",
                         "TokenEmbedding(vocab_size, n_embd) 建好之后还没有 self.token_embedding_table，要等 forward "
                         "运行时才出现：表是在 forward 里建的。这样测试没法设置这张表，训练前用 model.parameters() "
                         "建的优化器也看不到它。" + TABLE_IN_INIT[0],
                         "TokenEmbedding(vocab_size, n_embd) has no self.token_embedding_table "
                         "until forward runs: the table is made in forward. The test cannot set "
                         "it then, and an optimizer made from model.parameters() before training "
                         "would never see it. " + TABLE_IN_INIT[1])
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
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (T, B, C) \
            and close(got.transpose(0, 1), table[inputs["idx"]]):
        return Diagnosis("ex1.ids_transposed",
                         f"输出是 (T, B, n_embd) = ({T}, {B}, {C})：批量和时间两个维度互换了，编号在查表之前被转置成了 "
                         "(T, B)（idx.T 或 idx.transpose(0, 1)），或者查到的结果被转置了。课文里批量在前：idx 是 "
                         "(B, T)，输出是 (B, T, n_embd)。直接用 idx 查表：self.token_embedding_table(idx)",
                         f"The output is (T, B, n_embd) = ({T}, {B}, {C}): the batch and time "
                         "dimensions are swapped, the ids transposed to (T, B) before the lookup "
                         "(idx.T or idx.transpose(0, 1)) or the result after it. In the lesson the "
                         "batch comes first: idx is (B, T) and the output (B, T, n_embd). Look idx "
                         "up as it is: self.token_embedding_table(idx)")
    if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(table.shape) \
            and close(got, table):
        return Diagnosis("ex1.whole_table",
                         f"forward 返回的是整张表 ({table.shape[0]}, {C})，没有用编号去查：每个字要取出它自己的那一行，"
                         "self.token_embedding_table(idx)，得到 (B, T, n_embd)",
                         f"forward returned the whole table ({table.shape[0]}, {C}) without "
                         "looking the ids up: each character takes its own row, "
                         "self.token_embedding_table(idx), giving (B, T, n_embd)")
    V = table.shape[0]
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, T, V) and V != C \
            and close(got, table.T[inputs["idx"]]):
        return Diagnosis("ex1.lookup_transposed",
                         f"每个字得到的是 vocab_size = {V} 个数，而不是 n_embd = {C} 个：编号查的是转置后的表"
                         "（weight.T，每一行是一个维度，而不是一个字）。表的第 i 行就是字 i 的向量：直接查 "
                         "self.token_embedding_table(idx)",
                         f"Each character gets vocab_size = {V} numbers instead of n_embd = {C}: the "
                         "ids were looked up in the transposed table (weight.T, a row per "
                         "dimension instead of per character). Row i of the table is character "
                         "i's vector: look the ids up with self.token_embedding_table(idx)")
    if finite(got, (B, T, C)) is None:  # no (B, T, n_embd) of numbers: no table's rows either
        return None
    if not close(got, table[inputs["idx"]]):
        return other_rows(probe, shape)
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
    changed = changed_everywhere(probe, ids_after, [sizes(s) for s in SHAPES], ("idx",))
    if changed:
        return modifies_input_diagnosis("ex1", "forward", changed,
                                        "self.token_embedding_table(idx)")
    return learning_diagnosis(probe, shape)


def other_rows(probe, shape):
    """Rows that are not the module's table's: a new table at every call, or rows changed."""
    first, again, idx = probe.submission(embed_twice, **sizes(shape))
    size = (shape["B"], shape["T"], shape["n_embd"])
    first, again = finite(first, size), finite(again, size)
    if first is None or again is None:
        return None
    if close(first, again):
        found = renormalised(first, probe.inputs(table_of_embed_twice, **sizes(shape))[idx])
        if found:
            return found
    if not close(first, again):
        if not all(lookup_like(out, idx) for out in (first, again)):
            return None  # random in another way (dropout in forward?): no table's story
        return Diagnosis("ex1.table_made_in_forward",
                         "同样的表、同样的编号，两次调用 forward 得到的向量却不一样：forward 每次都新建了一张随机的表"
                         "（在 forward 里调用了 nn.Embedding(…)），没有用测试设置好的 self.token_embedding_table，"
                         "训练也改变不了它。" + TABLE_IN_INIT[0],
                         "With the same table set and the same ids, two calls of forward give "
                         "other vectors: forward makes a new random table at every call (an "
                         "nn.Embedding(…) made in forward) instead of using the "
                         "self.token_embedding_table the test set, and training could not change "
                         "it either. " + TABLE_IN_INIT[1])
    return Diagnosis("ex1.not_the_table",
                     "输出的向量不是 self.token_embedding_table 里编号选中的那些行，而且每次调用都一样：查到之后这些行"
                     "又被改动了（例如像 Transformer 论文那样乘以 √n_embd，或者加上了别的东西），或者查的是另一张表。"
                     "课文的 forward 返回那些行本身：self.token_embedding_table(idx)",
                     "The vectors are not the rows of self.token_embedding_table that the ids "
                     "pick, and they are the same at every call: the rows are changed after the "
                     "lookup (multiplied by √n_embd as in the Transformer paper, or something "
                     "added), or the ids are looked up in another table. The lesson's forward "
                     "returns the rows themselves: self.token_embedding_table(idx)")


def renormalised(got, rows):
    """Each vector is its row of the table shrunk to one length at most: nn.Embedding(…,
    max_norm=c) (which also rescales those rows of the table itself, in place)."""
    rows = rows.double()
    norms, scale = got.norm(dim=-1), got.norm(dim=-1) / rows.norm(dim=-1)
    shrunk = scale < 1 - 1e-4
    if not shrunk.any() or not close(got, rows * scale[..., None]) or (scale > 1 + 1e-4).any():
        return None
    c = float(norms[shrunk].max())
    if not torch.allclose(norms[shrunk], torch.full_like(norms[shrunk], c), rtol=1e-3):
        return None
    return Diagnosis("ex1.max_norm",
                     f"查出的向量是表里那一行缩短到长度不超过 {c:.3g} 的样子：这是 nn.Embedding(…, max_norm=…) 的效果"
                     "（它还会原地改动表里被查到的那些行）。课文的 nn.Embedding(vocab_size, n_embd) 没有 max_norm："
                     "查表就是原样取出那一行",
                     f"The vectors are their rows of the table shrunk to a length of at most {c:.3g}: "
                     "that is what nn.Embedding(…, max_norm=…) does (and it rescales those rows "
                     "of the table itself, in place). The lesson's nn.Embedding(vocab_size, n_embd) "
                     "has no max_norm: a lookup returns its row as it is")


def lookup_like(out, idx):
    """Each id gives one vector wherever it occurs in idx (B, T): out (B, T, C) is some lookup."""
    flat, ids = out.reshape(-1, out.shape[-1]), idx.reshape(-1)
    return all(close(flat[ids == i], flat[ids == i][:1].expand(int((ids == i).sum()), -1))
               for i in ids.unique())


def learning_diagnosis(probe, shape):
    """A frozen table, or a table whose one row gets no gradient (padding_idx), values right."""
    vocab_size, n_embd = shape["vocab_size"], shape["n_embd"]
    if [vocab_size, n_embd] in probe.submission(frozen_shapes, vocab_size=vocab_size,
                                                n_embd=n_embd):
        return Diagnosis("ex1.frozen_table",
                         "表是冻结的：self.token_embedding_table.weight 的 requires_grad 是 False，训练时它不会被调整。"
                         "nn.Embedding.from_pretrained 默认就冻结它的表（freeze=True）：要么传 freeze=False，要么像课文"
                         "那样建 nn.Embedding(vocab_size, n_embd)，它的表默认就是可训练的",
                         "The table is frozen: self.token_embedding_table.weight has "
                         "requires_grad=False, so training never adjusts it. "
                         "nn.Embedding.from_pretrained freezes its table by default "
                         "(freeze=True): pass freeze=False, or build nn.Embedding(vocab_size, "
                         "n_embd) as the lesson does, whose table trains by default")
    grad = probe.submission(learning, checked=False, vocab_size=vocab_size, n_embd=n_embd)
    if grad is None:  # the values are right (the caller's condition), the table trains: cut off
        trains = [vocab_size, n_embd] in probe.submission(parameters, vocab_size=vocab_size,
                                                          n_embd=n_embd)
        return detached_diagnosis("ex1", "forward", ["self.token_embedding_table.weight"]) \
            if trains else None
    grad = finite(grad, (vocab_size, n_embd))
    if grad is None:
        return None
    want = gradient_of_a_lookup(probe.inputs(draw_learning, vocab_size=vocab_size,
                                             n_embd=n_embd))
    dead = [r for r in range(vocab_size) if grad[r].abs().max() <= NO_GRADIENT]
    live = [r for r in range(vocab_size) if r not in dead]
    if len(dead) != 1 or not close(grad[live], want[live]):
        return None
    p = dead[0]
    return Diagnosis("ex1.padding_idx",
                     f"表的第 {p} 行得不到梯度，其余各行都正常：这正是 nn.Embedding(…, padding_idx={p}) 的效果"
                     f"（在序列到序列的代码里，编号 {p} 是填充符，它的那一行不参与训练）。这里每个编号都是一个字，"
                     "每一行都要能学习：去掉 padding_idx",
                     f"Row {p} of the table gets no gradient while every other row gets its own: "
                     f"that is what nn.Embedding(…, padding_idx={p}) does (in sequence-to-sequence "
                     f"code id {p} is the padding token, whose row is never trained). Here every "
                     "id is a character and every row must learn: drop padding_idx")


def diagnose_error(error):
    if error.get("key") == "embedding_kind" and error.get("kind") in ("Tensor", "Parameter"):
        plain = error["kind"] == "Tensor"
        return Diagnosis("ex1.table_not_a_layer",
                         ("表是一个普通的张量（例如 torch.randn(vocab_size, n_embd)）：它不是参数，训练改变不了它，"
                          "模块的 parameters() 里也没有它。" if plain else
                          "表是一个裸的 nn.Parameter：它能训练，但它不是查表的层。")
                         + "课文建的是一个层：self.token_embedding_table = nn.Embedding(vocab_size, n_embd)，"
                         "它的 .weight 就是那张可训练的表，forward 里用 self.token_embedding_table(idx) 查",
                         ("The table is a plain tensor (torch.randn(vocab_size, n_embd), say): it is "
                          "not a parameter, so training cannot change it and the module's "
                          "parameters() do not list it. " if plain else
                          "The table is a bare nn.Parameter: it trains, but it is not the lookup "
                          "layer. ")
                         + "The lesson builds a layer, self.token_embedding_table = "
                         "nn.Embedding(vocab_size, n_embd), whose .weight is the trainable table, "
                         "and forward looks ids up with self.token_embedding_table(idx)")
    if error.get("key") != "embedding_shape":
        return crash_cause(error, "ex1")
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
