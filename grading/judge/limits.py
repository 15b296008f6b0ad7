"""The judge's own limits, in every mode: memory it may map, and CPU time it may take.

A record's replay is bounded by its work (grading.judge.replay); these bound the judge as a
whole, should a bound there be wrong: a single run, CI's grade.sh and the Gradescope bundle
(grading/commands/cli.py), and each judge of a batch (grading/commands/batch.py), whose memory is
limited per judge and whose CPU time is bounded row by row by the replays' budgets.
"""
import os
import signal

from grading.errors import GradingError

# Address space a judge may map beyond what it holds when forked: generous (a judge imports the
# solutions and pytest, and each thread torch starts reserves a stack and a malloc arena).
JUDGE_MEMORY = (4 << 30) + (128 << 20) * (os.cpu_count() or 1)
JUDGE_CPU_SECONDS = 900  # CPU time of one single run's judge: a run of the solutions takes ~1 s


def limit_judge_memory(extra, torch_first=True):
    """Let this process map at most `extra` bytes more than it holds now, torch imported
    (Linux; elsewhere, where RLIMIT_AS or /proc is missing, nothing). The hard limit is left as
    it is. Returns the limits as they were, for restore(). torch_first False: the portable
    backend's judge, counted before torch, as its workers (fresh interpreters, which inherit
    the limit and have no /proc to count their own from) are bounded by it too."""
    if torch_first:  # what torch maps is not the judge's to spend: a CUDA build of torch maps
        import torch  # noqa: F401  (3-5 GB of address space at import)
    try:
        import resource  # (POSIX only)
        with open("/proc/self/status") as status:
            mapped = next(int(line.split()[1]) * 1024 for line in status
                          if line.startswith("VmSize:"))
        before = resource.getrlimit(resource.RLIMIT_AS)
        hard = before[1]
        soft = mapped + extra if hard == resource.RLIM_INFINITY else min(mapped + extra, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        return {"RLIMIT_AS": before}
    except (ImportError, OSError, ValueError, StopIteration, AttributeError, RuntimeError):
        return {}  # (RuntimeError: the tripwire's LinuxOnlyCall, as where /proc is missing)


def _out_of_time(signum, frame):
    raise GradingError(f"the judge used more than {JUDGE_CPU_SECONDS} s of CPU time")


def limit_judge_cpu(seconds=JUDGE_CPU_SECONDS):
    """This process may take `seconds` more of CPU time: then SIGXCPU, as a GradingError (and a
    minute later the kernel's SIGKILL, should the judge be stuck in one long operation).
    Returns the limits as they were, for restore()."""
    try:
        import resource
        used = resource.getrusage(resource.RUSAGE_SELF)
        now = int(used.ru_utime + used.ru_stime) + 1
        before = resource.getrlimit(resource.RLIMIT_CPU)
        hard = before[1]
        soft = now + seconds if hard == resource.RLIM_INFINITY else min(now + seconds, hard)
        kill = soft + 60 if hard == resource.RLIM_INFINITY else hard
        previous = signal.signal(signal.SIGXCPU, _out_of_time)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, kill))
        return {"RLIMIT_CPU": before, "SIGXCPU": previous}
    except (ImportError, OSError, ValueError, AttributeError):
        return {}


def restore(limits):
    """Put back what limit_judge_memory and limit_judge_cpu changed (a run inside a longer-lived
    process: the self-test's)."""
    try:
        import resource
        for name, value in limits.items():
            if name == "SIGXCPU":
                signal.signal(signal.SIGXCPU, value)
            else:
                resource.setrlimit(getattr(resource, name), value)
    except (ImportError, OSError, ValueError):
        pass
