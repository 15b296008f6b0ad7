"""The terminal the report is written to: a stream that a console's encoding or a closed pipe cannot break."""
import os


class PipeSafe:
    """A stream that a console or a closed pipe cannot break: characters the console's encoding
    cannot show are replaced (ASCII, GBK, cp1252…), and once a reader has gone (python grader.py |
    head) the rest goes to /dev/null, so that grading still ends with its own exit status."""

    # The report's symbols, in ASCII, for a console that cannot show them (the rest become "?").
    ASCII = {"✓": "+", "✗": "x", "·": "-", "█": "#", "░": ".", "▒": ":", "—": "-", "–": "-",
             "→": "->", "…": "...", "×": "x", "−": "-", "√": "sqrt", "ᵀ": "^T", "≥": ">=",
             "≤": "<=", "≈": "~", "“": '"', "”": '"', "‘": "'", "’": "'",
             "\u00a0": " "}

    def __init__(self, stream):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
        self.stream = stream
        self.fallback = str.maketrans({symbol: ascii for symbol, ascii in self.ASCII.items()
                                       if not self._shows(stream, symbol)}) or None

    @staticmethod
    def _shows(stream, symbol):
        try:
            symbol.encode(getattr(stream, "encoding", None) or "utf-8")
            return True
        except (UnicodeEncodeError, LookupError):
            return False

    def write(self, text):
        if self.fallback is not None:
            text = text.translate(self.fallback)
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)

    def flush(self):
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self.stream.fileno())
        os.close(devnull)

    def __getattr__(self, name):
        return getattr(self.stream, name)


# -- lines that fit the terminal ------------------------------------------------------------------

NARROWEST, WIDEST = 60, 100  # a report line is wrapped at the terminal's width, within these
# A line may not start with these (they close what came before), nor end with these.
NO_START = set("，。、：；！？）」』】》〉,.:;!?)]}%…")
NO_END = set("（「『【《〈([{“‘")


def columns(text):
    """How many terminal columns text takes: a CJK or full-width character takes two."""
    return sum(2 if "\u1100" <= ch <= "\u115f" or "\u2e80" <= ch <= "\ua4cf"
               or "\uac00" <= ch <= "\ud7a3" or "\uf900" <= ch <= "\ufaff"
               or "\ufe30" <= ch <= "\ufe4f" or "\uff00" <= ch <= "\uff60"
               or "\uffe0" <= ch <= "\uffe6" else 1 for ch in text)


def width(environ=os.environ):
    """The columns a report line may take: the terminal's own width (or COLUMNS) within
    NARROWEST and WIDEST, 80 for a pipe or a file; GRADER_COLUMNS as set, at least NARROWEST
    (the self-test's 100000: no wrapping)."""
    import shutil
    if environ.get("GRADER_COLUMNS", "").isdigit():
        return max(int(environ["GRADER_COLUMNS"]), NARROWEST)
    return min(max(shutil.get_terminal_size((80, 24)).columns, NARROWEST), WIDEST)


def _pieces(text):
    """text cut where a line may break: after a space, or between two CJK characters (a word of
    Latin letters, digits or code stays whole), closing punctuation kept with what precedes it."""
    pieces, word = [], ""
    for ch in text:
        wide = columns(ch) == 2
        if ch == " ":
            pieces.append(word + ch)
            word = ""
        elif wide and ch not in NO_START:
            if word and word[-1] not in NO_END:
                pieces.append(word)
                word = ""
            word += ch
        else:
            if word and columns(word[-1]) == 2 and word[-1] not in NO_END and ch not in NO_START \
                    and not ch.isspace():
                pieces.append(word)
                word = ""
            word += ch
    if word:
        pieces.append(word)
    return pieces


def fit(line, most):
    """line as lines of at most `most` columns, each continuation indented two beyond the line's
    own indent (none for a line that has none: a paragraph). A piece longer than a whole line (a
    long path) is left whole on its own line."""
    if columns(line) <= most:
        return [line]
    body = line.lstrip(" ")
    indent = len(line) - len(body)
    hang = indent + 2 if indent else 0  # a report's line hangs under its text; a paragraph not
    out, current = [], " " * indent
    for piece in _pieces(body):
        if columns(current) + columns(piece.rstrip()) > most and current.strip():
            out.append(current.rstrip())
            current = " " * hang
        current += piece
    out.append(current.rstrip())
    return out
