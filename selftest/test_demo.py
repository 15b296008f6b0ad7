"""python grader.py demo: the learner's head beats the bigram on the characters the context decides,
looks at the deciding character, and a head that leaks the future is called out."""
import re

from conftest import early_run
from grading.demo import TOPICS

TOPIC_CHARACTERS = "".join(topic for topic, _ in TOPICS)


def accuracies(stdout):
    found = {}
    for name, pattern in (("bigram", r"bigram \(the previous character only\)"),
                          ("averaging", r"averaging \(exercise 2\)"),
                          ("attention", r"your attention head")):
        loss, right = re.search(pattern + r"\s+([\d.]+)\s+(\d+)%", stdout).groups()
        found[name] = (float(loss), int(right) / 100)
    return found


def test_the_head_learns_what_the_bigram_cannot():
    done = early_run("demo solutions")  # the default seed, as a learner runs it
    assert done.returncode == 0, done.stdout + done.stderr
    got = accuracies(done.stdout)
    assert got["attention"][1] >= 0.9 and got["bigram"][1] <= 0.4
    assert "floor (a perfect model's loss)" in done.stdout
    looked_at = re.search(r"On the 真 row .* the largest weight \(([\d.]+)\) is on “(.)”",
                          done.stdout).group(2)
    assert looked_at in TOPIC_CHARACTERS


def test_a_head_that_leaks_the_future_is_called_out():
    done = early_run("demo leaky")  # the catalogued mistake ex6 no_mask (see conftest.start_demos)
    assert done.returncode == 1 and "⚠" in done.stdout and "below the floor" in done.stdout


def test_untouched_stubs_say_what_to_do_first():
    done = early_run("demo stubs")  # python grader.py demo --submission <a copy of exercises/>
    assert done.returncode == 1 and "python grader.py 6 pass" in done.stderr
