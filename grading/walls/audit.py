"""The walls of the portable backend, and the tripwire that proves the portable backend portable.

Where Linux's kernel walls (grading/walls/kernel.py: seccomp, Landlock) are missing (macOS, Windows, an
old kernel), a worker walls itself in with a Python audit hook (PEP 578), which no code can remove:
no new process, program or socket, no signal to another process, no file written, renamed or
removed, nothing read outside Python, its packages and the submission's folder, no ctypes. What
raises no audit event (fork_exec; torch's file readers and writers, written in C++) is made
unreachable before the submission is imported. Plus the resource limits that the OS has (POSIX:
memory, file size). These hold for Python code; native code (an extension module of the learner's
own) could go round them, which the kernel's walls would not let it. That is enough for a learner
grading their own work; a course grading untrusted code grades on Linux, where the kernel walls are
used (grades that count refuse this backend unless it is chosen: portable.chosen_backend).

The tripwire (install_tripwire) is for testing on Linux: with GRADER_BACKEND=portable, every call
that exists only on Linux (os.fork, reads of /proc, SOCK_SEQPACKET, prctl, Landlock) raises in the
judge and in the workers, so that a portable run that leaned on one of them fails loudly here, not
on a learner's Mac.

Imports nothing but the standard library (torch only when a worker has loaded it); safe to import
on every OS.
"""
import errno
import os
import site
import sys

from grading.errors import LinuxOnlyCall  # noqa: F401  (raised here, caught by callers as audit's)

# Events that ask for something a worker never needs (Python's audit events table).
_REFUSED_EVENTS = frozenset({
    "os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
    "os.startfile", "subprocess.Popen", "pty.spawn", "os.killpg",
    "socket.__new__", "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
    "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.chflags",
    "os.lchflags", "os.truncate", "os.link", "os.symlink", "os.utime", "os.mkfifo", "os.mknod",
    "shutil.rmtree", "shutil.move", "shutil.copyfile", "shutil.copymode", "shutil.copystat",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer",
    "ctypes.call_function", "mmap.__new__", "sys.addaudithook", "sys.remote_exec",
    "_winapi.CreateProcess", "_winapi.CreateNamedPipe", "_winapi.OpenProcess",
    "_winapi.TerminateProcess", "winreg.SetValue", "winreg.DeleteKey", "msvcrt.open_osfhandle",
    "webbrowser.open", "urllib.Request", "ftplib.connect", "smtplib.connect", "http.client.connect",
    "sqlite3.connect", "sqlite3.connect/handle", "sqlite3.enable_load_extension",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents",  # would find what is replaced below
})
# Functions written in C that raise no audit event but start a process or make a file outside the
# walls: replaced, in the modules that are already loaded (importing them anew is refused).
_UNAUDITED = {"_posixsubprocess": ("fork_exec",), "_posixshmem": ("shm_open", "shm_unlink"),
              "_multiprocessing": ("SemLock", "sem_unlink")}
# Modules a worker may not import (those it has already are reached through the events above).
_REFUSED_IMPORTS = frozenset({"_posixsubprocess", "_ctypes", "ctypes", "mmap", "_winapi",
                              "msvcrt", "_multiprocessing", "multiprocessing", "pty", "fcntl",
                              "_posixshmem", "sqlite3", "_sqlite3", "dbm", "_dbm", "_gdbm"})
# torch's readers and writers are C++: no audit event tells the hook of the files they open. So
# they are made unreachable before the submission is imported: replaced where they are defined (a
# class written in C through its own dict) and in every loaded module that holds them. Its file
# readers and writers (from_file, save and load and their internals, storages backed by a file or
# by shared memory), and TorchScript, whose compilers, tracer and loaders make code that reaches
# aten::save by name. aten::from_file itself also gets a kernel that refuses (_refuse_operator), so
# that no way of dispatching it (torch.ops, the boxed dispatcher) reads a file. numpy's fromfile,
# tofile, load, save and memmap open their files through Python's open: the hook sees them.
_TORCH_FILE_IO = {
    "torch": ("from_file", "save", "load"),
    "torch.serialization": ("save", "load", "_open_file", "_open_file_like", "_open_zipfile_writer",
                            "_open_zipfile_writer_file", "_open_zipfile_reader"),
    "torch.jit": ("save", "load"),
    "torch._C": (
        "PyTorchFileWriter", "PyTorchFileReader", "_gds_load_storage", "_gds_save_storage",
        "_jit_script_compile", "_jit_script_compile_overload", "_jit_script_class_compile",
        "_jit_script_interface_compile", "CompilationUnit", "parse_ir",
        "_create_function_from_graph", "_jit_interpret_graph", "_create_function_from_trace",
        "_create_function_from_trace_with_dict", "_jit_trace_module", "import_ir_module",
        "import_ir_module_from_buffer", "_import_ir_module_from_package",
        "_load_for_lite_interpreter", "_load_for_lite_interpreter_from_buffer",
        "_load_jit_module_from_file", "_load_jit_module_from_bytes",
        "_load_mobile_module_from_file", "_load_mobile_module_from_bytes", "_save_jit_module",
        "_save_mobile_module", "_save_parameters", "_backport_for_mobile",
        "_backport_for_mobile_from_buffer", "_get_model_extra_files",
        "_get_mobile_model_contained_types"),
    "torch._C._VariableFunctionsClass": ("from_file",),
    "torch._C.StorageBase": ("from_file", "_new_with_file", "_set_from_file", "_write_file",
                             "_share_filename_cpu_", "_new_shared_filename_cpu",
                             "_new_using_filename_cpu", "_share_fd_cpu_", "_new_shared_fd_cpu",
                             "_new_using_fd_cpu"),
    "torch.storage.UntypedStorage": ("share_memory_", "_share_fd_cpu_", "_share_filename_cpu_"),
    "torch.storage.TypedStorage": ("from_file", "share_memory_", "_share_memory_", "_new_shared",
                                   "_share_filename_cpu_", "_share_fd_cpu_"),
    "torch.Tensor": ("share_memory_",),
    "torch.nn.Module": ("share_memory",),
    "torch._C.CompilationUnit": ("define", "create_function"),
    "torch._C.ConcreteModuleType": ("_create_methods_and_properties",),
    "torch._C.ScriptModule": ("_define", "_create_method_from_trace",
                              "_create_method_from_trace_with_dict", "save", "_save_for_mobile"),
    "torch._C.ScriptFunction": ("save",),
}
_FILE_OPERATORS = ("from_file", "from_file.out")  # aten's operators that open a file by name
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_DEVICES = {os.devnull, "/dev/urandom", "/dev/zero"}


def _refused(path=None):
    """What a refused call raises: the kernel walls' own error, so that the learner reads the
    same message on every OS (seccomp: EPERM; Landlock, for a path: EACCES)."""
    if path is None:
        return PermissionError(errno.EPERM, os.strerror(errno.EPERM))
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


def read_roots(package_dir):
    """What a worker may read and list: Python, its packages, and the submission's folder."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
             *_import_path(), os.path.dirname(os.__file__), package_dir}
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    return sorted({os.path.normcase(os.path.realpath(r)) for r in roots | {user_site}
                   if r and os.path.isdir(r)})


def _import_path():
    """The folders on sys.path (the repository is off it by now): with -S, the site-packages the
    judge gave (zygote.SITE_PACKAGES), which site.getsitepackages() misses in a venv of Python 3.10."""
    return [p for p in sys.path if os.path.isabs(p)]


def _private_realpath():
    """os.path.realpath that learner code cannot bend: on POSIX it resolves symbolic links with
    the C functions of the posix module, taken now, and string methods (posixpath's realpath
    looks up os.lstat and its helpers as module globals, which a submission could replace).
    Elsewhere (Windows: ntpath), os.path.realpath as it is now."""
    if os.name != "posix":
        return os.path.realpath
    import posix
    lstat, readlink, getcwd, sep = posix.lstat, posix.readlink, posix.getcwd, "/"
    link_bits, kind_bits = 0o120000, 0o170000

    def realpath(path, depth=0):
        if not path.startswith(sep):
            path = getcwd() + sep + path
        resolved = []
        parts = [p for p in path.split(sep) if p and p != "."]
        while parts:
            part = parts.pop(0)
            if part == "..":
                resolved = resolved[:-1]
                continue
            candidate = sep + sep.join(resolved + [part])
            try:
                is_link = lstat(candidate).st_mode & kind_bits == link_bits
            except OSError:
                is_link = False
            if is_link and depth < 40:
                target = readlink(candidate)
                base = target if target.startswith(sep) else sep + sep.join(resolved) + sep + target
                resolved = [p for p in realpath(base, depth + 1).split(sep) if p]
            else:
                resolved.append(part)
        return sep + sep.join(resolved)
    return realpath


def put_up(package_dir):
    """Wall this process in, for good: the audit hook below. Returns what it put up, in words.
    Everything the hook uses is taken now, into closures: the module's names and the builtins
    can be replaced by the submission afterwards without moving a wall (the hook itself cannot
    be reached: gc's lists of objects are refused)."""
    package_dir = os.path.realpath(package_dir)
    roots = tuple(read_roots(package_dir))
    refusal = _refused

    def refuse(*args, **kwargs):
        raise refusal()

    # Before the hook (which refuses ctypes and gc's views of objects, both needed here): what
    # raises no audit event is made unreachable; `held`: kept alive by the hook alone.
    held = _make_unreachable(refuse)
    sys.addaudithook(_audit_hook(_path_rules(roots), held, refusal))
    return f"audit hook (reads: {len(roots)} folders)"


def _path_rules(roots):
    """(readable(path), a_directory(path, flags)): what the hook asks of a path, with all they
    use taken now."""
    realpath, normcase, fspath = _private_realpath(), os.path.normcase, os.fspath
    devices = frozenset(normcase(d) for d in _DEVICES)
    encoding = sys.getfilesystemencoding()
    directory_flags = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_PATH", 0)
    stat = os.stat
    isinstance_, str_, bytes_, int_, any_ = isinstance, str, bytes, int, any
    seps = (os.sep, os.altsep) if os.altsep else (os.sep,)

    def inside(path):
        return any_(path == root or path.startswith(root.rstrip(seps[0]) + seps[0])
                    for root in roots)

    def readable(path):
        if isinstance_(path, int_):
            return True  # a file this process already has open
        try:
            path = fspath(path)
            if isinstance_(path, bytes_):
                path = path.decode(encoding, "surrogateescape")
        except TypeError:
            return False
        if not isinstance_(path, str_):
            return False
        path = normcase(realpath(path))
        return path in devices or inside(path)

    def a_directory(path, flags):
        """No directory is opened: a descriptor of one would let os.open(name, dir_fd=…) reach
        what the hook cannot see (the open event does not carry dir_fd)."""
        if isinstance_(flags, int_) and flags & directory_flags:
            return True
        try:
            return not isinstance_(path, int_) and stat(path).st_mode & 0o170000 == 0o040000
        except (OSError, TypeError, ValueError):
            return False

    return readable, a_directory


def _audit_hook(rules, held, refusal):
    """The hook: it decides for every event of the interpreter, so it is quick and imports
    nothing; all it uses is bound here."""
    readable, a_directory = rules
    refused, refused_imports = _REFUSED_EVENTS, _REFUSED_IMPORTS
    devnull, write_flags, own_pid = os.devnull, _WRITE_FLAGS, os.getpid()
    isinstance_, str_, int_, tuple_, any_ = isinstance, str, int, tuple, any

    def hook(event, args):
        if event in refused or held is None:  # (`held` is never None: the hook keeps it alive)
            raise refusal()
        if event == "open":
            path, mode, flags = (tuple_(args) + (None, None, None))[:3]
            writing = (isinstance_(mode, str_) and any_(c in mode for c in "wax+")) or \
                (isinstance_(flags, int_) and flags & write_flags)
            if (writing and path != devnull) or not readable(path) or a_directory(path, flags):
                raise refusal(path)
        elif event in ("os.listdir", "os.scandir", "glob.glob", "os.chdir"):
            if args and args[0] is not None and not readable(args[0]):
                raise refusal(args[0])
        elif event == "os.kill":
            if args[0] != own_pid:
                raise refusal()
        elif event == "import":
            if args[0] in refused_imports or str_(args[0]).split(".")[0] in refused_imports:
                raise refusal()

    return hook


def _make_unreachable(refuse):
    """What raises no audit event (_UNAUDITED, torch's file I/O) replaced by `refuse`, wherever a
    loaded module keeps it; aten's file operators given a refusing kernel. Returns that kernel's
    registration, which the hook alone must hold."""
    replaced = {}  # id → (original, replacement)
    for module_name, names in _UNAUDITED.items():
        module = sys.modules.get(module_name)
        for name in names if module is not None else ():
            _replace(module, name, refuse, replaced)
    # (all found first: torch._C.CompilationUnit is replaced, and its methods too)
    owners = [(_loaded(path), names) for path, names in _TORCH_FILE_IO.items()] \
        if "torch" in sys.modules else []
    for owner, names in owners:
        for name in names if owner is not None else ():
            _replace(owner, name, refuse, replaced)
    # …and wherever a loaded module keeps them under its own name (subprocess._fork_exec,
    # torch.jit.CompilationUnit).
    for module in list(sys.modules.values()):
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if id(value) in replaced and replaced[id(value)][0] is value:
                setattr(module, name, replaced[id(value)][1])
    return _refuse_operator(refuse)


def _loaded(path):
    """The loaded module, or the class in one, at a dotted path; None when not loaded."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        owner = sys.modules.get(".".join(parts[:cut]))
        if owner is not None:
            for part in parts[cut:]:
                owner = getattr(owner, part, None)
            return owner
    return None


def _replace(owner, name, replacement, replaced):
    """owner.name = replacement, recorded in `replaced`, even where owner is a class written in C
    (immutable from Python): then its own dict is changed, and the type cache told."""
    original = vars(owner).get(name)
    if original is None:
        return
    replaced[id(original)] = (original, replacement)
    try:
        setattr(owner, name, replacement)
    except TypeError:
        import ctypes
        import gc
        gc.get_referents(vars(owner))[0][name] = replacement  # the dict behind the mappingproxy
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(owner))


def _refuse_operator(refuse):
    """aten's operators that open a file get a kernel that refuses, for every dispatch key that
    had one: no way of dispatching them reaches the file. Returns the registration, which lasts as
    long as it is referenced (its holder could reset it: the hook alone holds it)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return ()
    import warnings
    library = torch._C._dispatch_library("IMPL", "aten", "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": meant
        for operator in _FILE_OPERATORS:
            for key in ("BackendSelect", "CPU"):
                if torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + operator, key):
                    library.impl(operator, key, refuse, False)
    return library


def limit_resources(memory_bytes, file_bytes):
    """What the OS offers without /proc: memory beyond what the worker holds now (POSIX
    RLIMIT_DATA, counted where the kernel counts it), file size, no core files. Returns what held."""
    try:
        import resource
        import signal
    except ImportError:  # Windows
        return "none (Windows)"
    held = []
    for name, value in (("RLIMIT_CORE", 0), ("RLIMIT_FSIZE", file_bytes)):
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
            held.append(name)
        except (ValueError, OSError, AttributeError):
            pass
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails, not kills
    if memory_bytes:
        usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        held_now = usage if sys.platform == "darwin" else usage * 1024  # macOS counts bytes
        cap = held_now + memory_bytes
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
            held.append("RLIMIT_DATA")
        except (ValueError, OSError):
            pass
    return ", ".join(held) or "none"


# -- the tripwire, for testing the portable backend on Linux ---------------------------------------

_LINUX_ONLY_SYMBOLS = {"prctl", "syscall", "capset", "capget", "unshare", "seccomp"}
_SEQPACKET = 5  # socket.SOCK_SEQPACKET on Linux


def install_tripwire():
    """Make the Linux-only calls raise LinuxOnlyCall in this process (see the module's text).
    Returns a function that stands it down: a worker does so as its walls go up, for then the
    learner's code runs, and the walls refuse such calls with the kernel's own errors."""
    armed = [True]

    def tripwire(event, args):
        if not armed[0]:
            return
        if event in ("os.fork", "os.forkpty"):
            raise LinuxOnlyCall(f"{event} in the portable backend")
        if event in ("open", "os.listdir", "os.scandir") and args:
            path = args[0]
            if isinstance(path, bytes):
                path = path.decode("utf-8", "replace")
            if isinstance(path, str) and (path == "/proc" or path.startswith("/proc/")):
                raise LinuxOnlyCall(f"{event}({path!r}) in the portable backend")
        elif event == "socket.__new__" and len(args) >= 3 and isinstance(args[2], int) \
                and args[2] & 0xF == _SEQPACKET:
            raise LinuxOnlyCall("SOCK_SEQPACKET in the portable backend")
        elif event == "ctypes.dlsym" and len(args) >= 2 and (
                str(args[1]) in _LINUX_ONLY_SYMBOLS or str(args[1]).startswith("landlock")):
            raise LinuxOnlyCall(f"ctypes {args[1]} in the portable backend")

    sys.addaudithook(tripwire)
    return lambda: armed.__setitem__(0, False)


def tripwire_wanted():
    """The tripwire goes up where the portable backend was forced on Linux."""
    return sys.platform.startswith("linux") and \
        os.environ.get("GRADER_BACKEND", "").strip().lower() == "portable"
