"""Files at rest as one log: a CSV or Parquet file, a folder of parts, or a glob — read with pyarrow's readers.

``FileLog(path)`` lists the parts in natural name order (``part-2`` before ``part-10``; a folder is searched
recursively for ``*.csv``, ``*.csv.gz``, ``*.parquet``, ``*.pq``), fixes the schema once
(``fairaudit.sources.schema``: a Parquet part's stored types, or the first ``TYPE_ROWS`` data rows of a CSV), and
reads the parts in that order, each one in batches, every batch checked against the schema by
``fairaudit.sources.conform`` — every column, whichever the audit reads (a Parquet column the audit does not read is
left undecoded only where its stored type proves that no value of it can be refused: ``FileLog.checked``). Every
part must have the log's columns and one format; a CSV part is parsed as every CSV is parsed (``csv_options``): the
first file's delimiter (``,`` ``;`` tab ``|``, the one its header line holds most of), quoted values over several
lines, LF, CRLF or CR line ends, a byte-order mark, blank lines skipped, every cell read as text and typed by the
schema — so the in-memory, out-of-core, Dask and live routes read the same values from the same bytes.

A part's batches come from pyarrow's CSV reader (every cell text) or its Parquet reader, batch by batch without
read-ahead (``pyarrow.dataset``'s scanner reads ahead: the peak memory of a 10 M-row audit went from 327 to 579 MB,
``bench/scale_results.md``); a Parquet part's schema is read through ``pyarrow.dataset``. Each part is one Dask
partition (``FileLog.read_part``), read on the worker by the same code.
"""
from __future__ import annotations

import glob as globmod
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from fairaudit.base.errors import DataError
from fairaudit.sources.schema import TYPE_ROWS, LogSchema, from_arrow, infer_text

CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")
READ_ROWS = 1 << 18  # rows per batch read from a part
DELIMITERS = (",", ";", "\t", "|")


def natural_key(path: str):
    """Sort key: digits compared as numbers (``part-2`` before ``part-10``)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(path))]


def file_format(path) -> str | None:
    name = str(path).lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    return None


def list_parts(source) -> list[str]:
    """The parts of ``source`` (a file, a folder, a glob, or a list of them) in natural name order."""
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    out: list[str] = []
    for item in items:
        text = str(item)
        p = Path(text).expanduser()
        if p.is_dir():
            found = [str(f) for f in p.rglob("*") if f.is_file() and file_format(f)
                     and not any(part.startswith((".", "_")) for part in f.relative_to(p).parts)]
            if not found:
                raise DataError(f"{p} holds no CSV or Parquet file (*.csv, *.csv.gz, *.parquet, *.pq)")
            out += sorted(found, key=natural_key)
        elif p.is_file():
            out.append(str(p))
        elif any(ch in text for ch in "*?["):
            found = [f for f in globmod.glob(text, recursive=True) if Path(f).is_file() and file_format(f)]
            if not found:
                raise DataError(f"no CSV or Parquet file matches {text}")
            out += sorted(found, key=natural_key)
        else:
            raise DataError(f"file not found: {p}")
    formats = {file_format(f) for f in out}
    if None in formats:
        bad = next(f for f in out if file_format(f) is None)
        raise DataError(f"{bad} is neither CSV nor Parquet (.csv, .csv.gz, .parquet, .pq)")
    if len(formats) > 1:
        raise DataError("a log's parts are all CSV or all Parquet, not both: "
                        f"{next(f for f in out if file_format(f) == 'csv')} and "
                        f"{next(f for f in out if file_format(f) == 'parquet')}")
    return out


def header_line(path, data: bytes | None = None) -> tuple[str, int]:
    """The first line of a CSV that is not blank (at most 1 MB of it), and how many lines it ends (a header after
    blank lines ends more than one)."""
    import gzip
    import io

    line, lines = "", 0
    opener = gzip.open if str(path).lower().endswith(".gz") else open
    try:
        f = (io.TextIOWrapper(io.BytesIO(data[: 1 << 21]), encoding="utf-8-sig", errors="replace", newline="")
             if data is not None else opener(path, "rt", encoding="utf-8-sig", errors="replace", newline=""))
        with f:
            while not line.strip():
                line = f.readline(1 << 20)
                if not line:
                    break
                lines += 1
    except OSError as err:
        raise DataError(f"cannot read {path}: {err.strerror or err}") from None
    return line, lines


def delimiter(line: str) -> str:
    counts = [(line.count(d), -i, d) for i, d in enumerate(DELIMITERS)]
    best = max(counts)
    return best[2] if best[0] > 0 else ","


class RowShape:
    """pyarrow's invalid-row handler: a line of blanks is skipped, any other row whose field count differs from the
    header's is remembered and stops the read (``csv_error`` words it)."""

    def __init__(self):
        self.bad = None

    def __call__(self, row):
        if not (row.text or "").strip(" \t\r\n"):
            return "skip"
        if self.bad is None:
            self.bad = row
        return "error"


def csv_options(sep: str, names=None, handler=None, block_size: int = 1 << 22, skip: int = 0):
    """``(ReadOptions, ParseOptions, ConvertOptions)``: every CSV is read so (module doc); ``names``: the column
    names (all read as text), given to the reader in place of the header line's (``skip``: the lines up to and
    including the header), so that empty or repeated header cells have the names ``unique_names`` gives them."""
    import pyarrow as pa
    import pyarrow.csv as pc

    read = pc.ReadOptions(block_size=block_size, use_threads=False, column_names=list(names or ()) or None,
                          skip_rows=skip if names else 0)
    parse = pc.ParseOptions(delimiter=sep, newlines_in_values=True, invalid_row_handler=handler)
    convert = pc.ConvertOptions(column_types={n: pa.string() for n in (names or ())}, strings_can_be_null=False,
                                quoted_strings_can_be_null=False, null_values=[])
    return read, parse, convert


def not_interrupted(err) -> None:
    """Ctrl-C while Arrow reads cancels the read with ``ArrowCancelled``: that is an interrupt, never bad input."""
    import pyarrow as pa

    if isinstance(err, pa.ArrowCancelled):
        raise KeyboardInterrupt from None


def csv_error(where: str, err, shape: RowShape | None) -> DataError:
    """The one line for a CSV that pyarrow could not parse."""
    row = None if shape is None else shape.bad
    if row is not None:
        at = f", data row {row.number - 1:,}" if row.number is not None else ""
        text = (row.text or "")[:60]
        return DataError(f"{where}{at}: {row.actual_columns} field{'s' if row.actual_columns != 1 else ''} but the "
                         f"header has {row.expected_columns} ({text!r}); every row needs as many fields as the header")
    message = " ".join(str(err).split())
    message = message.replace("CSV parse error: ", "")
    return DataError(f"cannot parse {where}: {message[:240]}")


def _system_pool() -> None:
    """Arrow allocates with the C library's allocator, which gives freed blocks back: Arrow's default pool keeps
    them, and a CSV read whole into memory then peaked at 5.7 × its size instead of ~4 × (bench/upload_memory.py).
    ``ARROW_DEFAULT_MEMORY_POOL`` set by the user wins."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    import pyarrow as pa

    if pa.default_memory_pool().backend_name != "system":
        pa.set_memory_pool(pa.system_memory_pool())


@dataclass
class Batch:
    """A conformed batch: its Arrow table, the part it came from and its first row there (from 0), and the rows of
    the whole log before it."""

    table: object
    origin: str
    first_row: int
    offset: int


@dataclass
class FileLog:
    """A file, folder or glob read as one log (module doc)."""

    source: object
    declared: object = None
    na_values: tuple = ()
    data: bytes | None = field(default=None, repr=False)  # a CSV's bytes (an upload): ``source`` is its name
    parts: list = field(default_factory=list)
    schema: LogSchema | None = None
    format: str = ""
    sep: str = ","
    first: str = ""  # the first part: the one whose columns every part must have (kept in a one-part copy)

    def __post_init__(self):
        _system_pool()
        if self.data is not None:
            self.parts, self.format = [str(self.source)], "csv"
        else:
            self.parts = list_parts(self.source)
            self.format = file_format(self.parts[0])
        self.first = self.parts[0]
        if self.format == "csv":
            self.sep = delimiter(header_line(self.parts[0], self.data)[0])
        self.schema = self._fix_schema()

    @property
    def name(self) -> str:
        if len(self.parts) == 1:
            return self.parts[0]
        return str(self.source) if not isinstance(self.source, (list, tuple)) else self.parts[0]

    @property
    def stem(self) -> str:
        p = Path(self.parts[0] if len(self.parts) == 1 else str(self.source).rstrip("/\\*"))
        name = p.name
        for suffix in (".gz", ".csv", ".tsv", ".txt", ".parquet", ".pq"):
            if name.lower().endswith(suffix):
                name = name[: -len(suffix)]
        return name or "log"

    # ---- the schema, once ----------------------------------------------------------------------------------

    def _fix_schema(self) -> LogSchema:
        first = self.parts[0]
        if self.format == "parquet":
            return from_arrow(self._fragment(first).physical_schema, first, declared=self.declared,
                              na_values=self.na_values)
        import pyarrow as pa

        rows = []
        count = 0
        for batch in self._raw_batches(first, block=1 << 20):
            rows.append(batch)
            count += batch.num_rows
            if count >= TYPE_ROWS:
                break
        table = pa.Table.from_batches(rows, schema=rows[0].schema) if rows else None
        if table is None or table.num_rows == 0:
            raise DataError(f"{first} has a header ({', '.join(self.stored_names(first)[:6])}) but no data rows")
        table = table.slice(0, TYPE_ROWS)
        return infer_text(table, first, declared=self.declared, na_values=self.na_values)

    def stored_names(self, path) -> list[str]:
        """A CSV part's column names as its header line writes them (empty cells named ``Unnamed: <i>``)."""
        return self._header(path)[0]

    def _header(self, path) -> tuple[list[str], int]:
        import csv

        line, lines = header_line(path, self.data)
        if not line.strip():
            raise DataError(f"{path} is empty: a CSV needs a header row and at least one data row")
        raw = next(csv.reader([line.rstrip("\r\n")], delimiter=self.sep, skipinitialspace=True))
        return [n.strip() or f"Unnamed: {i}" for i, n in enumerate(raw)], lines

    # ---- reading -----------------------------------------------------------------------------------------

    def _fragment(self, path):
        import pyarrow as pa
        import pyarrow.dataset as ds

        try:
            return next(iter(ds.dataset(path, format="parquet").get_fragments()))
        except (OSError, pa.ArrowException) as err:
            not_interrupted(err)
            raise DataError(f"cannot read {path}: {' '.join(str(err).split())[:240]}") from None

    def _raw_batches(self, path, columns=None, block=1 << 22, rows=READ_ROWS):
        """A part's batches as stored (CSV: every cell text, parsed by pyarrow's CSV reader one block at a time)."""
        import pyarrow as pa

        shape = RowShape() if self.format == "csv" else None
        try:
            if self.format == "parquet":
                import pyarrow.parquet as pq

                # (pyarrow.dataset's scanner reads ahead: 1.5 × the peak memory of this reader for the same rows)
                yield from pq.ParquetFile(path).iter_batches(batch_size=rows, columns=columns, use_threads=False)
                return
            import pyarrow.csv as pc

            names, skip = self._header(path)
            read, parse, convert = csv_options(self.sep, names, shape, max(1 << 16, min(block, rows * 64)), skip)
            if columns is not None:
                convert.include_columns = list(columns)
            source = pa.BufferReader(self.data) if self.data is not None else path
            reader = pc.open_csv(source, read_options=read, parse_options=parse, convert_options=convert)
            for batch in reader:
                yield batch
        except DataError:
            raise
        except (OSError, pa.ArrowException) as err:
            not_interrupted(err)
            if self.format == "csv":
                raise csv_error(path, err, shape) from None
            raise DataError(f"cannot read {path}: {' '.join(str(err).split())[:240]}") from None

    def part_columns(self, path) -> list[str]:
        """A part's column names (stored), checked against the log's."""
        return self._part_schema(path)[0]

    def _part_schema(self, path) -> tuple[list[str], object]:
        """A part's column names (stored), checked against the log's, and its Arrow schema (Parquet; None for a
        CSV, whose cells are all text)."""
        from fairaudit.sources.conform import check_columns

        arrow = self._fragment(path).physical_schema if self.format == "parquet" else None
        names = list(arrow.names) if arrow is not None else self.stored_names(path)
        check_columns(names, self.schema, path, self.first or self.parts[0])
        return names, arrow

    def checked(self, path, columns) -> list[str]:
        """The log's columns that reading ``columns`` of the part ``path`` decodes (``_checked``)."""
        return self._checked(*self._part_schema(path), columns)

    def _checked(self, names, arrow, columns) -> list[str]:
        """The log's columns that reading ``columns`` of a part (``names``, ``arrow``: ``_part_schema``'s) decodes
        (in the log's order): every column is checked, whichever the audit reads, so that a row fits or not
        whatever is read of it; a column that is not read is left undecoded only where the part's stored type
        proves that none of its values can be refused (``fairaudit.sources.conform.fits_unread``; Parquet only: a
        CSV's cells are all text, typed here). What the user is told about a file is so the same whatever the
        audit reads: the same error at the same row, or none (a refused value stops the audit: no row is dropped)."""
        from fairaudit.sources.conform import fits_unread

        every = list(self.schema.names)
        if arrow is None or columns is None:
            return every
        wanted = set(columns)
        field = {n.strip(): arrow.field(i) for i, n in enumerate(names)}
        out = [c for c in every if c in wanted
               or not fits_unread(field[c].type, self.schema.kind(c), field[c].nullable)]
        return out or every[:1]  # (a batch of no column has no rows)

    def read_part(self, path, columns=None, rows: int = READ_ROWS, offset: int = 0, encoded: bool = False):
        """The conformed ``Batch``es of one part (``columns``: the log's names to read; default all; ``encoded``:
        dictionary-encoded text stays so, ``fairaudit.sources.conform.conform``). Every column is checked
        (``checked``: those whose stored type cannot prove it are decoded too)."""
        from fairaudit.sources.conform import conform

        names, arrow = self._part_schema(path)
        stored = {n.strip(): n for n in names}
        wanted = list(columns) if columns is not None else list(self.schema.names)
        first = 0
        last = None
        every = self._checked(names, arrow, wanted)
        for raw in self._raw_batches(path, [stored[c] for c in every], rows=rows):
            last = raw
            table = conform(raw, self.schema, origin=path, first_row=first, columns=every,
                            text=self.format == "csv", encoded=encoded)
            yield Batch(table.select(wanted), path, first, offset + first)
            first += raw.num_rows
        if self.format == "csv" and last is not None and last.num_rows:
            self._closed_quotes(path, last, first, names[-1])

    def _closed_quotes(self, path, last, rows: int, column: str) -> None:
        """pyarrow reads a quote that is never closed as a value running to the end of the file: refuse it as the
        csv module does. Such a value is the file's last, and the file's bytes end with its opening quote and
        the value itself (a closed one ends with its closing quote, an unquoted one has no quote before it)."""
        value = last.column(column)[last.num_rows - 1].as_py() or ""
        raw = value.replace('"', '""').encode("utf-8")
        want = len(raw) + 2
        if self.data is not None:
            tail = self.data[-want:]
        else:
            import gzip

            if str(path).lower().endswith(".gz"):
                tail = b""
                with gzip.open(path, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        tail = (tail + block)[-want:]
            else:
                with open(path, "rb") as f:
                    f.seek(max(0, os.path.getsize(path) - want))
                    tail = f.read()
        opened = (b'"' + raw) if raw else (self.sep.encode() + b'"')
        if tail.endswith(opened) and not (raw and tail.endswith(b'""' + raw) and not raw.startswith(b'"')):
            raise DataError(f"cannot parse {path}: a quoted value opened in data row {rows:,} is never closed; "
                            "close its quote")

    def batches(self, columns=None, rows: int = READ_ROWS, encoded: bool = False):
        """Every conformed ``Batch`` of the log, part after part, in order (``encoded``: ``read_part``'s)."""
        offset = 0
        for path in self.parts:
            n = 0
            for batch in self.read_part(path, columns, rows, offset, encoded=encoded):
                n = batch.first_row + batch.table.num_rows
                yield batch
            offset += n

    def frames(self, columns=None, rows: int = READ_ROWS, keep_missing=()):
        """``(frame, batch)`` of every batch: the batch as the pandas frame the engines read."""
        from fairaudit.sources.conform import to_frame

        for batch in self.batches(columns, rows):
            yield to_frame(batch.table, self.schema, keep_missing), batch

    def read_all(self, columns=None, keep_missing=()):
        """Every row in memory (one pandas frame)."""
        import pandas as pd
        import pyarrow as pa

        from fairaudit.sources.conform import to_frame

        # each batch to pandas as it comes (its Arrow memory freed); text stays Arrow-backed, so concat copies none
        frames = [to_frame(b.table, self.schema, keep_missing) for b in self.batches(columns)]
        if not frames:
            return to_frame(pa.table({}), self.schema, keep_missing)
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        return frame if len(frame.columns) else pd.DataFrame(index=pd.RangeIndex(sum(len(f) for f in frames)))
