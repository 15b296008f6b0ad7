"""Time limits count a worker's own time: its CPU time and the time it sleeps, not the time it
waits for a CPU on a busy machine (modelled here by a stopped process: it neither runs nor
sleeps)."""
import signal
import subprocess
import sys
import time

import pytest

from grading.judge import Meter

needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def metered(code, seconds, stop=False):
    process = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.3)  # started
        if stop:
            process.send_signal(signal.SIGSTOP)
        meter = Meter(process.pid)
        meter.start()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            charged = meter.seconds()
            time.sleep(Meter.POLL)
        return charged, meter.wall()
    finally:
        process.kill()
        process.wait()


@needs_proc
def test_sleeping_is_charged():
    charged, wall = metered("import time; time.sleep(60)", 1.0)
    assert charged > 0.7 * wall


@needs_proc
def test_waiting_for_a_cpu_is_not_charged():
    charged, wall = metered("while True: pass", 1.0, stop=True)
    assert wall > 0.9 and charged < 0.1


@needs_proc
def test_running_is_charged():
    charged, wall = metered("while True: pass", 1.0)
    assert charged > 0.3  # its share of a CPU on a machine that may be busy
