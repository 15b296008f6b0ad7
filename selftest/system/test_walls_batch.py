"""The walls, in a batch: submissions that attack the machine are stopped, alone in their own rows.

`grader.py --batch` grades, in a subprocess, a folder holding the five resource attacks (a fork and
subprocess bomb, memory through memfd, SysV shared memory and children, files filling /tmp and
/dev/shm, a Unix socket and a UDP datagram to the listeners this test runs), each laid over a copy
of solutions/, and three copies of solutions/. Then: the three right rows have full marks, each
attack earns no more than its answer does without the attack and full marks on the others, nothing
reached the listeners, no file of more than 1 MB appeared in /tmp or /dev/shm, nothing the run
started outlives it, and the run ended by itself, exit status 0, within two minutes.

So that a fork bomb cannot hurt the machine even if the walls fail, the grader runs in a pids cgroup
of its own (when root: v1 or v2) limited to 256 processes and threads, or under RLIMIT_NPROC (when
not root), and under an address-space limit of 16 GiB; the test is skipped where neither process
limit can be set.
"""
import json
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import course
from conftest import processes_mentioning
from fixtures import SOLUTIONS, SUBMISSIONS, exercise_of_fixture, materialise_files

pytestmark = pytest.mark.full  # the grader's own machinery: --check --full

ROOT = Path(__file__).resolve().parents[2]
SEED = 7
RUN_LIMIT = 120  # seconds the whole batch may take
PIDS_MAX = 256  # processes and threads of the grader and everything it starts
ADDRESS_SPACE = 16 * 1024 ** 3  # bytes, for the grader and everything it starts (each its own)
BIG_FILE = 1 << 20  # bytes: a file larger than this appearing in /tmp or /dev/shm is a leak
WATCHED = ("/tmp", "/dev/shm")
# Seconds a call (an import) may take: these attacks are about the walls, not time, and the
# portable backend charges a quarter of the wall-clock time at least: writing 5 GiB into memfds
# on a machine loaded by the self-test's batches once took it past the default 5 s (ex2: 0 in
# one backend, 15 in the other).
CALL_SECONDS = 8  # (--timeout: at most the 8 s budget of an exercise)
# Memory the portable backend has no wall for (memfd pages: its cap is RLIMIT_DATA): the worker
# that holds it is the OOM killer's first choice when the machine runs short, which the
# self-test's own batches beside it decide. Its own exercise may then get less in that backend,
# never more; every other exercise of it, and every other attack, exactly as in the Linux one.
UNWALLED_MEMORY = {"resource-ex2-memfd_children": "ex2_averaging"}


def alike(linux, portable):
    """The two backends' points agree (see UNWALLED_MEMORY)."""
    if set(linux) != set(portable):
        return False
    for name, points in linux.items():
        own = UNWALLED_MEMORY.get(name)
        theirs = portable[name]
        if {ex: p for ex, p in points.items() if ex != own} != \
                {ex: p for ex, p in theirs.items() if ex != own}:
            return False
        if own is not None and theirs.get(own, 0) > points.get(own, 0):
            return False
    return True
UNIX_PATH = "/tmp/grader-selftest-unix.sock"  # resource-ex4-unix_socket connects here
UDP_ADDRESS = ("127.0.0.1", 47611)  # resource-ex5-udp sends here
# The resource attacks, and the most each may earn on its exercise: what the same answer earns
# without the attack (the socket attacks are right only if the wall failed).
ATTACKS = {
    "resource-ex1-fork_bomb": 10,
    "resource-ex2-memfd_children": 15,
    "resource-ex3-fill_tmp": 15,
    "resource-ex4-unix_socket": 0,  # right only if the connection was made
    "resource-ex5-udp": 0,  # right only if the datagram was sent
}
RIGHT = ("right-1", "right-2", "right-3")


# -- a limit on processes for the grader ---------------------------------------------------------

def cgroup_candidates():
    """(folder in which to make a cgroup, its subtree_control file or None), v1 first."""
    v1 = Path("/sys/fs/cgroup/pids")
    if (v1 / "cgroup.procs").exists() and not (v1 / "cgroup.controllers").exists():
        yield v1, None
    for v2 in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        try:
            if "pids" in (v2 / "cgroup.controllers").read_text().split():
                yield v2, v2 / "cgroup.subtree_control"
        except OSError:
            pass


def make_pids_cgroup(name):
    """A fresh pids cgroup holding at most PIDS_MAX tasks, or None where none can be made."""
    if os.geteuid() != 0:
        return None
    for parent, subtree in cgroup_candidates():
        group = parent / name
        try:
            if subtree is not None and "pids" not in subtree.read_text().split():
                subtree.write_text("+pids")
            group.mkdir()
        except OSError:
            continue
        try:
            (group / "pids.max").write_text(str(PIDS_MAX))
            return group
        except OSError:
            remove_cgroup(group)
    return None


def cgroup_pids(group):
    try:
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def empty_cgroup(group, within=15):
    """Kill every process in the cgroup (all of them started by the grader this test ran)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pids = cgroup_pids(group)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.1)
    return not cgroup_pids(group)


def remove_cgroup(group):
    for _ in range(50):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)


def tasks_of_user(uid):
    """Processes and threads whose real user is uid (what RLIMIT_NPROC counts), None if unknown."""
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            pass
    return count or None


def process_limit(name):
    """('cgroup', folder) as root, ('nproc', limit) otherwise, or None: nothing can limit the
    grader."""
    group = make_pids_cgroup(name)
    if group is not None:
        return "cgroup", group
    if os.geteuid() != 0 and hasattr(resource, "RLIMIT_NPROC"):
        tasks = tasks_of_user(os.getuid())
        if tasks is not None:
            return "nproc", tasks + PIDS_MAX
    return None


def in_the_limits(limit):
    """For preexec_fn: the grader's process enters the limits before grader.py starts."""
    kind, value = limit

    def enter():
        if kind == "cgroup":
            fd = os.open(value / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
        else:
            resource.setrlimit(resource.RLIMIT_NPROC, (value, value))
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    return enter


# -- listeners the attacks try to reach ----------------------------------------------------------

class Listeners:
    """A Unix stream server at UNIX_PATH and a UDP socket at UDP_ADDRESS, each in a thread,
    recording every connection and datagram until stopped, for at most `limit` seconds."""

    def __init__(self, limit):
        self.received, self.deadline = [], time.monotonic() + limit
        self.stopped = threading.Event()
        if os.path.lexists(UNIX_PATH):
            os.unlink(UNIX_PATH)  # a stale one from an interrupted run
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(UNIX_PATH)
        os.chmod(UNIX_PATH, 0o777)  # reachable by a worker running as any user
        self.unix.listen(16)
        self.unix.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(UDP_ADDRESS)
        self.udp.settimeout(0.2)
        self.threads = [threading.Thread(target=self._serve_unix, daemon=True),
                        threading.Thread(target=self._serve_udp, daemon=True)]
        for thread in self.threads:
            thread.start()

    def _running(self):
        return not self.stopped.is_set() and time.monotonic() < self.deadline

    def _serve_unix(self):
        while self._running():
            try:
                connection, _ = self.unix.accept()
            except (socket.timeout, OSError):
                continue
            with connection:
                connection.settimeout(1)
                data = b""
                try:
                    while len(data) < 4096:
                        chunk = connection.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    pass
            self.received.append(("unix", data))

    def _serve_udp(self):
        while self._running():
            try:
                data, sender = self.udp.recvfrom(4096)
            except (socket.timeout, OSError):
                continue
            self.received.append(("udp", data))

    def close(self):
        self.stopped.set()
        for thread in self.threads:
            thread.join(timeout=5)
        self.unix.close()
        self.udp.close()
        try:
            os.unlink(UNIX_PATH)
        except OSError:
            pass


# -- big files -----------------------------------------------------------------------------------

def big_files(known_dirs=None, also=()):
    """{path: (device, inode, size)} of the regular files over BIG_FILE at the top of the WATCHED
    folders, in their folders that are not in `known_dirs` (made since that listing was taken; with
    None, no folder), and in the folders `also`; and the set of their folders. Folders that existed
    before belong to other programs of the machine and are not looked into."""
    found, dirs = {}, set()

    def note(path):
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode) and st.st_size > BIG_FILE:
            found[path] = (st.st_dev, st.st_ino, st.st_size)

    def walk(top):
        for folder, _, files in os.walk(top, followlinks=False):
            for name in files:
                note(os.path.join(folder, name))

    for root in WATCHED:
        for entry in _entries(root):
            try:
                if entry.is_symlink():
                    continue
                if entry.is_file():
                    note(entry.path)
                elif entry.is_dir():
                    dirs.add(entry.path)
                    if known_dirs is not None and entry.path not in known_dirs:
                        walk(entry.path)
            except OSError:
                pass
    for top in also:
        walk(top)
    return found, dirs


def _entries(folder):
    try:
        return list(os.scandir(folder))
    except OSError:
        return []


def remove_attack_files(paths):
    """The files the fill attack left (named grader-attack-fill-…): this test's to clean up."""
    for path in paths:
        if os.path.basename(path).startswith("grader-attack-"):
            try:
                os.unlink(path)
            except OSError:
                pass


# -- the test ------------------------------------------------------------------------------------

def lay_out(batch):
    for name in ATTACKS:
        materialise_files(SUBMISSIONS / name, batch / name)
    for name in RIGHT:
        shutil.copytree(SOLUTIONS, batch / name)


def check_records(records):
    problems = []
    for name in RIGHT:
        record = records.get(name, {})
        if record.get("status") != "graded" or record.get("total") != course.TOTAL:
            problems.append(f"{name}: {record.get('total')} points, status "
                            f"{record.get('status')!r} (a right submission: full marks, graded)")
    for name, most in ATTACKS.items():
        record = records.get(name, {})
        exercise = exercise_of_fixture(SUBMISSIONS / name)
        if record.get("status") != "graded":
            problems.append(f"{name}: status {record.get('status')!r}, not graded")
            continue
        for ex, result in record.get("exercises", {}).items():
            if ex == exercise and result["score"] > most:
                problems.append(f"{name}: {result['score']:g} points on {ex}, more than the "
                                f"{most} its honest twin earns")
            elif ex != exercise and result["score"] != result["max"]:
                problems.append(f"{name}: {result['score']:g}/{result['max']:g} on {ex}, an "
                                "exercise it does not attack")
    return problems


def left_behind(listeners, batch, limit):
    """What outlived a run: messages the listeners received, processes (killed here)."""
    problems = []
    if listeners.received:
        problems.append(f"the listeners were reached: {listeners.received[:10]}")
    mentioning = processes_mentioning(str(batch))
    in_cgroup = cgroup_pids(limit[1]) if limit[0] == "cgroup" else []
    if mentioning or in_cgroup:
        problems.append(f"processes outlived the run: {len(in_cgroup)} in its cgroup, "
                        f"{len(mentioning)} naming the batch folder")
    for pid in mentioning:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return problems


_points = {}  # backend → {submission: {exercise: score}}, to compare the two backends


@pytest.mark.timeout(RUN_LIMIT + 120)
@pytest.mark.parametrize("backend", ["auto", "portable"])
def test_resource_attacks_are_walled_in_and_spare_the_batch(backend):
    """In each backend (portable: Python audit hooks, the Linux-only calls made to raise); and
    every submission gets the same points in both."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the limits this test sets around the grader are Linux's")
    base = Path(tempfile.mkdtemp(prefix="grader-walls-",
                                 dir="/tmp" if os.path.isdir("/tmp") else None))
    limit = process_limit(f"grader-walls-{os.getpid()}")
    if limit is None:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip("cannot limit the grader's processes (no pids cgroup as root, no "
                    "RLIMIT_NPROC otherwise): a fork bomb could hurt this machine")
    batch = base / "batch"
    problems, output, listeners, leftovers = [], "", None, {}
    try:
        lay_out(batch)
        before, known_dirs = big_files(also=[base])
        listeners = Listeners(RUN_LIMIT + 30)
        # The grader's own temporary folders go in base too: removed below even if it is killed.
        (base / "tmp").mkdir()
        environment = {**os.environ, "TMPDIR": str(base / "tmp"), "GRADER_BACKEND": backend}
        started = time.monotonic()
        run = subprocess.Popen(
            [sys.executable, str(ROOT / "grader.py"), "--batch", str(batch),
             "--csv", str(base / "grades.csv"), "--json", str(base / "out.json"),
             "--seed", str(SEED), "--timeout", str(CALL_SECONDS)],
            cwd=ROOT, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
            preexec_fn=in_the_limits(limit))
        try:
            output = run.communicate(timeout=RUN_LIMIT)[0]
        except subprocess.TimeoutExpired:
            try:
                os.killpg(run.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            output = run.communicate()[0]
            problems.append(f"the batch did not finish within {RUN_LIMIT} s")
        seconds = time.monotonic() - started
        if run.returncode != 0:
            problems.append(f"grader.py exited with {run.returncode} after {seconds:.0f} s")

        time.sleep(1)  # what the run left behind, once it is over
        listeners.close()
        problems += left_behind(listeners, batch, limit)
        after, _ = big_files(known_dirs, also=[base])
        results = {str(base / "out.json"), str(base / "grades.csv")}  # the grader's, not leaks
        leftovers = {path: info for path, info in after.items()
                     if before.get(path) != info and path not in results}
        if leftovers:
            shown = ", ".join(f"{path} ({size >> 20} MiB)"
                              for path, (_, _, size) in sorted(leftovers.items())[:10])
            problems.append(f"{len(leftovers)} files over 1 MB appeared: {shown}")

        try:
            records = json.loads((base / "out.json").read_text())["submissions"]
        except (OSError, ValueError, KeyError) as error:
            problems.append(f"no results from the batch: {error}")
        else:
            problems += check_records(records)
            _points[backend] = {name: {ex: result["score"]
                                       for ex, result in record.get("exercises", {}).items()}
                                for name, record in records.items()}
            if len(_points) == 2 and not alike(_points["auto"], _points["portable"]):
                problems.append(f"the backends gave different points: {_points}")
    finally:
        if listeners is not None:
            listeners.close()
        if limit[0] == "cgroup":
            if not empty_cgroup(limit[1]):
                problems.append(f"could not empty the cgroup {limit[1]}")
            remove_cgroup(limit[1])
        remove_attack_files(leftovers)
        shutil.rmtree(base, ignore_errors=True)
    assert not problems, "\n".join(problems) + "\n\ngrader.py's output, its end:\n" + output[-3000:]
