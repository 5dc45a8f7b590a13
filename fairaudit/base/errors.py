"""Errors that reach the user as one line (the CLI prints them and exits 2; the pages show them)."""
from __future__ import annotations

import errno
import os


class FairauditError(Exception):
    """Base class: bad input from the user. ``str(err)`` is a complete one-line message."""


class DataError(FairauditError):
    """A dataset or CSV cannot be used (missing file, unknown column, non-binary label, ...)."""


class ModelError(FairauditError):
    """A model cannot be trained, loaded or applied."""


class PathError(FairauditError):
    """A path the user gave cannot be used: the operating system refused it (too long, not allowed, read-only ...)."""


def first_line(err: Exception, limit: int = 160) -> str:
    """The first line of an exception's message (its type's name when empty), cut to ``limit`` characters:
    how a third-party library's error is quoted inside a one-line fairaudit message."""
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:limit]


PATH_LIMIT = 80  # at most this many characters of a path are repeated in a message (its start and its end)

# what to do, after the system's own words, for the errors a path given by the user can meet
_PATH_HINTS = {
    errno.ENAMETOOLONG: "choose a shorter path",
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a part of the path is not a folder; check the path",
    errno.EISDIR: "name a file, not a folder",
    errno.EACCES: "choose a path you may use, or change its permissions",
    errno.EPERM: "choose a path you may use, or change its permissions",
    errno.EROFS: "choose a folder on a writable file system",
    errno.ENOSPC: "free some space or choose another folder",
    errno.EDQUOT: "free some space or choose another folder",
    errno.EFBIG: "choose another folder",
    errno.ELOOP: "the path has a loop of symbolic links; check the path",
    errno.EEXIST: "choose another path",
    errno.ETXTBSY: "choose another path",
}


def short_path(path, limit: int = PATH_LIMIT) -> str:
    """``path`` as text of at most ``limit`` characters: its start and its end (the file name) around "…"."""
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    if len(text) <= limit:
        return text
    head = (limit - 1) // 3
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def path_error(err: OSError, doing: str = "use", path=None) -> PathError:
    """``err``, an ``OSError`` raised on a path the user gave, as one line: what failed (``doing``, e.g. "write the
    report to"), the file (``path``, else the one ``err`` names; shortened), the system's reason and what to do.
    The one place where such errors become bad input (the CLI, the output checks)."""
    name = path if path is not None else (err.filename if err.filename is not None else "")
    reason = err.strerror or first_line(err)
    hint = _PATH_HINTS.get(err.errno)
    shown = short_path(name) if name != "" else "a file"
    return PathError(f"cannot {doing} {shown}: {reason}" + (f" ({hint})" if hint else ""))
