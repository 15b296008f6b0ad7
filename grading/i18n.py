"""Every text a learner reads exists in 中文 and English; the report picks one at the end.

    Bi(zh="每一行之和为 1", en="every row sums to 1").render("zh")

A check's failure carries a Bi, so one grading run can be shown in either language (the terminal in
the learner's, results.json in both).
"""
import os
from dataclasses import dataclass

LANGUAGES = ("zh", "en")


@dataclass(frozen=True)
class Bi:
    zh: str
    en: str

    def __post_init__(self):
        if not (isinstance(self.zh, str) and isinstance(self.en, str) and self.zh and self.en):
            raise ValueError(f"a learner-facing text needs both zh and en: {self!r}")

    def render(self, lang):
        return self.zh if lang == "zh" else self.en

    def __add__(self, other):
        other = other if isinstance(other, Bi) else Bi(str(other), str(other))
        return Bi(self.zh + other.zh, self.en + other.en)

    def as_dict(self):
        return {"zh": self.zh, "en": self.en}


def default_language(environ=None):
    """zh when the locale is Chinese (LC_ALL, then LC_MESSAGES, then LANG, as POSIX orders them)."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"
