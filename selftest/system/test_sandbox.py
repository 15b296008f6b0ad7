"""The walls of grading/walls/kernel.py, each against the attack it stops.

Every test runs a fresh interpreter that puts up all the walls as a worker does (new session,
capabilities dropped, OOM score, resource limits, Landlock, seccomp) and then tries one forbidden
thing; it prints what happened, and the test checks that. The walls never touch pytest's process.
"""
import os
import platform
import resource
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from conftest import processes_mentioning
from grading.walls import kernel

ROOT = Path(__file__).resolve().parents[2]
GIB = 1024 ** 3
TIMEOUT = 90  # seconds for one walled interpreter: with torch, 3 s here, 20 s on a busy box
pytestmark = [pytest.mark.full, pytest.mark.timeout(TIMEOUT + 30)]  # more than pytest.ini's 30 s, for the same reason


def _seccomp_available():
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "aarch64"):
        return False
    try:
        return "errno" in Path("/proc/sys/kernel/seccomp/actions_avail").read_text().split()
    except OSError:
        return False


needs_walls = pytest.mark.skipif(kernel.landlock_abi() < 1 or not _seccomp_available(),
                                 reason="needs Landlock and seccomp (Linux on x86_64 or aarch64)")

# What the walled interpreter runs first: the walls, in the worker's order, and a way to report.
PRELUDE = """
import ctypes, fcntl, os, resource, signal, socket, subprocess, sys, threading
sys.path.insert(0, {root!r})
{torch}
from grading.walls import kernel
sys.path.remove({root!r})
import tempfile
tempfile.gettempdir()  # found now and kept, as the worker's mkstemp does: torch._dynamo needs it
{before}
os.setsid()
dropped = kernel.drop_privileges()
kernel.prefer_oom_kill()
with open("/proc/self/status") as f:
    status = dict(line.split(":", 1) for line in f.read().splitlines())
with open("/proc/self/oom_score_adj") as f:
    oom = f.read().strip()
kernel.limit_resources({memory}, 8 * 1024 * 1024)  # worker/serve.py's OUTPUT_FILE_LIMIT
if {landlock}:
    assert kernel.restrict_filesystem({package!r}) >= 1
assert kernel.forbid_syscalls()
libc = ctypes.CDLL(None, use_errno=True)

def attempt(name, call):
    try:
        call()
        print(name, "ok", flush=True)
    except BaseException as error:
        print(name, type(error).__name__, flush=True)

def raw_syscall(nr, *args):
    if libc.syscall(nr, *args) == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
"""


TORCH = """
import torch
torch.backends.cpu.get_cpu_capability()  # reads /proc/cpuinfo now, as the zygote does
"""


def run_walled(tmp_path, code, memory=4 * GIB, landlock=True, before="", torch=False, **popen):
    """Run code after the walls (and `before` before them, as the zygote would), in
    tmp_path/package (with a module in it); returns stdout. `torch`: import it first, as a
    worker has (3 s; only the tests that use it pay for it)."""
    package = tmp_path / "package"
    package.mkdir(exist_ok=True)
    (package / "helper.py").write_text("VALUE = 42\n")
    script = (PRELUDE.format(root=str(ROOT), memory=memory, landlock=landlock, before=before,
                             package=str(package.resolve()), torch=TORCH if torch else "")
              + textwrap.dedent(code)
              + "\nsys.stdout.flush()\nos._exit(0)\n")  # skips torch's slow teardown
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
           "SANDBOX_TEST_SECRET": "hunter2"}
    if "LD_LIBRARY_PATH" in os.environ:  # some Python installs need it to start
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    done = subprocess.run([sys.executable, "-I", "-c", script], cwd=package, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, **popen)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def outcomes(stdout):
    """{name: outcome} from the `attempt` lines."""
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


# -- no new process, no program --------------------------------------------------------------------

@needs_walls
def test_no_new_process_and_no_program(tmp_path):
    got = outcomes(run_walled(tmp_path, """
        def fork():
            if os.fork() == 0:
                os._exit(0)
        attempt("fork", fork)
        attempt("popen", lambda: subprocess.Popen(["/bin/true"]).wait())
        attempt("posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))
        libc.syscall(435, 0, 0)  # clone3: ENOSYS (not EINVAL), so that glibc falls back to clone
        print("clone3", ctypes.get_errno())
        attempt("execv", lambda: os.execv("/bin/echo", ["echo", "execv ran"]))
    """))
    assert got == {"fork": "PermissionError", "popen": "PermissionError",
                   "posix_spawn": "PermissionError", "clone3": "38",
                   "execv": "PermissionError"}


def _new_pids_cgroup():
    """A fresh cgroup with a pids controller (v1 or v2), or None where none can be made."""
    name = f"sandbox-selftest-{uuid.uuid4().hex[:8]}"
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            _, where, kind, options = line.split()[:4]
            if kind not in ("cgroup", "cgroup2") or kind == "cgroup" and "pids" not in options:
                continue
            folder = Path(where) / name
            try:
                folder.mkdir()
            except OSError:
                continue
            if (folder / "pids.max").exists():  # v2: only where the parent hands pids down
                return folder
            folder.rmdir()
    return None


def _remove_cgroup(folder):
    for _ in range(100):
        pids = (folder / "cgroup.procs").read_text().split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            folder.rmdir()
            return
        except OSError:
            time.sleep(0.05)


def _tasks_of_this_user():
    """Processes and threads of this user: what RLIMIT_NPROC counts."""
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == os.getuid():
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            pass
    return count


@pytest.fixture
def process_limit():
    """A preexec_fn that caps the processes of the child and all it starts, should the walls
    fail: a fresh pids cgroup as root (root ignores RLIMIT_NPROC), RLIMIT_NPROC otherwise."""
    if os.geteuid() == 0:
        group = _new_pids_cgroup()
        if group is None:
            pytest.skip("as root a fork bomb is only safe in a pids cgroup; none could be made")
        try:
            (group / "pids.max").write_text("32")
            procs = str(group / "cgroup.procs")

            def join():
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))
            yield join
        finally:
            _remove_cgroup(group)
        return
    with open("/proc/self/status") as f:
        effective = int(next(line for line in f if line.startswith("CapEff:")).split()[1], 16)
    if effective & (1 << 21 | 1 << 24):  # CAP_SYS_ADMIN, CAP_SYS_RESOURCE: RLIMIT_NPROC ignored
        pytest.skip("this user's capabilities let it ignore RLIMIT_NPROC")
    limit = _tasks_of_this_user() + 32
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    yield lambda: resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))


@needs_walls
def test_a_fork_bomb_fails_at_once(tmp_path, process_limit):
    stdout = run_walled(tmp_path, """
        first = os.getpid()
        try:
            while True:
                os.fork()
        except OSError as error:
            print("bomb", type(error).__name__, os.getpid() == first, flush=True)
    """, preexec_fn=process_limit)
    assert stdout.splitlines() == ["bomb PermissionError True"]  # one process, stopped at once


# -- no network, no new socket ---------------------------------------------------------------------

@needs_walls
def test_no_new_socket(tmp_path):
    got = outcomes(run_walled(tmp_path, """
        attempt("unix", lambda: socket.socket(socket.AF_UNIX))
        attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
            b"x", ("127.0.0.1", 9)))
        attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
        attempt("socketpair", socket.socketpair)
        if os.uname().machine == "x86_64":  # the same call by its x32 number
            attempt("x32", lambda: raw_syscall(0x40000000 + 41, socket.AF_UNIX, 1, 0))
        in_thread = []  # threads started after the walls are inside them too
        def thread():
            try:
                socket.socket(socket.AF_UNIX)
                in_thread.append("ok")
            except OSError as error:
                in_thread.append(type(error).__name__)
        worker = threading.Thread(target=thread)
        worker.start()
        worker.join()
        print("thread", in_thread[0])
    """))
    x32 = ["x32"] if platform.machine() == "x86_64" else []
    assert got == dict.fromkeys(["unix", "udp", "raw", "socketpair", *x32, "thread"],
                                "PermissionError")


@needs_walls
def test_no_connection_reaches_a_server(tmp_path):
    path = tmp_path / "server.sock"
    with socket.socket(socket.AF_UNIX) as server, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        server.bind(str(path))
        server.listen()
        server.setblocking(False)
        listener.bind(("127.0.0.1", 0))
        listener.setblocking(False)
        got = outcomes(run_walled(tmp_path, f"""
            def connect():
                socket.socket(socket.AF_UNIX).connect({str(path)!r})
            def send():
                udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                udp.sendto(b"hi", {listener.getsockname()!r})
            attempt("unix", connect)
            attempt("udp", send)
        """))
        assert got == {"unix": "PermissionError", "udp": "PermissionError"}
        with pytest.raises(BlockingIOError):
            server.accept()
        with pytest.raises(BlockingIOError):
            listener.recv(100)


# -- no shared memory, no writing, no reading beyond the roots -------------------------------------

@needs_walls
def test_no_anonymous_file_or_shared_memory(tmp_path):
    got = outcomes(run_walled(tmp_path, """
        attempt("memfd", lambda: os.memfd_create("hidden"))
        attempt("shmget", lambda: raw_syscall(29 if os.uname().machine == "x86_64" else 194,
                                              0, 4096, 0o1600))  # IPC_PRIVATE, IPC_CREAT | 0600
    """))
    assert got == {"memfd": "PermissionError", "shmget": "PermissionError"}


@needs_walls
def test_no_file_can_be_written(tmp_path):
    name = f"sandbox-selftest-{uuid.uuid4().hex[:8]}"
    targets = [Path("/tmp") / name, tmp_path / "package" / name, Path("/dev/shm") / name,
               tmp_path / name]
    try:
        got = outcomes(run_walled(tmp_path, f"""
            for i, path in enumerate({[str(t) for t in targets]!r}):
                attempt(f"write{{i}}", lambda: open(path, "w").write("x"))
            attempt("mkdir", lambda: os.mkdir("made"))
            attempt("overwrite", lambda: open("helper.py", "a").write("x"))
        """))
        assert got == dict.fromkeys([f"write{i}" for i in range(len(targets))] +
                                    ["mkdir", "overwrite"], "PermissionError")
        assert not any(t.exists() for t in targets)
        assert (tmp_path / "package" / "helper.py").read_text() == "VALUE = 42\n"
    finally:
        for target in targets:
            if target.exists():
                target.unlink()


@needs_walls
def test_no_secret_can_be_read(tmp_path):
    (tmp_path / "secret.txt").write_text("hunter2")
    got = outcomes(run_walled(tmp_path, f"""
        attempt("environ", lambda: open("/proc/self/environ").read())
        attempt("parent", lambda: open(f"/proc/{{os.getppid()}}/environ").read())
        attempt("init", lambda: open("/proc/1/cmdline").read())
        attempt("secret", lambda: open({str(tmp_path / "secret.txt")!r}).read())
        attempt("module", lambda: open("helper.py").read())  # its own folder stays readable
    """))
    assert got == {"environ": "PermissionError", "parent": "PermissionError",
                   "init": "PermissionError", "secret": "PermissionError", "module": "ok"}


FORBIDDEN_DEVICES = ["/dev/tty", "/dev/mem", "/dev/kmsg", "/dev/full", "/dev/random", "/dev/ptmx",
                     "/dev/vda", "/dev/sda", "/dev/nvme0n1"]


@needs_walls
def test_only_three_devices(tmp_path):
    forbidden = [d for d in FORBIDDEN_DEVICES if os.path.exists(d)]
    got = outcomes(run_walled(tmp_path, f"""
        for device in {forbidden!r}:
            attempt(device, lambda: open(device, "rb"))
        if os.path.exists("/dev/shm"):  # (the existence of a path stays visible)
            attempt("shm", lambda: os.listdir("/dev/shm"))
        attempt("null", lambda: open("/dev/null", "w").write("x") + len(open("/dev/null").read()))
        attempt("zero", lambda: open("/dev/zero", "rb").read(8))
        attempt("urandom", lambda: open("/dev/urandom", "rb").read(8) + os.urandom(8))
    """))
    shm = {"shm": "PermissionError"} if os.path.exists("/dev/shm") else {}
    assert forbidden and got == {**dict.fromkeys(forbidden, "PermissionError"), **shm,
                                 "null": "ok", "zero": "ok", "urandom": "ok"}


# -- signals and limits ----------------------------------------------------------------------------

@needs_walls
@pytest.mark.parametrize("landlock", [True, False], ids=["all walls", "seccomp alone"])
def test_signals_and_scheduling_reach_only_itself(tmp_path, landlock):
    """Landlock ABI 6 scopes signals too: without it, seccomp alone must hold. (Scheduling calls
    set the parent's own values again, so that they would do no harm if they worked.)"""
    nice, cpus = os.getpriority(os.PRIO_PROCESS, 0), os.sched_getaffinity(0)
    got = outcomes(run_walled(tmp_path, f"""
        attempt("parent", lambda: os.kill(os.getppid(), 0))
        attempt("init", lambda: os.kill(1, 0))
        attempt("everyone", lambda: os.kill(-1, 0))
        attempt("parent_group", lambda: os.killpg(os.getpgid(os.getppid()), 0))
        attempt("sigio", lambda: fcntl.fcntl(1, fcntl.F_SETOWN, os.getppid()))
        attempt("itself", lambda: os.kill(os.getpid(), 0))
        attempt("its_group", lambda: os.kill(0, 0))
        attempt("its_thread", lambda: signal.pthread_kill(threading.get_ident(), 0))
        attempt("renice", lambda: os.setpriority(os.PRIO_PROCESS, os.getppid(), {nice}))
        attempt("pin", lambda: os.sched_setaffinity(os.getppid(), {cpus!r}))
        attempt("pin_itself", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))
    """, landlock=landlock))
    assert got == {"parent": "PermissionError", "init": "PermissionError",
                   "everyone": "PermissionError", "parent_group": "PermissionError",
                   "sigio": "PermissionError",
                   "itself": "ok", "its_group": "ok", "its_thread": "ok",
                   "renice": "PermissionError", "pin": "PermissionError", "pin_itself": "ok"}


@needs_walls
def test_limits_cannot_be_raised(tmp_path):
    core = resource.getrlimit(resource.RLIMIT_CORE)  # the parent's, set again: harmless if it works
    got = outcomes(run_walled(tmp_path, f"""
        before = resource.getrlimit(resource.RLIMIT_AS)  # reading stays allowed
        unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        attempt("setrlimit", lambda: resource.setrlimit(resource.RLIMIT_AS, unlimited))
        attempt("prlimit", lambda: resource.prlimit(0, resource.RLIMIT_AS, unlimited))
        attempt("parent", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_CORE, {core!r}))
        print("same", resource.getrlimit(resource.RLIMIT_AS) == before != unlimited)
    """))
    # EPERM: setrlimit says ValueError("not allowed to raise maximum limit")
    assert got == {"setrlimit": "ValueError", "prlimit": "PermissionError",
                   "parent": "PermissionError", "same": "True"}


@needs_walls
def test_a_memory_hog_gets_memory_error(tmp_path):
    got = outcomes(run_walled(tmp_path, """
        attempt("bytes", lambda: bytearray(8 * 1024 ** 3))
        attempt("small", lambda: bytearray(100 * 1024 ** 2))
    """, memory=GIB))
    assert got["bytes"] == "MemoryError"
    assert got["small"] == "ok"  # a torch tensor too big: test_an_honest_workload_still_works


# -- an honest worker still works ------------------------------------------------------------------

@needs_walls
def test_an_honest_workload_still_works(tmp_path):
    judge, worker = socket.socketpair()
    log = os.open(tmp_path / "log.txt", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        judge.sendall(b"ping")
        stdout = run_walled(tmp_path, f"""
            sys.path.insert(0, ".")
            import helper
            print("module", helper.VALUE)
            x = torch.randn(64, 64, requires_grad=True)
            (x @ x).softmax(-1).sum().backward()
            print("autograd", bool(torch.isfinite(x.grad).all()))
            results = []
            thread = threading.Thread(target=lambda: results.append(sum(range(10))))
            thread.start()
            thread.join()
            print("thread", results)
            torch.set_num_threads(2)
            a = torch.randn(300, 300, dtype=torch.float64)
            product = a @ a
            print("parallel", torch.get_num_threads(), bool(torch.allclose(product[0], a[0] @ a)))
            model = torch.nn.Linear(8, 1)
            optimiser = torch.optim.AdamW(model.parameters(), lr=0.1)  # imports torch._dynamo
            model(torch.randn(4, 8)).pow(2).mean().backward()
            optimiser.step()
            print("optimiser", bool(torch.isfinite(model.weight).all()))
            attempt("tensor beyond the memory cap", lambda: torch.empty(8 * 1024 ** 3,
                                                                        dtype=torch.uint8))
            os.write({log}, b"written after the walls")
            judge = socket.socket(fileno={worker.fileno()})
            print("socket", judge.recv(4).decode())
            judge.sendall(b"pong")
            print("walls", oom, dropped, status["CapEff"].strip(),
                  libc.prctl(21, 0, 0, 0, 0),  # PR_GET_SECCOMP: 2, a filter
                  libc.prctl(39, 0, 0, 0, 0))  # PR_GET_NO_NEW_PRIVS
        """, pass_fds=(log, worker.fileno()),
            # An optimiser imports torch._dynamo, whose import makes a cache folder (in the temp
            # folder): it must be imported before the walls, where nothing is writable.
            before="import torch._dynamo", torch=True)
        judge.settimeout(5)
        assert judge.recv(4) == b"pong"
    finally:
        judge.close()
        worker.close()
        os.close(log)
    with open("/proc/self/status") as f:
        capable = any(line.startswith("CapPrm:") and int(line.split()[1], 16) for line in f)
    dropped = os.geteuid() == 0 or capable
    # OOM score, capabilities dropped, seccomp filter mode, no new privileges
    assert stdout.splitlines() == [
        "module 42", "autograd True", "thread [45]", "parallel 2 True", "optimiser True",
        stdout.splitlines()[5], "socket ping",
        f"walls 1000 {dropped} {'0' * 16} 2 1"]
    assert stdout.splitlines()[5] in ("tensor beyond the memory cap " + kind for kind in
                                      ("MemoryError", "RuntimeError", "OutOfMemoryError"))
    assert (tmp_path / "log.txt").read_text() == "written after the walls"


# -- the filter itself, on both architectures, without a kernel ------------------------------------

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
ALLOWED = {"read": (0, 63), "write": (1, 64), "openat": (257, 56), "mmap": (9, 222),
           "futex": (202, 98), "sendmsg": (46, 211), "recvmsg": (47, 212), "sendto": (44, 206),
           "recvfrom": (45, 207), "getrandom": (318, 278), "exit_group": (231, 94),
           "rt_sigaction": (13, 134), "getpid": (39, 172)}
EPERM, ENOSYS, ALLOW = 0x50001, 0x50026, 0x7FFF0000
MUST_DENY = """fork vfork execve execveat socket socketpair connect bind listen memfd_create
    memfd_secret ptrace process_vm_readv process_vm_writev process_madvise pidfd_open pidfd_getfd
    pidfd_send_signal io_uring_setup io_uring_enter io_uring_register unshare setns mount open_tree
    move_mount fsopen fsconfig fsmount fspick mount_setattr umount2 pivot_root chroot bpf
    userfaultfd perf_event_open keyctl add_key request_key shmget shmat shmctl msgget semget mq_open
    setrlimit reboot kexec_load kexec_file_load init_module finit_module delete_module swapon
    swapoff acct settimeofday clock_settime adjtimex clock_adjtime sethostname setdomainname iopl
    ioperm mknod mknodat tkill""".split()  # and, on their arguments, clone, kill, prlimit64…


def run_filter(program, arch, nr, *args):
    """What a classic-BPF seccomp program decides for one call (the few opcodes it uses)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *[a & (2 ** 64 - 1) for a in args],
                       *[0] * (6 - len(args)))
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x06:  # ret
            return k
        if code == 0x20:  # ld [k]
            accumulator = struct.unpack_from("<I", data, k)[0]
            pc += 1
            continue
        taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: accumulator & k != 0}[code]
        pc += 1 + (jt if taken else jf)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_decides_right(machine):
    column = 0 if machine == "x86_64" else 1
    pid = 4321
    program = kernel._seccomp_program(column, AUDIT_ARCH[machine], pid)
    assert len(program) < 4096  # BPF_MAXINSNS
    for i, (code, jt, jf, _) in enumerate(program):  # every jump lands inside
        assert code & 0x07 != 0x05 or max(i + 1 + jt, i + 1 + jf) < len(program)

    def decide(name, *args, arch=AUDIT_ARCH[machine]):
        numbers = ALLOWED.get(name) or kernel._SYSCALLS[name]
        return run_filter(program, arch, numbers[column], *args)

    assert set(MUST_DENY) <= set(kernel._SYSCALLS)  # none of them left out of the table
    for name, numbers in kernel._SYSCALLS.items():
        if name not in kernel._CONDITIONAL and numbers[column] is not None:
            assert decide(name) == EPERM, name
    for name in ALLOWED:
        assert decide(name) == ALLOW, name
    assert decide("read", arch=0x40000003) == EPERM  # i386 calls (int 0x80 on x86_64)
    if machine == "x86_64":
        assert run_filter(program, AUDIT_ARCH[machine], 0x40000000 + 41) == EPERM  # x32 socket
    assert decide("clone3") == ENOSYS
    assert decide("clone", 0x3D0F00) == ALLOW  # glibc's pthread_create: CLONE_THREAD among them
    assert decide("clone", 0x01200011) == EPERM  # glibc's fork
    assert decide("clone", 0x4111) == EPERM  # CLONE_VM | CLONE_VFORK: posix_spawn
    for target in (pid, 0, -pid, pid | 0xFFFFFFFF00000000):
        assert decide("kill", target, 9) == ALLOW, target
    for target in (pid + 1, 1, -1, -(pid + 1)):
        assert decide("kill", target, 9) == EPERM, target
    for name in ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        assert decide(name, pid, pid + 1, 9) == ALLOW
        assert decide(name, pid + 1, pid + 1, 9) == EPERM
    assert decide("tkill", pid, 9) == EPERM
    assert decide("sched_setaffinity", 0, 8, 0x1000) == ALLOW
    assert decide("sched_setaffinity", pid, 8, 0x1000) == ALLOW
    assert decide("sched_setaffinity", pid + 1, 8, 0x1000) == EPERM
    assert decide("fcntl", 3, 8, 1) == EPERM  # F_SETOWN
    assert decide("fcntl", 3, 3) == ALLOW  # F_GETFL
    assert decide("ioctl", 3, 0x8901, 0) == EPERM  # FIOSETOWN
    assert decide("ioctl", 3, 0x5401, 0) == ALLOW  # TCGETS
    assert decide("prlimit64", 0, 9, 0, 0x7FFF0000) == ALLOW  # reads only
    assert decide("prlimit64", 0, 9, 0x7FFF0000, 0) == EPERM
    assert decide("prlimit64", 0, 9, 0x7F0000000000, 0) == EPERM  # low 32 bits zero


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux backend's zygote")
def test_a_worker_dies_with_its_zygote(tmp_path):
    """A judge and its zygote killed (SIGKILL: nothing of theirs runs) while a worker loops for
    ever: the worker goes too (PR_SET_PDEATHSIG), instead of spinning on as an orphan (seen: three
    for an hour after a self-test was cut short). RLIMIT_CPU is the backstop."""
    import shutil
    folder = tmp_path / "looping"
    shutil.copytree(ROOT / "solutions", folder)
    shutil.copy(ROOT / "selftest" / "submissions" / "broken-ex6-loop_in_forward" / "ex6_head.py",
                folder)
    judge = subprocess.Popen([sys.executable, str(ROOT / "grader.py"), "--submission", folder,
                              "6", "--timeout", "8"], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)

    def state(pid):
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None  # gone

    def zygotes():  # in the judge's session, with the worker's command line
        return [pid for pid in processes_mentioning(str(ROOT / "grading" / "worker" / "main.py"))
                if state(pid) and os.getsid(pid) == judge.pid]

    def workers(of):  # forked by those zygotes, and looping (running)
        return [pid for pid in processes_mentioning(str(ROOT / "grading" / "worker" / "main.py"))
                if state(pid) and int(state(pid)[1]) in of and state(pid)[0] == "R"]
    looping = []
    try:
        deadline = time.monotonic() + 60
        while not looping and time.monotonic() < deadline:
            time.sleep(0.2)
            looping = workers(zygotes())
        assert looping, "no worker started"
        os.killpg(judge.pid, signal.SIGKILL)  # the judge and the zygote, not the worker's session
        judge.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(state(pid) and state(pid)[0] != "Z" for pid in looping) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(state(pid) and state(pid)[0] != "Z" for pid in looping)
    finally:
        for pid in looping:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
