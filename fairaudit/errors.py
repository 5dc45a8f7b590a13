"""Errors that reach the user as one line (the CLI prints them and exits 2; the pages show them)."""


class FairauditError(Exception):
    """Base class: bad input from the user. ``str(err)`` is a complete one-line message."""


class DataError(FairauditError):
    """A dataset or CSV cannot be used (missing file, unknown column, non-binary label, ...)."""


class ModelError(FairauditError):
    """A model cannot be trained, loaded or applied."""
