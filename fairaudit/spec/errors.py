"""``SpecError``: a problem in a specification, with its line and column.

``str(err)`` is one line, ``"LINE:COL: message"`` (``"FILE:LINE:COL: message"`` when the source came from a
file); ``err.pretty()`` adds the source line and a caret under the offending token::

    1:4: unclosed '['
      E[pred | sex == "Male"
       ^
"""
from __future__ import annotations

from fairaudit.base.errors import FairauditError


ECHO_LIMIT = 60  # at most this many characters of a user's token are repeated in a message
EXCERPT_WIDTH = 100  # at most this many characters of the offending source line are shown under a message


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (with "…"), for echoing user input in one-line messages."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def caret_lines(line: str, column: int | None, length: int = 1, width: int = EXCERPT_WIDTH) -> str:
    """The source ``line`` and a caret under its token at ``column`` (1-based), cut to ``width`` characters
    around the token with "…" where it was cut, so the caret is on screen however long the line; "" without a
    position. How every error shows its source line (the command line's ``SpecError.pretty``, the dashboard)."""
    if not line or not column:
        return ""
    line = line.replace("\t", " ")
    at = min(max(column - 1, 0), len(line))
    start = max(0, min(at - width // 3, len(line) - width)) if len(line) > width else 0
    end = min(len(line), start + width)
    shown = ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")
    pad = " " * (at - start + (1 if start else 0))
    return f"{shown}\n{pad}{'^' * max(1, min(length, end - at))}"


def line_of(source: str, line: int) -> str:
    """The text of 1-based ``line`` in ``source`` (without its newline); ``""`` when out of range."""
    lines = source.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def position(source: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    offset = max(0, min(offset, len(source)))
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


class SpecError(FairauditError):
    """A syntax or validation error in a specification.

    Attributes: ``line`` and ``column`` (1-based; ``None`` when the problem has no position, e.g. an
    event built in code), ``message`` (the text without position), ``excerpt`` (the offending source line,
    ``""`` when unknown), ``length`` (width of the caret), ``filename`` (or ``None``).
    """

    def __init__(self, line: int | None, column: int | None, message: str, *, excerpt: str = "",
                 length: int = 1, filename: str | None = None):
        self.line = line
        self.column = column
        self.message = message
        self.excerpt = excerpt
        self.length = max(1, length)
        self.filename = filename
        super().__init__(str(self))

    @classmethod
    def at(cls, source: str, line: int | None, column: int | None, message: str, length: int = 1,
           filename: str | None = None) -> "SpecError":
        excerpt = line_of(source, line) if line is not None else ""
        return cls(line, column, message, excerpt=excerpt, length=length, filename=filename)

    def with_source(self, source: str, filename: str | None = None) -> "SpecError":
        """The same error with its excerpt taken from ``source`` (and attributed to ``filename``)."""
        excerpt = line_of(source, self.line) if self.line is not None else self.excerpt
        return SpecError(self.line, self.column, self.message, excerpt=excerpt, length=self.length,
                         filename=filename if filename is not None else self.filename)

    def shifted(self, lines: int, columns: int = 0) -> "SpecError":
        """The same error moved down ``lines`` lines (and right ``columns`` columns on its first line):
        for text that was parsed out of a larger file."""
        if self.line is None:
            return self
        column = self.column + columns if self.line == 1 and self.column is not None else self.column
        return SpecError(self.line + lines, column, self.message, excerpt=self.excerpt, length=self.length,
                         filename=self.filename)

    def __str__(self) -> str:
        where = "" if self.line is None else f"{self.line}:{self.column}: "
        prefix = f"{self.filename}:" if self.filename and where else (f"{self.filename}: " if self.filename else "")
        return f"{prefix}{where}{self.message}"

    def pretty(self) -> str:
        """The one-line message, then the source line (at most ``EXCERPT_WIDTH`` characters of it, around the
        token) and a caret under the offending token."""
        text = str(self)
        if not self.excerpt or self.column is None:
            return text
        return "\n".join([text, *("  " + line for line in caret_lines(self.excerpt, self.column, self.length)
                                   .splitlines())])
