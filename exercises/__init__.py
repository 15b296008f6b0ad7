"""Your answers: fill in the six files here, then run `python grader.py`."""
