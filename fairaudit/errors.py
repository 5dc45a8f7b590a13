"""Errors that reach the user as one line (the CLI prints them and exits 2; the pages show them)."""


class FairauditError(Exception):
    """Base class: bad input from the user. ``str(err)`` is a complete one-line message."""


class DataError(FairauditError):
    """A dataset or CSV cannot be used (missing file, unknown column, non-binary label, ...)."""


class ModelError(FairauditError):
    """A model cannot be trained, loaded or applied."""


def first_line(err: Exception, limit: int = 160) -> str:
    """The first line of an exception's message (its type's name when empty), cut to ``limit`` characters:
    how a third-party library's error is quoted inside a one-line fairaudit message."""
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:limit]
