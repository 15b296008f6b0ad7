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
        or keyed(short, failed)


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
