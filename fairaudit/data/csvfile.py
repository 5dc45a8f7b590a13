"""Read a user's CSV file (a path or an uploaded file object) into a ``Dataset``, validating it on the way.

What a valid file is: UTF-8 text (a byte-order mark is fine), optionally gzip-compressed (``.csv.gz``), a header
row of unique column names, then at least one data row with as many fields as the header. The delimiter is the
one of ``,`` ``;`` tab ``|`` that occurs most often in the header row. Blank lines are skipped.

How columns are typed (deterministic, from pandas' parsing of the whole column):

* a column pandas reads as integers or floats is **numeric** (even with few distinct values, e.g. a 0/1 flag);
  its missing values stay NaN;
* a column of True/False is **categorical** with values ``(False, True)``;
* any other column is **categorical** text: values are stripped of surrounding whitespace and a missing value
  (an empty field or one of pandas' NA markers such as ``NA`` or ``null``) becomes the category ``"?"``, so
  categorical columns never hold NaN; a column with no value at all becomes the single category ``"?"``;
* the label column is categorical whatever its dtype (see ``fairaudit.data.roles``).

Column names are kept as written (only surrounding whitespace is stripped); an empty header cell is named
``Unnamed: <i>`` as pandas does. Every problem is a one-line ``DataError``. Nothing is ever unpickled.
"""
from __future__ import annotations

import csv
import gzip
import io
import os
import warnings
import zlib
from pathlib import Path
from typing import IO, Any, Iterable

import pandas as pd

from fairaudit.data.dataset import Dataset
from fairaudit.data.roles import build_schema, listing
from fairaudit.errors import DataError

from fairaudit.data.dataset import MISSING_CATEGORY as MISSING  # the category that stands for a missing value
DELIMITERS = (",", ";", "\t", "|")

# leading bytes of binary formats that users upload by mistake -> what to tell them
_SIGNATURES = {
    b"PK\x03\x04": "a zip archive or Excel workbook; export the sheet as CSV",
    b"PAR1": "a Parquet file; export it as CSV",
    b"\xd0\xcf\x11\xe0": "an old Excel (.xls) file; export the sheet as CSV",
    b"%PDF": "a PDF document",
}


def from_csv(source: str | os.PathLike | IO | bytes, label: str | None = None,
             protected: str | Iterable[str] | None = None, favourable: Any = None,
             name: str | None = None) -> Dataset:
    """Read a CSV (path, file object such as a Streamlit upload, or bytes) into a ``Dataset``.

    ``label``: the outcome column (optional; it must be binary). ``protected``: column name(s), none by default.
    ``favourable``: the label value that is the favourable outcome; inferred only when obvious (1, True, yes).
    ``name`` (its ``.csv`` / ``.gz`` ending dropped) defaults to the file name. For an upload held as bytes, pass the
    uploaded file's name as ``name``: messages and ``Dataset.source`` then show it.
    """
    data, display = _read_bytes(source, name)
    text = _decode(data, display)
    frame = _parse(text, display)
    frame, kinds = _normalise(frame, keep_missing=label)
    schema = build_schema(frame, kinds, label, protected, favourable)
    return Dataset(_stem(name or display), frame, schema, source=display)


def _read_bytes(source: Any, name: str | None) -> tuple[bytes, str]:
    """The raw bytes of ``source`` and the name to show in messages (a path, the file object's name, or
    ``name`` for bytes and unnamed file objects)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        if not path.exists():
            raise DataError(f"file not found: {path}")
        if path.is_dir():
            raise DataError(f"{path} is a directory, not a CSV file")
        try:
            return path.read_bytes(), str(path)
        except OSError as err:
            raise DataError(f"cannot read {path}: {err.strerror or err}") from None
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), name or "uploaded data"
    if hasattr(source, "read"):
        display = str(getattr(source, "name", "") or name or "uploaded file")
        start = source.tell() if getattr(source, "seekable", lambda: False)() else None
        data = source.read()
        if start is not None:
            source.seek(start)  # leave an upload readable again
        return (data.encode("utf-8") if isinstance(data, str) else bytes(data)), display
    raise TypeError(f"from_csv reads a path, a file object or bytes, not {type(source).__name__}")


def _decode(data: bytes, display: str) -> str:
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise DataError(f"{display} is not a valid gzip file") from None
    for signature, what in _SIGNATURES.items():
        if data.startswith(signature):
            raise DataError(f"{display} is not a CSV file: it is {what}")
    if b"\x00" in data:
        raise DataError(f"{display} is not a CSV text file (it holds binary data)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DataError(f"{display} is not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}); "
                        "save it as UTF-8 CSV") from None
    if not text.strip():
        raise DataError(f"{display} is empty: a CSV needs a header row and at least one data row")
    return text


def _delimiter(header_line: str) -> str:
    counts = [(header_line.count(d), -i, d) for i, d in enumerate(DELIMITERS)]
    best = max(counts)
    return best[2] if best[0] > 0 else ","


def _parse(text: str, display: str) -> pd.DataFrame:
    """Check the shape of every row with the csv module, then let pandas type the columns."""
    header_line = next(line for line in text.splitlines() if line.strip())
    sep = _delimiter(header_line)
    reader = csv.reader(io.StringIO(text), delimiter=sep, skipinitialspace=True, strict=True)
    header: list[str] | None = None
    rows = 0
    try:
        for row in reader:
            if not any(field.strip() for field in row):
                continue  # blank line
            if header is None:
                header = row
                continue
            if len(row) != len(header):
                raise DataError(f"{display}, line {reader.line_num}: {len(row)} field{'s' if len(row) != 1 else ''}"
                                f" but the header has {len(header)}")
            rows += 1
    except csv.Error as err:
        raise DataError(f"cannot parse {display}, line {reader.line_num}: {err}") from None
    assert header is not None  # text is not blank
    names = [field.strip() or f"Unnamed: {i}" for i, field in enumerate(header)]
    seen: dict[str, int] = {}
    for i, col in enumerate(names):
        if col in seen:
            raise DataError(f"{display}: column name '{col}' appears twice (columns {seen[col] + 1} and {i + 1}); "
                            "column names must be unique")
        seen[col] = i
    if rows == 0:
        raise DataError(f"{display} has a header ({listing(names, 6)}) but no data rows")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DtypeWarning on mixed columns: they are read as text anyway
            frame = pd.read_csv(io.StringIO(text), sep=sep, header=0, names=names, skipinitialspace=True,
                                skip_blank_lines=True, low_memory=False)
    except (pd.errors.ParserError, ValueError) as err:
        message = " ".join(str(err).split())
        raise DataError(f"cannot parse {display}: {message}") from None
    # a line of blanks only is a blank line above; drop the all-missing row pandas may make of it
    return frame.dropna(how="all").reset_index(drop=True) if len(frame) != rows else frame


def _normalise(frame: pd.DataFrame, keep_missing: str | None) -> tuple[pd.DataFrame, dict[str, str]]:
    """Strip text, fill missing categorical values with "?" (not in column ``keep_missing``: a label's missing
    values are an error, reported by the schema check), and decide each column's kind."""
    frame = frame.copy()
    kinds: dict[str, str] = {}
    for col in frame.columns:
        series = frame[col]
        if pd.api.types.is_bool_dtype(series):
            kinds[col] = "categorical"
        elif pd.api.types.is_numeric_dtype(series) and series.notna().any():
            kinds[col] = "numeric"
        else:
            text = series.astype("str").where(series.notna()).str.strip()
            text = text.mask(text == "")
            frame[col] = (text if col == keep_missing else text.fillna(MISSING)).astype("str")
            kinds[col] = "categorical"
    return frame, kinds


def _stem(display: str) -> str:
    name = Path(display).name
    for suffix in (".gz", ".csv", ".tsv", ".txt"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or "uploaded"
