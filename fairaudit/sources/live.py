"""Live sources: logs read as they grow, one poll at a time (the growing kind of ``fairaudit.sources`` source).

Three kinds of log (``open_log``):

* a CSV file that a deployed model appends lines to (``CsvTail``): the header is read once; each poll reads the
  bytes appended since the last one and parses the complete records (a partial last line waits for the next poll;
  when the watch ends by the idle timeout, a last line without its line end is read as the file at rest reads it,
  or refused if it lacks fields); a file that shrinks (truncated), is replaced by another file under its name
  (rotated) or is rewritten in place (the first ``HEAD_BYTES`` read, or the ``TAIL_BYTES`` before the offset read
  so far, changed: old and new rows would mix) is an error; a compressed ``.gz`` file cannot grow and is refused;
* a directory of Parquet files (``ParquetDir``): each new Parquet file is read once, found by the rule of a folder
  at rest (``fairaudit.sources.files.find_parts``: sub-folders searched, names starting with ``.`` or ``_``
  skipped) in natural name order (``part-2`` before ``part-10``; a writer should write a file under a hidden name
  and rename it when complete; a file that cannot be read yet is retried at the next poll); a new file whose name
  sorts before one already read is an error (its rows would arrive out of order), and so is a CSV file among them;
  each file is bounded by what its footer declares before it is read whole
  (``fairaudit.sources.files.check_declared``), and a poll takes new files until it holds ``READ_ROWS`` rows;
* ``-``, JSON lines on standard input (``JsonLines``): one JSON object per line, read by a thread so that
  the polls never block; the end of the input ends the log.

Every log goes through the one ingestion pipeline of a file at rest (``fairaudit.sources``), so a complete log
audited live gives the rows, the types, the values and the refusals that ``fairaudit audit --data`` gives:

* the **schema** is fixed once, by the **first poll** that holds rows: a CSV log's first rows (up to
  ``TYPE_ROWS``) parsed as text by pyarrow's CSV reader with the options every CSV is read with
  (``fairaudit.sources.files.csv_options``) and typed by ``infer_text``; a Parquet folder's first file's stored types
  (``from_arrow``); the first JSON records' types (``infer_values``). A declared type (``declared``) or
  ``na_values`` apply as at rest;
* **every poll** is parsed the same way and checked by ``fairaudit.sources.conform`` with its origin (the CSV log,
  the Parquet file, the JSON lines) and its first row: a value that does not fit its column's type (``yes`` in a
  column of whole numbers, ``"1"`` stored as text in a Parquet file whose first file stored numbers, ``inf``) is an
  error naming the file and its data row — never a value coerced, counted as missing or as unfavourable; a Parquet
  file or a JSON record with a column the log does not have (a renamed column) is refused too. The error ends the
  live audit: the verdict so far is kept marked incomplete (``failed``), never as a final answer.

``follow(source, ...)`` yields each poll's new rows until the log ends, ``stop`` is set (an interrupt, the
dashboard's Stop) or nothing arrived for ``idle_timeout`` seconds (``END_TEXT`` says which). What is audited of them,
and how, is the monitor's (``fairaudit.engines.monitor.livelog``).
"""
from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections import namedtuple
from pathlib import Path
from typing import Iterator

import pandas as pd

from fairaudit.base.errors import DataError, FairauditError
from fairaudit.sources.files import not_interrupted

POLL_SECONDS = 0.2
HEAD_BYTES = 1 << 16  # a live CSV's first bytes, kept to tell a file rewritten in place
TAIL_BYTES = 1 << 12  # and the bytes before the offset read so far
JSON_ORIGIN = "the JSON lines"
_BOM = b"\xef\xbb\xbf"


_Row = namedtuple("_Row", "number actual_columns expected_columns text")


class CsvTail:
    """A CSV file read as it grows (module doc)."""

    kind = "CSV log"

    def __init__(self, path, declared=None, na_values=(), columns=None):
        self.path = Path(path)
        self.wanted = columns  # the only columns typed and read (``read_columns``; None: every one)
        self.origin = str(self.path)  # what messages name, as ``fairaudit audit --data`` names the file
        try:
            self.fh = open(self.path, "rb")
        except OSError as err:
            raise FairauditError(f"cannot open the log {self.path}: {err.strerror or err}") from None
        self.ino = os.fstat(self.fh.fileno()).st_ino
        self.pos = 0
        self.header: bytes | None = None
        self.names: list[str] | None = None  # the header's column names (stripped; an empty one "Unnamed: <i>")
        self.sep = ","
        self.buffer = b""
        self.started = False  # the file's first bytes were read (a byte-order mark skipped)
        self.declared, self.na_values = declared, tuple(na_values or ())
        self.schema = None  # fixed by the first poll that holds rows
        self.rows = 0  # data rows of the log read so far
        self.ended = False  # a file never ends: the idle timeout or an interrupt ends the watch
        self.head = b""  # the file's first bytes read (up to HEAD_BYTES): a rewrite in place changes them
        self.lines = 0  # lines taken before and with the header

    @property
    def columns(self) -> list[str] | None:
        return None if self.names is None else list(self.names)

    def poll(self) -> pd.DataFrame | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise FairauditError(f"the log {self.path} was removed or rotated after {self.pos:,} bytes had been "
                                 "read; restart the audit on the new file") from None
        if st.st_ino != self.ino:
            raise FairauditError(f"the log {self.path} was rotated (replaced by another file) after {self.pos:,} "
                                 "bytes had been read; restart the audit on the new file")
        if st.st_size < self.pos:
            raise FairauditError(f"the log {self.path} was truncated (it has {st.st_size:,} bytes, {self.pos:,} had "
                                 "been read); restart the audit on the new file")
        self._same_bytes()
        data = self.fh.read(st.st_size - self.pos) if st.st_size > self.pos else b""
        self.pos += len(data)
        self.buffer += data
        if len(self.head) < HEAD_BYTES and data:
            self.head = (self.head + data)[:HEAD_BYTES]
        self.tail = (getattr(self, "tail", b"") + data)[-TAIL_BYTES:]
        if self.header is None and not self._take_header():
            return None
        cut = record_end(self.buffer, self.sep)
        if cut < 0:
            return None
        body, self.buffer = self.buffer[:cut + 1], self.buffer[cut + 1:]
        return self._rows(body)

    def _same_bytes(self) -> None:
        """Refuse a log rewritten in place since the last poll: the first bytes read, or those just before the
        offset read so far, are no longer there (a rewrite that keeps both, and changes only bytes between them,
        is not seen)."""
        if not self.pos:
            return
        tail = getattr(self, "tail", b"")
        now_head = os.pread(self.fh.fileno(), len(self.head), 0)
        now_tail = os.pread(self.fh.fileno(), len(tail), self.pos - len(tail)) if tail else b""
        if now_head != self.head or now_tail != tail:
            where = "its first bytes" if now_head != self.head else f"the bytes before byte {self.pos:,}"
            raise FairauditError(f"the log {self.path} was rewritten in place ({where} changed) after {self.pos:,} "
                                 "bytes had been read: old and new rows would mix; restart the audit on the new file")

    def finish(self) -> pd.DataFrame | None:
        """The log has ended (the idle timeout): its last record without a line end, read as the file at rest reads
        it — a complete one is a row, one with fewer fields than the header (a line cut short) or a quoted value
        never closed is refused, naming its data row."""
        if self.header is None or not self.buffer.strip():
            return None
        rest, self.buffer = self.buffer, b""
        spans = quoted_spans(rest, self.sep)
        if spans and spans[-1][1] < 0:
            raise DataError(f"cannot parse {self.origin}: a quoted value opened in data row {self.rows + 1:,} is never "
                            "closed; close its quote")
        return self._rows(rest)

    def _take_header(self) -> bool:
        """The header line, once it is complete (a byte-order mark and blank lines before it skipped, as at rest;
        LF, CRLF or CR line ends)."""
        from fairaudit.sources.files import SIGNATURES, delimiter, header_decoded

        if not self.started:  # the file's first bytes: a byte-order mark, maybe; a binary file's signature
            if len(self.buffer) < 4 and any(s.startswith(self.buffer) for s in (_BOM, *SIGNATURES)):
                return False
            for signature, what in SIGNATURES.items():
                if self.buffer.startswith(signature):
                    raise DataError(f"{self.origin} is not a CSV file: it is {what}")
            if self.buffer.startswith(_BOM):
                self.buffer = self.buffer[len(_BOM):]
            self.started = True
        while True:
            ends = [i for i in (self.buffer.find(b"\n"), self.buffer.find(b"\r")) if i >= 0]
            if not ends:
                return False
            cut = min(ends)
            line = self.buffer[:cut]
            self.buffer = self.buffer[cut + (2 if self.buffer[cut:cut + 2] == b"\r\n" else 1):]
            self.lines += 1
            if not line.strip(b" \t\x0b\x0c"):
                continue  # a blank line before the header
            text = header_decoded(line, self.origin, self.lines)  # (UTF-8 without a NUL byte, as at rest)
            self.header = line
            self.sep = delimiter(text)
            self.names = header_names(text, self.sep)
            return True

    def _rows(self, body: bytes) -> pd.DataFrame | None:
        """The rows of ``body`` (complete records): parsed as text as every CSV is parsed, the schema fixed by the
        first rows, checked against it (``conform``) with their rows in the log."""
        import pyarrow as pa
        import pyarrow.csv as pc

        from fairaudit.sources.conform import conform, to_frame
        from fairaudit.sources.files import RowShape, csv_error, csv_options, text_cells
        from fairaudit.sources.schema import TYPE_ROWS, infer_text

        if not body.strip(b" \t\r\n"):
            return None
        shape = RowShape()
        read, parse, convert = csv_options(self.sep, self.names, shape, max(1 << 20, min(len(body) + 1, 1 << 26)))
        try:
            table = pc.read_csv(pa.py_buffer(body), read_options=read, parse_options=parse, convert_options=convert)
        except DataError:
            raise
        except (OSError, pa.ArrowException) as err:
            not_interrupted(err)
            if shape.bad is not None:  # its data row in the log, as the file at rest names it
                bad = shape.bad
                number = None if bad.number is None else self.rows + bad.number + 1
                shape.bad = _Row(number, bad.actual_columns, bad.expected_columns, bad.text)
            raise csv_error(self.origin, err, shape) from None
        if table.num_rows == 0:
            return None
        kept = read_columns([str(n).strip() for n in table.column_names], self.wanted)
        table = table.select([i for i, n in enumerate(table.column_names) if str(n).strip() in kept])
        table = text_cells(table, self.origin, self.rows)  # (a NUL byte or bytes not UTF-8: refused, as at rest)
        if self.schema is None:
            self.schema = infer_text(table.slice(0, TYPE_ROWS), self.origin, declared=self.declared,
                                     na_values=self.na_values)
        conformed = conform(table, self.schema, origin=self.origin, first_row=self.rows, columns=self.schema.names,
                            text=True)
        self.rows += table.num_rows
        return to_frame(conformed, self.schema)

    def close(self) -> None:
        self.fh.close()


def header_names(line: str, sep: str) -> list[str]:
    """A CSV header line's column names as ``fairaudit.sources.FileLog`` reads them (the csv module, spaces after
    a delimiter skipped, names stripped, an empty one ``Unnamed: <i>``)."""
    import csv

    raw = next(csv.reader([line.rstrip("\r\n")], delimiter=sep, skipinitialspace=True))
    return [n.strip() or f"Unnamed: {i}" for i, n in enumerate(raw)]


def quoted_spans(data: bytes, sep: str = ",") -> list[tuple[int, int]]:
    """The quoted values of ``data`` (bytes that start at a record's start) as pyarrow's CSV reader reads them: a
    quote opens a quoted value only at a value's very start (after a delimiter or a line end), ``""`` inside one is
    a quote, the next lone quote closes it. ``(open, close)`` positions of each; ``close`` -1 for one still open."""
    starts = (ord(sep), 10, 13)
    spans = []
    i = data.find(b'"')
    while i >= 0:
        if i > 0 and data[i - 1] not in starts:
            i = data.find(b'"', i + 1)  # a quote inside an unquoted value: a character
            continue
        j = i + 1
        while True:
            k = data.find(b'"', j)
            if k < 0:
                spans.append((i, -1))
                return spans
            if data[k + 1:k + 2] == b'"':
                j = k + 2
                continue
            break
        spans.append((i, k))
        i = data.find(b'"', k + 1)
    return spans


def record_end(data: bytes, sep: str = ",") -> int:
    """The position of the last line end (LF or CR) in ``data`` (bytes that start at a record's start) that ends a
    CSV record, -1 if none: a record whose quoted value (which may hold line ends) is still being written waits for
    its end. Quotes are read as pyarrow's CSV reader reads every CSV (``quoted_spans``)."""
    last = max(data.rfind(b"\n"), data.rfind(b"\r"))
    if last < 0 or b'"' not in data[:last]:
        return last
    spans = quoted_spans(data[:last + 1], sep)
    for start, end in reversed(spans):
        if last < 0:
            break
        if end >= 0 and end < last:
            break  # the last line end is after every quoted value
        if start < last:  # the line end is inside this quoted value: the record before it is the last complete
            last = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start))
    return last


class ParquetDir:
    """A directory of Parquet files, each read once in natural name order (module doc)."""

    kind = "Parquet directory"

    def __init__(self, path, links: bool = True, declared=None, na_values=(), columns=None):
        self.wanted = columns  # the only columns typed and read (``read_columns``; None: every one)
        self.path = Path(path)
        self.links = links  # False: files that are symbolic links are not read (the dashboard's workspace)
        self.done: list[str] = []
        self.waiting: dict[str, int] = {}  # a file that could not be read yet: its size then
        self.declared, self.na_values = declared, tuple(na_values or ())
        self.schema = None  # the first file's stored types
        self.ended = False

    @property
    def columns(self) -> list[str] | None:
        """Every column of the log (also those not read), once its first rows are in."""
        return None if self.schema is None else list(self.every)

    def poll(self) -> pd.DataFrame | None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from fairaudit.sources.conform import check_columns as same_columns, conform, to_frame
        from fairaudit.sources.files import READ_ROWS, check_declared, file_format, find_parts, footer_size, natural_key
        from fairaudit.sources.schema import from_arrow

        found = find_parts(self.path, links=self.links)  # (the rule of a folder at rest)
        done = set(self.done)
        fresh = [f for f in found if f not in done]
        tables, rows = [], 0
        for path in fresh:
            if file_format(path) != "parquet":
                raise FairauditError(f"{path} is a CSV file in the Parquet folder {self.path}: a followed folder is "
                                     "read as Parquet files (follow a CSV log as one file)")
            if self.done and natural_key(path) < natural_key(self.done[-1]):
                raise FairauditError(f"{self._shown(path)} appeared in {self.path} after {self._shown(self.done[-1])} "
                                     "was read: its rows would arrive out of order (files are read once, in name "
                                     "order)")
            if rows >= READ_ROWS:
                break  # (the next poll, at once, takes the rest: a poll is bounded)
            try:
                meta = pq.ParquetFile(path).metadata  # (bounded before the file is read whole)
                read = set(self.schema.names) if self.schema is not None else {
                    meta.schema.column(i).path.strip() for i in range(meta.num_columns)}
                more, size = footer_size(meta, read)
                check_declared(path, more, len(read), size, what="write the log in smaller files")
                table = pq.read_table(path)
            except DataError:
                raise
            except (OSError, ValueError, pa.ArrowException) as err:  # not complete yet: retried, unless it stopped
                not_interrupted(err)
                size = Path(path).stat().st_size
                if self.waiting.get(path) == size:
                    raise FairauditError(f"{path} is not a readable Parquet file: {str(err).splitlines()[0]}") from None
                self.waiting[path] = size
                break
            self.waiting.pop(path, None)
            self.done.append(path)
            if self.schema is None:
                kept = read_columns([str(n).strip() for n in table.column_names], self.wanted)
                self.schema = from_arrow(table.select([i for i, n in enumerate(table.column_names)
                                                       if str(n).strip() in kept]).schema,
                                         str(path), declared=self.declared, na_values=self.na_values)
                self.every = [str(n).strip() for n in table.column_names]  # every part has these columns
                _columns_bounded(self.schema, str(path))
            same_columns(table.column_names, self.every, str(path), str(self.done[0]))
            # (a typed store: a column stored with another type, "1"/"0" as text, is refused, never parsed)
            tables.append(conform(table, self.schema, origin=str(path), first_row=0, columns=self.schema.names))
            rows += table.num_rows
        if not tables:
            return None
        return to_frame(pa.concat_tables(tables) if len(tables) > 1 else tables[0], self.schema)

    def _shown(self, path) -> str:
        try:
            return str(Path(path).relative_to(self.path))
        except ValueError:
            return str(path)

    def close(self) -> None:
        pass


def _columns_bounded(schema, where: str) -> None:
    """A live log's columns are all read: refuse more than ``fairaudit.base.limits.COLUMNS`` of them."""
    from fairaudit.base import limits

    limit = limits.columns_limit()
    if len(schema.names) > limit:
        raise DataError(f"{where} has {len(schema.names):,} columns, over the limit of {limit:,} columns that one run "
                        f"reads; keep only the columns the audit needs (or have whoever runs fairaudit raise the "
                        f"limit with {limits.COLUMNS_ENV})")


class JsonLines:
    """JSON lines on a text stream (standard input), read by a thread (module doc)."""

    kind = "JSON lines"

    def __init__(self, stream=None, declared=None, na_values=(), columns=None):
        self.wanted = columns  # the only columns typed and read (``read_columns``; None: every one)
        self.stream = stream if stream is not None else sys.stdin
        self.lines: queue.Queue = queue.Queue()
        self.ended = False
        self.number = 0  # lines read
        self.rows = 0  # records read (data rows)
        self.declared, self.na_values = declared, tuple(na_values or ())
        self.schema = None  # fixed by the first records
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.stream:
            self.lines.put(line)
        self.lines.put(None)

    @property
    def columns(self) -> list[str] | None:
        """Every column of the log (also those not read), once its first rows are in."""
        return None if self.schema is None else list(self.every)

    def poll(self) -> pd.DataFrame | None:
        records, lines = [], []
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is None:
                self.ended = True
                break
            self.number += 1
            if not line.strip():
                continue
            if not line.isascii():
                try:
                    line.encode("utf-8")  # bytes that are not UTF-8 reach here as lone surrogates
                except UnicodeEncodeError as err:
                    raise FairauditError(f"line {self.number:,} of the JSON lines is not UTF-8 text (column "
                                         f"{err.start + 1})") from None
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise FairauditError(f"line {self.number:,} of the JSON lines is not JSON: {err.msg} (column "
                                     f"{err.colno})") from None
            if not isinstance(record, dict):
                raise FairauditError(f"line {self.number:,} of the JSON lines is not an object ({{\"column\": value, "
                                     "...}})")
            nested = next((k for k, v in record.items() if isinstance(v, (dict, list))), None)
            if nested is not None:
                raise FairauditError(f"line {self.number:,} of the JSON lines: {nested!r} holds a JSON "
                                     f"{'object' if isinstance(record[nested], dict) else 'array'}; a column holds "
                                     "one value (text, a number, true/false or null)")
            records.append(record)
            lines.append(self.number)
        if not records:
            return None
        return self._rows(records, lines)

    def _rows(self, records: list[dict], lines: list[int]) -> pd.DataFrame:
        """The records checked against the schema (fixed by the first ones: ``infer_values``) and made a frame."""
        import pyarrow as pa

        from fairaudit.sources.conform import conform, to_frame
        from fairaudit.sources.schema import TYPE_ROWS, infer_values

        if self.schema is None:  # the first ``TYPE_ROWS`` records, as a CSV's first rows
            typing = records[:TYPE_ROWS]
            keys = list(dict.fromkeys(k for r in typing for k in r))
            self.keys = set(keys)  # every record has these keys
            self.every = [str(k).strip() for k in keys]
            kept = read_columns([str(k).strip() for k in keys], self.wanted)
            keys = [k for k in keys if str(k).strip() in kept]
            self.schema = infer_values({k: [r.get(k) for r in typing] for k in keys}, JSON_ORIGIN,
                                       declared=self.declared, na_values=self.na_values, rows=len(typing))
        known = self.keys
        extra = next((k for r in records for k in r if k not in known), None)
        if extra is not None:
            at = next(i for i, r in enumerate(records) if extra in r)
            raise DataError(f"{JSON_ORIGIN}, data row {self.rows + at + 1:,} (line {lines[at]:,}) has key "
                            f"{extra!r}, which the first records did not have: every record of a log has the "
                            "log's columns (a renamed key would be audited as missing)")
        arrays = [_json_array([r.get(raw) for r in records], name, self.schema, self.rows)
                  for name, raw in zip(self.schema.names, self.schema.raw or self.schema.names)]
        table = pa.table(arrays, names=list(self.schema.names))
        conformed = conform(table, self.schema, origin=JSON_ORIGIN, first_row=self.rows)
        self.rows += len(records)
        return to_frame(conformed, self.schema)

    def close(self) -> None:
        pass


def _json_array(values: list, name: str, schema, first_row: int):
    """One column of JSON values as an Arrow array; values of several JSON types (``1`` and ``"1"``) in it: the
    first that does not fit the column's type is refused by ``conform``, with its data row."""
    import pyarrow as pa

    from fairaudit.sources.conform import conform_array

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        pass
    for i, value in enumerate(values):
        try:
            one = pa.array([value])
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
            raise DataError(f"{JSON_ORIGIN}, data row {first_row + i + 1:,}: column '{name}' holds {value!r}, which "
                            "fairaudit cannot read as a number (too large)") from None
        conform_array(one, name, schema, JSON_ORIGIN, first_row + i)
    raise DataError(f"{JSON_ORIGIN}, data rows {first_row + 1:,}–{first_row + len(values):,}: column '{name}' holds "
                    "values of several JSON types; write every value of a column with one JSON type")


def read_columns(names, wanted) -> list[str]:
    """The columns of a log (``names``, as stored) that a live source types and reads: those ``wanted`` (the
    columns a run uses), in the log's order — or every one when ``wanted`` is None or names a column the log lacks
    (its audit then refuses it naming the log's columns), the rule ``fairaudit.sources.FileLog`` follows at rest."""
    if wanted is None or not set(wanted) <= set(names):
        return list(names)
    return [n for n in names if n in set(wanted)]


def open_log(path, stdin=None, links: bool = True, declared=None, na_values=(), columns=None):
    """The log at ``path``: ``-`` (JSON lines on standard input), a directory (Parquet files) or a CSV file.
    ``links=False``: a log that is a symbolic link, or a link among a directory's files, is not read. ``declared``
    (``{column: kind}`` or ``["column=kind", ...]``) and ``na_values``: as for a file at rest
    (``fairaudit.sources.schema``); ``columns``: the only ones typed and read (``read_columns``)."""
    if str(path) == "-":
        return JsonLines(stdin, declared=declared, na_values=na_values, columns=columns)
    p = Path(path)
    if not links and p.is_symlink():
        raise FairauditError(f"{p.name} is a link; only files inside the workspace are read")
    if p.is_dir():
        return ParquetDir(p, links=links, declared=declared, na_values=na_values, columns=columns)
    if not p.exists():
        raise FairauditError(f"no log at {p}: give a CSV file, a directory of Parquet files or - (JSON lines on "
                             "standard input)")
    if p.suffix.lower() in (".parquet", ".pq"):
        raise FairauditError(f"{p} is one Parquet file: a Parquet log is a directory that new files are added to; "
                             "follow the directory")
    if p.suffix.lower() == ".gz":
        raise FairauditError(f"{p} is compressed: a compressed file cannot grow; follow the log as it is written "
                             "(uncompressed), or audit this file at rest (--data)")
    return CsvTail(p, declared=declared, na_values=na_values, columns=columns)


IDLE = "idle"
ENDED = "ended"
STOPPED = "stopped"
END_TEXT = {ENDED: "the log's input ended", STOPPED: "interrupted", IDLE: "no new row for {idle:g} s (the idle timeout)"}


def follow(source, *, stop: threading.Event | None = None, poll: float = POLL_SECONDS,
           idle_timeout: float | None = None, first: pd.DataFrame | None = None,
           why: dict | None = None) -> Iterator[pd.DataFrame]:
    """Each poll's new rows (a DataFrame; an empty poll yields nothing) until the log ends, ``stop`` is set or
    nothing arrived for ``idle_timeout`` seconds (``why["end"]`` then says which: ``ENDED``, ``STOPPED``,
    ``IDLE``). ``first``: rows read already (yielded first; when the log ended as they were read, nothing more
    is read)."""
    if first is not None and len(first):
        yield first
    if why is not None and why.get("end") is not None:
        return
    for frame in polls(source, stop=stop, poll=poll, idle_timeout=idle_timeout, why=why):
        if frame is not None:
            yield frame


def first_rows(source, *, check=None, stop: threading.Event | None = None, poll: float = POLL_SECONDS,
               idle_timeout: float | None = None, why: dict | None = None) -> pd.DataFrame | None:
    """The log's first rows (to validate the audit against before any work), or None if the log ended, ``stop``
    was set or the idle timeout passed before any row arrived. ``check(columns)`` is called as soon as the log's
    columns are known (a CSV header arrives before its rows), so a wrong column is refused at once."""
    checked = False
    for frame in polls(source, stop=stop, poll=poll, idle_timeout=idle_timeout, why=why):
        if not checked and source.columns is not None and check is not None:
            check(list(source.columns))
            checked = True
        if frame is not None:
            return frame
    return None


def polls(source, *, stop: threading.Event | None = None, poll: float = POLL_SECONDS,
          idle_timeout: float | None = None, why: dict | None = None) -> Iterator[pd.DataFrame | None]:
    """Every poll of ``source``: its new rows, or None when nothing complete arrived (see ``follow``)."""
    stop = stop or threading.Event()
    why = {} if why is None else why
    quiet_since = time.monotonic()
    while True:
        if stop.is_set():
            why["end"] = STOPPED
            return
        frame = source.poll()
        if frame is not None and len(frame):
            quiet_since = time.monotonic()
            yield frame
            continue  # read on at once while rows keep coming
        yield None
        end = ENDED if source.ended else (IDLE if idle_timeout is not None
                                          and time.monotonic() - quiet_since >= idle_timeout else None)
        if end is not None:
            why["end"] = end
            finish = getattr(source, "finish", None)  # the log ended: its last line, if it lacks a line end
            last = finish() if finish is not None else None
            if last is not None and len(last):
                yield last
            return
        stop.wait(poll)
