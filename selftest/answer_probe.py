"""Does a copy of the course hold code that computes an exercise's answer? (issue 37)

    python selftest/answer_probe.py COPY SOLUTIONS

imports every module of COPY's rooms that compute with tensors (tests/, grading/checks,
grading/diagnosis, course.py; the other rooms hold processes and files, which a call with a stray
argument could harm), finds every function there (module-level, or held in a module-level dict,
list or tuple, or in such a holder's attributes: the slip catalogue's lambdas), and calls each
with arguments chosen by their names from one draw (q, k, v, x, scores, T, the sizes, a drawn
`inputs` dict, the lesson's pick of a slip catalogue). A result that equals what SOLUTIONS give
for that draw (averaging_matrix, average_context, attention_scores, causal_softmax, Head) is an
answer; each is printed as one JSON line {"where", "answer"}. Run in a process of its own, from a
scratch folder: the calls are blind.
"""
import importlib
import importlib.util
import inspect
import itertools
import json
import os
import signal
import sys
import types
from pathlib import Path

import torch

COPY, SOLUTIONS = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
ROOMS = ("tests", "grading/checks", "grading/diagnosis")
B, T, C, H, BLOCK = 2, 5, 8, 4, 8


def solutions():
    spec = importlib.util.spec_from_file_location("answer_solutions", SOLUTIONS / "__init__.py",
                                                  submodule_search_locations=[str(SOLUTIONS)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["answer_solutions"] = package
    spec.loader.exec_module(package)
    return {name: importlib.import_module(f"answer_solutions.{name}")
            for name in ("ex2_averaging", "ex4_scaling", "ex5_causal_mask", "ex6_head")}


def draw():
    g = torch.Generator().manual_seed(0)
    t = {"q": torch.randn(B, T, H, generator=g), "k": torch.randn(B, T, H, generator=g),
         "v": torch.randn(B, T, H, generator=g), "x": torch.randn(B, T, C, generator=g),
         "scores": torch.randn(B, T, T, generator=g)}
    t.update(query=torch.randn(H, C, generator=g) / 3, key=torch.randn(H, C, generator=g) / 3,
             value=torch.randn(H, C, generator=g) / 3)
    return t


def answers(ex, t):
    """[(name, tensor)]: the solutions' outputs on the draw, in float64."""
    head = ex["ex6_head"].Head(C, H, BLOCK)
    for layer in ("query", "key", "value"):
        getattr(head, layer).weight.data = t[layer].clone()
    with torch.no_grad():
        found = [("averaging_matrix", ex["ex2_averaging"].averaging_matrix(T)),
                 ("average_context", ex["ex2_averaging"].average_context(t["x"])),
                 ("attention_scores", ex["ex4_scaling"].attention_scores(t["q"], t["k"])),
                 ("causal_softmax", ex["ex5_causal_mask"].causal_softmax(t["scores"])),
                 ("causal_softmax(attention_scores)", ex["ex5_causal_mask"].causal_softmax(
                     ex["ex4_scaling"].attention_scores(t["q"], t["k"]))),
                 ("Head", head(t["x"]))]
    return [(name, value.double()) for name, value in found]


def pool(t, picks):
    """The arguments a parameter of this name may take (a list: tried one after the other)."""
    sizes = {"B": B, "T": T, "C": C, "n_embd": C, "head_size": H, "block_size": BLOCK}
    inputs = {**{k: t[k] for k in ("x", "q", "k", "v", "query", "key", "value")}}
    by_name = {**{k: [t[k], t[k].double()] for k in ("q", "k", "v", "x", "scores")},
               "weights": [t["scores"].softmax(-1)], "T": [T], "B": [B], "C": [C], "head_size": [H],
               "n_embd": [C], "block_size": [BLOCK], "n": [sizes], "size": [sizes], "shape": [sizes],
               "sizes": [sizes], "inputs": [inputs], "pick": picks, "gen": [torch.Generator()],
               "generator": [torch.Generator()]}
    anything = [t["q"], t["x"], t["scores"], T, sizes, inputs]
    return lambda name: by_name.get(name, anything)


def functions(module, seen):
    """(where, callable) of the module, its holders' members and their attributes."""
    def walk(value, where, depth):
        if id(value) in seen or depth > 3:
            return
        seen.add(id(value))
        if isinstance(value, (types.FunctionType, types.LambdaType)):
            if str(getattr(value, "__module__", "")).split(".")[0] in local:
                yield where, value
            return
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, (list, tuple)):
            items = enumerate(value)
        elif hasattr(value, "__dict__") and type(value).__module__.split(".")[0] in local:
            items = vars(value).items()
        else:
            return
        for key, item in items:
            yield from walk(item, f"{where}[{key!r}]", depth + 1)
    for name, value in vars(module).items():
        if not name.startswith("__"):
            yield from walk(value, f"{module.__name__}.{name}", 0)


def alarm(signum, frame):
    raise TimeoutError


def tensors(value, depth=0):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)) and depth < 2:
        for item in value:
            yield from tensors(item, depth + 1)
    elif isinstance(value, dict) and depth < 2:
        for item in value.values():
            yield from tensors(item, depth + 1)


def main():
    os.chdir(os.environ.get("PROBE_SCRATCH", "/tmp"))
    sys.path[:0] = [str(COPY), str(COPY / "tests")]
    expected = answers(solutions(), draw())
    names = ["course"]
    for room in ROOMS:
        for path in sorted((COPY / room).rglob("*.py")):
            if path.name != "conftest.py":
                parts = path.relative_to(COPY).with_suffix("").parts
                names.append(path.stem if room == "tests" else ".".join(
                    parts[:-1] if parts[-1] == "__init__" else parts))
    global local
    local = {n.split(".")[0] for n in names}
    modules = [importlib.import_module(name) for name in names]
    from grading.diagnosis.slips import Way, lesson
    catalogues = [v for m in modules for v in vars(m).values() if isinstance(v, dict) and v
                  and all(isinstance(w, list) and w and isinstance(w[0], Way) for w in v.values())]
    t = draw()
    choices = pool(t, [lesson(c) for c in catalogues] or [{}])
    signal.signal(signal.SIGALRM, alarm)
    seen, hits = set(), []
    for module in modules:
        for where, function in list(functions(module, seen)):
            try:
                parameters = [p for p in inspect.signature(function).parameters.values()
                              if p.default is inspect.Parameter.empty
                              and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            except (TypeError, ValueError):
                continue
            if len(parameters) > 4:
                continue
            options = [choices(p.name) for p in parameters]
            for args in itertools.islice(itertools.product(*options), 60):
                signal.setitimer(signal.ITIMER_REAL, 2)
                try:
                    result = function(*args)
                except BaseException:  # noqa: BLE001  (blind calls: most refuse their arguments)
                    continue
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                for value in tensors(result):
                    for answer, want in expected:
                        if value.shape == want.shape and value.is_floating_point() and \
                                torch.allclose(value.double(), want, atol=1e-5):
                            hits.append({"where": where, "answer": answer})
    for hit in {json.dumps(h, sort_keys=True) for h in hits}:
        print(hit)


if __name__ == "__main__":
    main()
