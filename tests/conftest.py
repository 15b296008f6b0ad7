"""Lets `pytest tests` work without grader.py (instructors, debugging a test):

    pytest tests --submission solutions -k ex5

grader.py passes its own GradingPlugin; here one is made from these options when it has not.
"""
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    group = parser.getgroup("grading")
    group.addoption("--submission", default=str(ROOT / "exercises"), help="folder to grade")
    group.addoption("--reference", default=str(ROOT / "solutions"), help="the solutions")
    group.addoption("--seed", type=int, default=None, help="replay a run")
    group.addoption("--call-timeout", type=float, default=5.0, help="seconds per call")


def pytest_configure(config):
    from grading.judge.plugin import GradingPlugin
    if any(isinstance(p, GradingPlugin) for p in config.pluginmanager.get_plugins()):
        return
    from grading.backends.zygote import Zygote
    seed = config.getoption("--seed")
    plugin = GradingPlugin(Zygote(ROOT), config.getoption("--submission"),
                           config.getoption("--reference"),
                           random.randrange(1 << 31) if seed is None else seed,
                           config.getoption("--call-timeout"))
    config.pluginmanager.register(plugin, "grading")
    config.add_cleanup(plugin.backend.close)
