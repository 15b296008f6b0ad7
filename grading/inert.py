"""Learner text made inert: what a submission printed, raised or named is shown as plain text.

Control characters (C0 but newline and tab, DEL, C1), Unicode bidirectional controls and line or
paragraph separators are removed, so that printed output cannot move the cursor, recolour or redraw
the report, reorder what is shown, or break a line where the report does not.
"""
import re

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                       "\u202a-\u202e\u2066-\u2069\ufeff]")


def inert(text):
    """`text` with every control character removed; newlines and tabs are kept."""
    return _CONTROLS.sub("", str(text))


def inert_line(text):
    """One line: `inert(text)` with newlines and tabs turned into spaces."""
    return inert(text).replace("\n", " ").replace("\t", " ")
