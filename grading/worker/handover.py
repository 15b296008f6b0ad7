"""The zygote's end of a handed-over grading run: the judge's birth out of the zygote.

The caller's end is grading/backends/zygote.py (hand_over, inherited): `python grader.py` starts a
zygote with its run's payload instead of importing torch itself; the zygote imports torch, then
forks the judge from itself here (fork_judge), which becomes the caller's process again
(become_caller) and runs grader.py as __main__, so that one grading run imports torch once.
"""
import importlib
import importlib.machinery
import importlib.util
import json
import os
import signal
import socket
import sys
import tempfile
import traceback


def _fork_judge(payload, status, stdin, stdout, stderr, clients):
    """Fork the judge of a handed-over run: it becomes the caller's process again (_become_caller)
    with control connections of its own; this zygote keeps their other ends and forwards SIGTERM
    to it. Returns (the judge's pid, the zygote's ends)."""
    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(clients)]
    zygote = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for zygote_end, _ in pairs:
                zygote_end.close()
            os.close(status)
            code = _become_caller(zygote, payload, (stdin, stdout, stderr),
                                  [judge_end.detach() for _, judge_end in pairs])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        except BaseException:  # noqa: B036
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(code)
    for fd in (payload, stdin, stdout, stderr):  # no worker may inherit the caller's files
        os.close(fd)
    for _, judge_end in pairs:
        judge_end.close()
    signal.signal(signal.SIGTERM, lambda signum, frame: _signal(pid, signum))
    os.write(status, str(pid).encode())
    os.close(status)
    return pid, [zygote_end for zygote_end, _ in pairs]


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _become_caller(zygote, payload, stdio, control_fds):
    """In the judge forked from the zygote: the caller's process again (its files, environment,
    folder, path, arguments and encodings, from `payload`), with the zygote's control connections
    named in ops.JUDGE_CONNECTIONS (grading/backends/zygote.inherited); then the caller's
    script runs as __main__, as the caller would have gone on to run it. Its exit status."""
    import runpy

    from grading.walls import kernel
    from grading.wire.ops import JUDGE_CONNECTIONS
    with os.fdopen(payload, "rb") as f:
        caller = json.loads(f.read())
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    kernel.die_with_parent(zygote, signal.SIGTERM)
    os.environ.clear()
    os.environ.update(caller["environ"])
    os.environ[JUDGE_CONNECTIONS] = f"{zygote}:{','.join(map(str, control_fds))}:" + caller["log"]
    os.chdir(caller["cwd"])
    sys.path[:] = caller["path"]
    sys.argv[:] = caller["argv"]
    importlib.invalidate_caches()
    tempfile.tempdir = None  # from TMPDIR again, the caller's
    # New streams on fd 0, 1 and 2 (the old ones took the zygote's log for a seekable file), in
    # the caller's encodings; line-buffered as Python makes them, stderr always, stdout on a tty.
    streams = []
    for fd, (encoding, errors) in enumerate(caller["stdio"]):
        streams.append(open(fd, "r" if fd == 0 else "w", encoding=encoding, errors=errors,
                            closefd=False,
                            buffering=1 if fd == 2 or (fd == 1 and os.isatty(1)) else -1))
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
    runpy.run_path(caller["argv"][0], run_name="__main__")
    return 0
