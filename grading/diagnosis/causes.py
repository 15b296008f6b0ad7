"""A diagnosis: the likely mistake behind a failing exercise, named only when the outputs show
it. Diagnosis is what an exercise's diagnoses file's diagnose(probe) and diagnose_error(error) return; the causes
here are those several exercises share."""
import torch

from grading.checks.expect import changed_inputs
from grading.checks.shown_work import ready_made
from grading.i18n import Bi


class Diagnosis:
    """The likely mistake behind a failing exercise, named by a key the mistake catalogue uses."""

    def __init__(self, key, zh, en):
        self.key, self.text = key, Bi(zh, en)

    def __repr__(self):
        return f"Diagnosis({self.key!r})"


def shortcut_diagnosis(shown, key):
    used = ready_made(shown) if isinstance(shown, dict) else []
    if used:
        return Diagnosis(key,
                         f"用了 PyTorch 现成的注意力（{'、'.join(used)}）。结果也许是对的，但这一课要你亲手"
                         "走一遍：点积、缩放、掩码、softmax、加权求和，每一步都看得见",
                         f"PyTorch's ready-made attention was used ({', '.join(used)}). The result "
                         "may be right, but this lesson asks you to take every step yourself: dot "
                         "products, scaling, the mask, softmax, the weighted sum, each one visible")
    return None


def modifies_input_diagnosis(exercise, function, names, fix):
    """The values are right at every graded size, but the call changes its inputs in place
    (test_inputs_unchanged). Nothing here says the values are right: the in-place change may
    also break autograd, and that crash may be what the learner sees first."""
    listed = ", ".join(names)
    return Diagnosis(f"{exercise}.modifies_input",
                     f"{function} 原地修改了它的输入 {listed}（*=、+=，或者 masked_fill_ 这样带下划线的方法）："
                     "调用者手里的张量也被改掉了；如果 autograd 为求梯度存下的张量被覆盖，反向传播还会出错。"
                     f"用不原地修改的写法生成新张量，例如 {fix}",
                     f"{function} changes its input {listed} in place (*=, +=, or a method with a "
                     "trailing underscore such as masked_fill_): the caller's tensor is changed "
                     "too, and when a tensor autograd saved for the gradient is overwritten, the "
                     f"backward pass fails as well. Make a new tensor instead, as in {fix}")


def detached_diagnosis(exercise, function, names):
    """The values are right at every graded size, but a loss's gradient does not reach `names`
    (the worker's own report: a diagnosis never costs a point)."""
    listed = ", ".join(names)
    return Diagnosis(f"{exercise}.detached",
                     f"数值是对的，但梯度传不到 {'、'.join(names)}：{function} 里用了 torch.no_grad()、.detach() 或 .data。"
                     "在模型里，训练的梯度要穿过这一步传回去，它前面的层才能学习",
                     f"The values are right, but no gradient reaches {listed}: torch.no_grad(), "
                     f".detach() or .data inside {function}. In a model, training's gradient must "
                     "flow back through this step, or the layers before it cannot learn")


def changed_everywhere(probe, scenario, shapes, names):
    """For diagnoses: the names of the inputs that the learner's call changed at every one of
    `shapes` (`scenario` gives the judge's copies and the worker's report, see call_inputs).
    Shapes of one position (T = 1) are left out: a mask filled in place changes nothing there."""
    def changed(sent, after):  # by value, or written into in place (see Remote.call_inputs)
        written = getattr(after, "written", None) or []
        return {name for name, *_ in changed_inputs(sent, after, names)} | {
            name for name, wrote in zip(names, written) if wrote}
    found = [changed(*probe.submission(scenario, **shape))
             for shape in shapes if shape.get("T", 2) > 1]
    return [name for name in names if all(name in f for f in found)]


def close(a, b, tol=1e-4):
    """For diagnoses: a and b are tensors of one shape, of finite real numbers, that agree within
    tol (relative). Outputs of NaN or ±inf are close to nothing: they match no cause here (the
    slip search's `same` is the one that recognises the NaN of an all −∞ row)."""
    return (finite(a) is not None and finite(b) is not None and a.shape == b.shape
            and bool(torch.allclose(a.double(), b.double(), rtol=tol, atol=tol)))


def finite(value, shape=None):
    """For diagnoses: value as float64 when it is a tensor of finite real floating-point numbers
    (of `shape`, when given), else None: a diagnosis reasons only on numbers a mistake makes."""
    if not (isinstance(value, torch.Tensor) and value.is_floating_point()) \
            or (shape is not None and tuple(value.shape) != tuple(shape)):
        return None
    value = value.double()
    return value if bool(torch.isfinite(value).all()) else None
