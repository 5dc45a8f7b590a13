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

import codecs
import csv
import io
import os
import re
import warnings
import zlib
from pathlib import Path
from typing import IO, Any, Iterable

import numpy as np
import pandas as pd

from fairaudit.data.dataset import Dataset
from fairaudit.data.gzipped import gunzip
from fairaudit.data.roles import build_schema, listing
from fairaudit.errors import DataError

from fairaudit.data.dataset import MISSING_CATEGORY as MISSING  # the category that stands for a missing value
DELIMITERS = (",", ";", "\t", "|")
PEEK_ROWS = 10_000  # rows read first to find the text columns

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

    Memory: the bytes are parsed where they are (never decoded into one big string), pandas reads them in chunks,
    and the text columns are cleaned one at a time in place; the peak is about 2–3 × the file's size
    (``bench/upload_memory.py``).
    """
    data, display = _read_bytes(source, name)
    data = _check_bytes(data, display)
    frame = _parse(data, display)
    del data
    kinds = _normalise(frame, keep_missing=label)
    _refuse_infinite(frame, kinds, display)
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


_CHUNK = 1 << 20
_NON_BLANK = re.compile(rb"[^\s]")


def _check_bytes(data: bytes, display: str) -> bytes:
    """The CSV's bytes (gunzipped), checked to be non-empty UTF-8 text without building a string of them."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gunzip(data, display)  # bounded: refused once it unpacks past the limit
        except (OSError, EOFError, zlib.error):
            raise DataError(f"{display} is not a valid gzip file") from None
    for signature, what in _SIGNATURES.items():
        if data.startswith(signature):
            raise DataError(f"{display} is not a CSV file: it is {what}")
    if b"\x00" in data:
        raise DataError(f"{display} is not a CSV text file (it holds binary data)")
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for offset in range(0, len(data), _CHUNK):  # validate piecewise: a 1 MB string at a time, not the file
        try:
            decoder.decode(view[offset:offset + _CHUNK], final=offset + _CHUNK >= len(data))
        except UnicodeDecodeError as err:
            at = offset + err.start
            if at < offset:  # the bad sequence started in the previous chunk
                at = offset - len(decoder.getstate()[0]) + err.start
            at = max(at, 0)
            raise DataError(f"{display} is not UTF-8 text (byte 0x{data[at]:02x} at offset {at}); "
                            "save it as UTF-8 CSV") from None
    body = data[3:] if data.startswith(codecs.BOM_UTF8) else data
    if _NON_BLANK.search(body) is None:
        raise DataError(f"{display} is empty: a CSV needs a header row and at least one data row")
    return data


def _text(data: bytes) -> io.TextIOWrapper:
    """The bytes as a text stream (no copy of the bytes; a byte-order mark is skipped)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")


def _delimiter(header_line: str) -> str:
    counts = [(header_line.count(d), -i, d) for i, d in enumerate(DELIMITERS)]
    best = max(counts)
    return best[2] if best[0] > 0 else ","


def _parse(data: bytes, display: str) -> pd.DataFrame:
    """Check the shape of every row with the csv module (streaming), then let pandas type the columns."""
    header_line = next(line for line in _text(data) if line.strip())
    sep = _delimiter(header_line)
    reader = csv.reader(_text(data), delimiter=sep, skipinitialspace=True, strict=True)
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
    assert header is not None  # the data is not blank
    names = [field.strip() or f"Unnamed: {i}" for i, field in enumerate(header)]
    seen: dict[str, int] = {}
    for i, col in enumerate(names):
        if col in seen:
            raise twice(display, col, seen[col], i)
        seen[col] = i
    if rows == 0:
        raise DataError(f"{display} has a header ({listing(names, 6)}) but no data rows")
    # explicit dtypes: a column that is text in the first rows is text in the whole file, so it is read as a
    # pandas category (small integer codes instead of one string per cell) and turned back into text column by
    # column in _normalise; the other columns are typed by pandas
    peek = _read_frame(data, display, sep, names, nrows=PEEK_ROWS)
    dtype = {col: "category" for col in peek.columns if isinstance(peek[col].dtype, pd.StringDtype)}
    del peek
    frame = _read_frame(data, display, sep, names, dtype=dtype or None)
    # a column typed differently in two chunks (numbers, then text), or a category pandas read as numbers, is
    # read again as plain text: the types are then those of a whole-column read
    mixed = [col for col in frame.columns if _retype(frame[col])]
    if mixed:
        del frame
        frame = _read_frame(data, display, sep, names, dtype={**dtype, **{col: "str" for col in mixed}})
    # a line of blanks only is a blank line above; drop the all-missing row pandas may make of it
    return frame.dropna(how="all").reset_index(drop=True) if len(frame) != rows else frame


def twice(display: str, col: str, first: int, second: int) -> DataError:
    """A column name that appears twice (0-based positions)."""
    return DataError(f"{display}: column name '{col}' appears twice (columns {first + 1} and {second + 1}); column "
                     "names must be unique")


def _retype(series: pd.Series) -> bool:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return not isinstance(series.cat.categories.dtype, pd.StringDtype) and len(series.cat.categories) > 0
    return series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty",
                                                                                          "boolean")


def _read_frame(data: bytes, display: str, sep: str, names: list[str], dtype=None,
                nrows: int | None = None) -> pd.DataFrame:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DtypeWarning on mixed columns: they are read again as text
            return pd.read_csv(io.BytesIO(data), encoding="utf-8-sig", sep=sep, header=0, names=names,
                               skipinitialspace=True, skip_blank_lines=True, low_memory=True, engine="c",
                               dtype=dtype, nrows=nrows)
    except (pd.errors.ParserError, ValueError) as err:
        message = " ".join(str(err).split())
        raise DataError(f"cannot parse {display}: {message}") from None


def _normalise(frame: pd.DataFrame, keep_missing: str | None) -> dict[str, str]:
    """Strip text, fill missing categorical values with "?" (not in column ``keep_missing``: a label's missing
    values are an error, reported by the schema check), and decide each column's kind. Works in place, one
    column at a time (the frame is this module's own); text is cleaned once per distinct value, not per cell."""
    kinds: dict[str, str] = {}
    for col in list(frame.columns):
        series = frame[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            frame[col] = _clean_text(series, fill=None if col == keep_missing else MISSING)
            kinds[col] = "categorical"
        elif pd.api.types.is_bool_dtype(series):
            kinds[col] = "categorical"
        elif pd.api.types.is_numeric_dtype(series) and series.notna().any():
            kinds[col] = "numeric"
        else:
            frame[col] = _clean_text(series, fill=None if col == keep_missing else MISSING)
            kinds[col] = "categorical"
    return kinds


def _clean_text(series: pd.Series, fill: str | None) -> pd.Series:
    """The column as text: values stripped, missing or empty ones ``fill`` (None: left missing)."""
    cat = series if isinstance(series.dtype, pd.CategoricalDtype) else series.astype("category")
    labels = cat.cat.categories.astype("str").str.strip().to_numpy(dtype=object, na_value=None)
    labels[labels == ""] = fill
    labels = np.append(labels, fill)  # code -1 (missing) picks the last entry
    values = labels[cat.cat.codes.to_numpy()]
    return pd.Series(pd.array(values, dtype="str"), index=series.index, name=series.name)


def _stem(display: str) -> str:
    name = Path(display).name
    for suffix in (".gz", ".csv", ".tsv", ".txt"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or "uploaded"


def _refuse_infinite(frame: pd.DataFrame, kinds, display: str) -> None:
    """An ``inf`` in a numeric column is no measurement: a model standardising it scores every row NaN and
    decides 0 for everyone, which a parity spec then certifies. Refuse it, naming the column and row."""
    found = first_infinite(frame, [col for col, kind in kinds.items() if kind == "numeric"])
    if found is not None:
        col, value, at, count = found
        raise infinite(display, col, value, at + 1, count - 1)


def first_infinite(frame: pd.DataFrame, columns) -> tuple | None:
    """``(column, value, position, count)`` of the first of ``columns`` that holds an infinite number (``position``:
    the first one's row in ``frame``, from 0; ``count``: how many it holds), or None."""
    for col in columns:
        values = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = np.flatnonzero(np.isinf(values))
        if len(bad):
            return col, float(values[bad[0]]), int(bad[0]), len(bad)
    return None


def infinite(display: str, col: str, value: float, row: int, more: int) -> DataError:
    """The refusal of an infinite number (``row``: the first one's data row, counted from 1)."""
    return DataError(f"{display}: column '{col}' holds an infinite value ({value:g}) in data row {row:,}"
                     f"{f' and {more:,} more' if more > 0 else ''}; fairaudit needs finite numbers: fix or drop "
                     "those rows")
