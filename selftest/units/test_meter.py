"""Time limits count a worker's own time: its CPU time, the time it sleeps and the time it keeps
itself stopped (SIGSTOP), not the time it waits for a CPU on a busy machine (modelled here by
busy loops sharing its one CPU), nor the time the judge itself was kept from looking (issue 23: under memory pressure the
judge's polls stretched, and the stretch was charged to the learner as sleep)."""
import os
import signal
import subprocess
import sys
import time

import pytest

from grading.judge.worker_handle import Meter

pytestmark = pytest.mark.full  # the grader's own machinery: --check --full

needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def metered(code, seconds, stop=False, crowd=0):
    """(seconds charged, wall seconds at that same reading, CPU seconds the process used from
    the meter's start to its end, as the kernel reported it on reaping: os.wait4)."""
    # The code prints a line once it runs, so the window starts after Python's start-up, which on
    # a loaded machine waits for a CPU (and is rightly not charged).
    process = subprocess.Popen([sys.executable, "-c", f"print(flush=True)\n{code}"],
                               stdout=subprocess.PIPE)
    burners = []
    try:
        if crowd:  # `crowd` busy loops on the process's one CPU: it waits for that CPU (R)
            cpu = sorted(os.sched_getaffinity(0))[0]
            os.sched_setaffinity(process.pid, {cpu})
            burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                       for _ in range(crowd)]
            for burner in burners:
                os.sched_setaffinity(burner.pid, {cpu})
        process.stdout.readline()  # started
        time.sleep(0.1)
        if stop:
            process.send_signal(signal.SIGSTOP)
        meter = Meter(process.pid)
        meter.start()
        cpu_at_start = meter._read()[0]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            meter.read()
            charged, wall = meter.charged(), meter.wall()
            time.sleep(Meter.POLL)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
        process.kill()
        _, _, usage = os.wait4(process.pid, 0)
        process.returncode = -9
    return charged, wall, usage.ru_utime + usage.ru_stime - cpu_at_start


@needs_proc
def test_sleeping_is_charged():
    charged, wall, _ = metered("import time; time.sleep(60)", 1.0)
    assert charged > 0.8 * wall


@needs_proc
def test_a_main_thread_gone_while_a_thread_sleeps_is_charged():
    """The main thread exits (pthread_exit): /proc shows its state, Z, while a thread sleeps on
    (attack-ex4-zombie_leader slept uncharged that way)."""
    charged, wall, _ = metered("import ctypes, threading, time\n"
                               "threading.Thread(target=time.sleep, args=(60,)).start()\n"
                               "ctypes.CDLL(None).pthread_exit(None)", 1.0)
    assert charged > 0.8 * wall


@needs_proc
def test_waiting_for_a_cpu_is_not_charged():
    """Three busy loops share the worker's CPU: it gets about a quarter of the wall time, and
    is charged its CPU time, not the wall time it waited."""
    charged, wall, used = metered("while True: pass", 1.5, crowd=3)
    assert wall > 1.4 and charged <= used + 0.05 and charged < 0.6 * wall


@needs_proc
def test_a_worker_stopped_is_charged():
    """A worker that stops itself (SIGSTOP, state T) spends its own time: before, it was charged
    nothing, and its row read "the machine was too busy" on every regrade."""
    charged, wall, _ = metered("while True: pass", 1.0, stop=True)
    assert wall > 0.9 and charged > 0.7 * wall


@needs_proc
def test_running_is_charged():
    """Its CPU time, whatever share of a CPU a busy machine gives it (the last poll's worth of
    CPU may come after the meter's last reading)."""
    charged, wall, used = metered("while True: pass", 1.0)
    assert used > 0.02 and used - min(0.1, 0.5 * used) <= charged <= used + 0.01


@needs_proc
def test_a_judge_kept_from_looking_charges_nothing():
    """A worker waiting for its next request (asleep), and a judge that takes no reading for 2 s
    (descheduled, its page faults waiting for the disk): the worker's own time is nil. The Meter
    of d1ed0b4 charged the whole stretch, as wall time before its first reading or as sleep."""
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                               stdin=subprocess.PIPE)
    try:
        time.sleep(0.5)  # started, and waiting on its stdin
        meter = Meter(process.pid)
        meter.start()
        time.sleep(2.0)  # the judge, stalled
        meter.read()
        assert meter.wall() > 1.9 and meter.charged() < 0.2
        time.sleep(1.0)  # stalled again, between two readings that both see it asleep
        meter.read()
        assert meter.charged() < 0.3
    finally:
        process.kill()
        process.wait()
