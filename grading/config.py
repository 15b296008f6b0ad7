"""Where things are and how long they may take: constants every room reads (a leaf, with course.py).

The course's exercises are course.py's; EXERCISES and SECTIONS here are its names and sections,
in its order, for the modules that only need those.
"""
from pathlib import Path

import course

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SOLUTIONS = ROOT / "solutions"
EXERCISES_DIR = ROOT / "exercises"
# What grades, in every copy of the grader (the student copy, the Gradescope bundle, the
# self-test's): each adds what it grades with (exercises/, solutions/) and what else it needs.
GRADER_FILES = ("grader.py", "course.py", "pytest.ini", "requirements.txt", "grading", "tests")

EXERCISES = list(course.NAMES)
SECTIONS = {exercise.name: exercise.section for exercise in course.EXERCISES}  # (中文, English)

OLDEST_TORCH = (2, 4)  # the oldest torch release graded alike (see docs/learner.md); checked at start
CALL_TIMEOUT = 5.0  # seconds for one import or one scenario call; solutions need milliseconds
EXERCISE_BUDGET = 8.0  # seconds of the submission's own time per exercise: 6 × 8 s < 60 s
TEST_TIMEOUT = 150  # pytest-timeout's backstop for one test, should the judge itself hang

# Set (to "1") in a sealed grading, Gradescope's, where students see hidden checks only once the
# course publishes them: every exercise's public checks then run before any hidden check and any
# diagnosis (which calls the learner's code only after a failure), so that nothing a later
# exercise's code observes while its public checks run depends on a hidden check's outcome.
SEALED = "GRADER_SEALED"
