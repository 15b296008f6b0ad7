"""The torch a learner has: found where the judge finds it (a venv, the user's site-packages of
pip install --user, PYTHONPATH), never the repository; and refused, with one line, when it is older
than the oldest release the checks were proven on (issue 23)."""
import os
import site
import sys

from grading.backends import zygote
from grading.commands.cli import torch_problem
from grading.config import OLDEST_TORCH, ROOT


def test_a_workers_packages_are_where_the_judge_finds_its_own(monkeypatch, tmp_path):
    user, elsewhere = tmp_path / "user-site", tmp_path / "pythonpath"
    user.mkdir()
    elsewhere.mkdir()
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(user))
    monkeypatch.setattr(sys, "path", [*sys.path, str(elsewhere), str(ROOT), str(ROOT / "tests"),
                                      os.path.dirname(str(ROOT))])
    folders = zygote.package_folders()
    assert str(user) in folders and str(elsewhere) in folders
    assert all(site_folder in folders for site_folder in site.getsitepackages()
               if os.path.isdir(site_folder))
    # not the repository (its solutions/), nothing inside it, nothing that holds it
    assert not [f for f in folders if os.path.realpath(f) == str(ROOT)
                or os.path.realpath(f).startswith(str(ROOT) + os.sep)
                or str(ROOT).startswith(os.path.realpath(f) + os.sep)]


def test_a_torch_older_than_the_oldest_supported_is_refused_in_one_line():
    oldest = ".".join(map(str, OLDEST_TORCH))
    older = f"{OLDEST_TORCH[0]}.{OLDEST_TORCH[1] - 1}.1+cpu"
    problem = torch_problem(older)
    assert problem and older in problem.en and oldest in problem.en and "\n" not in problem.en
    assert torch_problem(f"{oldest}.1") is None and torch_problem("2.15.0+cu132") is None
    assert torch_problem() is None  # the torch installed here
