"""Where a loop is, read from the learner's source text alone: a pointer, never a verdict.

Whether a call loops is verified from the replayed record of its operations (grading.judge.replay);
once a record has shown a loop, this module points the learner to the line that is likely to be
it. It never costs a point, and it is never asked otherwise. It reads the submission's files in the
judge, never importing or running them (nor torch). Best effort, and it never raises: a file that is
missing, a symbolic link, not a regular file or not Python is skipped; only the folder's own files
are read (not its subfolders'), at most LIMIT bytes of each. What the judge reads of one
submission is bounded and charged to it: at most MAX_FILES files and BUDGET bytes in all (parsing
costs the judge about 200 bytes of memory and a microsecond per byte); a file past either bound is
not read. Parsed files are kept for one submission at a time only. An answer is kept in the process
while the files it read stay unchanged.

    loops_in(folder, module, entry) -> sorted [(file, line number, stripped line)]: the loops that
        can run once per position or sample, in the code that `entry` ("average_context",
        "Head.forward") reaches by static calls within the submission
"""
import ast
import io
import os
import re
import stat
import tokenize
import traceback

from grading.worker.serve import SUBMISSION_PACKAGE as PACKAGE  # a submission imports itself by it

LIMIT = 256 << 10  # bytes read of one file (the lesson's files are a few KiB)
MAX_FILES = 24  # files of one submission read in all (its six, the helpers they import)
BUDGET = 512 << 10  # bytes of one submission read in all: ~100 MB and ~0.5 s of the judge's at most
# Calls that loop in Python over the arguments the slice picks; and every itertools function
LOOPING_CALLS = {"map": slice(1, None), "filter": slice(1, 2), "functools.reduce": slice(1, 2)}
WRAPPERS = {"zip", "enumerate", "reversed", "sorted", "list", "tuple", "set", "iter"}
GROWS = {"append", "extend", "insert", "__iadd__", "__imul__", "__setitem__"}  # a list's methods
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# What calling a class, or an instance, of the submission runs (nn.Module's __call__ runs forward)
CALLED = {"class": ["__init__"], "instance": ["forward", "__call__"]}
EMPTY = ([], None, [])  # (lines, tree, nodes) of a file that cannot be read or parsed
_ANSWERS = {}  # (folder, module, entry or None) -> ({path: stamp} of the files read, answer)
_PARSED = {}  # path -> (stamp, (lines, tree, nodes)): the files of the last submission read only


PROBLEMS = []  # see _answer


def loops_in(folder, module, entry):
    """The loops that can depend on the input, in the code `entry` of `module` reaches."""
    return _answer(folder, module, entry)


def _answer(folder, module, entry):
    """Kept while every file read keeps its stamp: a grading session asks the same more than
    once, and a crafted file can take seconds to parse."""
    found = set()
    try:
        submission = _Submission(folder)
        key = (submission.root, module, entry)
        if key in _ANSWERS and all(_stamp(p) == s for p, s in _ANSWERS[key][0].items()):
            return list(_ANSWERS[key][1])
        submission.walk(module, entry, found)
        if len(_ANSWERS) > 10_000:  # a long batch must not grow without end
            _ANSWERS.clear()
        _ANSWERS[key] = submission.stamps, sorted(found)
    except Exception:  # a learner's file must never break the judge: keep what was found…
        # …but a failure here is the reader's own (files that cannot be read or parsed are
        # None in _read): kept, for the self-test to see (problems()), never for the learner
        if len(PROBLEMS) < 100:
            PROBLEMS.append(f"{module}.{entry}: {traceback.format_exc(limit=4)}")
    return sorted(found)


def functions_named(folder, module, name):
    """[(line, returns a value, {dotted name of each call made}, [(line, text) of lines that call
    a layer's constructor])] for every function of module's file named `name` (at its top level
    or a class's): what a cause may say about how it is written ("forward has no return", "forward
    builds nn.Linear"). Same bounds as loops_in; [] when the file cannot be read."""
    try:
        lines, tree, nodes = _Submission(folder).load(f"{module}.py")
    except Exception:  # noqa: BLE001  (best effort: never a verdict)
        PROBLEMS.append(traceback.format_exc())
        return []
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


def function_text(folder, rel, name, most=60):
    """The source lines (at most `most`) of the first function named `name` in the submission's
    file `rel`, joined by newlines; "" when it cannot be read. For a crash's cause: the line that
    made a tensor is often above the line that crashed with it."""
    try:
        lines, _, nodes = _Submission(folder).load(rel)
    except Exception:  # noqa: BLE001  (best effort: never a verdict)
        PROBLEMS.append(traceback.format_exc())
        return ""
    for node in nodes:
        if isinstance(node, FUNCTIONS) and node.name == name:
            end = min(getattr(node, "end_lineno", node.lineno), node.lineno + most)
            return "\n".join(lines[node.lineno - 1:end])
    return ""


LAYERS = {"Linear", "Embedding", "LazyLinear"}  # a layer's constructor: made in __init__, once


def _dotted(node, depth=0):
    """"nn.Linear" for nn.Linear, "torch.tril" for torch.tril; None for what is not a name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and depth < 10:
        left = _dotted(node.value, depth + 1)
        return f"{left}.{node.attr}" if left else None
    return None


def problems():
    """The reader's own failures so far (tracebacks); none is expected."""
    return list(PROBLEMS)


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


def _imported(node):
    """The submission's module an import names ("": its package), or None: never one outside."""
    if isinstance(node, ast.ImportFrom) and node.level:
        return (node.module or "") if node.level == 1 else None
    package, _, module = (node.module if isinstance(node, ast.ImportFrom) else node).partition(".")
    return module if package == PACKAGE else None


def _memo(method):
    """Memoised on the arguments but the last (the depth), and None while being computed or past
    depth 40: cyclic aliases and bases end, and no file makes the lookups grow exponentially."""
    def memo(self, *args):
        key = (method.__name__, *args[:-1])
        if key not in self.cache and args[-1] <= 40:
            self.cache[key] = None
            self.cache[key] = method(self, *args)
        return self.cache.get(key)
    return memo


class _Submission:
    """The folder's files, each read and parsed once. A symbol is what a name of the submission
    stands for: ("module", name; "" is the folder's package), ("func", rel, node, class or None),
    ("class", rel, node) or ("instance", class)."""

    def __init__(self, folder):
        self.root = os.path.realpath(folder)
        self.files, self.stamps, self.cache, self.unread = {}, {}, {}, []
        self.spent = 0  # bytes read for this submission, in all (charged to BUDGET)
        if any(not path.startswith(self.root + os.sep) for path in _PARSED):
            _PARSED.clear()  # another submission: a judge holds the files of one at a time

    def load(self, rel):
        if rel not in self.files:
            path = os.path.join(self.root, rel)
            stamp = self.stamps[path] = _stamp(path)  # first: a change while reading shows next time
            size = min(stamp[2], LIMIT) if stamp else 0
            if stamp is None or not stat.S_ISREG(stamp[1]):
                self.files[rel] = EMPTY
            elif len(self.files) >= MAX_FILES or self.spent + size > BUDGET:
                self.files[rel] = EMPTY  # past the judge's budget for this submission: unread
                self.unread.append(rel)
            else:
                self.spent += size
                if _PARSED.get(path, (None,))[0] != stamp:
                    _PARSED[path] = stamp, _read(path) or EMPTY
                self.files[rel] = _PARSED[path][1]
        return self.files[rel]

    def module_rel(self, name):
        """The file of the submission's module `name` ("": its package) if it parses, or None."""
        rel = f"{name}.py" if name else "__init__.py"
        known = name == "" or isinstance(name, str) and name.isidentifier()
        return rel if known and self.load(rel) is not EMPTY else None

    def bindings(self, rel):
        """{name: a symbol, an expression, (from-import, name) or None} of the last top-level
        statement binding the name in file `rel`. An import in a function binds a local name:
        taken as the file's unless a top-level one binds it. (from … import * is not followed.)"""
        if ("bindings", rel) not in self.cache:
            _, tree, nodes = self.load(rel)
            found, imports = {}, [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))]
            for node in imports + (tree.body if tree else []):
                if isinstance(node, FUNCTIONS):
                    found[node.name] = ("func", rel, node, None)
                elif isinstance(node, ast.ClassDef):
                    found[node.name] = ("class", rel, node)
                elif isinstance(node, ast.Assign):
                    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                    found.update(dict.fromkeys(names, node.value))
                elif isinstance(node, ast.ImportFrom):
                    found.update({a.asname or a.name: (node, a.name) for a in node.names})
                elif isinstance(node, ast.Import):
                    for a in node.names:  # import submission.m binds submission; … as x binds m
                        module = _imported(a.name)
                        found[a.asname or a.name.split(".")[0]] = (
                            None if module is None else ("module", module if a.asname else ""))
            self.cache["bindings", rel] = found
        return self.cache["bindings", rel]

    @_memo
    def resolve_name(self, rel, name, depth):
        bound = self.bindings(rel).get(name)
        if isinstance(bound, ast.AST):  # name = expression
            return self.resolve(rel, bound, None, depth + 1)
        if bound and isinstance(bound[0], ast.ImportFrom):  # from <module> import <name>
            module = _imported(bound[0])
            return None if module is None else self.member(("module", module), bound[1], depth + 1)
        return bound

    @_memo
    def member(self, symbol, attr, depth):
        """What `symbol.attr` stands for, or None. Of a class: a def in its body or an alias
        made there (forward = _forward), in a base, or self.attr = … in a method."""
        if symbol is None or symbol[0] == "func":
            return None
        if symbol[0] == "instance":
            return self.member(symbol[1], attr, depth + 1)
        if symbol[0] == "module":
            rel = self.module_rel(symbol[1])
            found = rel and self.resolve_name(rel, attr, depth + 1)
            submodule = symbol[1] == "" and self.module_rel(attr)  # of the package
            return found or (("module", attr) if submodule else None)
        _, rel, node = symbol
        found = None
        for item in reversed(node.body):  # the class body's last binding of attr: a def, or
            if isinstance(item, FUNCTIONS) and item.name == attr:  # an alias (forward = _run)
                found = ("func", rel, item, symbol)
                break
            if isinstance(item, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == attr for t in item.targets):
                value = item.value
                named = value.id if isinstance(value, ast.Name) else None
                found = next((("func", rel, d, symbol) for d in reversed(node.body)
                              if isinstance(d, FUNCTIONS) and d.name == named), None) \
                    or self.resolve(rel, value, symbol, depth + 1)
                break
        for base in node.bases:
            found = found or self.member(self.resolve(rel, base, None, depth + 1), attr, depth + 1)
        if ("self", node) not in self.cache:  # self.<attr> = <value> in any method
            self.cache["self", node] = {
                t.attr: item.value for item in ast.walk(node) if isinstance(item, ast.Assign)
                for t in item.targets if isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name) and t.value.id == "self"}
        value = self.cache["self", node].get(attr)
        found = found or value and self.resolve(rel, value, symbol, depth + 1)
        # a method found in a base class runs on an instance of this class: self is this class
        return ("func", found[1], found[2], symbol) if found and found[0] == "func" else found

    @_memo
    def resolve(self, rel, node, cls, depth):
        """What expression `node` stands for (`cls`: self's class), or None; not super().attr."""
        if isinstance(node, ast.Lambda):
            return ("func", rel, node, cls)
        if isinstance(node, ast.Name):
            if cls and node.id == "self":
                return ("instance", cls)
            return self.resolve_name(rel, node.id, depth + 1)
        if isinstance(node, ast.Attribute):
            return self.member(self.resolve(rel, node.value, cls, depth + 1), node.attr, depth + 1)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and len(node.args) >= 2 and _constant_text(node.args[1]) is not None:
                return self.member(self.resolve(rel, node.args[0], cls, depth + 1),  # getattr(
                                   _constant_text(node.args[1]), depth + 1)  # self, "_r" + "un")
            made = self.resolve(rel, node.func, cls, depth + 1)  # a class called: an instance
            return ("instance", made) if made and made[0] == "class" else None
        return None

    # -- loops --------------------------------------------------------------------------------

    def walk(self, module, entry, found):
        """Add to `found` the loops of every function `entry` reaches, and its recursive calls:
        those to a function still running, in a depth-first walk (every cycle has one) that
        keeps its own stack (call chains may be deep)."""
        start = ("module", module)
        for name in entry.split("."):
            start = self.member(start, name, 0)
        if not (start and start[0] == "func"):
            return
        state, stack = {start: "running"}, [(start, self._reached(start, found))]
        while stack:
            for function, where in stack[-1][1]:
                if state.get(function) == "running":
                    found.add(where)
                elif function not in state:
                    state[function] = "running"
                    stack.append((function, self._reached(function, found)))
                    break
            else:
                state[stack.pop()[0]] = "done"

    def _reached(self, symbol, found):
        """Add the loops of function `symbol` (nested ones included) to `found`; yield (function,
        where) for every function it names (to call, to map, to store) and, where it calls a class
        or instance of the submission, for the methods in CALLED."""
        _, rel, node, cls = symbol
        for item in ast.walk(node):
            try:
                if self._loops(rel, item, node):
                    found.add(self.line(rel, item.lineno))
            except RecursionError:  # nested too deep to tell: count it
                found.add(self.line(rel, item.lineno))
            targets = []
            if isinstance(item, (ast.Name, ast.Attribute)) and isinstance(item.ctx, ast.Load) \
                    or isinstance(item, ast.Call) and getattr(item.func, "id", "") == "getattr":
                targets.append(self.resolve(rel, item, cls, 0))
            if isinstance(item, ast.Call):
                made = self.resolve(rel, item.func, cls, 0) or ("",)
                targets += [self.member(made, m, 0) for m in CALLED.get(made[0], [])]
            for target in targets:
                if target and target[0] == "func":
                    yield target, self.line(rel, item.lineno)

    def line(self, rel, number):
        lines = self.load(rel)[0]
        text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        return (rel, number, text if len(text) <= 200 else text[:199] + "…")

    def _loops(self, rel, node, function):
        """`node`, in `function`, is a loop whose number of turns can depend on the input."""
        def fixed(iterable):
            return self._fixed(rel, iterable, function)
        if isinstance(node, ast.While):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return not fixed(node.iter)
        if isinstance(node, ast.YieldFrom):
            return not fixed(node.value)
        if isinstance(node, COMPREHENSIONS):
            return not all(fixed(g.iter) for g in node.generators)
        func, aliases = getattr(node, "func", None), self._facts(rel, None)[3]
        if isinstance(func, ast.Name):
            name = aliases.get(func.id, func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = aliases.get(func.value.id, func.value.id) + "." + func.attr
        else:
            return False
        name = name.removeprefix("builtins.")  # from builtins import map as each: map
        if name == "sum":  # sum(a tensor) is a reduction a learner may write: a loop only when
            # it adds up a name for a comprehension (one in the call is reported as itself)
            arg = node.args[0] if node.args else None
            value = self._value(rel, arg.id, function) if isinstance(arg, ast.Name) else None
            return isinstance(value, COMPREHENSIONS) and self._loops(rel, value, function)
        if name.startswith("itertools."):
            return not node.args or not all(map(fixed, node.args))
        return name in LOOPING_CALLS and not all(map(fixed, node.args[LOOPING_CALLS[name]]))

    def _fixed(self, rel, node, function):
        """`node`, in `function`, is an iterable whose length the input cannot change: a literal
        tuple, list, set, dict or string, range(<ints>), zip, enumerate, … of those (unless the
        file rebinds those names), a literal dict's .items(), or a name for one (see _value)."""
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return not any(isinstance(e, ast.Starred) for e in node.elts)
        if isinstance(node, ast.Dict):
            return None not in node.keys  # None: a **mapping unpacked
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (str, bytes))
        if isinstance(node, ast.Name):
            value = self._value(rel, node.id, function)
            literal = isinstance(value, (ast.Tuple, ast.List, ast.Constant)) or isinstance(
                value, ast.Call) and getattr(value.func, "id", None) == "range"
            return literal and self._fixed(rel, value, function)
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return False
        func, args = node.func, node.args
        if isinstance(func, ast.Attribute) and func.attr in ("items", "keys", "values"):
            return isinstance(func.value, ast.Dict) and self._fixed(rel, func.value, function)
        if not isinstance(func, ast.Name) or func.id in self._facts(rel, None)[0]:
            return False
        if func.id == "range":
            return bool(args) and all(_is_int(a) for a in args)
        return func.id in WRAPPERS and bool(args) and all(  # (an int first would raise)
            self._fixed(rel, a, function) or _is_int(a) for a in args)

    def _value(self, rel, name, function):
        """`value` when `function` (or, if it does not bind `name`, the file) binds the name once
        only, by `name = value`; else None. A list only if local and never grown (+= binds it
        again): the file's, any function or file could grow."""
        for scope in (function, None):
            bound, values, changed, _ = self._facts(rel, scope)
            if name in bound or scope is None:
                value = values.get(name) if bound.get(name) == 1 else None
                grows = isinstance(value, ast.List) and (scope is None or name in changed)
                return None if grows else value

    def _facts(self, rel, scope):
        """({name: times bound}, {name: value of `name = value`}, {names grown: x.append(…),
        x[i] = …}, {name: itertools, functools or builtins name}) in a function, nested ones included
        (another binding only makes fewer loops fixed), or anywhere in the file (scope None)."""
        if ("facts", rel, scope) not in self.cache:
            bound, values, changed, aliases = {}, {}, set(), {}
            for node in ast.walk(scope) if scope else self.load(rel)[2]:
                if isinstance(node, ast.Name):
                    name = None if isinstance(node.ctx, ast.Load) else node.id
                elif isinstance(node, ast.alias):
                    name = node.asname or node.name.split(".")[0]
                else:  # a parameter; def, class, except … as
                    name = node.arg if isinstance(node, ast.arg) else getattr(node, "name", None)
                if isinstance(name, str):
                    bound[name] = bound.get(name, 0) + 1
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)):
                    values[node.targets[0].id] = node.value
                if isinstance(getattr(node, "value", None), ast.Name) and (
                        isinstance(node, ast.Attribute) and node.attr in GROWS
                        or isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load)):
                    changed.add(node.value.id)
                if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                    for a in node.names:  # (relative imports are the learner's modules)
                        full = a.name if isinstance(node, ast.Import) else f"{node.module}.{a.name}"
                        if full.split(".")[0] in ("itertools", "functools", "builtins"):
                            aliases[a.asname or a.name] = full
            self.cache["facts", rel, scope] = bound, values, changed, aliases
        return self.cache["facts", rel, scope]


def _constant_text(node, depth=0):
    """The text of a string constant, or of constants joined by +, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and depth < 50:
        left, right = _constant_text(node.left, depth + 1), _constant_text(node.right, depth + 1)
        return None if left is None or right is None or len(left) + len(right) > 200 \
            else left + right
    return None


def _is_int(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int
