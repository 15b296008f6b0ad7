"""The learner's source text, read in the judge: words for a cause and a loop's line, never a verdict.

What a check decides comes from values (and, for the how-checks, from verified records); this
module only lets a message say more: the line a verified record put a loop's operations on
(`line`), how a function is written ("forward has no return", "forward builds nn.Linear":
`functions_named`), the source of the function that crashed (`function_text`). It reads the
submission's files in the judge, never importing or running them (nor torch). Best effort, and it
never raises: a file that is missing, a symbolic link, not a regular file or not Python gives
nothing; only the folder's own files are read (a bare file name: never a subfolder, never
outside), at most LIMIT bytes of each and BUDGET of one submission in all (parsing costs the
judge about 200 bytes of memory and a microsecond per byte). Parsed files are kept for one submission
at a time only, while they stay unchanged.

    line(folder, file, number) -> the stripped text of that line, or None
    functions_named(folder, module, name) -> [(line, returns a value, {calls}, [(line, text)])]
    function_text(folder, file, name) -> the source of the first function so named, or ""
"""
import ast
import io
import os
import re
import stat
import tokenize
import traceback

LIMIT = 256 << 10  # bytes read of one file (the lesson's files are a few KiB)
BUDGET = 512 << 10  # bytes of one submission read in all: ~100 MB and ~0.5 s of the judge's at most
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
LAYERS = {"Linear", "Embedding", "LazyLinear"}  # a layer's constructor: made in __init__, once
EMPTY = ([], None, [])  # (lines, tree, nodes) of a file that cannot be read or parsed
_PARSED = {}  # path -> (stamp, (lines, tree, nodes)): the files of the last submission read only
PROBLEMS = []  # the reader's own failures (tracebacks), for the self-test: problems()


def line(folder, file, number):
    """The stripped text of line `number` of the submission's file `file`, or None."""
    lines = _load(folder, file)[0]
    if type(number) is int and 0 < number <= len(lines) and lines[number - 1].strip():
        return lines[number - 1].strip()[:200]
    return None


def functions_named(folder, module, name):
    """[(line, returns a value, {dotted name of each call made}, [(line, text) of lines that call
    a layer's constructor])] for every function of module's file named `name` (at its top level
    or a class's): what a cause may say about how it is written ("forward has no return", "forward
    builds nn.Linear"). [] when the file cannot be read."""
    lines, _, nodes = _load(folder, f"{module}.py")
    found = []
    for node in nodes:
        if not isinstance(node, FUNCTIONS) or node.name != name:
            continue
        inner = [n for n in ast.walk(node)
                 if not isinstance(n, (*FUNCTIONS, ast.Lambda, ast.ClassDef)) or n is node]
        returns = any(isinstance(n, ast.Return) and n.value is not None for n in inner)
        calls, builds = set(), []
        for n in inner:
            if isinstance(n, ast.Call):
                dotted = _dotted(n.func)
                if dotted:
                    calls.add(dotted)
                    if dotted.split(".")[-1] in LAYERS and n.lineno - 1 < len(lines):
                        builds.append((n.lineno, lines[n.lineno - 1].strip()))
        found.append((node.lineno, returns, calls, builds))
    return found


def function_text(folder, file, name, most=60):
    """The source lines (at most `most`) of the first function named `name` in the submission's
    file `file`, joined by newlines; "" when it cannot be read. For a crash's cause: the line that
    made a tensor is often above the line that crashed with it."""
    lines, _, nodes = _load(folder, file)
    for node in nodes:
        if isinstance(node, FUNCTIONS) and node.name == name:
            end = min(getattr(node, "end_lineno", node.lineno), node.lineno + most)
            return "\n".join(lines[node.lineno - 1:end])
    return ""


def problems():
    """The reader's own failures so far (tracebacks); none is expected."""
    return list(PROBLEMS)


def _dotted(node, depth=0):
    """"nn.Linear" for nn.Linear, "torch.tril" for torch.tril; None for what is not a name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and depth < 10:
        left = _dotted(node.value, depth + 1)
        return f"{left}.{node.attr}" if left else None
    return None


def _load(folder, file):
    """(lines, tree, nodes) of the submission's file `file` (a bare name ending in .py), or EMPTY."""
    try:
        if not (isinstance(file, str) and file.endswith(".py") and file == os.path.basename(file)
                and file not in ("", ".py") and "\\" not in file and "\0" not in file):
            return EMPTY
        root = os.path.realpath(folder)
        path = os.path.join(root, file)
        if any(os.path.dirname(known) != root for known in _PARSED):
            _PARSED.clear()  # another submission: a judge holds the files of one at a time
        stamp = _stamp(path)
        if stamp is None or not stat.S_ISREG(stamp[1]):
            return EMPTY
        if _PARSED.get(path, (None,))[0] != stamp:
            spent = sum(min(s[2], LIMIT) for p, (s, _) in _PARSED.items() if p != path)
            if spent + min(stamp[2], LIMIT) > BUDGET:
                return EMPTY  # past the judge's budget for this submission: unread
            _PARSED[path] = stamp, _read(path) or EMPTY
        return _PARSED[path][1]
    except Exception:  # noqa: BLE001  (a learner's file must never break the judge)
        if len(PROBLEMS) < 100:
            PROBLEMS.append(f"{file}: {traceback.format_exc(limit=4)}")
        return EMPTY


def _stamp(path):
    """A file's inode, type, size and mtime (a symbolic link's own), or None if missing."""
    try:
        s = os.lstat(path)
        return s.st_ino, s.st_mode, s.st_size, s.st_mtime_ns
    except OSError:
        return None


def _read(path):
    """(lines, tree, nodes) of a regular file, or None: a file Python cannot decode or parse
    cannot run. The nodes are listed once (ast.walk is slow on a big file, and several look)."""
    # O_NONBLOCK: a named pipe put in place of a file must not hang the judge
    def opener(name, flags):
        return os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        with open(path, "rb", opener=opener) as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return None
            data, cut = file.read(LIMIT), os.fstat(file.fileno()).st_size > LIMIT
        # as Python decodes it (a coding line may name any codec); cut, it may end mid-character
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        text = data.decode(encoding, "replace" if cut else "strict")
    except Exception:
        return None
    # A file cut at LIMIT may end inside a statement: drop its last top-level ones until it parses
    starts = [m.start() for m in re.finditer(r"\n(?=[^\s#])", text)] if cut else []
    for end in [len(text)] + starts[::-1][:3]:
        try:  # (the lines split where the parser splits them, not where str.splitlines does)
            tree = ast.parse(text[:end])
            return re.split(r"\r\n|\r|\n", text), tree, list(ast.walk(tree))
        except Exception:  # a syntax error, null bytes, nesting too deep for the parser
            pass
    return None
