"""Writing output files safely: checked before any work, never onto an input, written atomically.

``check_output(path, kind, inputs=..., force=False)`` is called by every command before it starts
working, so that a bad output path costs nothing and can never destroy what the run reads:

* the path is not a directory, its folder exists and is writable;
* it is not one of the run's input files (same file by ``os.path.samefile``, so ``./d.csv`` and
  ``d.csv`` and a hard link are caught);
* an existing file is replaced only when it holds the same kind of content as the one written (a PDF
  over a PDF, an audit result over an audit result, a model over a model); any other existing file —
  a CSV, a spec, an unknown file — needs ``force=True`` (``--force``).

``write_atomically(path, data)`` writes to a temporary file in the same folder and renames it over the
target, so an interrupted or failed write leaves the old file as it was.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from fairaudit.errors import FairauditError

KINDS = ("pdf", "result", "model", "nnet", "trace")
_NAMES = {"pdf": "a PDF report", "result": "an audit result (JSON)", "model": "a model file",
          "nnet": "a .nnet network", "trace": "a full trace (Parquet)", "data": "a data file (CSV/Parquet)", "other": "another kind of file",
          "empty": "an empty file"}


def file_kind(path: Path) -> str:
    """What an existing file holds, from its first bytes: ``pdf``, ``result`` (fairaudit JSON), ``model``
    (a zip archive: skops / torch), ``nnet``, ``trace`` (a fairaudit full trace, Parquet), ``data`` (other
    Parquet), ``empty`` or ``other``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return "other"
    if not head:
        return "empty"
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"\x80"):  # skops / torch zip; an old joblib pickle
        return "model"
    if head.startswith(b"PAR1"):  # Parquet: a full trace written by fairaudit, or data
        from fairaudit.fulltrace import is_full_trace

        return "trace" if is_full_trace(path) else "data"
    if head.startswith(b"//") or path.suffix.lower() == ".nnet":
        return "nnet"
    stripped = head.lstrip()
    if stripped.startswith(b"{") and b'"spec"' in head and b'"engine"' in head:
        return "result"
    return "other"


def check_output(path, kind: str, *, inputs: Iterable = (), force: bool = False, what: str = "output") -> Path:
    """``path`` checked as the destination of ``kind`` content (module doc); ``FairauditError`` otherwise."""
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    path = Path(path)
    if str(path) in ("", "."):
        raise FairauditError(f"cannot write the {what}: empty path")
    if path.is_dir():
        raise FairauditError(f"cannot write the {what} to {path}: it is a directory")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FairauditError(f"cannot write the {what} to {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FairauditError(f"cannot write the {what} to {path}: folder {folder} is not writable")
    for source in inputs:
        if source is None or not isinstance(source, (str, os.PathLike)):
            continue
        try:
            same = Path(source).exists() and path.exists() and os.path.samefile(path, source)
        except OSError:
            same = False
        if same:
            raise FairauditError(f"refusing to write the {what} to {path}: it is an input of this run "
                                 "(choose another path)")
    if path.exists() and not force:
        found = file_kind(path)
        if found not in (kind, "empty"):
            raise FairauditError(f"refusing to overwrite {path}: it holds {_NAMES.get(found, found)}, not "
                                 f"{_NAMES[kind]}; choose another path, or add --force to replace it")
    return path


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomically(path, data: bytes, what: str = "output") -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename (module doc)."""
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent if str(target.parent) else ".")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, _mode_for(target))  # mkstemp makes 0600; keep the old file's mode, else the umask's
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as err:
        raise FairauditError(f"cannot write the {what} to {path}: {err.strerror or err}") from None
    return target
