"""GRADER_BACKEND=portable on Linux puts up a tripwire (Linux-only calls raise) for one command
of grader.py, and stands it down when the command is done: a test that calls grader.main() in the
self-test's own process left it on for every test after it (issue 23: GRADER_BACKEND=portable
python grader.py --check failed with LinuxOnlyCall: os.fork, os.listdir('/proc'))."""
import os
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tripwire is Linux's")
def test_a_command_leaves_no_tripwire_behind(monkeypatch, capsys):
    import grader
    monkeypatch.setenv("GRADER_BACKEND", "portable")
    assert grader.main(["9"]) == grader.USAGE_ERROR  # a command that stops at once
    capsys.readouterr()
    assert "stat" in os.listdir("/proc/self")  # Linux-only, and allowed again
    with open("/proc/self/stat", "rb") as stat:
        assert stat.read()
