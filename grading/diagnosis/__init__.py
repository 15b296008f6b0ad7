"""What an exercise's diagnoses file (tests/diagnoses_exN_*.py) explains a failing exercise with:
this module is its one face (content/test_checks_face.py: the files of tests/ import from here
alone, and every name here is one they may use), as grading.checks is the test files'.

- causes: Diagnosis, and the causes several exercises share (an input changed in place, a
  detached gradient, a ready-made shortcut);
- slips: the search over the lesson's steps and their slips (Way, lesson, named_slips);
- record_diff: the learner's record mended one step at a time against the solution's (Recorded);
- crashes: a crash in the lesson's terms (crash_cause);
- pictures: what the learner built beside the expected (Picture, weights_of), and where its
  attention weights part from the solution's (weights_differ).
The judge's plugin imports its own modules (shared, crashes) directly.
"""
from grading.diagnosis import record_diff
from grading.diagnosis.causes import (
    Diagnosis,
    changed_everywhere,
    close,
    detached_diagnosis,
    finite,
    modifies_input_diagnosis,
    shortcut_diagnosis,
)
from grading.diagnosis.crashes import crash_cause
from grading.diagnosis.pictures import Picture, weights_differ, weights_of
from grading.diagnosis.record_diff import Recorded
from grading.diagnosis.slips import Way, lesson, named_slips, slip_diagnosis

__all__ = ["record_diff", "Diagnosis", "changed_everywhere", "close", "detached_diagnosis",
           "finite", "modifies_input_diagnosis", "shortcut_diagnosis", "crash_cause", "Picture",
           "weights_differ", "weights_of", "Recorded", "Way", "lesson", "named_slips", "slip_diagnosis"]
