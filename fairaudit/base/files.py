"""Writing a file safely: a path checked before any work, and the content written atomically.

``check_path(path, inputs=..., what=...)``: the path names a file (not a directory, not ``name/``), its folder
exists and is writable; an existing path is a regular file (never a device, a pipe or a socket); it is not one of
the run's input files (same file by ``os.path.samefile``, so ``./d.csv`` and ``d.csv`` and a hard link are
caught). Whether an existing file may be replaced, decided from what it holds, is
``fairaudit.core.outputs.check_output``'s, which calls this first.

``write_atomically(path, data)`` writes to a temporary file of its own in the same folder (a unique name per call,
so two runs writing the same path never write into one file) and renames it over the target, so an interrupted or
failed write leaves the old file as it was and no temporary file behind.

An ``OSError`` met on the way is one line (:func:`fairaudit.base.errors.path_error`), never a crash.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from fairaudit.base.errors import FairauditError, path_error


def check_path(path, *, inputs: Iterable = (), what: str = "output") -> Path:
    """``path`` checked as a file this run may write (module doc); ``FairauditError`` otherwise."""
    text = os.fspath(path)
    if text in ("", "."):
        raise FairauditError(f"cannot write the {what}: empty path")
    if text.endswith(("/", os.sep)):
        raise FairauditError(f"cannot write the {what} to {text}: the path ends with '/', which names a folder; "
                             "name a file")
    path = Path(text)
    try:
        return _check(path, inputs, what)
    except OSError as err:
        raise path_error(err, f"write the {what} to") from None


def _check(path: Path, inputs: Iterable, what: str) -> Path:
    if path.is_dir():
        raise FairauditError(f"cannot write the {what} to {path}: it is a directory")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FairauditError(f"cannot write the {what} to {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FairauditError(f"cannot write the {what} to {path}: folder {folder} is not writable")
    exists = path.exists()
    if exists and not path.is_file():
        raise FairauditError(f"cannot write the {what} to {path}: it is not a regular file (a device, a pipe or a "
                             "socket); name a file")
    for source in inputs:
        if source is None or not isinstance(source, (str, os.PathLike)):
            continue
        try:
            same = exists and Path(source).exists() and os.path.samefile(path, source)
        except OSError:
            same = False
        if same:
            raise FairauditError(f"refusing to write the {what} to {path}: it is an input of this run "
                                 "(choose another path)")
    return path


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


TEMP_SUFFIX = ".tmp"


def temporary_beside(target: Path) -> Path:
    """A new, empty temporary file in ``target``'s folder, with a name of its own (``.NAME.RANDOM.tmp``, the name
    cut so that the whole stays within the file system's limit): where ``target`` is written before the rename."""
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:64]}.", suffix=TEMP_SUFFIX, dir=folder)
    os.close(fd)
    return Path(tmp)


def publish(tmp: Path, target: Path) -> None:
    """Move the finished ``tmp`` over ``target`` with ``target``'s mode (else the umask's: mkstemp makes 0600)."""
    os.chmod(tmp, _mode_for(target))
    os.replace(tmp, target)


def write_atomically(path, data: bytes, what: str = "output") -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename (module doc)."""
    target = Path(path)
    try:
        tmp = temporary_beside(target)
        try:
            tmp.write_bytes(data)
            publish(tmp, target)
        except BaseException:  # an error or an interrupt (Ctrl-C, SIGTERM through the CLI): no temporary file stays
            tmp.unlink(missing_ok=True)
            raise
    except OSError as err:  # said of the target, not of the temporary file
        raise path_error(err, f"write the {what} to", path) from None
    return target
