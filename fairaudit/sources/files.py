"""Files at rest as one log: a CSV or Parquet file, a folder of parts, or a glob — read with pyarrow's readers.

``FileLog(path)`` lists the parts by **one rule** (``find_parts``, also the rule of a followed Parquet folder):
a folder is searched recursively for ``*.csv``, ``*.csv.gz``, ``*.tsv``, ``*.txt``, ``*.parquet``, ``*.pq``; a
glob reads what it matches; in both, a file or folder whose name starts with ``.`` or ``_`` below the folder (or
below the glob's fixed start) is skipped — the marker and temporary files that Spark, Hive and Dask writers leave
(``_SUCCESS``, ``_temporary/``, ``.part-0.crc``) — and the parts are read in natural name order of their paths
(``part-2`` before ``part-10``). It fixes the schema once (``fairaudit.sources.schema``: the stored types of the
first Parquet part that has rows, or the first ``TYPE_ROWS`` data rows of the first CSV part that has rows), and
reads the parts in that order, each one in batches, every batch checked against the schema by
``fairaudit.sources.conform``. ``columns`` names the columns a run uses: only those are typed and read (at most
``fairaudit.base.limits.COLUMNS``; default every column, for a whole dataset); every part must still have the
first part's columns and one format. A Parquet column that is read is left undecoded only where its stored type
proves that no value of it can be refused (``FileLog.checked``).

A CSV part is parsed as every CSV is parsed (``csv_options``): the first file's delimiter (``,`` ``;`` tab ``|``,
the one its header line holds most of), quoted values over several lines, LF, CRLF or CR line ends, a byte-order
mark, blank lines skipped, every cell read as bytes, checked to be UTF-8 text without a NUL byte (``text_cells``:
the header too, ``header_line``) and typed by the schema — so the in-memory, out-of-core, Dask and live routes read
the same values, and refuse the same bytes at the same data row. A ``.csv.gz`` part is inflated by the counting
reader of ``fairaudit.sources.compressed`` (the unpacked-size limit, on every route).

A log read whole into memory (``read_all``) is bounded first by what its Parquet footers declare (rows × columns
read, and uncompressed bytes: ``fairaudit.base.limits.MEMORY_VALUES``, ``MEMORY_MB``), then by the bytes decoded,
counted batch by batch. A log of more than ``fairaudit.base.limits.MANY_PARTS`` parts says so in ``warnings``.

A part's batches come from pyarrow's CSV reader (every cell text) or its Parquet reader, batch by batch without
read-ahead (``pyarrow.dataset``'s scanner reads ahead: the peak memory of a 10 M-row audit went from 327 to 579 MB,
``bench/scale_results.md``). Each part is one Dask partition (``FileLog.read_part``), read on the worker by the
same code.
"""
from __future__ import annotations

import glob as globmod
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from fairaudit.base import limits
from fairaudit.base.errors import DataError
from fairaudit.sources.compressed import check_size, is_gzip_name, open_part
from fairaudit.sources.schema import TYPE_ROWS, LogSchema, from_arrow, infer_text, parse_declared

CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")
READ_ROWS = 1 << 18  # rows per batch read from a part
DELIMITERS = (",", ";", "\t", "|")
HEADER_BYTES = 1 << 20  # the longest header line read
# leading bytes of binary formats given as a CSV by mistake -> what to tell
SIGNATURES = {
    b"PK\x03\x04": "a zip archive or Excel workbook; export the sheet as CSV",
    b"PAR1": "a Parquet file; export it as CSV, or name it .parquet",
    b"\xd0\xcf\x11\xe0": "an old Excel (.xls) file; export the sheet as CSV",
    b"%PDF": "a PDF document",
}


_STREAM_HINT = (f"audit it out of core (--out-of-core on), which reads it in batches, or have whoever runs fairaudit "
                f"raise the limit ({limits.MEMORY_VALUES_ENV}, {limits.MEMORY_MB_ENV})")


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


def hidden(path, root) -> bool:
    """Whether ``path`` is skipped by the parts rule (module doc): a name below ``root`` that starts with ``.`` or
    ``_`` (the file's own, or a folder's between ``root`` and it)."""
    try:
        rel = Path(path).relative_to(root).parts
    except ValueError:
        rel = Path(path).parts[len(Path(root).parts):]
    return any(part.startswith((".", "_")) for part in rel)


def glob_root(pattern: str) -> Path:
    """The fixed start of a glob: its leading path components without a wildcard."""
    fixed = []
    for part in Path(pattern).parts:
        if any(ch in part for ch in "*?["):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def find_parts(item, links: bool = True) -> list[str]:
    """The parts of one folder or glob by the one rule (module doc), in natural name order, maybe none; a file is
    its own one part. ``links=False``: files that are symbolic links are left out (the dashboard's workspace)."""
    text = str(item)
    p = Path(text).expanduser()
    if p.is_dir():
        found = [str(f) for f in p.rglob("*") if file_format(f) and f.is_file() and not hidden(f, p)
                 and (links or not f.is_symlink())]
    elif p.is_file():
        return [str(p)]
    elif any(ch in text for ch in "*?["):
        root = glob_root(text)
        found = [f for f in globmod.glob(text, recursive=True) if file_format(f) and Path(f).is_file()
                 and not hidden(f, root) and (links or not Path(f).is_symlink())]
    else:
        return []
    return sorted(found, key=natural_key)


def list_parts(source) -> list[str]:
    """The parts of ``source`` (a file, a folder, a glob, or a list of them) by the one rule (``find_parts``)."""
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    out: list[str] = []
    for item in items:
        text = str(item)
        p = Path(text).expanduser()
        found = find_parts(item)
        if not found:
            if p.is_dir():
                raise DataError(f"{p} holds no CSV or Parquet file (*.csv, *.csv.gz, *.parquet, *.pq); names "
                                "starting with . or _ are skipped")
            if any(ch in text for ch in "*?["):
                raise DataError(f"no CSV or Parquet file matches {text}; names starting with . or _ are skipped")
            raise DataError(f"file not found: {p}")
        out += found
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
    """The first line of a CSV that is not blank (at most ``HEADER_BYTES`` of it), and how many lines it ends (a
    header after blank lines ends more than one). Its bytes must be UTF-8 text without a NUL byte: anything else is
    one line naming the file (``header_text``); a file that starts as a zip, Parquet, Excel or PDF file says so."""
    if data is not None:
        return header_text(data[: 2 * HEADER_BYTES + 8], str(path))
    try:
        with open_part(path) as f:
            start = b""
            while True:  # read until the header's line end (or ``HEADER_BYTES`` past the blank lines)
                block = f.read(1 << 16)
                start += block
                body = start.lstrip(b"\xef\xbb\xbf \t\r\n")
                if not block or (body and (b"\n" in body or b"\r" in body)) or len(body) > HEADER_BYTES:
                    break
                if len(start) > 64 * HEADER_BYTES:  # a file of blank lines
                    break
    except OSError as err:
        raise DataError(f"cannot read {path}: {err.strerror or err}") from None
    except (EOFError, zlib.error):
        raise DataError(f"{path} is not a valid gzip file") from None
    return header_text(start, str(path))


def header_text(start: bytes, where: str) -> tuple[str, int]:
    """``header_line`` of a CSV's first bytes ``start``."""
    for signature, what in SIGNATURES.items():
        if start.startswith(signature):
            raise DataError(f"{where} is not a CSV file: it is {what}")
    at = 3 if start.startswith(b"\xef\xbb\xbf") else 0
    lines = 0
    while at < len(start):
        ends = [i for i in (start.find(b"\n", at), start.find(b"\r", at)) if i >= 0]
        end = min(ends) if ends else len(start)
        end = min(end, at + HEADER_BYTES)
        line = start[at:end]
        lines += 1
        nxt = end + (2 if start[end:end + 2] == b"\r\n" else 1)
        if line.strip(b" \t\x0b\x0c"):
            return header_decoded(line, where, lines), lines
        at = nxt
    return "", lines


def header_decoded(line: bytes, where: str, number: int) -> str:
    if b"\x00" in line:
        raise DataError(f"{where}: its header (line {number:,}) holds a NUL byte: it is not CSV text (binary data)")
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"{where}: its header (line {number:,}) is not UTF-8 text (byte 0x{line[err.start]:02x} at "
                        f"character {err.start + 1:,}); save the file as UTF-8") from None


def text_cells(table, origin: str, first_row: int = 0, skip=()):
    """``table`` (an Arrow table or record batch of a CSV's cells read as bytes, ``csv_options``) with every cell
    as text, checked: a cell that holds a NUL byte or bytes that are not UTF-8 is refused with its data row
    (``first_row``: the rows of the same file before the table) — the earliest such row, its leftmost such column.
    Every route reads a CSV's cells through here (a file, a part, a Dask partition, a live log's poll). ``skip``:
    columns left as bytes, unchecked (one read only for ``FileLog._closed_quotes``)."""
    import pyarrow as pa
    import pyarrow.compute as pac

    arrays, bad = [], None
    for i, name in enumerate(table.column_names):
        arr = table.column(i)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if name in skip or not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
            arrays.append(arr)
            continue
        nul = pac.match_substring(arr, "\x00")
        first = None
        if pac.any(nul).as_py():
            first = (_first_true(nul), "nul")
        try:
            text = arr.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            text = None
            row = next(j for j, v in enumerate(arr.to_pylist()) if v is not None and not _is_utf8(v))
            if first is None or row < first[0]:
                first = (row, "utf8")
        if first is not None and (bad is None or first[0] < bad[0]):
            bad = (first[0], first[1], name, arr[first[0]].as_py())
        arrays.append(text if text is not None else arr)
    if bad is not None:
        row, what, name, value = bad
        at = f"{origin}, data row {first_row + row + 1:,}: column '{name}'"
        if what == "nul":
            raise DataError(f"{at} holds a NUL byte: a CSV cell is text, not binary data; fix or drop that row")
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataError(f"{at} is not UTF-8 text (byte 0x{value[err.start]:02x}); save the file as UTF-8") \
                from None
    if isinstance(table, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(arrays, names=table.column_names)
    return pa.table(arrays, names=table.column_names)


def _first_true(mask) -> int:
    import numpy as np

    return int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))[0])


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


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
    names (every cell read as bytes, made text by ``text_cells``), given to the reader in place of the header
    line's (``skip``: the lines up to and including the header), so that empty or repeated header cells have the
    names ``unique_names`` gives them."""
    import pyarrow as pa
    import pyarrow.csv as pc

    read = pc.ReadOptions(block_size=block_size, use_threads=False, column_names=list(names or ()) or None,
                          skip_rows=skip if names else 0)
    parse = pc.ParseOptions(delimiter=sep, newlines_in_values=True, invalid_row_handler=handler)
    convert = pc.ConvertOptions(column_types={n: pa.binary() for n in (names or ())}, strings_can_be_null=False,
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
    """A file, folder or glob read as one log (module doc). ``columns``: the columns a run uses (only those are
    typed and read; where one is a name the log lacks, every column is, within the limit, so that the audit's own
    check refuses it naming the log's columns); None: every column."""

    source: object
    declared: object = None
    na_values: tuple = ()
    data: bytes | None = field(default=None, repr=False)  # a CSV's bytes (an upload): ``source`` is its name
    parts: list = field(default_factory=list)
    schema: LogSchema | None = None
    format: str = ""
    sep: str = ","
    first: str = ""  # the first part: the one whose columns every part must have (kept in a one-part copy)
    columns: tuple | None = None
    names: tuple = ()  # the first part's columns (stripped), all of them: every part must have these
    warnings: list = field(default_factory=list)  # what a run should tell (``MANY_PARTS``)
    sized: set = field(default_factory=set, repr=False)  # the .csv.gz parts whose unpacked size was counted

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
        if len(self.parts) > limits.MANY_PARTS:
            self.warnings.append(many_parts(self.name, len(self.parts)))
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

    def _selected(self, names, where: str) -> list[str]:
        """The columns of ``names`` (a part's, stripped) that this log types and reads (``columns``), bounded by
        ``fairaudit.base.limits.COLUMNS``; a declared type must name one of ``names``."""
        declared = parse_declared(self.declared)
        unknown = [c for c in declared if c not in names]
        if unknown:
            from fairaudit.base.text import suggestion

            raise DataError(f"--column-type names column '{unknown[0]}', which {where} does not have"
                            f"{suggestion(unknown[0], list(names))}")
        limit = limits.columns_limit()
        have = set(names)
        lacking = self.columns is not None and any(c not in have for c in self.columns)
        # (a name the log lacks: every column is read, within the limit, so that the audit's own check of that name
        # lists the log's columns and suggests among them exactly as when it reads every column)
        wanted = have if self.columns is None or (lacking and len(names) <= limit) else set(self.columns)
        chosen = [n for n in names if n in wanted]
        if len(chosen) > limit:
            which = (f"has {len(chosen):,} columns" if self.columns is None else
                     f"has {len(names):,} columns, {len(chosen):,} of them read")
            raise DataError(f"{where} {which}, over the limit of {limit:,} columns that one run reads; keep only "
                            f"the columns the audit needs (or have whoever runs fairaudit raise the limit with "
                            f"{limits.COLUMNS_ENV})")
        return chosen or list(names[:1])  # (a batch of no column has no rows)

    def _declared_for(self, chosen) -> dict:
        return {c: k for c, k in parse_declared(self.declared).items() if c in chosen}

    def _fix_schema(self) -> LogSchema:
        if self.format == "parquet":
            return self._parquet_schema()
        import pyarrow as pa

        self.names = tuple(self.stored_names(self.parts[0]))
        for part in self.parts:  # the first part that has rows types the columns (a header-only part does not)
            names = self.stored_names(part) if part != self.parts[0] else list(self.names)
            if part != self.parts[0]:
                from fairaudit.sources.conform import check_columns

                check_columns(names, self.names, part, self.first or self.parts[0])
            chosen = self._selected(names, part)
            rows = []
            count = 0
            for batch in self._raw_batches(part, chosen, block=1 << 20):
                rows.append(batch)
                count += batch.num_rows
                if count >= TYPE_ROWS:
                    break
            table = pa.Table.from_batches(rows, schema=rows[0].schema) if rows else None
            if table is not None and table.num_rows:
                table = table.slice(0, TYPE_ROWS)
                return infer_text(table, part, declared=self._declared_for(chosen), na_values=self.na_values)
        first = self.parts[0]
        if len(self.parts) == 1:
            raise DataError(f"{first} has a header ({', '.join(self.names[:6])}) but no data rows")
        raise DataError(f"{self.name}: none of its {len(self.parts):,} parts has a data row (each has only a header: "
                        f"{', '.join(self.names[:6])})")

    def _parquet_schema(self) -> LogSchema:
        """The stored types of the first Parquet part that has rows (of the first part when none has)."""
        import pyarrow as pa

        fragment = self._fragment(self.parts[0])
        arrow = fragment.physical_schema
        self.names = tuple(str(n).strip() for n in arrow.names)
        where = self.parts[0]
        for part in self.parts:
            frag = fragment if part == self.parts[0] else self._fragment(part)
            rows = _declared_rows(frag)
            if rows is None or rows > 0:
                if part != self.parts[0]:
                    from fairaudit.sources.conform import check_columns

                    check_columns(frag.physical_schema.names, self.names, part, self.first or self.parts[0])
                    arrow, where = frag.physical_schema, part
                break
        chosen = set(self._selected([str(n).strip() for n in arrow.names], where))
        fields = [f for f in arrow if str(f.name).strip() in chosen]
        return from_arrow(pa.schema(fields), where, declared=self._declared_for(chosen), na_values=self.na_values)

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
        """A Parquet part as a ``pyarrow.dataset`` fragment (its ``physical_schema``, its footer's ``metadata``)."""
        import pyarrow as pa
        import pyarrow.dataset as ds

        try:
            import pyarrow.fs as pafs

            fragment = ds.ParquetFileFormat().make_fragment(os.path.abspath(path), filesystem=pafs.LocalFileSystem())
            fragment.physical_schema  # (reads the footer: a file that is no Parquet is refused here)
            return fragment
        except (OSError, pa.ArrowException) as err:
            not_interrupted(err)
            raise DataError(f"cannot read {path}: {' '.join(str(err).split())[:240]}") from None

    def _raw_batches(self, path, columns=None, block=1 << 22, rows=READ_ROWS, as_bytes=(), dictionary=()):
        """A part's batches as stored (CSV: every cell text, parsed by pyarrow's CSV reader one block at a time and
        checked by ``text_cells``, but the ``as_bytes`` columns, left unchecked bytes; a ``.csv.gz`` inflated by
        the counting reader). ``dictionary``: Parquet text columns read as the file stores them, dictionary-encoded
        (the text of every row is never made)."""
        import pyarrow as pa

        shape = RowShape() if self.format == "csv" else None
        opened = None
        try:
            if self.format == "parquet":
                import pyarrow.parquet as pq

                # (pyarrow.dataset's scanner reads ahead: 1.5 × the peak memory of this reader for the same rows)
                yield from pq.ParquetFile(path, read_dictionary=list(dictionary) or None).iter_batches(
                    batch_size=rows, columns=columns, use_threads=False)
                return
            import pyarrow.csv as pc

            names, skip = self._header(path)
            read, parse, convert = csv_options(self.sep, names, shape, max(1 << 16, min(block, rows * 64)), skip)
            if columns is not None:
                convert.include_columns = list(columns)
            if self.data is not None:
                source = pa.BufferReader(self.data)
            elif is_gzip_name(path):
                if path not in self.sized:  # (the whole part counted once, before a row of it is parsed)
                    check_size(path)
                    self.sized.add(path)
                source = opened = open_part(path)
            else:
                source = path
            reader = pc.open_csv(source, read_options=read, parse_options=parse, convert_options=convert)
            first = 0
            for batch in reader:
                yield text_cells(batch, path, first, skip=as_bytes)
                first += batch.num_rows
        except DataError:
            raise
        except (EOFError, zlib.error):
            raise DataError(f"{path} is not a valid gzip file") from None
        except (OSError, pa.ArrowException) as err:
            not_interrupted(err)
            if self.format == "csv":
                raise csv_error(path, err, shape) from None
            raise DataError(f"cannot read {path}: {' '.join(str(err).split())[:240]}") from None
        finally:
            if opened is not None:
                opened.close()

    def part_columns(self, path) -> list[str]:
        """A part's column names (stored), checked against the log's."""
        return self._part_schema(path)[0]

    def _part_schema(self, path) -> tuple[list[str], object]:
        """A part's column names (stored), checked against the first part's, and its Arrow schema (Parquet; None
        for a CSV, whose cells are all text)."""
        from fairaudit.sources.conform import check_columns

        arrow = self._fragment(path).physical_schema if self.format == "parquet" else None
        names = list(arrow.names) if arrow is not None else self.stored_names(path)
        check_columns(names, self.names or self.schema.names, path, self.first or self.parts[0])
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
        read = [stored[c] for c in every]
        extra = ()
        if self.format == "csv" and names[-1] not in read:  # (its last value tells an unclosed quote: bytes)
            read.append(names[-1])
            extra = (names[-1],)
        dictionary = [stored[c] for c in every if encoded and self.format == "parquet"
                      and self.schema.kind(c) == "text"]  # text kept as the file's dictionaries
        for raw in self._raw_batches(path, read, rows=rows, dictionary=dictionary,
                                     **({"as_bytes": extra} if extra else {})):
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
        raw = (value if isinstance(value, bytes) else value.encode("utf-8")).replace(b'"', b'""')
        want = len(raw) + 2
        if self.data is not None:
            tail = self.data[-want:]
        else:
            if is_gzip_name(path):
                tail = b""
                with open_part(path) as f:  # (bounded: the unpacked-size limit)
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
        """Every row in memory (one pandas frame), bounded: by what the Parquet footers declare before a row is
        read, then by the bytes decoded (``fairaudit.base.limits.MEMORY_VALUES``, ``MEMORY_MB``)."""
        import pandas as pd
        import pyarrow as pa

        from fairaudit.sources.conform import to_frame

        wanted = list(columns) if columns is not None else list(self.schema.names)
        self.check_whole(len(wanted))
        limit, held = limits.memory_bytes(), 0
        frames = []
        for b in self.batches(columns):
            held += b.table.nbytes
            if held > limit:
                raise DataError(f"{self.name} takes more than {limits.size_text(limit)} in memory (read up to data row "
                                f"{b.offset + b.table.num_rows:,}), the limit for a log read whole; {_STREAM_HINT}")
            # each batch to pandas as it comes (its Arrow memory freed); text stays Arrow-backed, concat copies none
            frames.append(to_frame(b.table, self.schema, keep_missing))
        if not frames:
            return to_frame(pa.table({}), self.schema, keep_missing)
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        return frame if len(frame.columns) else pd.DataFrame(index=pd.RangeIndex(sum(len(f) for f in frames)))

    def check_whole(self, width: int | None = None) -> None:
        """Refuse (one line) a Parquet log whose footers declare more than a log read whole may hold: rows × the
        ``width`` columns read (default: the schema's) past ``MEMORY_VALUES``, or uncompressed bytes of those
        columns past ``MEMORY_MB`` — before a row is decoded."""
        if self.format != "parquet":
            return
        width = len(self.schema.names) if width is None else max(1, int(width))
        read = set(self.schema.names)
        rows = size = 0
        for path in self.parts:
            more, bigger = footer_size(self._fragment(path).metadata, read)
            rows, size = rows + more, size + bigger
        check_declared(self.name, rows, width, size, len(self.parts) > 1)


def footer_size(metadata, read) -> tuple[int, int]:
    """``(rows, uncompressed bytes of the columns named in read)`` that a Parquet footer declares."""
    size = 0
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            if column.path_in_schema.strip() in read:
                size += max(0, column.total_uncompressed_size or 0)
    return int(metadata.num_rows), size


def check_declared(name: str, rows: int, width: int, size: int, several: bool = False,
                   what: str = _STREAM_HINT) -> None:
    """Refuse (one line) what Parquet footers declare past the limits of a log read whole into memory: ``rows`` ×
    ``width`` columns read past ``MEMORY_VALUES``, ``size`` uncompressed bytes past ``MEMORY_MB`` (``what``:
    what to do instead)."""
    footer = "its Parquet footers" if several else "its Parquet footer"
    values, cap = rows * width, limits.memory_values()
    if values > cap:
        raise DataError(f"{name} declares {rows:,} rows × {width:,} column{'s' if width != 1 else ''} read = "
                        f"{values:,} values ({footer}), over the limit of {cap:,} values for a log read whole into "
                        f"memory; {what}")
    cap = limits.memory_bytes()
    if size > cap:
        raise DataError(f"{name} declares {limits.size_text(size)} uncompressed ({footer}), over the limit of "
                        f"{limits.size_text(cap)} for a log read whole into memory; {what}")




def many_parts(name: str, count: int) -> str:
    """The warning for a log of more than ``MANY_PARTS`` parts."""
    return (f"{name} has {count:,} parts, read one after another (each costs a file open, a schema check and its "
            f"own batches, so many small parts read slowly); merge them into fewer, larger files")


def _declared_rows(fragment) -> int | None:
    try:
        return int(fragment.metadata.num_rows)
    except Exception:  # noqa: BLE001 - a fragment whose footer cannot say: read it
        return None


def content_sha256(log: "FileLog") -> tuple[str, str]:
    """``(hex digest, what it is of)``: SHA-256 of a log's bytes as stored — an upload's bytes, a file's bytes, or
    each part's name and bytes in order for a folder or glob — whatever columns a run reads of it, so that the data a
    record names is the same on every route and for every specification (``fairaudit.sources.fingerprint.of_log``:
    read once per process while the parts are unchanged)."""
    from fairaudit.sources.fingerprint import of_log

    return of_log(log)  # (a Fingerprint: a (digest, of) tuple)
