"""Learner text made inert: what a submission printed, raised or named is shown as plain text.

Control characters (C0 but newline and tab, DEL, C1), Unicode bidirectional controls, line or
paragraph separators, and characters that show nothing (zero-width space, word joiner, invisible
operators, soft hyphen, Hangul fillers) are removed, so that printed output cannot move the cursor,
recolour or redraw the report, reorder what is shown, break a line where the report does not, or
pass for the grader's own words with a mark no one can see.
"""
import re

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                       "\u202a-\u202e\u2066-\u2069\ufeff"
                       "\u00ad\u115f\u1160\u180e\u200b\u2060-\u2064\u3164\uffa0]")


def inert(text):
    """`text` with every control character removed; newlines and tabs are kept."""
    return _CONTROLS.sub("", str(text))


def is_inert(text):
    """True when inert(text) would change nothing."""
    return _CONTROLS.search(text) is None


def inert_line(text):
    """One line: `inert(text)` with newlines and tabs turned into spaces."""
    return inert(text).replace("\n", " ").replace("\t", " ")
