"""Reference answers, graded by `python grader.py --solutions`."""
