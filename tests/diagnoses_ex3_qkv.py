"""Exercise 3's diagnoses: the causes its failing outputs and crashes point to (diagnose,
diagnose_error; the judge's plugin calls them once a check of ex3_qkv fails). tests/test_ex3_qkv.py
holds its checks. Not in the student copy: the lesson's steps they search are the answers."""
import torch
from test_ex3_qkv import (
    LAYERS,
    NAMES,
    draw,
    inputs_after,
    layers_found,
    learning,
    project,
    shown_project,
    sizes,
)

from grading.checks import SHAPES, ZERO
from grading.diagnosis import (
    Diagnosis,
    Recorded,
    changed_everywhere,
    close,
    crash_cause,
    detached_diagnosis,
    finite,
    modifies_input_diagnosis,
    record_diff,
)
from lesson_steps import layer_shape_diagnosis

RECORDED = Recorded(shown_project, (sizes(SHAPES[0]), sizes(SHAPES[2])), "QKV.forward", inputs=("x",))


def diagnose(probe):
    return catalogued(probe) or record_diff.diagnosis(probe, RECORDED, "ex3")


def catalogued(probe):
    shape = SHAPES[0]
    B, T, H = shape["B"], shape["T"], shape["head_size"]
    found = layers_diagnosis(*probe.submission(layers_found, **sizes(shape)), shape)
    if found:
        return found
    got, want = probe(project, **sizes(shape))
    x = probe.inputs(draw, **sizes(shape))["x"].double()  # (the draw of this call's inputs)
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (3, B, T, H):
        return Diagnosis("ex3.stacked",
                         "q、k、v 被叠成了一个 (3, B, T, head_size) 的张量。课文里它们是三个独立的向量，"
                         "forward 要返回三个张量：return q, k, v",
                         "q, k and v were stacked into one (3, B, T, head_size) tensor. In the "
                         "lesson they are three separate vectors: forward returns three tensors, "
                         "return q, k, v")
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, T, 3 * H):
        return Diagnosis("ex3.concatenated",
                         "q、k、v 被拼成了一个 (B, T, 3·head_size) 的张量（torch.cat，或者 nanoGPT 的 c_attn 没有拆开）。"
                         "forward 要分别返回三个张量：return q, k, v",
                         "q, k and v were joined into one (B, T, 3·head_size) tensor (torch.cat, or "
                         "nanoGPT's c_attn left unsplit). forward returns the three tensors "
                         "separately: return q, k, v")
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        return None
    if close(got[0], got[1]) and close(got[1], got[2]):
        return Diagnosis("ex3.shared_layer",
                         "q、k、v 完全相同：三个角色共用了同一个线性层。查询、键、值各司其职，"
                         "各要一个自己的 nn.Linear",
                         "q, k and v are identical: the three roles share one linear layer. "
                         "Query, key and value each do their own job and need an nn.Linear of "
                         "their own")
    zero, _ = probe(project, zero_input=True, **sizes(shape))
    zero = [finite(t, (B, T, H)) for t in zero] if isinstance(zero, (tuple, list)) else [None]
    if all(t is not None for t in zero) and any(t.abs().max() > ZERO for t in zero):
        return Diagnosis("ex3.bias",
                         "输入全为 0 时输出不为 0：线性层带了偏置。课文的三个层都是 bias=False",
                         "A zero input gives a non-zero output: a layer has a bias. The lesson's "
                         "three layers all have bias=False")
    for name, t in zip(NAMES, got):
        if close(t, x):
            return Diagnosis("ex3.output_is_x",
                             f"{name} 就是 x 本身，没有经过线性层（{name} = x）。查询、键、值每一个都由自己的层从 x "
                             f"算出来：{name} = self.{LAYERS[NAMES.index(name)]}(x)，形状是 (B, T, head_size)",
                             f"{name} is x itself, not passed through a layer ({name} = x). "
                             "Query, key and value each come out of x through a layer of their "
                             f"own: {name} = self.{LAYERS[NAMES.index(name)]}(x), of shape "
                             "(B, T, head_size)")
    if want is None:
        return None
    # Which layer each returned tensor came out of: query, key or value (None: none of them).
    made_by = [next((j for j in range(3) if close(got[i], want[j])), None) for i in range(3)]
    if made_by == [0, 1, 2]:
        return right_values_diagnosis(probe)
    if None in made_by:
        return after_the_layers(got, want) or unused_layers(probe, shape) \
            or changed_input(probe)
    if len(set(made_by)) == 3:
        names = ", ".join(NAMES[j] for j in made_by)
        return Diagnosis("ex3.order",
                         f"三个输出都对，但顺序是 ({names})。查询、键、值要按 (q, k, v) 的顺序返回",
                         f"The three outputs are right but in the order ({names}). Return them "
                         "as (q, k, v): query, key, value")
    wrong = [f"{NAMES[i]} = self.{LAYERS[j]}(x)" for i, j in enumerate(made_by) if i != j]
    return Diagnosis("ex3.layer_reused",
                     f"输出用错了层：{'，'.join(wrong)}。查询、键、值各司其职，各要一个自己的 nn.Linear："
                     "q = self.query(x)，k = self.key(x)，v = self.value(x)",
                     f"An output comes out of the wrong layer: {', '.join(wrong)}. Query, key and "
                     "value each do their own job with an nn.Linear of their own: "
                     "q = self.query(x), k = self.key(x), v = self.value(x)")


# What a learner may put after the layers, each a function of the layer's output.
AFTER_LAYERS = (("ReLU", torch.relu), ("GELU", torch.nn.functional.gelu), ("tanh", torch.tanh),
                ("sigmoid", torch.sigmoid), ("softmax", lambda t: torch.softmax(t, dim=-1)))


def after_the_layers(got, want):
    """q, k and v are the layers' outputs passed through one more function (a ReLU)."""
    for name, function in AFTER_LAYERS:
        if all(close(g, function(w.double())) for g, w in zip(got, want)):
            return Diagnosis("ex3.after_the_layers",
                             f"q、k、v 在线性层之后又经过了 {name}。课文里它们就是线性层的输出本身：q = self.query(x)，"
                             f"没有激活函数（注意力头里唯一的非线性是后面给权重做的 softmax）",
                             f"q, k and v went through a {name} after their layers. In the lesson "
                             "they are the layers' outputs themselves, q = self.query(x), with no "
                             "activation (the head's one non-linearity is the softmax of the "
                             "weights, later)")
    return None


def unused_layers(probe, shape):
    """self.query, self.key and self.value get no gradient while x does: the outputs come out of
    other layers (nanoGPT's fused c_attn, say), whose weights the test did not set."""
    grads = probe.submission(learning, checked=False, **sizes(shape))
    if not isinstance(grads, dict) or grads.get("x") is None or any(
            grads.get(f"self.{name}.weight") is not None for name in LAYERS):
        return None
    _, parameters, _ = probe.submission(layers_found, **sizes(shape))
    others = [path for path, _, _ in parameters if path.split(".")[0] not in LAYERS]
    named = ", ".join(others[:3])
    return Diagnosis("ex3.layers_unused",
                     "self.query、self.key、self.value 建好了，却没有用到：q、k、v 是由别的层算出来的"
                     + (f"（{named.replace(', ', '、')}）" if others else "")
                     + "。练习规定了三个层的名字，测试设置的是它们的权重（像 nanoGPT 那样把三者合成一个 c_attn 的写法，"
                     "这里不适用）：q = self.query(x)，k = self.key(x)，v = self.value(x)",
                     "self.query, self.key and self.value are built but never used: q, k and v "
                     "come out of other layers" + (f" ({named})" if others else "")
                     + ". The exercise fixes the three layers' names and the test sets their "
                     "weights (a fused c_attn split in three, as nanoGPT does, does not fit "
                     "here): q = self.query(x), k = self.key(x), v = self.value(x)")


def changed_input(probe):
    changed = changed_everywhere(probe, inputs_after, [sizes(s) for s in SHAPES], ("x",))
    return modifies_input_diagnosis("ex3", "forward", changed, "q = self.query(x)") \
        if changed else None


def right_values_diagnosis(probe):
    """q, k and v right (at the diagnosis's size): an input changed in place, or no gradient."""
    changed = changed_everywhere(probe, inputs_after, [sizes(s) for s in SHAPES], ("x",))
    if changed:
        return modifies_input_diagnosis("ex3", "forward", changed, "q = self.query(x)")
    grads = probe.submission(learning, checked=False, **sizes(SHAPES[0]))
    missing = [name for name in ("x", *(f"self.{n}.weight" for n in LAYERS))
               if isinstance(grads, dict) and grads.get(name) is None]
    return detached_diagnosis("ex3", "forward", missing) if missing else None


def layers_diagnosis(built, parameters, after_forward, shape):
    """Layers that QKV lacks once built: made in forward, or there under other names."""
    missing = [name for name in LAYERS if name not in built]
    if not missing:
        return None
    if len(after_forward) == len(LAYERS):
        return Diagnosis("ex3.layers_made_in_forward",
                         "QKV(n_embd, head_size) 建好之后还没有 "
                         + "、".join(f"self.{name}" for name in missing)
                         + "，要等 forward 运行时才出现：层是在 forward 里建的。这样测试没法设置它们的权重，训练前用 "
                         "model.parameters() 建的优化器也看不到它们。在 __init__ 里建一次：self.query = "
                         "nn.Linear(n_embd, head_size, bias=False)，self.key、self.value 同样；forward 里只使用它们",
                         "QKV(n_embd, head_size) has no "
                         + ", ".join(f"self.{name}" for name in missing)
                         + " until forward runs: the layers are made in forward. The test cannot "
                         "set their weights then, and an optimizer made from model.parameters() "
                         "before training would never see them. Build them once in __init__, "
                         "self.query = nn.Linear(n_embd, head_size, bias=False) and self.key, "
                         "self.value alike; forward only uses them")
    size = [shape["head_size"], shape["n_embd"]]
    others = [path[:-len(".weight")] for path, weight, _ in parameters
              if path.endswith(".weight") and weight == size and path.split(".")[0] not in LAYERS]
    if len(others) < len(missing):
        return None
    theirs, api = ", ".join(f"self.{name}" for name in others), \
        ", ".join(f"self.{name}" for name in missing)
    return Diagnosis("ex3.layer_names",
                     f"QKV 里没有 {api.replace(', ', '、')}，却有形状正确的层 {theirs.replace(', ', '、')}：这个练习规定了三个层的名字，"
                     "测试按 self.query.weight、self.key.weight、self.value.weight 设置权重（练习 6 的 Head 也用这些名字）。"
                     "把它们改名为 self.query、self.key、self.value",
                     f"QKV has no {api}, but it has layers of the right shape named {theirs}: "
                     "the exercise fixes the three layers' names, and the tests set their weights "
                     "as self.query.weight, self.key.weight and self.value.weight (exercise 6's "
                     "Head uses these names too). Rename them self.query, self.key, self.value")



def diagnose_error(error):
    return layer_shape_diagnosis(error, "ex3") or crash_cause(error, "ex3")
