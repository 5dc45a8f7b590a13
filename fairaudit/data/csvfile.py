"""Read a user's CSV file (a path, an uploaded file object or bytes) into a ``Dataset``, validating it on the way.

What a valid file is: UTF-8 text (a byte-order mark is fine), optionally gzip-compressed (``.csv.gz``, inflated in
bounded blocks), a header row of unique column names, then at least one data row with as many fields as the
header. The bytes are checked here (not a zip, Parquet, PDF or other binary file; not empty); they are then
parsed, typed and checked by the one pipeline every route shares, which refuses a NUL byte or bytes that are not
UTF-8 in the header or a cell with its data row, as out of core, on Dask and live (``fairaudit.sources``: the header's delimiter,
quotes, line ends; the column types fixed by the first rows or declared; only an empty cell missing unless
``na_values`` says otherwise; a value that does not fit its column's type is an error naming its row). A text
column's missing value is the category ``"?"``; the label column is categorical whatever its type
(``fairaudit.data.roles``). Column names are kept as written (only surrounding whitespace is stripped); an empty
header cell is named ``Unnamed: <i>``. Every problem is a one-line ``DataError``. Nothing is ever unpickled.
"""
from __future__ import annotations

import codecs
import os
import re
import zlib
from pathlib import Path
from typing import IO, Any, Iterable


from fairaudit.data.dataset import Dataset
from fairaudit.data.gzipped import gunzip
from fairaudit.data.roles import build_schema
from fairaudit.base.errors import DataError
from fairaudit.sources.schema import twice  # noqa: F401 — a column name that appears twice

from fairaudit.data.dataset import MISSING_CATEGORY as MISSING  # noqa: F401 — the category of a missing value

from fairaudit.sources.files import SIGNATURES as _SIGNATURES  # a binary file given as a CSV -> what to tell


def from_csv(source: str | os.PathLike | IO | bytes, label: str | None = None,
             protected: str | Iterable[str] | None = None, favourable: Any = None,
             name: str | None = None, *, column_types=None, na_values=(), columns=None) -> Dataset:
    """Read a CSV (path, file object such as a Streamlit upload, or bytes) into a ``Dataset``.

    ``label``: the outcome column (optional; it must be binary). ``protected``: column name(s), none by default.
    ``favourable``: the label value that is the favourable outcome; inferred only when obvious (1, True, yes).
    ``name`` (its ``.csv`` / ``.gz`` ending dropped) defaults to the file name. For an upload held as bytes, pass the
    uploaded file's name as ``name``: messages and ``Dataset.source`` then show it. ``column_types``
    (``{column: kind}`` or ``["column=kind", ...]``) declares types; ``na_values``: text that means "missing"
    besides an empty cell. ``columns``: read only these (and the label and protected columns); None: every one.

    The rows are read by the one pipeline every route shares (``fairaudit.sources.FileLog``): the same types, the
    same values and the same refusals as out of core, on Dask and live.
    """
    from fairaudit.sources import FileLog
    from fairaudit.sources.fingerprint import of_bytes

    data, display, stored = _read_bytes(source, name)
    stored = stored or of_bytes(data)  # the bytes as stored (a .csv.gz's compressed bytes, as out of core)
    data = _check_bytes(data, display)
    log = FileLog(display, declared=column_types, na_values=tuple(na_values or ()), data=data,
                  columns=_read(columns, label, protected))
    del data
    return log_dataset(log, label, protected, favourable, _stem(name or display), stored)


def from_log(source, label: str | None = None, protected: str | Iterable[str] | None = None, favourable: Any = None,
             *, column_types=None, na_values=(), columns=None) -> Dataset:
    """A Parquet file, or a folder or glob of CSV or Parquet parts, read whole into a ``Dataset`` by the pipeline
    every route shares (``fairaudit.sources.FileLog``; bounded: ``FileLog.read_all``). ``columns``: as
    ``from_csv``'s."""
    from fairaudit.sources import FileLog

    log = FileLog(source, declared=column_types, na_values=tuple(na_values or ()),
                  columns=_read(columns, label, protected))
    return log_dataset(log, label, protected, favourable, log.stem)


def _read(columns, label, protected) -> tuple | None:
    """The columns a ``FileLog`` reads for a caller that uses ``columns`` (None: every one), with the roles'."""
    if columns is None:
        return None
    roles = [protected] if isinstance(protected, str) else list(protected or ())
    return tuple(dict.fromkeys([*columns, *([label] if label else []), *roles]))


def log_dataset(log, label, protected, favourable, name: str, stored=None) -> Dataset:
    """Every row of a ``FileLog`` as a ``Dataset``; ``stored``: the fingerprint of the bytes as stored where the
    caller has it (``fairaudit.sources.fingerprint``), else the log's."""
    frame = log.read_all(keep_missing=label)
    if not len(frame):
        raise DataError(f"{log.name} has no data rows")
    schema = build_schema(frame, log.schema.dataset_kinds, label, protected, favourable)
    from fairaudit.sources.fingerprint import of_log

    digest, of = stored or of_log(log)  # the file's bytes, whatever columns were read of it (once per process)
    return Dataset(name, frame, schema, source=log.name, _hash=digest, hash_of=of)


def _read_bytes(source: Any, name: str | None) -> tuple[bytes, str, Any]:
    """The raw bytes of ``source``, the name to show in messages (a path, the file object's name, or
    ``name`` for bytes and unnamed file objects) and, for a path, the fingerprint of its bytes
    (``fairaudit.sources.fingerprint.read_file``: hashed once per process while the file is unchanged)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        if not path.exists():
            raise DataError(f"file not found: {path}")
        if path.is_dir():
            raise DataError(f"{path} is a directory, not a CSV file")
        from fairaudit.sources.fingerprint import read_file

        try:
            data, stored = read_file(path)
        except OSError as err:
            raise DataError(f"cannot read {path}: {err.strerror or err}") from None
        return data, str(path), stored
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), name or "uploaded data", None
    if hasattr(source, "read"):
        display = str(getattr(source, "name", "") or name or "uploaded file")
        start = source.tell() if getattr(source, "seekable", lambda: False)() else None
        data = source.read()
        if start is not None:
            source.seek(start)  # leave an upload readable again
        return (data.encode("utf-8") if isinstance(data, str) else bytes(data)), display, None
    raise TypeError(f"from_csv reads a path, a file object or bytes, not {type(source).__name__}")


_NON_BLANK = re.compile(rb"[^\s]")


def _check_bytes(data: bytes, display: str) -> bytes:
    """The CSV's bytes (gunzipped, bounded), checked not to be a known binary format nor empty. Whether they are
    UTF-8 text without a NUL byte is checked cell by cell by the pipeline (``fairaudit.sources.files.text_cells``),
    which names the data row as every route does."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gunzip(data, display)  # bounded: refused once it unpacks past the limit
        except (OSError, EOFError, zlib.error):
            raise DataError(f"{display} is not a valid gzip file") from None
    for signature, what in _SIGNATURES.items():
        if data.startswith(signature):
            raise DataError(f"{display} is not a CSV file: it is {what}")
    body = data[3:] if data.startswith(codecs.BOM_UTF8) else data
    if _NON_BLANK.search(body) is None:
        raise DataError(f"{display} is empty: a CSV needs a header row and at least one data row")
    return data


def _stem(display: str) -> str:
    name = Path(display).name
    for suffix in (".gz", ".csv", ".tsv", ".txt"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or "uploaded"




