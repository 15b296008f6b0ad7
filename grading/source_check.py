"""The judge's second opinion on the quality checks, read from the learner's source text alone.

The run-time counts of loops and of PyTorch's ready-made attention happen in the learner's own
process, which the learner controls. This module reads the submission's files in the judge instead:
it never imports or runs them (nor torch). Best effort, and it never raises: a file that is missing,
a symbolic link, not a regular file, or not Python is skipped; at most LIMIT bytes of a file are
read; only the files of the folder itself are followed, not those in subfolders. A result is kept
for the process while the files it read stay unchanged.

    ready_made_attention(folder, module) -> sorted names of ready-made attention found, [] if none
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
import unicodedata

LIMIT = 1 << 20  # bytes read of one file
PACKAGE = "submission"  # grading/worker.SUBMISSION_PACKAGE: a submission can import itself by it
READY_MADE = ("scaled_dot_product", "multi_head_attention", "multiheadattention", "flash_attention",
              "efficient_attention", "cudnn_attention", "_native_multi_head", "transformerencoder",
              "transformer_encoder", "nn.transformer", "flex_attention")
TRANSFORMERS = {"Transformer", "TransformerDecoder", "TransformerDecoderLayer"}  # nn's classes
RUN = re.compile(r"\w+(?:\.\w+)*")  # a name, or a dotted name (inside a string)
# Calls that loop in Python over the arguments the slice picks; and every itertools function
LOOPING_CALLS = {"map": slice(1, None), "filter": slice(1, 2), "functools.reduce": slice(1, 2)}
WRAPPERS = {"zip", "enumerate", "reversed", "sorted", "list", "tuple", "set", "iter"}
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# What calling a class, or an instance, of the submission runs (nn.Module's __call__ runs forward)
CALLED = {"class": ["__init__"], "instance": ["forward", "__call__"]}
EMPTY = ("", None, [])  # a file that cannot be read
_RESULTS = {}  # (kind, folder, module, entry) -> ({path: stamp} of the files read, result)


def ready_made_attention(folder, module):
    """The ready-made attention named in `module` and in every submission file it imports."""
    def look(submission, found):
        for rel in submission.imported_files(module):
            found |= _ready_made_in(submission.load(rel)[2])
    return _cached(look, "attention", folder, module)


def loops_in(folder, module, entry):
    """The loops that can depend on the input, in the code `entry` of `module` reaches."""
    def look(submission, found):
        first, *rest = entry.split(".")
        rel = submission.module_rel(module)
        symbol = rel and submission.resolve_name(rel, first, 0)
        for name in rest:
            symbol = submission.member(symbol, name, 0)
        if symbol and symbol[0] == "func":
            submission.walk(symbol, found)
    return _cached(look, "loops", folder, module, entry)


def _cached(look, kind, folder, *args):
    """look(submission, found), sorted, and kept while every file it read keeps its stamp: a
    grading session asks the same more than once, and a crafted file takes seconds to parse."""
    found = set()
    try:
        submission = _Submission(folder)
        key = (kind, submission.root, *args)
        if key in _RESULTS and all(_stamp(p) == s for p, s in _RESULTS[key][0].items()):
            return list(_RESULTS[key][1])
        look(submission, found)
        _RESULTS[key] = submission.stamps, sorted(found)
    except Exception:  # a learner's file must never break the judge: keep what was found
        pass
    return sorted(found)


def _stamp(path):
    """A file's inode, type, size and mtime (of a symbolic link: the link's), or None if missing."""
    try:
        s = os.lstat(path)
    except OSError:
        return None
    return s.st_ino, s.st_mode, s.st_size, s.st_mtime_ns


def _read(path):
    """(text, tree or None, its nodes) of a regular file, not through a symbolic link, or None.
    The nodes are listed once: ast.walk is slow on a big file, and several look."""
    try:  # O_NONBLOCK: a named pipe put in place of a file must not hang the judge
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data, cut = os.read(fd, LIMIT), os.fstat(fd).st_size > LIMIT
        # As Python decodes it (a coding line may name an odd codec); a file Python cannot decode
        # cannot run, but one cut at LIMIT may end inside a character
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        text = data.decode(encoding, "replace" if cut else "strict")
    except Exception:
        return None
    finally:
        os.close(fd)
    # A file cut at LIMIT may end inside a statement: drop its last top-level ones until it parses.
    # A file that does not parse otherwise cannot run: nothing in it counts.
    starts = [m.start() for m in re.finditer(r"\n(?=[^\s#])", text)] if cut else []
    for end in [len(text)] + starts[::-1][:3]:
        try:
            tree = ast.parse(text[:end])
            return text, tree, list(ast.walk(tree))
        except Exception:  # a syntax error, null bytes, nesting too deep for the parser
            pass
    return text, None, []


def _ready_made_in(nodes):
    """The names of ready-made attention among a file's names and strings, as the parser sees
    them (escapes decoded, "a" "b" joined, and "a" + "b" here), but not in comments nor in
    docstrings: a learner writes "unlike F.scaled_dot_product_attention" in those."""
    words, found, joined, inner = set(), set(), {}, set()
    docstrings = {id(n.body[0].value) for n in nodes if isinstance(
        n, (ast.Module, ast.ClassDef, *FUNCTIONS)) and ast.get_docstring(n, False) is not None}
    for node in reversed(nodes):  # children first
        if id(node) in docstrings:
            continue
        for _, value in ast.iter_fields(node):  # identifiers and constants: all the str fields
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, (str, bytes)):
                    words.add(v if isinstance(v, str) else v.decode("latin-1"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            joined[id(node)] = node.value
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = joined.get(id(node.left)), joined.get(id(node.right))
            if left is not None and right is not None and len(left) + len(right) < 200:
                joined[id(node)] = left + right
                inner.update((id(node.left), id(node.right)))
        # nn.Transformer and its decoder: as an attribute, an import, or a string for getattr
        name = (node.attr if isinstance(node, ast.Attribute) else
                node.name if isinstance(node, ast.alias) else joined.get(id(node), ""))
        if name.split(".")[-1] in TRANSFORMERS and RUN.fullmatch(name):
            found.add(name)
    words.update(v for i, v in joined.items() if i not in inner)
    glance = _fold("\n".join(words))
    if any(s in glance for s in (*READY_MADE, "sdpa")):  # most files: one glance, not each word
        for run in {run for w in words for run in RUN.findall(w)}:
            low = _fold(run)
            if any(s in low for s in READY_MADE) or "sdpa" in low.split("."):
                found.add(run)
    return found


def _fold(text):
    """NFKC, as Python reads names (full-width letters still spell one), in lower case."""
    return unicodedata.normalize("NFKC", text).casefold()


def _memo(method):
    """A _Submission method memoised on its arguments but the last (the depth), and None while
    being computed or past depth 40: cyclic aliases and bases end, and no learner's file makes
    the lookups grow exponentially."""
    def memo(self, *args):
        key = (method.__name__, *args[:-1])
        if args[-1] > 40:
            return None
        if key not in self.cache:
            self.cache[key] = None
            self.cache[key] = method(self, *args)
        return self.cache[key]
    return memo


class _Submission:
    """The files of the folder, each read and parsed once, by name. A symbol is what a name of the
    submission stands for: ("module", name; "" is the folder's package), ("func", rel, node,
    class or None), ("class", rel, node) or ("instance", class)."""

    def __init__(self, folder):
        self.root = os.path.realpath(folder)
        self.files, self.stamps, self.cache = {}, {}, {}

    def load(self, rel):
        if rel not in self.files:
            path = os.path.join(self.root, rel)
            self.stamps[path] = _stamp(path)  # taken first: a change while reading shows next time
            self.files[rel] = _read(path) or EMPTY
        return self.files[rel]

    def module_rel(self, name):
        """The file of the submission's module `name` ("": its package), or None."""
        rel = f"{name}.py" if name else "__init__.py"
        ok = name == "" or isinstance(name, str) and name.isidentifier()
        return rel if ok and self.load(rel) is not EMPTY else None

    @staticmethod
    def imported(node):
        """The submission's module that an import names ("" is its package), or None: relative
        imports from the folder, absolute ones of PACKAGE; never a module outside the folder."""
        if isinstance(node, ast.ImportFrom) and node.level:
            return (node.module or "") if node.level == 1 else None
        name = node.module if isinstance(node, ast.ImportFrom) else node
        return name.partition(".")[2] if name.partition(".")[0] == PACKAGE else None

    def imported_files(self, module):
        """The package's __init__.py (it runs first), the module, and the submission files they
        import, transitively."""
        todo, seen = ["", module], []
        while todo:
            rel = self.module_rel(todo.pop())
            if rel is None or rel in seen:
                continue
            seen.append(rel)
            for node in self.load(rel)[2]:
                if isinstance(node, ast.ImportFrom):
                    module = self.imported(node)  # from . import ex5: ex5 is a module too
                    todo += [module] + ([a.name for a in node.names] if module == "" else [])
                elif isinstance(node, ast.Import):
                    todo += [self.imported(a.name) for a in node.names]
        return seen

    def bindings(self, rel):
        """{name: what the last top-level statement binding it binds} in file `rel`. An import
        inside a function binds a local name: taken as the file's, unless a top-level statement
        binds the name too. (from … import * is not followed.)"""
        if ("bindings", rel) not in self.cache:
            _, tree, nodes = self.load(rel)
            found, body = {}, list(tree.body) if tree else []
            top = set(map(id, body))
            body[:0] = [n for n in nodes
                        if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in top]
            while body:
                node = body.pop(0)
                if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
                    found[node.name] = node
                elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    found.update({t.id: node.value for t in targets if isinstance(t, ast.Name)})
                elif isinstance(node, ast.ImportFrom):
                    found.update({a.asname or a.name: (node, a.name) for a in node.names})
                elif isinstance(node, ast.Import):
                    for a in node.names:  # import submission.m binds submission, … as x binds m
                        module = self.imported(a.name)
                        found[a.asname or a.name.split(".")[0]] = (
                            None if module is None else ("module", module if a.asname else ""))
                elif isinstance(node, (ast.If, ast.Try, ast.With, ast.ExceptHandler)):
                    body[:0] = [n for f in ("body", "handlers", "orelse", "finalbody")
                                for n in getattr(node, f, [])]  # statements that run too
            self.cache["bindings", rel] = found
        return self.cache["bindings", rel]

    @_memo
    def resolve_name(self, rel, name, depth):
        bound = self.bindings(rel).get(name)
        if isinstance(bound, FUNCTIONS):
            return ("func", rel, bound, None)
        if isinstance(bound, ast.ClassDef):
            return ("class", rel, bound)
        if isinstance(bound, ast.AST):  # name = expression
            return self.resolve(rel, bound, None, depth + 1)
        if bound is None or bound[0] == "module":  # None: unbound, or not the submission's
            return bound
        module = self.imported(bound[0])  # from <module> import <name>
        return None if module is None else self.member(("module", module), bound[1], depth + 1)

    def member(self, symbol, attr, depth):
        """What `symbol.attr` stands for, or None."""
        if symbol is None or depth > 40 or symbol[0] == "func":
            return None
        if symbol[0] == "instance":
            return self.member(symbol[1], attr, depth + 1)
        if symbol[0] == "class":
            return self.class_member(symbol, attr, depth + 1)
        rel = self.module_rel(symbol[1])
        found = rel and self.resolve_name(rel, attr, depth + 1)
        submodule = symbol[1] == "" and self.module_rel(attr)  # the package's module
        return found or (("module", attr) if submodule else None)

    @_memo
    def class_member(self, symbol, attr, depth):
        """A def in the class body (not an alias made there), in a base, or self.attr = …"""
        _, rel, node = symbol
        found = next((("func", rel, item, symbol) for item in reversed(node.body)
                      if isinstance(item, FUNCTIONS) and item.name == attr), None)
        for base in node.bases:
            found = found or self.member(self.resolve(rel, base, None, depth + 1), attr, depth + 1)
        if ("self", id(node)) not in self.cache:  # self.<attr> = <value> in any method
            self.cache["self", id(node)] = {
                t.attr: item.value for item in ast.walk(node) if isinstance(item, ast.Assign)
                for t in item.targets if isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name) and t.value.id == "self"}
        value = self.cache["self", id(node)].get(attr)
        found = found or value and self.resolve(rel, value, symbol, depth + 1)
        # a method found in a base class runs on an instance of this class: self is this class
        return ("func", found[1], found[2], symbol) if found and found[0] == "func" else found

    @_memo
    def resolve(self, rel, node, cls, depth):
        """What the expression `node` of file `rel` stands for (`cls`: self's class), or None."""
        if isinstance(node, ast.Lambda):
            return ("func", rel, node, cls)
        if isinstance(node, ast.Name):
            if cls and node.id == "self":
                return ("instance", cls)
            return self.resolve_name(rel, node.id, depth + 1)
        if isinstance(node, ast.Attribute):
            value = node.value
            if (cls and isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id == "super"):  # super().attr: in self's class's bases
                bases = [self.member(self.resolve(cls[1], b, None, depth + 1), node.attr, depth + 1)
                         for b in cls[2].bases]
                return next(filter(None, bases), None)
            return self.member(self.resolve(rel, value, cls, depth + 1), node.attr, depth + 1)
        if isinstance(node, ast.Call):  # a class of the submission called: an instance of it
            made = self.resolve(rel, node.func, cls, depth + 1)
            return ("instance", made) if made and made[0] == "class" else None
        return None

    # -- loops --------------------------------------------------------------------------------

    def walk(self, start, found):
        """Add to `found` the loops of every function `start` reaches, and its recursive calls.
        A function is reached when named at all (called, passed to map, stored in a variable);
        the methods in CALLED when a class or instance of the submission is called."""
        todo, seen, edges = [start], set(), []
        while todo:
            symbol = todo.pop()
            _, rel, node, cls = symbol
            key = _key(symbol)
            if key in seen:
                continue
            seen.add(key)
            for item in ast.walk(node):  # nested functions and lambdas included
                try:
                    looping = self._loops(rel, item, node)
                except RecursionError:  # nested too deep to tell: count it
                    looping = True
                if looping:
                    found.add(self.line(rel, item.lineno))
                targets = []
                if isinstance(item, (ast.Name, ast.Attribute)) and isinstance(item.ctx, ast.Load):
                    targets.append(self.resolve(rel, item, cls, 0))
                if isinstance(item, ast.Call):
                    made = self.resolve(rel, item.func, cls, 0) or ("",)
                    targets += [self.member(made, m, 0) for m in CALLED.get(made[0], [])]
                for target in targets:
                    if target and target[0] == "func":
                        todo.append(target)
                        edges.append((key, _key(target), rel, item.lineno))
        for rel, line in _calls_back(edges, _key(start)):
            found.add(self.line(rel, line))  # recursion

    def line(self, rel, number):
        if ("lines", rel) not in self.cache:  # the parser's line breaks, not str.splitlines's
            self.cache["lines", rel] = re.split(r"\r\n|\r|\n", self.load(rel)[0])
        lines = self.cache["lines", rel]
        text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        return (rel, number, text if len(text) <= 200 else text[:199] + "…")

    def _loops(self, rel, node, function):
        """`node`, in `function`, is a loop whose number of turns can depend on the input."""
        fixed = lambda iterable: self._fixed(rel, iterable, function)
        if isinstance(node, ast.While):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return not fixed(node.iter)
        if isinstance(node, ast.YieldFrom):
            return not fixed(node.value)
        if isinstance(node, COMPREHENSIONS):
            return not all(fixed(g.iter) for g in node.generators)
        func = node.func if isinstance(node, ast.Call) else None
        aliases = self._facts(rel, None)[3]
        if isinstance(func, ast.Name):
            name = aliases.get(func.id, func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = aliases.get(func.value.id, func.value.id) + "." + func.attr
        else:
            return False
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
        tuple, list, set, dict or string, range(<int literals>), and zip, enumerate, … or a
        literal dict's .items(), .keys(), .values() of those, unless the file rebinds those
        names; or a name for a tuple, a string, range(…) or a list (see _value)."""
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
        return (func.id in WRAPPERS and bool(args) and self._fixed(rel, args[0], function)
                and all(self._fixed(rel, a, function) or _is_int(a) for a in args[1:]))

    def _value(self, rel, name, function):
        """What `name` stands for when `function` (or else, when it does not bind the name, the
        file) binds it once only, by `name = value`; else None. A list only in a function that
        neither calls its methods nor sets its items (+= is a second binding); never the file's:
        any function or file can grow it."""
        for scope in (function, None):
            bound, values, changed, _ = self._facts(rel, scope)
            if name in bound or scope is None:
                value = values.get(name) if bound.get(name) == 1 else None
                grows = isinstance(value, ast.List) and (scope is None or name in changed)
                return None if grows else value

    def _facts(self, rel, scope):
        """({name: times bound}, {name: value, where `name = value`}, {names whose methods are
        called or items set}, {local name: itertools or functools name}) in a function, nested
        functions included (a binding more only makes fewer loops of fixed length), or in the
        whole file (scope None), where a binding anywhere counts (a function can bind a global)."""
        if ("facts", rel, id(scope)) not in self.cache:
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
                        isinstance(node, ast.Attribute) or isinstance(node, ast.Subscript)
                        and not isinstance(node.ctx, ast.Load)):
                    changed.add(node.value.id)  # x.append(…), x[i] = …, del x[i]
                if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                    for a in node.names:  # (relative imports are the learner's modules)
                        full = a.name if isinstance(node, ast.Import) else f"{node.module}.{a.name}"
                        if full.split(".")[0] in ("itertools", "functools"):
                            aliases[a.asname or a.name] = full
            self.cache["facts", rel, id(scope)] = bound, values, changed, aliases
        return self.cache["facts", rel, id(scope)]


def _key(function):
    """A function symbol's identity: its code, and the class whose instance `self` is."""
    return id(function[2]), function[3] and id(function[3][2])


def _is_int(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _calls_back(edges, start):
    """Where a call goes back to a function still running: the back edges of a depth-first walk
    from `start` (every cycle has one), found without recursion (call chains may be deep)."""
    graph = {}
    for a, b, rel, line in edges:
        graph.setdefault(a, []).append((b, (rel, line)))
    state, stack = {start: "running"}, [(start, iter(graph.get(start, [])))]
    while stack:
        for b, where in stack[-1][1]:
            if state.get(b) == "running":
                yield where
            elif b not in state:
                state[b] = "running"
                stack.append((b, iter(graph.get(b, []))))
                break
        else:
            state[stack.pop()[0]] = "done"
