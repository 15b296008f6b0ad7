"""Your answers: fill in the files here, then run `python grader.py`."""
