"""The terminal the report is written to: a stream that a console's encoding or a closed pipe cannot break."""
import os


class PipeSafe:
    """A stream that a console or a closed pipe cannot break: characters the console's encoding
    cannot show are replaced (ASCII, GBK, cp1252…), and once a reader has gone (python grader.py |
    head) the rest goes to /dev/null, so that grading still ends with its own exit status."""

    # The report's symbols, in ASCII, for a console that cannot show them (the rest become "?").
    ASCII = {"✓": "+", "✗": "x", "·": "-", "█": "#", "░": ".", "▒": ":", "—": "-", "–": "-",
             "→": "->", "…": "...", "×": "x", "−": "-", "√": "sqrt", "ᵀ": "^T", "≥": ">=",
             "≤": "<=", "≈": "~", "“": '"', "”": '"', "‘": "'", "’": "'"}

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
