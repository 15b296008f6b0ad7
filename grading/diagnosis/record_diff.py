"""A likely cause from the work shown: where the learner's record parts from the lesson's.

For the same inputs and weights the judge holds two records (grading.judge.replay): the learner's
call's and the solution's. A mistake nobody catalogued is found by mending the learner's record
one difference at a time, in the order of its operations — an argument of an operation the lesson
has too (a fill value, a dim, a scale) set to the solution's, an operation taken out, one replaced
by or followed by an operation of the solution's — and replaying it: a difference is named only
when the mended record gives the solution's values, at the first draw and, mended the same way,
at a second draw of other sizes. What is named is that difference, in the lesson's words.
"""
import math

import torch

from grading.diagnosis.causes import Diagnosis, close
from grading.errors import ReplayError
from grading.judge import replay
from grading.judge.replay import Budget
from grading.wire.record import operator_name, references

MOST_OPS = 200  # a longer record (a loop) is not mended: its own check says what is wrong
MOST_TRIED = 600  # mended records replayed for one diagnosis
REPLAY_SECONDS = 3.0  # of the judge's CPU time for all of them
_REFERENCE_KINDS = ("in", "out", "param", "const")

# What an operation is, in the lesson's words: (zh, en).
OP_WORDS = {
    "_softmax": ("softmax", "softmax"), "softmax": ("softmax", "softmax"),
    "_log_softmax": ("log_softmax", "log_softmax"), "log_softmax": ("log_softmax", "log_softmax"),
    "masked_fill": ("masked_fill（掩码）", "masked_fill (the mask)"),
    "masked_fill_": ("masked_fill_（掩码）", "masked_fill_ (the mask)"),
    "where": ("torch.where", "torch.where"),
    "mul": ("乘法（*）", "a multiplication (*)"), "div": ("除法（/）", "a division (/)"),
    "add": ("加法（+）", "an addition (+)"), "sub": ("减法（-）", "a subtraction (-)"),
    "mm": ("矩阵乘法（@）", "a matrix product (@)"), "bmm": ("矩阵乘法（@）", "a matrix product (@)"),
    "matmul": ("矩阵乘法（@）", "a matrix product (@)"),
    "transpose": ("转置", "a transpose"), "t": ("转置", "a transpose"),
    "permute": ("维度重排（permute）", "a permute"),
    "view": ("改变形状（view/reshape）", "a view/reshape"),
    "_unsafe_view": ("改变形状（view/reshape）", "a view/reshape"),
    "reshape": ("改变形状（view/reshape）", "a view/reshape"),
    "native_dropout": ("dropout（F.dropout 默认 training=True，一直开着）",
                       "a dropout (F.dropout is on unless training=False)"),
    "native_layer_norm": ("LayerNorm（下一课的内容）", "a LayerNorm (the next lesson's)"),
    "round": ("四舍五入（round）", "a rounding (round)"),
    "_to_copy": ("类型转换（.half()、.double()、.to(…)）",
                 "a change of dtype (.half(), .double(), .to(…))"),
    "relu": ("ReLU", "a ReLU"), "gelu": ("GELU", "a GELU"), "tanh": ("tanh", "a tanh"),
    "sigmoid": ("sigmoid", "a sigmoid"), "exp": ("exp", "an exp"), "log": ("log", "a log"),
    "abs": ("绝对值（abs）", "an abs"), "sqrt": ("平方根（sqrt）", "a square root (sqrt)"),
    "pow": ("乘方（**）", "a power (**)"), "clamp": ("clamp", "a clamp"),
    "sum": ("求和（sum）", "a sum"), "mean": ("平均（mean）", "a mean"),
    "cumsum": ("累加（cumsum）", "a running sum (cumsum)"),
    "tril": ("下三角（tril）", "a tril"), "triu": ("上三角（triu）", "a triu"),
}


class Recorded:
    """What a test file's record diff runs: scenario(ex, gen, **draw) returns function.shown(…)
    (what the call returned and its Call); `draws`: two parameter sets, the second confirms;
    `what`: the function, as the learner reads it ("Head.forward"); `inputs`: its arguments'
    names ("q", "k")."""

    def __init__(self, scenario, draws, what, inputs=()):
        self.scenario, self.draws, self.what, self.inputs = scenario, draws, what, inputs


def diagnosis(probe, recorded, exercise):
    """The Diagnosis of the first difference that, mended, gives the solution's values at both
    draws; None when there is none, or nothing to compare with."""
    first = probe.recorded(recorded.scenario, **recorded.draws[0])
    pair = _records(first)
    if pair is None:
        return None
    (mine, got), (theirs, want) = pair
    if _close(got, want):
        return None  # the values are the lesson's: nothing to mend
    budget, tried = Budget(REPLAY_SECONDS), [0]
    try:  # the record must be the work that gave the learner's values, or it explains nothing
        if not replay.same(replay.replay(mine.record, list(mine.args), mine.tensors,
                                         budget=budget), got):
            return None
    except ReplayError as error:  # a step that cannot be replayed (a dropout left on, drawn
        if error.kind not in ("random", "operation"):  # afresh; a LayerNorm) may be the one
            return None  # to take out
    edit = first_mend(mine, theirs, want, budget, tried)
    if edit is None:
        return None
    second = _records(probe.recorded(recorded.scenario, **recorded.draws[1]))
    if second is None or not _alike(second[0][0], mine) or not _alike(second[1][0], theirs):
        return None
    if not _mends(edit, second[0][0], second[1][0], second[1][1], budget, tried):
        return None  # the first mend that works is the difference: it must hold again
    return _described(edit, mine, theirs, recorded, exercise)


def first_mend(mine, theirs, want, budget=None, tried=None):
    """The first edit (see _edits) of mine's record that replays to `want`, the solution's
    output; None. mine, theirs: Calls (grading.judge.remote), or anything with their record,
    args and tensors."""
    budget, tried = budget or Budget(REPLAY_SECONDS), tried or [0]
    for edit in _edits(mine.record["ops"], theirs.record["ops"],
                       lambda: (_values(mine, budget), _values(theirs, budget))):
        if tried[0] >= MOST_TRIED or budget.left <= 0:
            return None
        if _mends(edit, mine, theirs, want, budget, tried):
            return edit
    return None


def _values(call, budget):
    """[(reference, tensor)] of every tensor of a call's record: its inputs, the object's
    tensors, each operation's first result, in that order; [] when the record does not replay."""
    ops = call.record["ops"]
    known = [({"in": i}, a) for i, a in enumerate(call.args) if isinstance(a, torch.Tensor)]
    known += [({"param": path}, t) for path, t in call.tensors.items()]
    try:
        results = replay.replay({**call.record, "output": [{"out": [k, 0]} for k in
                                                          range(len(ops))]},
                                list(call.args), call.tensors, budget=budget)
    except ReplayError:
        return []
    return known + [({"out": [k, 0]}, t) for k, t in enumerate(results)
                    if isinstance(t, torch.Tensor)]


def _same_value(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6, equal_nan=True))


def _close(a, b):
    """close() for outputs that are a tensor or a tuple of them ((q, k, v))."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return close(a, b)


def _records(result):
    """((the learner's Call, its output), (the solution's Call, its output)) when both calls gave
    a record of a size worth mending; else None."""
    if result is None:
        return None
    (got, mine), (want, theirs) = result
    for call in (mine, theirs):
        ops = call.record.get("ops") if call is not None and isinstance(call.record, dict) \
            else None
        if not isinstance(ops, list) or not ops or len(ops) > MOST_OPS \
                or call.record.get("truncated"):
            return None
    return (mine, got), (theirs, want)


def _alike(call, first):
    """The same operations, by name, as at the first draw: an edit by position means the same."""
    return [op[0] for op in call.record["ops"]] == [op[0] for op in first.record["ops"]]


def _mends(edit, mine, theirs, want, budget, tried):
    tried[0] += 1
    try:
        ops, output = _applied(edit, mine.record["ops"], mine.record.get("output"),
                               theirs.record["ops"])
        record = {**mine.record, "ops": ops, "output": output}
        mended = replay.replay(record, list(mine.args), mine.tensors, budget=budget)
    except (ReplayError, IndexError, KeyError, TypeError, ValueError):
        return False
    return _close(mended, want)


# -- edits ---------------------------------------------------------------------------------------
# An edit is data: ("argument", i, where, r) sets the scalar at `where` in the learner's operation
# i to what the solution's operation r has there; ("remove", i); ("replace", i, r) puts the
# solution's operation r, on op i's tensor, in op i's place; ("insert", i, r) puts it after op i.

# Operations that only move data about (views, slices, broadcasts): never "the missing step".
PLUMBING = frozenset({"view", "_unsafe_view", "reshape", "expand", "slice", "t", "clone",
                      "contiguous", "alias", "detach", "unsqueeze", "squeeze", "select",
                      "_to_copy", "lift_fresh", "lift_fresh_copy"})


MOVES = frozenset({"transpose", "permute"})  # steps that a view of one's own may stand for


def _edits(mine, theirs, values=None):
    """The edits to try, the likeliest kinds first: an argument of an operation both have, then an
    operation taken out, then one replaced by, then one followed by a step of the solution's;
    then, by the tensors' values (`values()`: both records' tensors, see _values), an operation
    given another of the learner's tensors where the solution's has that value ("rewire"), and a
    step of the solution's on several tensors, each found among the learner's ("append")."""
    names = [operator_name(op[0]) for op in mine]
    wanted = [operator_name(op[0]) for op in theirs]
    yield from _argument_edits(mine, theirs, names, wanted)
    yield from _remove_edits(mine)
    yield from _step_edits(mine, theirs, names, wanted)
    if values is None:
        return
    learner, solution = values()
    if not learner or not solution:
        return
    theirs_value = dict((repr(ref), t) for ref, t in solution)

    def found(value, before):  # the first of the learner's tensors with this value, made before
        for ref, tensor in learner:
            made = ref["out"][0] if "out" in ref else -1
            if made < before and _same_value(tensor, value):
                return ref
        return None
    yield from _rewire_edits(mine, theirs, names, wanted, learner, theirs_value, found)
    yield from _append_edits(mine, theirs, wanted, theirs_value, found)


def _counterparts(i, names, wanted):
    """The solution's operations of op i's name: the k-th of the name against the k-th, where
    both have as many; else every one of that name."""
    same_name = [r for r, other in enumerate(wanted) if other == names[i]]
    if len(same_name) == names.count(names[i]):
        same_name = [same_name[names[:i].count(names[i])]]
    return same_name


def _argument_edits(mine, theirs, names, wanted):
    for i in range(len(mine)):
        for r in _counterparts(i, names, wanted):
            for where in _scalar_places(mine[i]):
                value = _at(theirs[r], where, None)
                if _is_scalar(value) and value != _at(mine[i], where, None):
                    yield ("argument", i, where, r)


def _remove_edits(mine):
    for i, op in enumerate(mine):
        kept = []
        for where in _tensor_places(op):
            if _at(op, where, None) not in kept:
                kept.append(_at(op, where, None))
                yield ("remove", i, where)


def _step_edits(mine, theirs, names, wanted):
    """An op of the learner's replaced by a step of the solution's, then a step inserted."""
    steps, seen = [], set()
    for r, op in enumerate(theirs):
        key = (wanted[r], repr(op[1:3]))
        if len(_tensor_places(op)) == 1 and wanted[r] not in PLUMBING and key not in seen:
            seen.add(key)
            steps.append(r)
    for i, op in enumerate(mine):
        if _tensor_places(op):
            for r in steps:  # a view of one's own stands for a transpose, not for a softmax
                if wanted[r] != names[i] and (names[i] not in PLUMBING or wanted[r] in MOVES):
                    yield ("replace", i, r)
    for r in steps:  # after the learner's ops like the one it follows in the solution's first
        fed = _at(theirs[r], _tensor_places(theirs[r])[0], None)
        follows = wanted[fed["out"][0]] if isinstance(fed, dict) and "out" in fed else None
        for i in sorted(range(len(mine)),  # and nearest to where the solution has it
                        key=lambda i: (names[i] != follows, abs(i + 1 - r))):
            yield ("insert", i, r)


def _rewire_edits(mine, theirs, names, wanted, learner, theirs_value, found):
    for i in range(len(mine)):
        for r in _counterparts(i, names, wanted):
            for where in _tensor_places(mine[i]):
                ours, wanted_ref = _at(mine[i], where, None), _at(theirs[r], where, None)
                value = theirs_value.get(repr(wanted_ref))
                if value is None:
                    continue
                mine_value = next((t for ref, t in learner if ref == ours), None)
                if mine_value is not None and _same_value(mine_value, value):
                    continue
                other = found(value, i)
                if other is not None and other != ours:
                    yield ("rewire", i, where, other)


def _append_edits(mine, theirs, wanted, theirs_value, found):
    for r, op in enumerate(theirs):
        places = _tensor_places(op)
        if len(places) < 2 or wanted[r] in PLUMBING:
            continue
        refs = [found(theirs_value.get(repr(_at(op, w, None)), _NOTHING), len(mine))
                for w in places]
        if any(ref is None for ref in refs) or not any("out" in ref for ref in refs):
            continue
        after = max(ref["out"][0] for ref in refs if "out" in ref)
        made = list(op)
        for w, ref in zip(places, refs):
            made = _put(made, w, ref)
        yield ("append", after, r, made)


_NOTHING = torch.empty(0)  # a value no tensor of a record has: nothing is found for it


def _applied(edit, mine, output, theirs):
    """(the learner's operations with the edit made, the output reference), without the
    operations nothing uses any more (a dropout's mask, once its product is taken out)."""
    kind, i = edit[0], edit[1]
    ops = [list(op) for op in mine]
    if kind == "argument":
        ops[i] = _put(ops[i], edit[2], _at(theirs[edit[3]], edit[2], None))
        return _pruned(ops, output)
    if kind == "remove":  # every use of op i's result takes its operand at edit[2] instead
        instead = {i: _at(ops[i], edit[2], None)}
        return _pruned([_renumbered(op, i, 0, instead) for op in ops],
                       _renumbered(output, i, 0, instead))
    if kind == "rewire":
        ops[i] = _put(ops[i], edit[2], edit[3])
        return _pruned(ops, output)
    if kind == "append":  # the solution's step edit[3], its operands the learner's, after op i
        moved = {i: {"out": [i + 1, 0]}}
        later = [_renumbered(op, i, +1, moved) for op in ops[i + 1:]]
        return _pruned(ops[:i + 1] + [list(edit[3])] + later, _renumbered(output, i, +1, moved))
    template = list(theirs[edit[2]])
    place = _tensor_places(template)[0]
    if kind == "replace":
        ops[i] = _put(template, place, _at(ops[i], _tensor_places(ops[i])[0], None))
        return _pruned(ops, output)
    made = _put(template, place, {"out": [i, 0]})  # kind == "insert": after op i
    moved = {i: {"out": [i + 1, 0]}}
    later = [_renumbered(op, i, +1, moved) for op in ops[i + 1:]]
    return _pruned(ops[:i + 1] + [made] + later, _renumbered(output, i, +1, moved))


def _pruned(ops, output):
    """ops without those whose results nothing after them (nor the output) uses; an in-place
    operation lives while the tensor it changes is used after it. Later references renumbered."""
    used, live = set(_references(output)), [False] * len(ops)
    for k in range(len(ops) - 1, -1, -1):
        refs = list(_references(ops[k][1:3]))
        changed = refs[:1] if operator_name(ops[k][0]).endswith("_") else []
        if any(r[0] == k for r in used if isinstance(r, tuple)) or any(r in used for r in changed):
            live[k] = True
            used.update(refs)
    number = {old: new for new, old in enumerate(k for k in range(len(ops)) if live[k])}

    def moved(value):
        if isinstance(value, list):
            return [moved(v) for v in value]
        if isinstance(value, dict):
            if len(value) == 1 and "out" in value and isinstance(value["out"], list) \
                    and len(value["out"]) == 2 and value["out"][0] in number:
                return {"out": [number[value["out"][0]], value["out"][1]]}
            return {key: moved(v) for key, v in value.items()}
        return value
    return [moved(op) for k, op in enumerate(ops) if live[k]], moved(output)


def _references(value):
    """The tensors a value refers to (record.references): ("out", [k, j]) as (k, j), the others
    as (kind, repr(x))."""
    return [(x[0], x[1]) if kind == "out" and isinstance(x, list) and len(x) == 2
            else (kind, repr(x)) for kind, x in references(value) if kind in _REFERENCE_KINDS]


def _renumbered(value, i, step, instead):
    """value with its references to results of operations after i moved by step, and those to
    op i's first result replaced as `instead` says."""
    if isinstance(value, list):
        return [_renumbered(v, i, step, instead) for v in value]
    if isinstance(value, dict):
        if len(value) == 1 and "out" in value and isinstance(value["out"], list) \
                and len(value["out"]) == 2:
            k, j = value["out"]
            if k == i and i in instead and j == 0:
                return instead[i]
            return {"out": [k + step, j]} if isinstance(k, int) and k > i else value
        return {key: _renumbered(v, i, step, instead) for key, v in value.items()}
    return value


def _places(op):
    """[(where, value)] of every argument of an operation: where = ("args", n) or ("kwargs", k)."""
    args = op[1] if isinstance(op[1], list) else []
    kwargs = op[2] if isinstance(op[2], dict) else {}
    return [(("args", n), v) for n, v in enumerate(args)] + \
        [(("kwargs", k), v) for k, v in kwargs.items()]


def _tensor_places(op):
    return [where for where, v in _places(op) if isinstance(v, dict) and len(v) == 1
            and next(iter(v)) in _REFERENCE_KINDS]


def _scalar_places(op):
    return [where for where, v in _places(op) if _is_scalar(v)]


def _is_scalar(value):
    return type(value) in (int, float, bool) or (
        isinstance(value, list) and 0 < len(value) <= 4 and all(type(v) is int for v in value))


def _at(op, where, default):
    part, key = where
    holder = op[1] if part == "args" else op[2]
    try:
        return holder[key]
    except (IndexError, KeyError, TypeError):
        return default


def _put(op, where, value):
    op = [op[0], list(op[1]), dict(op[2]), *op[3:]]
    part, key = where
    (op[1] if part == "args" else op[2])[key] = value
    return op


# -- what is said ---------------------------------------------------------------------------------

def _words(name):
    op = operator_name(name)
    return OP_WORDS.get(op, (f"运算 {op}", f"the operation {op}"))


def _bare(words):
    """'a matrix product (@)' -> 'matrix product (@)': after "the lesson's"."""
    for article in ("a ", "an "):
        if words.startswith(article):
            return words[len(article):]
    return words


def _number(value):
    if isinstance(value, float):
        if math.isinf(value):
            return "−∞" if value < 0 else "+∞"
        return f"{value:.4g}"
    return str(value)


_RANDOM = ("bernoulli", "dropout", "rand", "normal", "multinomial")


def _random(ops, ref, depth=0):
    """The reference is a result of a random operation, or of one computed from one."""
    if not (isinstance(ref, dict) and "out" in ref) or depth > 50:
        return False
    k = ref["out"][0]
    if any(word in operator_name(ops[k][0]) for word in _RANDOM):
        return True
    return any(_random(ops, {"out": [r[0], r[1]]}, depth + 1)
               for r in _references(ops[k][1:3]) if isinstance(r[0], int))


def _described(edit, mine, theirs, recorded, exercise):
    kind, i = edit[0], edit[1]
    ops, reference = mine.record["ops"], theirs.record["ops"]
    zh, en = _words(ops[i][0])
    op = operator_name(ops[i][0])
    lead_zh, lead_en = f"{recorded.what} 和课文的做法从这里开始不同：", \
        f"Where {recorded.what} first parts from the lesson's computation: "
    tail_zh, tail_en = "只改这一处，你的代码就得到参考答案的数值", \
        "with that one thing changed, your code gives the reference's values"
    if kind == "argument":
        mine_value, wanted = _at(ops[i], edit[2], None), _at(reference[edit[3]], edit[2], None)
        what_zh, what_en = _argument_text(ops[i][0], edit[2], mine_value, wanted, recorded)
        text = (f"{what_zh}。{tail_zh}", f"{what_en}; {tail_en}")
        op_named = op
    elif kind == "remove":
        others = [_at(ops[i], w, None) for w in _tensor_places(ops[i]) if w != edit[2]]
        if any(_random(ops, ref) for ref in others):
            zh, en = OP_WORDS["native_dropout"]
            op = "dropout"
        elif op in ("add", "sub", "mul", "div") and len(_places(ops[i])) > 1 \
                and type(_at(ops[i], ("args", 1), None)) in (int, float):
            number = _number(_at(ops[i], ("args", 1), None))
            zh, en = {"add": (f"加 {number}", f"an addition of {number}"),
                      "sub": (f"减 {number}", f"a subtraction of {number}"),
                      "mul": (f"乘以 {number}", f"a multiplication by {number}"),
                      "div": (f"除以 {number}", f"a division by {number}")}[op]
        elif op == "add":
            zh, en = ("加法（+，比如残差连接 x + …，那是下一课的内容）",
                      "an addition (+; a residual connection, x + …, belongs to the next lesson)")
        text = (f"多了一步 {zh}，课文的计算里没有它。去掉它，你的代码就得到参考答案的数值",
                f"there is {en} that the lesson's computation does not have; without it, your "
                "code gives the reference's values")
        op_named = op
    elif kind == "replace":
        rzh, ren = _words(reference[edit[2]][0])
        scale = _scale(recorded)
        wanted = _at(reference[edit[2]], ("args", 1), None)
        mine_value = _at(ops[i], ("args", 1), None)
        if op == "div" and operator_name(reference[edit[2]][0]) == "mul" \
                and isinstance(wanted, float) and type(mine_value) in (int, float) and mine_value:
            text = (f"分数除以 {_number(mine_value)}（也就是乘以 {1 / mine_value:.4g}），课文乘以 {wanted:.4g}"
                    + ("（head_size ** -0.5）" if scale and abs(wanted - scale) < 1e-9 else "")
                    + f"。{tail_zh}",
                    f"the scores are divided by {_number(mine_value)} (multiplied by "
                    f"{1 / mine_value:.4g}), where the lesson's are multiplied by {wanted:.4g}"
                    + (" (head_size ** -0.5)" if scale and abs(wanted - scale) < 1e-9 else "")
                    + f"; {tail_en}")
        else:
            text = (f"这里用的是 {zh}，课文在这一步用的是 {rzh}。{tail_zh}",
                    f"{en} where the lesson's has {ren}; {tail_en}")
        op_named = op
    elif kind == "rewire":
        text = (f"这里的 {zh} 用错了一个输入：课文在这一步用的是你的代码里另一个已经算出来的张量"
                f"（{_named(edit[3], recorded)[0]}）。{tail_zh}",
                f"{en} takes the wrong tensor: the lesson's takes another one your code has "
                f"already computed here ({_named(edit[3], recorded)[1]}); {tail_en}")
        op_named = op
    else:  # insert, append
        rzh, ren = _words(reference[edit[2]][0])
        text = (f"在通向返回值的计算里，{zh} 之后少了课文的 {rzh}（算了却没有用在返回值上，也算少了）。"
                "补上这一步，你的代码就得到参考答案的数值",
                f"on the way to what your code returns, the lesson's {_bare(ren)} is missing "
                f"after {en} (computed but left out of what is returned counts as missing); "
                "with it, your code gives the reference's values")
        op_named = operator_name(reference[edit[2]][0])
    return Diagnosis(f"{exercise}.differs_{kind}_{op_named}", lead_zh + text[0],
                     lead_en + text[1])


def _named(ref, recorded):
    """(zh, en) of a reference, as the learner reads it: an input by its name, a weight by its
    path, a result of the call as such."""
    kind, x = next(iter(ref.items()))
    if kind == "in":
        name = recorded.inputs[x] if x < len(recorded.inputs) else f"#{x}"
        return f"输入 {name}", f"the input {name}"
    if kind == "param":
        return f"self.{x}", f"self.{x}"
    return "前面算出的一个结果", "an earlier result"


def _scale(recorded):
    """head_size ** -0.5 at the first draw, when the draw has a head_size."""
    head_size = recorded.draws[0].get("head_size")
    return head_size ** -0.5 if isinstance(head_size, int) and head_size > 0 else None


def _argument_text(name, where, mine, wanted, recorded):
    op = operator_name(name)
    a, b = _number(mine), _number(wanted)
    if op in ("masked_fill", "masked_fill_", "where", "fill", "full") and wanted == -math.inf:
        if mine == math.inf:
            return ("未来的位置填的是 +∞，而不是 −∞：softmax 遇到 +∞ 只会得到 NaN",
                    "the future is filled with +∞ instead of −∞, and softmax of +∞ is NaN")
        return (f"未来的位置填的是 {a}，而不是 −∞：softmax 之后它们还会分到权重",
                f"the future is filled with {a} instead of −∞, so after softmax it keeps a "
                "weight")
    if op in ("_softmax", "softmax", "_log_softmax") and where == ("args", 1):
        return (f"softmax 沿着第 {a} 维做，课文沿着最后一维（dim=-1）做：每一行权重加起来才是 1",
                f"softmax runs along dim {a}, where the lesson's runs along the last one "
                "(dim=-1), so that each row of weights sums to 1")
    scale = _scale(recorded)
    if op in ("mul", "div") and isinstance(wanted, float) and scale \
            and abs(wanted - (scale if op == "mul" else 1 / scale)) < 1e-9:
        verb_zh, verb_en = ("乘以", "multiplied") if op == "mul" else ("除以", "divided")
        return (f"分数{verb_zh} {a}，课文{verb_zh} {b}（head_size ** -0.5 的缩放跟着 head_size 变）",
                f"the scores are {verb_en} by {a}, where the lesson's are {verb_en} by {b} "
                "(the scale head_size ** -0.5 follows head_size)")
    zh, en = _words(name)
    return (f"{zh} 用的是 {a}，课文在这里用的是 {b}", f"{en} uses {a} where the lesson's uses {b}")
