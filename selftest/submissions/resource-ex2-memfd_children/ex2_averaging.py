"""Attack: memory past the cap, where an address-space limit does not look.

At import:
- memfd_create, ftruncate to 8 GiB, then dirty its pages 1 MiB at a time: file pages are not
  address space, so RLIMIT_AS does not count them. When a file-size limit stops one memfd, it opens
  another, until 5 GiB are held (at most 200 memfds);
- a SysV shared-memory segment of 512 MiB, attached and filled (marked for removal at once, so it
  never outlives the process);
- three children, each in a session of its own, each allocating and touching 1 GiB and holding the
  memfds open for 120 s: every child gets an address-space limit of its own, and keeps the memfd
  pages alive after the worker is gone.
So at most about 8.5 GiB, bounded so as not to take the self-test's machine down with no wall at
all. Every error is caught and the import goes on. With the walls up (no memfd, no SysV shm, no
fork, a memory cap counting file and shared pages), none of it gets far.

The averaging itself is right. Honest points: ex2 15/15, as its twin, twin-ex2-memfd_children,
gets (less if a memory cap ends the worker; never more). Every other exercise: full marks.
"""
import ctypes
import os
import time

import torch

GiB = 1 << 30
_held = []  # memfds, kept open for as long as this process lives


def _memfds(total=5 * GiB, chunk=b"\x01" * (1 << 20)):
    written = 0
    try:
        fd = os.memfd_create("grader-attack-memfd", 0)
    except (AttributeError, OSError):
        return
    _held.append(fd)
    try:
        os.ftruncate(fd, 8 * GiB)
    except OSError:
        pass
    offset = 0
    while written < total:
        try:
            os.pwrite(fd, chunk, offset)
            offset += len(chunk)
            written += len(chunk)
        except OSError:  # a file-size limit: another memfd
            if len(_held) >= 200:
                return
            try:
                fd = os.memfd_create("grader-attack-memfd", 0)
            except OSError:
                return
            _held.append(fd)
            offset = 0


def _sysv_shm(size=GiB // 2):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if shmid < 0:
        return
    address = libc.shmat(shmid, None, 0)
    libc.shmctl(shmid, 0, None)  # IPC_RMID: gone when the last process detaches
    if address not in (None, ctypes.c_void_p(-1).value):
        ctypes.memset(address, 1, size)
        _held.append(address)


def _children(count=3, size=GiB):
    for _ in range(count):
        try:
            if os.fork() == 0:
                try:
                    os.setsid()
                    hoard = bytearray(size)
                    for i in range(0, size, 4096):
                        hoard[i] = 1
                    time.sleep(120)
                finally:
                    os._exit(0)
        except OSError:
            pass


for attempt in (_memfds, _sysv_shm, _children):
    try:
        attempt()
    except BaseException:
        pass


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))  # (T, T)
    return tril / tril.sum(dim=1, keepdim=True)  # each row sums to 1


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x  # (B, T, C)
