"""python grader.py demo: on a task that averaging cannot solve (the cue chooses which earlier
character decides), the learner's head gets it, looks at the deciding character, and a head that
leaks the future or does not learn is called out. The demo's runs start with the session
(conftest.start_long_runs); --json gives their figures."""
import itertools
import json
import math
import random
import re

import pytest
import torch

from conftest import DEMO_SEED, early_folder, early_run, run_grader
from grading.demo import report as demo
from grading.worker import training

SEED = 1337 if DEMO_SEED is None else DEMO_SEED  # the demo's default, unless SELFTEST_DEMO_SEED
# The thresholds below come from measurement: the solutions trained with torch.set_num_threads(1)
# on seeds 1337 and 1 to 19, with 2 threads on 1337 and 1 to 11, with 3 on 1337, with 4 on 1337
# and 16 (the demo's worker trains on one thread; other CPUs may sum in another order, as other
# thread counts do). The head got 94.75% to 100% of the characters the cue decides (94.75%: seed
# 1337 on one thread, what the demo shows here; 100% with 2 to 4), the averaging 57.4% to 61.3%,
# the bigram 18.4% to 21.2%; the head's validation loss 0.597 to 0.607 (the floor 0.596, and a
# validation loss is a sample's estimate: a margin of 0.01 below it), the averaging's 0.640 to
# 0.645; the cue's row looked at the deciding character in 74.6% to 95% of the sentences (84.6%
# and 90.1% for seed 1337). Each threshold leaves a margin beyond the worst of those.
HEAD_ACCURACY = 0.90
AVERAGING_ACCURACY = 0.65
LOOKS_AT_MATCH = 0.70
FLOOR_MARGIN = 0.01
# A demo trains for about 8 s alone; beside the fixture batches on a busy box it takes much longer
# than pytest.ini's 30 s, and the first test to ask waits for it.
pytestmark = [pytest.mark.full, pytest.mark.timeout(240)]


def figures(name):
    return json.loads((early_folder() / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.long_run  # reads a run of long_runs.py
def test_the_head_solves_what_averaging_cannot():
    done = early_run("demo solutions")  # --solutions --json demo.json
    assert done.returncode == 0, done.stdout + done.stderr
    got = figures("demo")
    assert got["seed"] == SEED and got["chance"] == 1 / len(training.ANSWERS) and got["warnings"] == []
    assert abs(got["floor"] - demo.floor_nats()) < 1e-9 and 0.4 < got["floor"] < 0.7
    head, averaging, bigram = (got["models"][name] for name in ("head", "averaging", "bigram"))
    assert head["accuracy"] >= HEAD_ACCURACY, got
    assert averaging["accuracy"] <= AVERAGING_ACCURACY, got
    assert bigram["accuracy"] <= got["chance"] + 0.10, got
    assert got["floor"] - FLOOR_MARGIN < head["val_loss"] < averaging["val_loss"] \
        < bigram["val_loss"], got
    # The cue's row: in most validation sentences its largest weight is on the character the cue
    # asks for; in the one shown, the report says where it is, whichever it is.
    heatmap = got["heatmap"]
    assert heatmap["row"] in training.CUES and heatmap["columns"][-1] == heatmap["row"]
    asked = training.FOODS if training.CUES[heatmap["row"]] == "food" else training.COLOURS
    assert heatmap["match"] in asked and heatmap["columns"].count(heatmap["match"]) == 1
    weights = heatmap["weights"]
    assert len(weights) == len(heatmap["columns"]) and abs(sum(weights) - 1) < 1e-4
    largest = max(range(len(weights)), key=weights.__getitem__)
    assert heatmap["largest"] == heatmap["columns"][largest]
    assert heatmap["looks_at_match"] >= LOOKS_AT_MATCH, heatmap
    # The report says what each model could and could not see, and the head writes sentences.
    assert "floor (a perfect model's loss)" in done.stdout
    assert "looks only at the previous character" in done.stdout
    assert "treats every character as equally important" in done.stdout
    assert "the weights are computed from content" in done.stdout
    samples = re.search(r"your attention head: (.*)", done.stdout).group(1)
    assert samples.count("✓") + samples.count("✗") == 3 and samples.count("✓") >= 2, samples
    assert f"largest weight ({max(weights):.2f}) on “{heatmap['largest']}”" in done.stdout


@pytest.mark.long_run  # reads a run of long_runs.py
def test_a_head_that_leaks_the_future_is_called_out():
    done = early_run("demo leaky")  # the catalogued mistake ex6 no_mask
    assert done.returncode == 1 and "⚠" in done.stdout and "below the floor" in done.stdout
    got = figures("demo-leaky")
    assert got["warnings"] == ["peeked"]
    assert got["models"]["head"]["train_loss"] < got["floor"] - 0.1
    said = [line for line in done.stdout.splitlines() if "head" in line.lower()]
    assert said[0].startswith("⚠") and "peeked" in said[0], said  # before anything else of it
    assert "It still gets this sentence right" not in done.stdout


def synthetic(train_loss):
    """The facts of a training, made up: a head whose largest weight misses the deciding character
    of the sentence shown, which it gets right all the same."""
    sentence = "满眼青和一盘枣，他已经看"
    row = torch.zeros(len(sentence))
    row[5], row[2] = 0.9, 0.1  # 盘, where 青 (position 2) decides
    model = {"val_loss": 0.7, "accuracy": 0.9, "train_loss": 0.7, "samples": ["一盘梨，我都吃腻了。"]}
    return {"models": {"bigram": dict(model), "averaging": dict(model),
                       "head": {**model, "train_loss": train_loss, "accuracy": 1.0}},
            "unchanged": [], "head_parameters": ["head.query.weight"], "head_row": row,
            "sentence": sentence, "cue": len(sentence) - 1, "match": 2, "head_right": True,
            "looks_at_match": 0.05}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_first_thing_said_of_a_head_that_peeked_is_that_it_peeked(lang, tmp_path):
    """Nothing is said of its figures, sentences or weights before the warning, and nothing as if
    it had earned them ("it still gets this sentence right"); an honest head gets that line."""
    head = ("head", "注意力头")[lang == "zh"]
    peeked, warned = demo.report(synthetic(0.1), lang, tmp_path / "a.png")
    lines = [line for line in peeked.splitlines() if head in line.lower()]
    assert warned and lines[0].startswith("⚠"), peeked
    assert ("still gets", "仍然猜对")[lang == "zh"] not in peeked
    honest, warned = demo.report(synthetic(0.7), lang, tmp_path / "b.png")
    assert not warned and "⚠" not in honest and ("still gets", "仍然猜对")[lang == "zh"] in honest


@pytest.mark.long_run  # reads a run of long_runs.py
def test_a_head_that_does_not_learn_is_called_out():
    done = early_run("demo detached")  # the catalogued mistake ex6 detached_weights
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Head.query.weight has not changed at all" in done.stdout
    assert "no .detach(), .data or torch.no_grad() in forward" in done.stdout
    got = figures("demo-detached")
    assert got["warnings"] == ["not_learning"] and got["unchanged"] == ["Head.query.weight"]


@pytest.mark.long_run  # reads a run of long_runs.py
def test_untouched_stubs_say_what_to_do_first():
    done = early_run("demo stubs")  # python grader.py demo --submission <a copy of exercises/>
    assert done.returncode == 1 and "python grader.py 1 pass" in done.stderr
    assert not (early_folder() / "demo-stubs.json").exists()  # nothing ran: no figures


def test_the_json_path_is_checked_before_anything_runs(tmp_path):
    done = run_grader("demo", "--solutions", "--json", tmp_path / "missing" / "demo.json",
                      timeout=60)
    assert done.returncode == 2 and "does not exist" in done.stderr
    assert "Demo:" not in done.stdout


def test_every_sentence_reads_back_and_the_floor_is_its_entropy():
    """Every way of drawing a sentence gives a different text (so the floor, the entropy of the
    draws, is the text's), and each text parses back to its food, colour, cue and answer."""
    kinds = [training.FOODS, training.COLOURS, ("food", "colour"), training.CUES, training.TIMES,
             training.SUBJECTS, training.ADVERBS]
    texts = set()
    for food, colour, first, cue, time, subject, adverb in itertools.product(*kinds):
        named = {"food": "一盘" + food, "colour": "满眼" + colour}
        order = [first, "colour" if first == "food" else "food"]
        answer = training.FOODS[food] if training.CUES[cue] == "food" else training.COLOURS[colour]
        text = "和".join(named[k] for k in order) + f"，{time}{subject}{adverb}{cue}{answer}了。"
        assert training.parse(text) == (food, colour, cue, answer) and demo.right(text)
        texts.add(text)
    draws = 1
    for kind in kinds:
        draws *= len(kind)
    assert len(texts) == draws
    # The floor: log(draws), less the first character's log 2 (the order), per predicted character.
    drawn = training.sentences(random.Random(0), 20000)
    predicted = sum(len(text) - 1 for text, _, _ in drawn) / len(drawn)
    floor = (math.log(draws) - math.log(2)) / predicted
    assert abs(floor - demo.floor_nats()) < 0.01
    for text, cue, match in drawn[:200]:
        food, colour, said, answer = training.parse(text)
        assert text[cue] == said and text[cue + 1] == answer
        assert text[match] == (food if training.CUES[said] == "food" else colour)
