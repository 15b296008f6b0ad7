"""Causes every exercise shares, found after its own test file's found none.

They read the exercise's failed checks (their keys: grading.errors.CheckFailed, Mismatch) and how
the learner's file is written (grading.judge.source_check, through the plugin's Source): a cause
is named only for what the code visibly does ("forward builds nn.Linear on line 14", "forward has
no return"), never for a point.
"""
import re

from grading.diagnosis.causes import Diagnosis


def cause(exercise, results, source):
    """The Diagnosis of the first shared cause that fits, or None. results: the exercise's
    TestResults; source: the plugin's Source of the exercise's file."""
    short = exercise.split("_")[0]
    failed = [r for r in results if r.status == "failed"]
    return layers_built_in_forward(short, source) or no_return(short, failed, source) \
        or keyed(short, failed) or named_otherwise(short, failed, source) \
        or returned_sequence(short, failed) or not_a_linear(short, failed)


def named_otherwise(short, failed, source):
    """A layer the exercise names is missing, and __init__ builds layers under other names
    (self.embedding, nanoGPT's self.c_attn): the tests set the exercise's layers by name."""
    if not any(r.key in ("layer_missing", "embedding_missing") for r in failed):
        return None
    built = [b for _, _, _, builds in source.functions("__init__") for b in builds]
    if not built:
        return None
    line, text = built[0]
    if short == "ex1":
        return Diagnosis("ex1.layers_named_otherwise",
                         f"__init__ 建的表名字不是练习规定的（第 {line} 行：{text}）。练习规定它叫 "
                         "self.token_embedding_table：测试按这个名字设置这张表",
                         f"__init__ builds the table under a name the exercise does not use (line "
                         f"{line}: {text}). The exercise names it self.token_embedding_table: the "
                         "tests set the table by that name")
    return Diagnosis(f"{short}.layers_named_otherwise",
                     f"__init__ 建的层名字不是练习规定的（第 {line} 行：{text}）。练习规定的是 self.query、"
                     "self.key、self.value：测试按这些名字设置权重；像 nanoGPT 那样把三个层合成一个 c_attn "
                     "的写法，这里也不适用",
                     f"__init__ builds its layers under names the exercise does not use (line "
                     f"{line}: {text}). The exercise names them self.query, self.key and "
                     "self.value: the tests set their weights by these names; a fused layer split "
                     "in three, as nanoGPT's c_attn, does not fit here either")


def returned_sequence(short, failed):
    """A tensor was expected and a tuple came back (nanoGPT's (logits, loss), (out, weights))."""
    for result in failed:
        if result.key == "returned_sequence":
            what, count = str(result.facts.get("what", "")), result.facts.get("count", 0)
            return Diagnosis(f"{short}.returned_tuple",
                             f"{what} 返回了一个含 {count} 项的元组（像 nanoGPT 的 forward 返回 (logits, loss)，"
                             "或者注意力头返回 (out, weights)）。这个练习要的只是那一个张量：return 它本身",
                             f"{what} returns a tuple of {count} (as nanoGPT's forward returns "
                             "(logits, loss), or a head returns (out, weights)). This exercise "
                             "wants that one tensor alone: return it by itself")
    return None


def not_a_linear(short, failed):
    """A layer that is a bare weight (an nn.Parameter, a Keras-style kernel), not an nn.Linear."""
    for result in failed:
        if result.key == "linear_kind" and result.facts.get("kind") in ("Parameter", "Tensor"):
            name = result.facts.get("layer", "query")
            return Diagnosis(f"{short}.layer_not_a_linear",
                             f"self.{name} 是一个裸的权重（{result.facts['kind']}，像 `Keras` 的 `kernel` 那样用 "
                             f"x @ W），不是 nn.Linear。这个练习的层是 nn.Linear(n_embd, head_size, bias=False)，"
                             f"测试设置的是它的 .weight，形状 (head_size, n_embd)；用的时候调用它：self.{name}(x)",
                             f"self.{name} is a bare weight (a {result.facts['kind']}, used as x @ W "
                             "like a Keras kernel), not an nn.Linear. The exercise's layers are "
                             "nn.Linear(n_embd, head_size, bias=False), whose .weight, of shape "
                             f"(head_size, n_embd), the tests set; call the layer: self.{name}(x)")
    return None


def observed(exercise, results):
    """The cause a failed check saw itself (its key is in KEYED), first of all: it is not a
    guess from the outputs."""
    return keyed(exercise.split("_")[0], [r for r in results if r.status == "failed"])


# Causes a failed check's key names outright: the check saw the mistake itself.
KEYED = {
    "softmax_overflow": (
        "自己写的 softmax 在分数很大时给出 NaN 或 inf：取指数之前，要从每一行减去这一行自己的最大值"
        "（沿 dim=-1，也就是行的方向）：weights - weights.max(dim=-1, keepdim=True).values；或者直接用 "
        "F.softmax(weights, dim=-1)",
        "The softmax written by hand gives NaN or inf for large scores: before taking "
        "exponentials, subtract from each row its own largest score (over dim=-1, along the "
        "row), weights - weights.max(dim=-1, keepdim=True).values; or use F.softmax(weights, "
        "dim=-1)"),
}


def keyed(short, failed):
    for result in failed:
        if result.key in KEYED:
            return Diagnosis(f"{short}.{result.key}", *KEYED[result.key])
    return None


def layers_built_in_forward(short, source):
    """forward constructs a layer (nn.Linear, nn.Embedding): new random weights at every call,
    which no optimiser ever sees."""
    built = [b for _, _, _, builds in source.functions("forward") for b in builds]
    if not built:
        return None
    line, text = built[0]
    use = USE.get(short, USE["ex6"])
    return Diagnosis(f"{short}.layers_in_forward",
                     f"forward 每次运行都新建了层（第 {line} 行：{text}）：每次调用都是新的随机权重，"
                     "同一个输入两次的输出也不一样，训练也改不了它们（优化器只认识 __init__ 里建好的参数）。"
                     f"层要在 __init__ 里建一次，forward 里只使用它们：{use}",
                     f"forward makes a new layer each time it runs (line {line}: {text}): every "
                     "call gets new random weights, two calls on the same input differ, and "
                     "training cannot change them (the optimiser knows only the parameters "
                     f"__init__ made). Build layers once in __init__; forward only uses them: {use}")


USE = {"ex1": "self.token_embedding_table(idx)", "ex3": "q = self.query(x)",
       "ex6": "q = self.query(x)"}  # how forward uses a layer built in __init__


def no_return(short, failed, source):
    """A function returned None and, as written, it has no return statement with a value."""
    for result in failed:
        if result.key != "returned_none":
            continue
        found = re.match(r"(?:\w+\.)*(\w+)\(", str(result.facts.get("what", "")))
        if not found:
            return None
        name = found.group(1)
        written = source.functions(name)
        if not written or any(returns for _, returns, _, _ in written):
            return None
        line = written[0][0]
        return Diagnosis(f"{short}.no_return",
                         f"{name}（第 {line} 行）里没有 return 语句：它算出了结果，却没有交出去，Python 在函数末尾"
                         f"返回 None。在最后加上 return，交出算好的张量",
                         f"{name} (line {line}) has no return statement: it computes its result "
                         "but never hands it back, so Python returns None at its end. End it with "
                         "return and the tensor it computed")
    return None
