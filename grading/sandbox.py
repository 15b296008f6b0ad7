"""The walls around a worker, set up in the worker after fork and before the submission is imported.

- Landlock (Linux ≥ 5.13, no privileges needed): the worker may read Python, the system and the
  submission's folder, and write only its own working folder. Where the kernel allows, it also may
  open no TCP connection and send no signal outside its own sandbox, and as a Landlock domain it may
  not ptrace the judge, the zygote or other workers; /proc is not readable at all (see read_roots).
  Everything the worker starts inherits all of this.
- Resource limits: address space (the memory cap), file size, no core files.
- The zygote is a child subreaper: whatever a submission leaves running, even in a new session,
  becomes the zygote's child when its parent dies, and is killed by sweep_orphans.
"""
import ctypes
import os
import resource
import signal
import site
import struct
import sys

OUTPUT_FILE_LIMIT = 64 * 1024 * 1024  # bytes any file of the worker may grow to (print, write)

# Landlock's system calls and flags (include/uapi/linux/landlock.h), x86_64 and aarch64 alike.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS, _PR_SET_CHILD_SUBREAPER = 38, 36
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_WRITES = sum(1 << bit for bit in (4, 5, 6, 7, 8, 9, 10, 11, 12))  # remove, make dir/reg/sym…
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def landlock_abi():
    """The kernel's Landlock ABI version, 0 where there is none."""
    if not sys.platform.startswith("linux"):
        return 0
    abi = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                        ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(abi), 0)


def read_roots(package_dir, workdir):
    """What a worker may read: Python and its packages, the system, the submission, its folder.
    Not /proc: Landlock stops ptrace-attaching outside the sandbox but not reading another
    process's /proc/PID/environ or cmdline, and every ancestor's environment may hold CI secrets."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
             "/usr", "/lib", "/lib64", "/bin", "/etc", "/dev", "/sys",
             str(package_dir), str(workdir)}
    return sorted(r for r in roots if r and os.path.exists(r))


def restrict_filesystem(package_dir, workdir):
    """Apply Landlock to this process and its future children. Returns the ABI used (0: none)."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    fs = _EXECUTE | _WRITE_FILE | _READ_FILE | _READ_DIR | _WRITES
    fs |= _REFER if abi >= 2 else 0
    fs |= _TRUNCATE if abi >= 3 else 0
    fs |= _IOCTL_DEV if abi >= 5 else 0
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= 6 else 0
    attr = struct.pack("QQQ", fs, net, scoped)[:8 if abi < 4 else 16 if abi < 6 else 24]
    ruleset = _libc.syscall(_SYS_CREATE_RULESET, ctypes.c_char_p(attr),
                            ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        read = _EXECUTE | _READ_FILE | _READ_DIR
        for root in read_roots(package_dir, workdir):
            _allow(ruleset, root, read, fs)
        _allow(ruleset, workdir, fs, fs)  # its own folder: everything
        _allow(ruleset, os.devnull, _READ_FILE | _WRITE_FILE, fs)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if _libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _allow(ruleset, path, access, handled):
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            access &= _FILE_RIGHTS  # a file takes only file rights
        rule = struct.pack("=Qi", access & handled, fd)  # packed landlock_path_beneath_attr
        if _libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                         ctypes.c_char_p(rule), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def limit_resources(memory_bytes):
    """Memory (address space beyond what the worker has already mapped), file size, no cores."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_FILE_LIMIT, OUTPUT_FILE_LIMIT))
    if memory_bytes:
        mapped = _mapped_bytes()
        if mapped is not None:
            cap = mapped + memory_bytes
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _mapped_bytes():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def become_subreaper():
    """Orphans of this process's descendants become its children (Linux); False where unknown."""
    return sys.platform.startswith("linux") and _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def children_of(pid):
    """Pids whose parent is `pid`, from /proc (its own children lists where the kernel has them)."""
    tasks = f"/proc/{pid}/task"
    try:
        found = []
        for task in os.listdir(tasks):
            with open(f"{tasks}/{task}/children") as children:
                found += [int(child) for child in children.read().split()]
        return found
    except OSError:
        pass  # no CONFIG_PROC_CHILDREN: scan every process
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def sweep_orphans(keep=()):
    """Kill and reap every child of this process but `keep`, until none is left: with the
    subreaper set, each kill hands the killed process's own children to us, and so on."""
    for _ in range(1000):
        strays = [pid for pid in children_of(os.getpid()) if pid not in keep]
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
