"""Grading that cannot be fooled: each attack fixture gets at most the points of its honest twin
(the same answer without the attack), the other five exercises are graded as if it were not
there, the grader's files are untouched, nothing it started outlives the run, and the results file
holds the honest score."""
import json
import os
import time

import pytest

from conftest import SEED, fingerprint, processes_mentioning, quick
from fixtures import ONLY, about, exercise_of_fixture, fixture_dirs, twin_of
from grading.walls.kernel import landlock_abi

# What the first attacks' exercises honestly earn, from before attacks came with twins: 0 for a
# wrong or absent answer; the points of what its code does compute right otherwise.
HONEST = {
    "attack-ex1-sleepers": 10,  # right answer; its twenty sleepers must be gone
    "attack-ex2-edit_tests": 0,
    "attack-ex2-secrets": 0,  # right only if it found the secret
    "attack-ex2-judge_inside": 0,  # right only if it found the judge in its own process
    "attack-ex2-inherited_files": 0,  # right only if a descriptor of the judge's was left open
    "attack-ex3-pickle_reduce": 2,  # its three layers are right nn.Linear(n_embd, head_size)
    "attack-ex3-print_50mb": 2,  # its layers are right; its printing runs into the size cap
    "attack-ex4-patch_comparisons": 0,
    "attack-ex5-memory": 0,
    "attack-ex5-tensor_subclass": 0,
    "attack-ex6-import_solutions": 0,
    "attack-ex6-results_file": 1,  # its trainable parameters are right (the mask is not one)
    # Its main thread exits (the leader a zombie, its state Z) and each call then sleeps 19 s:
    # far past the 8 s budget, however its state reads.
    "attack-ex4-zombie_leader": 0,
    "attack-ex3-constructor_returns_tensor": 0,  # a function, not the class QKV
    "attack-ex3-costly_replies": 15,  # the solution's layers; its replies are what it forges
    # Masked on short sequences alone: its twin's (twin-ex5-no_mask 6, twin-ex6-no_mask 7); the
    # row gradients are taken at the long T too, at rows drawn afresh.
    "attack-ex5-mask_only_short": 6,
    "attack-ex6-mask_only_short": 7,
}
PICKLE_MARKER = "/tmp/grader-attack-pickle-ran"
pytestmark = pytest.mark.full  # the grader's own defences: --check --full (fixtures.fixture_dirs)
needs_landlock = pytest.mark.skipif(landlock_abi() < 6, reason="needs Landlock ABI 6 (Linux 6.12+)")


def test_every_attack_has_an_honest_twin():
    for fixture in fixture_dirs("attack"):
        assert fixture.name in HONEST or twin_of(fixture).is_dir(), f"{fixture.name}: no twin"
        if twin_of(fixture).is_dir():
            assert [p.name for p in fixture.glob("ex*.py")] == \
                [p.name for p in twin_of(fixture).glob("ex*.py")]
    assert sorted(name for name in HONEST if ONLY is None or f"-{ONLY.split('_')[0]}-" in name) \
        == sorted(p.name for p in fixture_dirs("attack") if not twin_of(p).is_dir())
    assert {twin_of(p) for p in fixture_dirs("attack")} >= set(fixture_dirs("twin"))  # all used


@needs_landlock
@pytest.mark.parametrize("fixture", fixture_dirs("attack"), ids=lambda p: p.name)
def test_attack_earns_at_most_its_twins_points(graded, fixture):
    record = graded[fixture.name]
    exercise = exercise_of_fixture(fixture)
    scores = {name: (ex["score"], ex["max"]) for name, ex in record["exercises"].items()}
    honest = graded[twin_of(fixture).name]["exercises"][exercise]["score"] \
        if twin_of(fixture).is_dir() else HONEST[fixture.name]
    passed = [t["id"] for t in record["exercises"][exercise]["tests"] if t["status"] == "passed"]
    assert scores.pop(exercise)[0] <= honest, \
        f"seed {SEED} (python grader.py --seed {SEED} replays it): it passed {passed}"
    assert all(got == full for got, full in scores.values()), scores
    assert record["status"] == "graded" or quick() and record["status"] == "incomplete"
    assert record["seconds"] < 90


@needs_landlock
def test_the_grader_on_disk_is_untouched(graded, repository):
    copy, before = repository
    assert fingerprint(copy) == before


def test_unpickling_never_ran(graded):
    assert not os.path.exists(PICKLE_MARKER)


def test_no_process_outlives_the_run(graded, repository):
    copy, _ = repository
    time.sleep(1)
    assert not processes_mentioning(str(copy)) and not processes_mentioning("grader-attack")


@about("ex3_qkv")
def test_costly_replies_cost_the_judge_no_time(graded):
    """Replies built to be slow to decode (64 MB of tiny strings took the judge 36 s, charged
    to no one): a message holds at most 16 MB and MAX_VALUES values now."""
    assert graded["attack-ex3-costly_replies"]["seconds"] < 30  # 1.3 s here (61 s before)


@about("ex3_qkv")
def test_printing_50_mb_is_cut(graded):
    tests = graded["attack-ex3-print_50mb"]["exercises"]["ex3_qkv"]["tests"]
    assert all(len(json.dumps(t)) < 20_000 for t in tests)


# The results-file attack in a single run, as CI grades a pull request: test_ci.py.


@about("ex6_head")
@pytest.mark.parametrize("name", ["attack-ex6-judge_cost_polynomial", "attack-ex6-judge_memory_index"])
def test_a_record_costly_to_replay_costs_the_judge_nothing(graded, name):
    """Issue 23: torch.empty read as NaN in the replay only made a Laguerre polynomial of degree
    10**15 (67 s of the judge's time, against its twin's 1 s) or a 1024**3 index (4.4 GB) in the
    judge alone. The worker fills uninitialised memory as the replay does, and only operations
    bounded by their sizes are replayed: the row takes its twin's time, give or take the worker's
    own limits."""
    assert graded[name]["seconds"] < 30
