"""The likely cause of a crash, from the exception the learner's code raised, in the lesson's terms.

What a diagnoses file's diagnose_error(error) falls back to (and, where an exercise has no
diagnoses file, as in the student copy, all there is) when none of its own causes fits: `error`
is the worker's report {"type", "message", "frames": [[file, line, function, source], …]} and,
where the test knows them, the sizes of the call that crashed ("sizes": {"B": 2, "T": 5, …}). A
cause is named from PyTorch's and Python's own words for the failure, and the sizes in its
message are named as the lesson names them (T = 5, head_size = 8), so that the learner reads
which dimension did not fit, not only that one did not.
"""
import re

from grading.diagnosis.causes import Diagnosis

# The lesson's names for the sizes of a call, in the order a message is read with them.
SIZE_NAMES = ("B", "T", "n_embd", "head_size", "block_size", "vocab_size", "C")


def crash_cause(error, exercise):
    """A Diagnosis for the crash `error` describes, or None when nothing here fits it."""
    if not isinstance(error, dict):
        return None
    kind, message = str(error.get("type", "")), str(error.get("message", ""))
    frames = error.get("frames") or []
    line = str(frames[-1][3]) if frames and len(frames[-1]) > 3 else ""
    sizes = error.get("sizes") if isinstance(error.get("sizes"), dict) else {}
    body = str(error.get("body", ""))  # the crashing function's source, where the judge read it
    for rule in RULES:
        found = rule(kind, message, line, sizes, body)
        if found:
            key, zh, en = found
            return Diagnosis(f"{exercise}.crash_{key}", zh, en)
    return None


def _named(number, sizes):
    """'T = 5' for 5 when the call's T is 5 (every name that fits: 'T = head_size = 8'); the
    product of two, B·T = 10, for a flattened batch; else the number."""
    names = [name for name in SIZE_NAMES if sizes.get(name) == number]
    if names:
        return " = ".join(names) + f" = {number}"
    B, T = sizes.get("B"), sizes.get("T")
    if isinstance(B, int) and isinstance(T, int) and B * T == number:
        return f"B·T = {number}"
    return str(number)


def _forward_missing(kind, message, line, sizes, body=""):
    if kind == "NotImplementedError" and 'missing the required "forward" function' in message:
        return ("forward_missing",
                "这个 nn.Module 没有 forward 方法：调用 head(x) 时，PyTorch 找的是名字正好叫 forward 的方法。"
                "检查拼写（forward(self, x)）和缩进（它要写在类的里面）",
                "this nn.Module has no forward method: calling head(x) runs the method named "
                "exactly forward. Check its spelling (def forward(self, x):) and its indentation "
                "(inside the class)")
    return None


def _super_missing(kind, message, line, sizes, body=""):
    if kind == "AttributeError" and "before Module.__init__() call" in message:
        return ("super_init_missing",
                "__init__ 的第一行少了 super().__init__()：nn.Module 要先把自己建好，才能在 self 上放层、"
                "参数和 register_buffer 存下的张量",
                "__init__ lacks super().__init__() as its first line: nn.Module must set itself "
                "up before layers, parameters and buffers can be kept on self")
    return None


def _buffer_name(kind, message, line, sizes, body=""):
    if kind == "KeyError" and re.search(r"can.{0,2}t contain", message) and "." in message:
        return ("buffer_name_dot",
                "register_buffer 的名字里不能有点：它是 self 上的一个属性名，例如 register_buffer(\"tril\", …)，"
                "之后用 self.tril 取",
                "a buffer's name cannot contain a dot: it is the name of an attribute of self, "
                "register_buffer(\"tril\", …), read later as self.tril")
    if kind == "TypeError" and "buffer name should be a string" in message:
        return ("register_buffer_order",
                "register_buffer 的两个参数顺序反了：先名字，再张量，register_buffer(\"tril\", "
                "torch.tril(torch.ones(block_size, block_size)))",
                "register_buffer's arguments are the other way round: the name first, then the "
                "tensor, register_buffer(\"tril\", torch.tril(torch.ones(block_size, block_size)))")
    return None


def _mask_type(kind, message, line, sizes, body=""):
    if "masked_fill" in message and ("boolean" in message or "Bool" in message):
        return ("mask_not_bool",
                "masked_fill 的掩码要是布尔张量（True 的位置被填上）：tril == 0 就是一个布尔张量，"
                "而由 0 和 1 组成的张量（不论浮点数还是整数）不是",
                "masked_fill needs a boolean mask (True where it fills): tril == 0 is one, while "
                "a tensor of 0s and 1s (floats or integers) is not")
    if "masked_fill" in message and "numpy" in message:
        return ("mask_numpy",
                "masked_fill 的掩码是一个 numpy 数组：它要是 torch 的布尔张量，例如 torch.tril(torch.ones(T, T)) == 0",
                "masked_fill was given a numpy array as its mask: it needs a torch boolean "
                "tensor, such as torch.tril(torch.ones(T, T)) == 0")
    return None


def _not_defined(kind, message, line, sizes, body=""):
    found = re.search(r"name '(\w+)' is not defined", message) if kind == "NameError" else None
    if not found:
        return None
    name = found.group(1)
    if name == "F":
        return ("F_undefined",
                "F 没有定义：文件开头要有 import torch.nn.functional as F（F.softmax 就来自那里）",
                "F is not defined: the file needs import torch.nn.functional as F at the top "
                "(F.softmax comes from it)")
    if name in ("torch", "nn", "math"):
        return ("import_missing", f"{name} 没有导入：文件开头加上 import {name if name != 'nn' else 'torch.nn as nn'}",
                f"{name} is not imported: add import {name if name != 'nn' else 'torch.nn as nn'} "
                "at the top of the file")
    first = body.lstrip().splitlines()[0] if body.strip() else ""
    plain = re.match(r"def (\w+)\((?!\s*self\b)([^)]*)\)", first)
    if plain:  # a plain function: it has no self, and nothing of another function's
        function, arguments = plain.group(1), plain.group(2).split(",")[0].strip() or "…"
        return ("name_undefined",
                f"{name} 在 {function} 里没有定义：一个函数只看得到它的参数和它自己定义的变量。"
                f"要用的大小从张量的形状里取，例如 T = {arguments}.shape[-1]",
                f"{name} is not defined in {function}: a function sees only its arguments and "
                f"what it defines itself. Take a size from a tensor's shape, e.g. T = "
                f"{arguments}.shape[-1]")
    return ("name_undefined",
            f"{name} 在这里没有定义：__init__ 的参数和变量在 forward 里是看不到的，要存在 self 上（self.{name} = …），"
            "或者从张量的形状里取",
            f"{name} is not defined here: __init__'s arguments and variables are not forward's; "
            f"keep it on self (self.{name} = …), or take it from a tensor's shape")


# The lesson's own calls, as a cause quotes them when a name is misspelt.
LESSON_CALLS = {
    "masked_fill": "weights.masked_fill(tril == 0, float('-inf'))",
    "softmax": "F.softmax(weights, dim=-1)", "tril": "torch.tril(torch.ones(T, T))",
    "transpose": "k.transpose(-2, -1)", "register_buffer":
        "self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))",
    "Linear": "nn.Linear(n_embd, head_size, bias=False)",
    "Embedding": "nn.Embedding(vocab_size, n_embd)", "ones": "torch.ones(T, T)",
    "matmul": "q @ k.transpose(-2, -1)",
}
# Where a misspelt name was looked up: the object the message names, and where its names are.
NAMESPACES = {"Tensor": "torch.Tensor", "Linear": "torch.nn.Linear",
              "Embedding": "torch.nn.Embedding"}


def _names_of(where):
    """The public names of a PyTorch (or math) module or class, by its dotted name; () else."""
    import importlib
    root, _, rest = where.partition(".")
    if root not in ("torch", "math"):
        return ()
    try:
        found = importlib.import_module(root)
        for part in rest.split(".") if rest else ():
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return ()
    return [name for name in dir(found) if not name.startswith("_")]


def _misspelt(kind, message, line, sizes, body=""):
    """A name PyTorch does not have, close to one it does: F.softmx, scores.mask_fill."""
    import difflib
    found = re.search(r"(?:module '([\w.]+)'|'(\w+)' object) has no attribute '(\w+)'", message) \
        if kind == "AttributeError" else None
    if not found:
        return None
    module, owner, name = found.groups()
    where = module or NAMESPACES.get(owner)
    close = difflib.get_close_matches(name, _names_of(where), n=1, cutoff=0.75) if where else []
    if not close:
        return None
    right = close[0]
    shown = (module.replace("torch.nn.functional", "F") + "." if module else "") + name
    example = LESSON_CALLS.get(right)
    return ("misspelt",
            f"PyTorch 没有 {shown} 这个名字：是 {right} 拼错了吗？Python 只认一字不差的名字"
            + (f"。课文里是这样写的：{example}" if example else ""),
            f"PyTorch has no {shown}: a misspelling of {right}? Python looks names up exactly "
            "as written" + (f". The lesson writes it {example}" if example else ""))


# Keywords of other libraries that PyTorch's functions do not take, and PyTorch's way instead.
FOREIGN_KEYWORDS = {
    "transpose_b": ("TensorFlow 的 tf.matmul 才有 transpose_b；PyTorch 自己转置：q @ k.transpose(-2, -1)",
                    "transpose_b is TensorFlow's tf.matmul's; in PyTorch, transpose it yourself: "
                    "q @ k.transpose(-2, -1)"),
    "transpose_a": ("TensorFlow 的 tf.matmul 才有 transpose_a；PyTorch 自己转置：x.transpose(-2, -1) @ …",
                    "transpose_a is TensorFlow's tf.matmul's; in PyTorch, transpose it yourself: "
                    "x.transpose(-2, -1) @ …"),
    "keepdims": ("PyTorch 的这个参数叫 keepdim（numpy 叫 keepdims）",
                 "PyTorch calls it keepdim (numpy's is keepdims)"),
    "axis": ("PyTorch 的这个参数叫 dim（numpy 叫 axis）", "PyTorch calls it dim (numpy's is axis)"),
    "units": ("nn.Linear 的参数是 (in_features, out_features)：nn.Linear(n_embd, head_size, bias=False)",
              "nn.Linear takes (in_features, out_features): nn.Linear(n_embd, head_size, "
              "bias=False)"),
    "use_bias": ("PyTorch 的这个参数叫 bias：nn.Linear(n_embd, head_size, bias=False)",
                 "PyTorch calls it bias: nn.Linear(n_embd, head_size, bias=False)"),
}


def _keyword(kind, message, line, sizes, body=""):
    """A keyword argument the function does not take: another library's name for it, or a
    misspelling of one of its own."""
    found = re.search(r"([\w.]+)\(\) got an unexpected keyword argument '(\w+)'", message) \
        if kind == "TypeError" else None
    if not found:
        return None
    function, keyword = found.groups()
    if keyword in FOREIGN_KEYWORDS:
        zh, en = FOREIGN_KEYWORDS[keyword]
        return ("foreign_keyword", f"{function}() 没有参数 {keyword}：{zh}",
                f"{function}() takes no argument {keyword}: {en}")
    return ("unknown_keyword",
            f"{function}() 没有名叫 {keyword} 的参数：检查参数名的拼写（help(torch.{function.split('.')[-1]}) "
            "列出它的参数）",
            f"{function}() has no argument named {keyword}: check the name's spelling "
            f"(help(torch.{function.split('.')[-1]}) lists its arguments)")


def _missing_argument(kind, message, line, sizes, body=""):
    """A call without an argument it needs: register_buffer without its name, most often."""
    found = re.search(r"([\w.]+)\(\) missing (\d+) required positional arguments?: (.+)$",
                      message) if kind == "TypeError" else None
    if not found or "__init__" in found.group(1) or "forward" in found.group(1):
        return None
    function, _, names = found.groups()
    if function.endswith("register_buffer"):
        return ("register_buffer_name",
                "register_buffer 要两个参数：先是名字，再是张量："
                "self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))，"
                "之后用 self.tril 取",
                "register_buffer takes two arguments, a name and then the tensor: "
                "self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size))), "
                "read later as self.tril")
    return ("argument_missing", f"调用 {function}() 时少了参数 {names}",
            f"{function}() was called without its argument {names}")


def _element_not_slice(kind, message, line, sizes, body=""):
    """x[T, T] where x[:T, :T] was meant: one element, at row T and column T, past the end."""
    found = re.search(r"(\w+(?:\.\w+)*)\[\s*(\w+)\s*,\s*\2\s*\]", line)
    if kind != "IndexError" or "out of bounds" not in message or not found:
        return None
    name, size = found.groups()
    return ("element_not_slice",
            f"{name}[{size}, {size}] 取的是一个数（第 {size} 行第 {size} 列），它已经在矩阵之外了。"
            f"要的是前 {size} 行、前 {size} 列，用切片：{name}[:{size}, :{size}]",
            f"{name}[{size}, {size}] picks one number (row {size}, column {size}), past the "
            f"matrix's end. The first {size} rows and columns are a slice: "
            f"{name}[:{size}, :{size}]")


def _own_assert(kind, message, line, sizes, body=""):
    """The learner's own assert failed, on sizes the exercise allows: its condition is too
    strict (T < block_size where T may equal block_size)."""
    if kind != "AssertionError" or not line.lstrip().startswith("assert"):
        return None
    T, block = sizes.get("T"), sizes.get("block_size")
    strict = re.search(r"\bT\s*<\s*(?:self\.)?\w*block_size", line) and "<=" not in line
    if strict and T is not None and T == block:
        return ("assert_strict",
                f"你自己写的断言 `{line.strip()}` 在 T = block_size = {T} 时失败了。T 可以等于 block_size"
                "（掩码正好有 block_size 行），条件要写成 T <= block_size",
                f"your own assert fails at T = block_size = {T}: {line.strip()}. T may equal "
                "block_size (the mask has exactly block_size rows): the condition is "
                "T <= block_size")
    called = ", ".join(f"{k} = {v}" for k, v in sizes.items() if k in SIZE_NAMES)
    return ("assert_failed",
            f"你自己写的断言 `{line.strip()}` 失败了。检查用的输入是练习允许的"
            + (f"（{called}）" if called else "") + "：它的条件在这里应当成立",
            f"your own assert failed: {line.strip()}. The check called your code with inputs "
            "the exercise allows" + (f" ({called})" if called else "")
            + ": its condition should hold there")


def _no_attribute(kind, message, line, sizes, body=""):
    found = re.search(r"'(\w+)' object has no attribute '(\w+)'", message) \
        if kind == "AttributeError" else None
    if not found or found.group(1) in ("Tensor", "int", "float", "tuple", "list"):
        return None
    owner, name = found.groups()
    return ("attribute_missing",
            f"self.{name} 用到了，但 {owner} 的 __init__ 里从没有建它：在 __init__ 里建好（层用 nn.Linear，"
            "掩码用 register_buffer），并检查名字的拼写",
            f"self.{name} is used, but {owner}'s __init__ never made it: build it in __init__ "
            "(an nn.Linear for a layer, register_buffer for the mask), and check the name's "
            "spelling")


def _arguments(kind, message, line, sizes, body=""):
    if kind != "TypeError":
        return None
    if re.search(r"forward\(\) takes \d+ positional arguments? but \d+ were given", message):
        return ("forward_arguments",
                "forward 的参数不对：调用的是 head(x)，所以写成 def forward(self, x):",
                "forward's arguments do not fit: it is called as head(x), so it is "
                "def forward(self, x):")
    if re.search(r"__init__\(\) (takes|missing)", message):
        return ("init_arguments",
                "__init__ 的参数和练习规定的不一样：按文件开头说明里的顺序写，例如 Head(n_embd, head_size, block_size)",
                "__init__'s arguments are not the exercise's: take them in the order the file's "
                "description gives, Head(n_embd, head_size, block_size) for instance")
    if "softmax()" in message and ("dim" in message or "invalid combination" in message):
        return ("softmax_dim",
                "softmax 没有给出沿哪一维做：写上 dim=-1，每一行（一个位置对所有位置的权重）加起来为 1",
                "softmax was not told which dimension: pass dim=-1, so that each row (one "
                "position's weights over all positions) sums to 1")
    return None


def _matrix_product(kind, message, line, sizes, body=""):
    found = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)",
                      message)
    if not found:
        return None
    if re.search(r"one_hot\((?![^)]*num_classes)", body or line):
        return ("one_hot_width",
                "F.one_hot 没有给 num_classes：它的宽度就是这一批里最大的编号加 1，不一定是 vocab_size，"
                "于是和表对不上。写明宽度：F.one_hot(idx, num_classes=vocab_size)（课文直接用 "
                "nn.Embedding 查表：self.token_embedding_table(idx)）",
                "F.one_hot was given no num_classes: its width is then the batch's largest id "
                "plus 1, not necessarily vocab_size, so it does not fit the table. Give the "
                "width: F.one_hot(idx, num_classes=vocab_size) (the lesson looks ids up with "
                "nn.Embedding itself: self.token_embedding_table(idx))")
    a, b, c, d = (int(n) for n in found.groups())
    shapes_zh = f"({_named(a, sizes)}, {_named(b, sizes)}) @ ({_named(c, sizes)}, {_named(d, sizes)})"
    if ".weight" in line and ".T" not in line and b == d:
        return ("weight_not_transposed",
                f"矩阵乘法两边对不上：{shapes_zh}。nn.Linear 把权重存成 (输出, 输入) = (head_size, n_embd)，"
                "所以 x @ layer.weight 要转置：x @ layer.weight.T，或者直接调用这个层：self.query(x)",
                f"the matrix product does not fit: {shapes_zh}. nn.Linear stores its weight as "
                "(out, in) = (head_size, n_embd), so x @ layer.weight needs it transposed, "
                "x @ layer.weight.T, or call the layer itself: self.query(x)")
    return ("product_sizes",
            f"矩阵乘法两边对不上：{shapes_zh}，左边的最后一维要等于右边的第一维",
            f"the matrix product does not fit: {shapes_zh}; the left one's last size must be "
            "the right one's first")


def _batch_product(kind, message, line, sizes, body=""):
    if "batch2 tensor" not in message:
        return None
    found = re.search(r"batch2 tensor to be: \[(\d+), (\d+)\] but got: \[(\d+), (\d+)\]", message)
    if not found:
        return None
    numbers = [int(n) for n in found.groups()]
    want, got = (", ".join(_named(n, sizes) for n in pair) for pair in (numbers[:2], numbers[2:]))
    return ("batch_product_sizes",
            f"批量的矩阵乘法（@）两边对不上：按左边的形状，右边应当以 ({want}, …) 开头，实际是 ({got}, …)。"
            "左边的最后一维要等于右边的倒数第二维：看看这一行两边各是什么形状（课文的 weights @ x 是 "
            "(T, T) @ (B, T, C)，weights @ v 是 (B, T, T) @ (B, T, head_size)）",
            f"the batched product (@) does not fit: for the left one's shape the right one should "
            f"begin with ({want}, …), and it begins with ({got}, …). The left one's last size "
            "must equal the right one's second-to-last: look at both shapes on that line (the "
            "lesson's weights @ x is (T, T) @ (B, T, C), weights @ v is (B, T, T) @ "
            "(B, T, head_size))")


def _time_from_channels(kind, message, line, sizes, body=""):
    """T read from x's last dimension (n_embd) where x is (B, T, n_embd)."""
    found = re.search(r"^\s*(T\s*=\s*x\.(?:shape\[-1\]|shape\[2\]|size\(-1\)|size\(2\)))", body,
                      re.MULTILINE)
    if not found:  # (whatever the crash: T is wrong from there on)
        return None
    return ("time_from_channels",
            f"T 是从 x 的最后一维读出来的（{found.group(1)}），那是 n_embd，不是序列长度。x 的形状是 "
            "(B, T, n_embd)，T 是第二维：B, T, C = x.shape",
            f"T is read from x's last dimension ({found.group(1)}), which is n_embd, not the "
            "sequence's length. x is (B, T, n_embd), so T is the second: B, T, C = x.shape")


def _broadcast(kind, message, line, sizes, body=""):
    found = re.search(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
                      r"non-singleton dimension (\d+)", message)
    if not found:
        return None
    if re.search(r"\.sum\(\s*(dim\s*=\s*)?-?\d+\s*\)", line):  # a sum with no keepdim
        return ("sum_without_keepdim",
                "这一行的 sum 没有 keepdim=True：求和之后那一维就没了，(B, T, T) 的张量除以 (B, T) 的和时，"
                "和沿错了方向对齐（或者对不上）。留下那一维：.sum(dim=-1, keepdim=True)",
                "the sum on this line has no keepdim=True: the summed dimension is gone, so "
                "dividing a (B, T, T) tensor by the (B, T) sums lines them up the wrong way (or "
                "not at all). Keep the dimension: .sum(dim=-1, keepdim=True)")
    a, b, dim = (int(n) for n in found.groups())
    return ("sizes_differ",
            f"两个张量在第 {dim} 维上长度不同：{_named(a, sizes)} 对 {_named(b, sizes)}，没法逐个相配。"
            "看看这一行里每个张量的形状：课文里分数和掩码都是 (T, T)（批量在前面），q、k、v 是 (B, T, head_size)",
            f"two tensors differ in length at dim {dim}: {_named(a, sizes)} against "
            f"{_named(b, sizes)}, which cannot be matched up. Look at each tensor's shape on "
            "that line: in the lesson the scores and the mask are (T, T) (after the batch), q, "
            "k and v (B, T, head_size)")


def _dims(kind, message, line, sizes, body=""):
    found = re.search(r"Dimension out of range \(expected to be in range of \[(-?\d+), (\d+)\], "
                      r"but got (-?\d+)\)", message)
    if not found:
        return None
    low, high, got = (int(n) for n in found.groups())
    return ("dim_out_of_range",
            f"第 {got} 维不存在：这个张量只有 {high + 1} 维（可用 {low} 到 {high}）。用负数从末尾数最稳妥："
            "dim=-1 是最后一维",
            f"dim {got} does not exist: this tensor has {high + 1} dimensions ({low} to {high}). "
            "Counting from the end is safest: dim=-1 is the last one")


def _cast(kind, message, line, sizes, body=""):
    """An in-place operation whose float result cannot go back into an integer tensor, or a fill
    value beyond what a float16 tensor holds."""
    if re.search(r"result type Float can't be cast to the desired output type (Long|Int)", message):
        return ("inplace_on_integers",
                "对整数张量做了原地运算（/=、div_ 这类）：结果是小数，存不回整数张量里。把张量建成浮点数"
                "（torch.ones(T, T) 默认就是 float32），或者不原地地算：weights = tril / …",
                "an in-place operation (/=, div_, …) on an integer tensor: its result is a float, "
                "which cannot be stored back into integers. Make the tensor a float one "
                "(torch.ones(T, T) is float32 by default), or compute out of place: weights = "
                "tril / …")
    if "cannot be converted to type c10::Half without overflow" in message:
        return ("fill_beyond_half",
                "填充的数超出了 float16（half）能表示的范围（最大约 65504），例如 -1e9。用 float('-inf')，"
                "它在每一种浮点类型里都有；这一课的张量是 float32，也不需要 .half()",
                "the fill value is beyond what float16 (half) holds (about 65504 at most), -1e9 "
                "say. Use float('-inf'), which every floating-point type has; the lesson's tensors "
                "are float32, with no need for .half()")
    return None


def _dtypes(kind, message, line, sizes, body=""):
    if re.search(r"argument #\d+ 'indices'.*(Long|Int).*but got [\w.]*(Float|Double|Half)", message):
        return ("float_ids",
                "查表的编号成了浮点数（例如 idx.float()）：编号必须是整数（torch.long），它们是表的行号。"
                "直接用传进来的 idx 查表：self.token_embedding_table(idx)",
                "the ids looked up are floats (idx.float(), say): ids must be integers "
                "(torch.long), the table's row numbers. Look up the idx given, as it is: "
                "self.token_embedding_table(idx)")
    if re.search(r"\b(long|Long|int)\b", message) and re.search(
            r"same dtype|scalar type|expected both", message):
        return ("integer_tensor",
                "一个整数张量（torch.long）和 float32 的张量相遇了：整数除法 //、torch.arange(T)、"
                "dtype=torch.long 或 torch.int 都会给出整数。权重和向量要是浮点数：用 / 而不是 //，"
                "或者 torch.ones(T, T) 这样默认是 float32 的张量，或者 .float() 转换",
                "an integer tensor (torch.long) met a float32 one: floor division //, "
                "torch.arange(T), dtype=torch.long or torch.int all give integers. Weights and "
                "vectors are floating-point: divide with / rather than //, build with "
                "torch.ones(T, T) (float32 by default), or convert with .float()")
    if re.search(r"expected (scalar type|m1 and m2 to have the same dtype)|must have the same "
                 r"dtype|found Double|expected both vectors to have same dtype", message):
        return ("dtypes_differ",
                "两个张量的类型不同：一个是 float64（numpy 数组、.double() 或 dtype=torch.float64），"
                "另一个是 torch 默认的 float32。用 torch 的运算建张量，或者 .float() 转回来",
                "two tensors of different types meet: one is float64 (a numpy array, .double() or "
                "dtype=torch.float64), the other torch's default float32. Make tensors with torch "
                "operations, or convert with .float()")
    return None


def _views(kind, message, line, sizes, body=""):
    if "view size is not compatible with input tensor's size and stride" in message:
        return ("view_after_transpose",
                "转置之后的张量在内存里不再是连续的，.view 改不了它的形状：用 .reshape，或者 .contiguous().view；"
                "要交换两维的话，transpose 本身就够了",
                "after a transpose a tensor is no longer contiguous in memory, and .view cannot "
                "reshape it: use .reshape, or .contiguous().view; to swap two dimensions, "
                "transpose alone is enough")
    found = re.search(r"shape '\[([-\d, ]+)\]' is invalid for input of size (\d+)", message)
    if found:
        return ("reshape_sizes",
                f"view/reshape 要的形状 [{found.group(1)}] 装不下这个张量的 {found.group(2)} 个数：它们的乘积要相等。"
                "交换两维用 transpose，不要用 view/reshape",
                f"the shape [{found.group(1)}] given to view/reshape does not hold the tensor's "
                f"{found.group(2)} numbers: their products must be equal. To swap two dimensions, "
                "use transpose, not view/reshape")
    return None


def _transposed_batch(kind, message, line, sizes, body=""):
    if re.search(r"transpose\(\s*(0\s*,\s*1|1\s*,\s*0)\s*\)", line) and re.search(
            r"must match the size|batch2 tensor|cannot be multiplied", message):
        return ("transposed_batch",
                "transpose(0, 1) 交换的是批量 B 和时间 T 两个维度。课文要交换的是最后两维（T 和 head_size）："
                "k.transpose(-2, -1)，得到 (B, head_size, T)",
                "transpose(0, 1) swaps the batch B and the time T. The lesson swaps the last two "
                "(T and head_size): k.transpose(-2, -1), which gives (B, head_size, T)")
    return None


RULES = (_cast, _time_from_channels, _transposed_batch, _forward_missing, _super_missing, _buffer_name, _mask_type, _not_defined,
         _misspelt, _keyword, _missing_argument, _element_not_slice, _own_assert, _no_attribute, _arguments, _matrix_product, _batch_product, _broadcast, _dims, _dtypes,
         _views)
