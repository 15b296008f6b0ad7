"""The walls around a worker, set up in the worker after fork and before the submission is imported.

All of them need no privileges, and hold when the grader runs as root too:
- Capabilities (drop_privileges): a root worker keeps uid 0 but loses every capability, for good.
- Landlock (Linux ≥ 5.13): the worker may read Python, the system and the submission's folder,
  three harmless devices, and write nothing (or one folder given). Where the kernel allows, it also
  may open no TCP connection and send no signal outside its own sandbox, and as a Landlock domain it
  may not ptrace the judge, the zygote or other workers; /proc is not readable at all (see
  read_roots).
- seccomp (forbid_syscalls): no new process, program, socket, namespace, mount, shared memory or
  kernel object, no limit raised and no signal to any other process; each such call fails with
  EPERM (the process is never killed). Threads still work.
- Resource limits: address space (the memory cap), file size, no core files; and the worker is the
  OOM killer's first choice (prefer_oom_kill).
- The zygote is a child subreaper: whatever a submission leaves running, even in a new session,
  becomes the zygote's child when its parent dies, and is killed by sweep_orphans.
Everything the worker starts inherits all of this.
"""
import ctypes
import os
import resource
import signal
import site
import struct
import sys

# Landlock's system calls and flags (include/uapi/linux/landlock.h), x86_64 and aarch64 alike.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS, _PR_SET_CHILD_SUBREAPER = 38, 36
_PR_SET_PDEATHSIG = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_WRITES = sum(1 << bit for bit in (4, 5, 6, 7, 8, 9, 10, 11, 12))  # remove, make dir/reg/sym…
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def walls_not_up(walls):
    """[(wall, why)] of the walls a worker of the Linux backend must stand behind and does not:
    Landlock and seccomp, which the backend is chosen for (grading.backends.portable.missing_walls
    found them offered). `walls`: what the worker's calls returned."""
    missing = []
    landlock = walls.get("landlock")
    if not (type(landlock) is int and landlock >= 1):
        missing.append(("Landlock", str(landlock) if landlock else "not applied"))
    if walls.get("seccomp") is not True:
        missing.append(("seccomp", "the kernel answers PR_GET_SECCOMP but refused the filter"))
    return missing


def landlock_abi():
    """The kernel's Landlock ABI version, 0 where there is none."""
    if not sys.platform.startswith("linux"):
        return 0
    abi = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                        ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(abi), 0)


def seccomp_available():
    """The kernel filters system calls (PR_GET_SECCOMP answers rather than failing with EINVAL)."""
    return sys.platform.startswith("linux") and _libc.prctl(_PR_GET_SECCOMP, 0, 0, 0, 0) >= 0


def read_roots(package_dir, writable=None):
    """What a worker may read: Python and its packages, the system, the submission, `writable`.
    Not /proc: Landlock stops ptrace-attaching outside the sandbox but not reading another
    process's /proc/PID/environ or cmdline, and every ancestor's environment may hold CI secrets.
    Not /dev either (terminals, /dev/shm, disks): only the files DEVICES names."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
             *(p for p in sys.path if os.path.isabs(p)),  # with -S, the judge's site-packages
             "/usr", "/lib", "/lib64", "/bin", "/etc", "/sys",
             str(package_dir), str(writable or "")}
    return sorted(r for r in roots if r and os.path.exists(r))


DEVICES = {"/dev/null": _READ_FILE | _WRITE_FILE, "/dev/zero": _READ_FILE,
           "/dev/urandom": _READ_FILE}  # the only devices a worker may open


def restrict_filesystem(package_dir, writable=None):
    """Apply Landlock to this process and its future children: read the read_roots, write
    nothing but `writable` (a folder) if given. Returns the ABI used (0: none)."""
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
        for root in read_roots(package_dir, writable):
            _allow(ruleset, root, read, fs)
        if writable:
            _allow(ruleset, writable, fs, fs)  # its own folder: everything
        for device, access in DEVICES.items():
            if os.path.exists(device):
                _allow(ruleset, device, access, fs)
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


# -- seccomp ---------------------------------------------------------------------------------------

# System call numbers: x86_64 (arch/x86/entry/syscalls/syscall_64.tbl) and aarch64 (the generic
# table, include/uapi/asm-generic/unistd.h); None where the architecture has no such call.
_SYSCALLS = {
    # new processes and programs (clone is allowed for threads, see _seccomp_program)
    "fork": (57, None), "vfork": (58, None), "clone": (56, 220), "clone3": (435, 435),
    "execve": (59, 221), "execveat": (322, 281),
    # new sockets and addresses (sockets open before, like the judge's, keep working)
    "socket": (41, 198), "socketpair": (53, 199), "connect": (42, 203), "bind": (49, 200),
    "listen": (50, 201),
    # anonymous files, other processes' memory, and their handles
    "memfd_create": (319, 279), "memfd_secret": (447, 447), "ptrace": (101, 117),
    "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "process_madvise": (440, 440), "pidfd_open": (434, 434), "pidfd_getfd": (438, 438),
    "pidfd_send_signal": (424, 424),
    # io_uring runs calls out of seccomp's sight
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    # namespaces and mounts
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430),
    "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433),
    "mount_setattr": (442, 442), "open_tree_attr": (467, 467), "pivot_root": (155, 41),
    "chroot": (161, 51),
    # kernel objects: BPF, page-fault handlers, perf, keyrings
    "bpf": (321, 280), "userfaultfd": (323, 282), "perf_event_open": (298, 241),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    # System V IPC and POSIX message queues: state shared with other processes of the machine
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "mq_open": (240, 180), "mq_unlink": (241, 181),
    # limits (prlimit64 only reads, see _seccomp_program)
    "setrlimit": (160, 164), "prlimit64": (302, 261),
    # the machine itself
    "reboot": (169, 142), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "swapon": (167, 224), "swapoff": (168, 225), "acct": (163, 89),
    "settimeofday": (164, 170), "clock_settime": (227, 112), "adjtimex": (159, 171),
    "clock_adjtime": (305, 266), "sethostname": (170, 161), "setdomainname": (171, 162),
    "iopl": (172, None), "ioperm": (173, None), "mknod": (133, None), "mknodat": (259, 33),
    "syslog": (103, 116),  # the kernel's log
    # scheduling of other processes: as the same user it could starve the judge, or every process
    # of that user at once (setpriority(PRIO_USER, …), SCHED_IDLE); sched_setaffinity: itself only
    "setpriority": (141, 140), "ioprio_set": (251, 30), "sched_setparam": (142, 118),
    "sched_setscheduler": (144, 119), "sched_setattr": (314, 274),
    "sched_setaffinity": (203, 122),
    # signals (kill, tgkill and the queued kinds only to itself, see _seccomp_program)
    "tkill": (200, 130), "kill": (62, 129), "tgkill": (234, 131),
    "rt_sigqueueinfo": (129, 138), "rt_tgsigqueueinfo": (297, 240),
    # fcntl and ioctl: only their "send SIGIO to that process" commands are denied
    "fcntl": (72, 25), "ioctl": (16, 29),
}
_CONDITIONAL = {"clone", "clone3", "prlimit64", "kill", "tgkill", "rt_sigqueueinfo",
                "rt_tgsigqueueinfo", "fcntl", "ioctl", "sched_setaffinity"}  # the rest: denied
# machine: column above, AUDIT_ARCH_* (linux/audit.h), seccomp's own number
_ARCHES = {"x86_64": (0, 0xC000003E, 317), "aarch64": (1, 0xC00000B7, 277)}
_X32_SYSCALL_BIT = 0x40000000  # x32 calls on x86_64: the same calls under other numbers
_CLONE_THREAD = 0x00010000
_F_SETOWN, _F_SETOWN_EX, _FIOSETOWN, _SIOCSPGRP = 8, 15, 0x8901, 0x8902

# Classic BPF (linux/filter.h) over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]}.
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_NR, _ARCH = 0, 4


def _arg(index, high=False):
    """Offset of args[index] in seccomp_data: its low 32 bits (little-endian), or its high ones."""
    return 16 + 8 * index + (4 if high else 0)


_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
_ENOSYS = 0x00050000 | 38  # SECCOMP_RET_ERRNO | ENOSYS
_PR_GET_SECCOMP, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 21, 22, 2
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _op(code, k, jt=0, jf=0):
    return (code, jt, jf, k & 0xFFFFFFFF)


def _deny(nr, action=_EPERM):
    """If the call is nr, return `action`; else go on to the next rule."""
    return [_op(_JEQ, nr, 0, 1), _op(_RET, action)]


def _on_arg(nr, offset, values, then, otherwise):
    """If the call is nr: `then` when the 32 bits at offset equal one of values, else `otherwise`.
    Each rule starts and ends with the call number in the accumulator, so rules chain."""
    n = len(values)
    rule = [_op(_JEQ, nr, 0, n + 3), _op(_LD_W_ABS, offset)]
    for i, value in enumerate(values):  # a match jumps to `then`; the last miss to `otherwise`
        rule.append(_op(_JEQ, value, n - 1 - i, 1 if i == n - 1 else 0))
    return rule + [_op(_RET, then), _op(_RET, otherwise)]


def _seccomp_program(column, audit_arch, pid):
    """The filter for one architecture, for process `pid`."""
    nr = {name: numbers[column] for name, numbers in _SYSCALLS.items()
          if numbers[column] is not None}
    program = [_op(_LD_W_ABS, _ARCH), _op(_JEQ, audit_arch, 1, 0),
               _op(_RET, _EPERM),  # another ABI (int 0x80 on x86_64): nothing at all
               _op(_LD_W_ABS, _NR)]
    if column == 0:
        program += [_op(_JGE, _X32_SYSCALL_BIT, 0, 1), _op(_RET, _EPERM)]
    for name in sorted(nr.keys() - _CONDITIONAL):
        program += _deny(nr[name])
    program += _deny(nr["clone3"], _ENOSYS)  # glibc then falls back to clone (checked below)
    # clone: threads only. A thread shares memory and signal handlers: it cannot exec or get away.
    program += [_op(_JEQ, nr["clone"], 0, 4), _op(_LD_W_ABS, _arg(0)),
                _op(_JSET, _CLONE_THREAD, 0, 1), _op(_RET, _ALLOW), _op(_RET, _EPERM)]
    # Signals to itself only: kill(pid, 0 or -pid: its own group, as the worker leads one).
    program += _on_arg(nr["kill"], _arg(0), [pid, 0, -pid], _ALLOW, _EPERM)
    for name in ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):  # args[0]: the process
        program += _on_arg(nr[name], _arg(0), [pid], _ALLOW, _EPERM)
    program += _on_arg(nr["sched_setaffinity"], _arg(0), [0, pid], _ALLOW, _EPERM)
    # "Send SIGIO to process P when this file is ready" would signal any process of the user.
    program += _on_arg(nr["fcntl"], _arg(1), [_F_SETOWN, _F_SETOWN_EX], _EPERM, _ALLOW)
    program += _on_arg(nr["ioctl"], _arg(1), [_FIOSETOWN, _SIOCSPGRP], _EPERM, _ALLOW)
    # prlimit64(pid, resource, new, old) only reads (new == NULL, all 64 bits), as getrlimit does.
    program += [_op(_JEQ, nr["prlimit64"], 0, 6), _op(_LD_W_ABS, _arg(2)),
                _op(_JEQ, 0, 0, 3), _op(_LD_W_ABS, _arg(2, high=True)),
                _op(_JEQ, 0, 0, 1), _op(_RET, _ALLOW), _op(_RET, _EPERM)]
    return program + [_op(_RET, _ALLOW)]


def forbid_syscalls():
    """Install the seccomp filter on this process (all its threads) and everything it starts.
    True when installed; False where unsupported (not Linux on x86_64 or aarch64, no seccomp)."""
    arch = _ARCHES.get(os.uname().machine) if sys.platform.startswith("linux") else None
    if arch is None:
        return False
    column, audit_arch, seccomp_nr = arch
    program = _seccomp_program(column, audit_arch, os.getpid())
    filters = (_SockFilter * len(program))(*program)
    fprog = _SockFprog(len(program), filters)
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    # seccomp(2) with TSYNC also covers threads already running (torch's import starts one);
    # prctl is the fallback for kernels before 3.17.
    installed = _libc.syscall(ctypes.c_long(seccomp_nr),
                              ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
                              ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog))
    if installed != 0:
        installed = _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)
    return installed == 0


# -- capabilities ----------------------------------------------------------------------------------

_PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
# SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS (off), SECBIT_NO_CAP_AMBIENT_RAISE,
# each with its _LOCKED bit: uid 0 never regains capabilities, not even by execve or setuid.
_SECUREBITS = 0b11101111
_CAPABILITY_VERSION_3 = 0x20080522


def drop_privileges():
    """As root: keep uid 0 (root-owned files stay readable as owner) but drop every capability,
    so that the process cannot raise limits, override permissions, signal other users' processes,
    open raw sockets… True if it dropped something; a no-op for a user with no capabilities."""
    if not sys.platform.startswith("linux"):
        return False
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)  # version, pid 0: this process
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}: caps 0-31, 32-63
    if _libc.capget(header, data) != 0:
        return False
    if os.geteuid() != 0 and not any(data):
        return False
    # These three need CAP_SETPCAP, so they go first; they fail harmlessly without it.
    _libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0)
    for cap in range(_last_capability() + 1):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:
            break  # EINVAL: past the kernel's last capability
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if _libc.capset(header, (ctypes.c_uint32 * 6)()) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    return True


def _last_capability():
    try:
        with open("/proc/sys/kernel/cap_last_cap") as last:
            return int(last.read())
    except (OSError, ValueError):
        return 63


CPU_SECONDS = 600  # of one worker's own CPU time, whatever becomes of the judge that watches it


def limit_resources(memory_bytes, file_bytes):
    """Memory (address space beyond what the worker has already mapped), file size, no cores, and
    CPU time: the judge's limits are far tighter, but a worker whose judge was killed (and so
    never kills it) must not loop for ever (seen: orphans spinning for an hour). A limit is never
    asked above the hard one already set on the machine (a shared server's `ulimit -v`, `-t`,
    `-f`): asking would fail, and the worker would die before importing anything. Returns
    {name: the limit set}, the ones lowered by the machine's hard limits listed under "lowered"."""
    lowered = []

    def set_limit(name, value):
        kind = getattr(resource, name)
        hard = resource.getrlimit(kind)[1]
        if hard != resource.RLIM_INFINITY and hard < value:
            value = hard
            lowered.append(name)
        resource.setrlimit(kind, (value, value))
        return value

    held = {"RLIMIT_CORE": set_limit("RLIMIT_CORE", 0),
            "RLIMIT_CPU": set_limit("RLIMIT_CPU", CPU_SECONDS)}
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails instead of killing
    held["RLIMIT_FSIZE"] = set_limit("RLIMIT_FSIZE", file_bytes)
    if memory_bytes:
        mapped = _mapped_bytes()
        if mapped is not None:
            held["RLIMIT_AS"] = set_limit("RLIMIT_AS", mapped + memory_bytes)
    return {**held, "lowered": lowered}


def die_with_parent(parent, how=signal.SIGKILL):
    """Signal `how` when the parent dies (Linux): a worker is killed when the zygote that forked
    it dies (the zygote kills its workers when its judges go, but a zygote that is killed itself
    cannot); a zygote or a judge is told with SIGTERM, to end as it would be asked to."""
    if sys.platform.startswith("linux"):
        _libc.prctl(_PR_SET_PDEATHSIG, how, 0, 0, 0)
    if os.getppid() != parent:  # it died before the call
        os._exit(0)


def prefer_oom_kill():
    """Make this process the OOM killer's first choice, so that it is never the judge."""
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
    except OSError:
        pass


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
