"""Hostile learner text, and the GitHub Actions runner's reading of a log: shared by the tests of
what the grader shows (units/test_output_safety.py) and of the CI step (system/test_ci.py), which
may not import each other (pytest puts each test file's own folder on sys.path)."""
import re
import unicodedata

COMMAND_LINES = ["::add-mask::secret", "::error file=x::fake", "::stop-commands::abc",
                 "##[stop-commands]abc", "  ::set-env name=A::b", "::set-output name=x::y"]
ESCAPES = "\x1b[2J\x1b[H 100/100 \x1b]0;title\x07\rover\u202eevil\x00\u200bwarning\u3164:"
MARKUP = "<img src=x onerror=alert(1)> | `code` [link](http://x) & more"
LEARNER = "\n".join([MARKUP + ESCAPES, *COMMAND_LINES])  # every kind of hostile text
IN_A_NAME = "\x1b[2J\x1b]0;title\x07\r\u202e"  # what a folder's name can hold of it (no NUL, no /)
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
INVISIBLE = set("\u00ad\u115f\u1160\u180e\u200b\u2060\u2061\u2062\u2063\u2064\u3164\uffa0")


def controls(text):
    """The control characters of `text` but newline: C0, DEL, C1, bidi controls, line separators,
    characters that show nothing."""
    return [ch for ch in text if ch != "\n"
            and (unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in BIDI | INVISIBLE)]


def strings(value):
    """Every string in a JSON value, keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def runner_commands(log):
    """The workflow commands the GitHub Actions runner would process in `log`, in order, as
    (name, data). As in actions/runner (ActionCommand.TryParseV2 and TryParse,
    ActionCommandManager.TryProcessCommand): a line is what .NET's ReadLine gives (split at \\r\\n,
    \\r or \\n); `::name props::data` counts once leading whitespace is trimmed, else `##[name
    props]data` anywhere in the line; after `stop-commands`, nothing runs until a line whose
    command is the token. Stricter than the runner: every name counts, registered or not."""
    ran, token = [], None
    for line in re.split(r"\r\n|\r|\n", log):
        text = line.lstrip()
        if text.startswith("::") and "::" in text[2:]:
            end = text.index("::", 2)
            name, data = text[2:end].split(" ")[0], text[end + 2:]
        elif "##[" in line and "]" in line[line.index("##["):]:
            start = line.index("##[") + 3
            end = line.index("]", start)
            name, data = line[start:end].split(" ")[0], line[end + 1:]
        else:
            continue
        if token is not None:
            if name.lower() == token.lower():
                ran.append((name, data))
                token = None
            continue
        if name.lower() == "stop-commands":
            token = data
        ran.append((name, data))
    return ran
