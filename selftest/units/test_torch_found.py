"""The torch a learner has: found where the judge finds it (a venv, the user's site-packages of
pip install --user, PYTHONPATH), never the repository; and refused, with one line, when it is older
than the oldest release the checks were proven on (issue 23)."""
import site
import sys

from grading.backends import zygote
from grading.commands.cli import torch_problem
from grading.config import OLDEST_TORCH


def test_a_workers_packages_are_where_the_judge_finds_its_own(monkeypatch, tmp_path):
    repository = tmp_path / "repo"
    user, elsewhere = tmp_path / "user-site", tmp_path / "pythonpath"
    venv = repository / ".venv" / "lib" / "python3.11" / "site-packages"  # the README's .venv
    for folder in (user, elsewhere, venv, repository / "tests", repository / "solutions"):
        folder.mkdir(parents=True)
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(user))
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(venv)])
    monkeypatch.setattr(sys, "path", [str(repository), str(repository / "tests"),
                                      str(repository / "solutions"), str(tmp_path),
                                      str(elsewhere), str(venv)])
    folders = zygote.package_folders(repository)
    assert folders == [str(venv), str(user), str(elsewhere)]  # not the repository, its tests/
    # or solutions/, nor the folder that holds it


def test_a_torch_older_than_the_oldest_supported_is_refused_in_one_line():
    oldest = ".".join(map(str, OLDEST_TORCH))
    older = f"{OLDEST_TORCH[0]}.{OLDEST_TORCH[1] - 1}.1+cpu"
    problem = torch_problem(older)
    assert problem and older in problem.en and oldest in problem.en and "\n" not in problem.en
    assert torch_problem(f"{oldest}.1") is None and torch_problem("2.15.0+cu132") is None
    assert torch_problem() is None  # the torch installed here
