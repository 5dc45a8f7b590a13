"""Live decision logs: read a log as it grows and audit it with the monitor as the rows arrive.

Three kinds of log (``open_log``):

* a CSV file that a deployed model appends lines to (``CsvTail``): the header is read once; each poll reads the
  bytes appended since the last one and parses the complete lines (a partial last line waits for the next poll);
  a file that shrinks (truncated) or is replaced by another file under its name (rotated) is an error;
* a directory of Parquet files (``ParquetDir``): each new ``*.parquet`` file is read once, in name order (a
  writer should write a file under another name and rename it when complete; a file that cannot be read yet is
  retried at the next poll); a new file whose name sorts before one already read is an error (its rows would
  arrive out of order);
* ``-``, JSON lines on standard input (``JsonLines``): one JSON object per line, read by a thread so that
  the polls never block; the end of the input ends the log.

Text is cleaned as ``fairaudit.data.from_csv`` cleans a file (stripped, a missing category is ``"?"``), so a CSV
log audited live gives the rows the file at rest gives.

``follow(source, ...)`` yields each poll's new rows until the log ends, ``stop`` is set (an interrupt, the
dashboard's Stop) or nothing arrived for ``idle_timeout`` seconds; ``live_audit`` runs the monitor on them
through the shared driver (``fairaudit.run.drive``) and yields each partial ``AuditResult``.
"""
from __future__ import annotations

import io
import json
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from fairaudit.errors import FairauditError

POLL_SECONDS = 0.2
from fairaudit.engines import STREAMING as LIVE_ENGINE  # audits a log as it grows (``fairaudit.engines.live``)


LIVE_OPTIONS = ("delta", "batch", "split", "bound", "order", "stop", "time_budget")  # the options a live run uses


def live_engine():
    """The engine a live log is audited with (its options are the ones a live run takes)."""
    from fairaudit import engines

    return engines.get(LIVE_ENGINE)


def runs_live(engine) -> bool:
    """Whether ``engine`` (an ``Engine`` or its name) is the one a live log runs on, so its chosen options apply."""
    return getattr(engine, "name", engine) == LIVE_ENGINE


class CsvTail:
    """A CSV file read as it grows (module doc)."""

    kind = "CSV log"

    def __init__(self, path):
        self.path = Path(path)
        try:
            self.fh = open(self.path, "rb")
        except OSError as err:
            raise FairauditError(f"cannot open the log {self.path}: {err.strerror or err}") from None
        self.ino = os.fstat(self.fh.fileno()).st_ino
        self.pos = 0
        self.header: bytes | None = None
        self.buffer = b""
        self.types = ColumnTypes(str(self.path))
        self.ended = False  # a file never ends: the idle timeout or an interrupt ends the watch

    @property
    def columns(self) -> list[str] | None:
        if self.header is None:
            return None
        from fairaudit.data.csvfile import _delimiter

        sep = _delimiter(self.header.decode("utf-8-sig", errors="replace"))
        return list(pd.read_csv(io.BytesIO(self.header), nrows=0, sep=sep, encoding="utf-8-sig").columns.str.strip())

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
        data = self.fh.read(st.st_size - self.pos) if st.st_size > self.pos else b""
        self.pos += len(data)
        self.buffer += data
        if self.header is None:
            cut = self.buffer.find(b"\n")
            if cut < 0:
                return None
            self.header, self.buffer = self.buffer[:cut + 1], self.buffer[cut + 1:]
        from fairaudit.data.csvfile import _delimiter

        cut = record_end(self.buffer, _delimiter(self.header.decode("utf-8-sig", errors="replace")))
        if cut < 0:
            return None
        body, self.buffer = self.buffer[:cut + 1], self.buffer[cut + 1:]
        if not body.strip():
            return None
        return self.types(self._parse(self.header + body))

    def _parse(self, data: bytes) -> pd.DataFrame:
        """The first rows as ``fairaudit.data.from_csv`` reads a file; later ones with the columns that were text in
        them read as text (pandas would type a chunk of digits-only categories as numbers)."""
        from fairaudit.data import from_csv
        from fairaudit.data.csvfile import _delimiter, _normalise, _read_frame

        if self.types.numeric is None:
            frame = from_csv(data, name=self.path.name).frame
            self.sep = _delimiter(self.header.decode("utf-8-sig", errors="replace"))
            self.names = list(frame.columns)
            self.text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])
                         and not pd.api.types.is_bool_dtype(frame[c])]
            return frame
        text = {c: str for c in self.text}
        frame = _read_frame(data, self.path.name, self.sep, self.names, dtype=text or None)
        _normalise(frame, keep_missing=None)
        return frame

    def close(self) -> None:
        self.fh.close()


def record_end(data: bytes, sep: str = ",") -> int:
    """The position of the last line end in ``data`` (bytes that start at a record's start) that ends a CSV record,
    -1 if none: a record whose quoted value ("..." may hold line ends) is still being written waits for its end.
    Quotes are read as ``fairaudit.data.from_csv`` reads them (the csv module: a quote opens a quoted value only at
    a value's start, "" inside one is a quote)."""
    import csv

    cut = data.rfind(b"\n")
    if cut < 0 or b'"' not in data[:cut]:
        return cut
    text = data[:cut + 1].decode("utf-8", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, skipinitialspace=True, strict=True)
    done = 0  # the lines of the complete records
    try:
        for _ in reader:
            done = reader.line_num
    except csv.Error as err:
        if "unexpected end of data" not in str(err):
            return cut  # another fault: the parser says what it is
        if done == 0:
            return -1
        return int(np.flatnonzero(np.frombuffer(data, dtype=np.uint8, count=cut + 1) == ord("\n"))[done - 1])
    return cut


class ParquetDir:
    """A directory of Parquet files, each read once in name order (module doc)."""

    kind = "Parquet directory"

    def __init__(self, path, links: bool = True):
        self.path = Path(path)
        self.links = links  # False: files that are symbolic links are not read (the dashboard's workspace)
        self.done: list[str] = []
        self.waiting: dict[str, int] = {}  # a file that could not be read yet: its size then
        self.schema_columns: list[str] | None = None
        self.types = ColumnTypes(str(self.path))
        self.ended = False

    @property
    def columns(self) -> list[str] | None:
        return self.schema_columns

    def poll(self) -> pd.DataFrame | None:
        import pyarrow.parquet as pq

        names = sorted(p.name for p in self.path.iterdir()
                       if p.suffix.lower() in (".parquet", ".pq") and not p.name.startswith(".") and p.is_file()
                       and (self.links or not p.is_symlink()))
        fresh = [n for n in names if n not in set(self.done)]
        frames = []
        for name in fresh:
            if self.done and name < self.done[-1]:
                raise FairauditError(f"{name} appeared in {self.path} after {self.done[-1]} was read: its rows would "
                                     "arrive out of order (files are read once, in name order)")
            path = self.path / name
            try:
                table = pq.read_table(path)
            except (OSError, ValueError) as err:  # not complete yet: retried, unless it stopped growing
                size = path.stat().st_size
                if self.waiting.get(name) == size:
                    raise FairauditError(f"{path} is not a readable Parquet file: {str(err).splitlines()[0]}") from None
                self.waiting[name] = size
                break
            self.waiting.pop(name, None)
            self.done.append(name)
            if self.schema_columns is None:
                self.schema_columns = list(table.column_names)
            frames.append(table.to_pandas())
        if not frames:
            return None
        return self.types(normalise(pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]))

    def close(self) -> None:
        pass


class JsonLines:
    """JSON lines on a text stream (standard input), read by a thread (module doc)."""

    kind = "JSON lines"

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stdin
        self.lines: queue.Queue = queue.Queue()
        self.ended = False
        self.number = 0
        self.first_columns: list[str] | None = None
        self.types = ColumnTypes("the JSON lines")
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.stream:
            self.lines.put(line)
        self.lines.put(None)

    @property
    def columns(self) -> list[str] | None:
        return self.first_columns

    def poll(self) -> pd.DataFrame | None:
        records = []
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
        if not records:
            return None
        frame = pd.DataFrame.from_records(records)
        if self.first_columns is None:  # later rows: ``ColumnTypes`` keeps each column's first type
            frame = _numbers_kept(frame)
            self.first_columns = list(frame.columns)
        return self.types(normalise(frame))

    def close(self) -> None:
        pass


def _numbers_kept(frame: pd.DataFrame) -> pd.DataFrame:
    """The first JSON records' columns that mix numbers with numbers written as text (``5`` and ``"5"``; missing ones
    aside) as numbers — what ``ColumnTypes`` makes of such text when it arrives after the numbers, so that a
    column's type does not depend on which rows the first poll happened to read."""
    from fairaudit.data.csvfile import MISSING

    for c in frame.columns:
        if frame[c].dtype != object:
            continue
        raw = frame[c]
        given = raw.notna() & ~raw.isin([MISSING, ""])
        held = raw[given]
        numbers = held.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
        if not numbers.any() or not held[~numbers].map(lambda v: isinstance(v, str)).all():
            continue
        values = pd.to_numeric(held, errors="coerce")
        if values.notna().all():
            frame[c] = pd.to_numeric(raw.where(given, None), errors="coerce").astype(float)
    return frame


class ColumnTypes:
    """A column keeps the type it had in the log's first rows: numbers stay numbers (a later chunk in which such a
    column is missing, ``"?"``, or text is read as numbers; a value that is not one is an error), text stays text."""

    def __init__(self, name: str = "the log"):
        self.numeric: set[str] | None = None
        self.columns: list[str] = []
        self.name = name
        self.rows = 0  # the log's rows before the next chunk

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        frame = self._typed(frame)
        self._refuse_infinite(frame)
        self.rows += len(frame)
        return frame

    def _refuse_infinite(self, frame: pd.DataFrame) -> None:
        """An ``inf`` is refused as ``fairaudit.data.from_csv`` refuses it in a file at rest (its row: the log's)."""
        from fairaudit.data.csvfile import first_infinite, infinite

        found = first_infinite(frame, [c for c in frame.columns if c in self.numeric])
        if found is not None:
            column, value, at, _ = found
            raise infinite(self.name, column, value, self.rows + at + 1, 0)

    def _typed(self, frame: pd.DataFrame) -> pd.DataFrame:
        from fairaudit.data.csvfile import MISSING

        numeric = {c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
                   and not pd.api.types.is_bool_dtype(frame[c])}
        if self.numeric is None:
            self.numeric, self.columns = numeric, list(frame.columns)
            return frame
        for c in self.columns:  # a column none of these rows holds (JSON keys, a Parquet file's columns): missing
            if c not in frame.columns:
                frame[c] = np.nan if c in self.numeric else MISSING
        for c in (self.numeric & set(frame.columns)) - numeric:
            raw = frame[c].astype(object)
            raw = raw.where(~raw.isin([MISSING, ""]) & raw.notna(), None)
            values = pd.to_numeric(raw, errors="coerce")
            bad = values.isna() & raw.notna()
            if bad.any():
                raise FairauditError(f"column {c!r} holds numbers in the log's first rows but {raw[bad].iloc[0]!r} in a "
                                     "later row: a column keeps its type in a live log")
            frame[c] = values.astype(float)
        for c in (set(self.columns) & numeric) - self.numeric:  # text in the first rows, numbers now (JSON, Parquet)
            frame[c] = frame[c].map(lambda v: MISSING if pd.isna(v) else str(v))
        return frame


def normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cleaned as ``fairaudit.data.from_csv`` cleans a file (stripped; a missing category is ``"?"``)."""
    from fairaudit.data.csvfile import _normalise

    frame.columns = [str(c).strip() for c in frame.columns]
    _normalise(frame, keep_missing=None)
    return frame


def open_log(path, stdin=None, links: bool = True):
    """The log at ``path``: ``-`` (JSON lines on standard input), a directory (Parquet files) or a CSV file.
    ``links=False``: a log that is a symbolic link, or a link among a directory's files, is not read."""
    if str(path) == "-":
        return JsonLines(stdin)
    p = Path(path)
    if not links and p.is_symlink():
        raise FairauditError(f"{p.name} is a link; only files inside the workspace are read")
    if p.is_dir():
        return ParquetDir(p, links=links)
    if not p.exists():
        raise FairauditError(f"no log at {p}: give a CSV file, a directory of Parquet files or - (JSON lines on "
                             "standard input)")
    if p.suffix.lower() in (".parquet", ".pq"):
        raise FairauditError(f"{p} is one Parquet file: a Parquet log is a directory that new files are added to; "
                             "follow the directory")
    return CsvTail(p)


IDLE = "idle"
ENDED = "ended"
STOPPED = "stopped"
END_TEXT = {ENDED: "the log's input ended", STOPPED: "interrupted", IDLE: "no new row for {idle:g} s (the idle timeout)"}


def follow(source, *, stop: threading.Event | None = None, poll: float = POLL_SECONDS,
           idle_timeout: float | None = None, first: pd.DataFrame | None = None,
           why: dict | None = None) -> Iterator[pd.DataFrame]:
    """Each poll's new rows (a DataFrame; an empty poll yields nothing) until the log ends, ``stop`` is set or
    nothing arrived for ``idle_timeout`` seconds (``why["end"]`` then says which: ``ENDED``, ``STOPPED``,
    ``IDLE``). ``first``: rows read already (yielded first)."""
    if first is not None and len(first):
        yield first
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
        if source.ended:
            why["end"] = ENDED
            return
        if idle_timeout is not None and time.monotonic() - quiet_since >= idle_timeout:
            why["end"] = IDLE
            return
        stop.wait(poll)


def log_dataset(frame: pd.DataFrame, name: str, spec=None, events=()):
    """The first rows as a ``Dataset`` (no label, no protected attribute), to validate the audit against. A live
    log's first rows need not hold every category yet: the values ``spec`` and the ``events`` (parsed) compare a
    categorical column with count as values of it (a value that never arrives simply matches no row)."""
    from fairaudit.data.csvfile import _normalise
    from fairaudit.data.dataset import Dataset
    from fairaudit.data.roles import build_schema, distinct_values

    frame = frame.copy()
    kinds = _normalise(frame, keep_missing=None)
    named = mentioned_values(spec, events)
    known = {c: tuple(distinct_values(frame[c])) + tuple(v for v in sorted(named[c], key=str)
                                                         if v not in set(distinct_values(frame[c])))
             for c in named if c in frame.columns and kinds.get(c) == "categorical"}
    return Dataset(name, frame, build_schema(frame, kinds, known_values=known), source=name)


def mentioned_values(spec, events=()) -> dict[str, set]:
    """Per column, the literal values the leaves of ``spec`` and the ``events`` compare it with (``==``, ``in``)."""
    from fairaudit.spec import ast

    found: dict[str, set] = {}

    def walk(ev) -> None:
        if isinstance(ev, ast.Compare):
            for a, b in ((ev.left, ev.right), (ev.right, ev.left)):
                if isinstance(a, ast.Name) and not a.reserved and isinstance(b, ast.Value):
                    found.setdefault(a.name, set()).add(b.value)
        elif isinstance(ev, ast.In):
            found.setdefault(ev.operand.name, set()).update(v.value for v in ev.values)
        elif isinstance(ev, (ast.EvAnd, ast.EvOr)):
            walk(ev.left)
            walk(ev.right)
        elif isinstance(ev, ast.EvNot):
            walk(ev.operand)

    for tn in (spec.leaves if spec is not None else ()):
        for ev in (getattr(tn.node, "event", None), getattr(tn.node, "given", None)):
            if ev is not None:
                walk(ev)
    for ev in events:
        if ev is not None:
            walk(ev)
    return found


def named_columns(spec, events) -> set[str]:
    """The data columns ``spec`` and the ``events`` (decision, row filter; parsed) read."""
    from fairaudit.spec.events import event_columns, spec_columns

    names = set(spec_columns(spec))
    for ev in events:
        names |= set(event_columns(ev))
    return names


def check_columns(spec, events, columns, where: str) -> None:
    """Refuse a log whose header lacks a column the audit reads (one line)."""
    import difflib

    missing = sorted(named_columns(spec, events) - set(columns))
    if missing:
        close = difflib.get_close_matches(missing[0], columns, n=2)
        hint = (f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else
                f" (its columns: {', '.join(columns[:12])}{' ...' if len(columns) > 12 else ''})")
        raise FairauditError(f"{where} has no column {', '.join(repr(m) for m in missing)}{hint}")


def observations(spec, frames, *, decide, where=None, score=None, model=None, domains=None) -> Iterator:
    """Each frame's ``Observations`` (``decide(frame)``: the 0/1 decisions; ``score(frame)``: a model's
    probabilities, for a spec that reads ``score``; ``where``: a parsed row filter). ``Fair[...]`` leaves re-predict
    with ``model``, flipping each column over ``domains[column]`` (fixed when the watch starts: ``prepare``); their
    counterexamples name rows by their position in the log (0-based, in arrival order, before ``where``), and each
    value of the column outside those is told once, with its first row (``Observations.notes``)."""
    from fairaudit.counterexamples_view import row_number
    from fairaudit.engines.observations import event_array, observe

    fair = {tn.node.column: tn.text for tn in spec.leaves if tn.kind == "fair"}
    told: set = set()
    seen = 0
    for frame in frames:
        rows = np.arange(seen, seen + len(frame), dtype=np.int64)
        seen += len(frame)
        if where is not None:
            keep = event_array(where, frame, None, None, None)
            frame, rows = frame[keep].reset_index(drop=True), rows[keep]
        decided = np.asarray(decide(frame)).astype(np.int8)
        scores = None if score is None else np.asarray(score(frame), dtype=float)
        obs = observe(spec, frame, pred=decided, score=scores, model=model, column_values=domains, rows=rows)
        notes = []
        for column, key in fair.items():
            if column not in frame.columns:
                continue
            held = frame[column]
            outside = held.notna().to_numpy() & ~held.isin(list(domains.get(column, ()))).to_numpy()
            new = {}  # each value not told yet → its first row here
            for i in np.flatnonzero(outside):
                value = held.iloc[i]
                if (column, value) not in told and value not in new:
                    new[value] = int(rows[i])
            if new:
                told.update((column, v) for v in new)
                which = ", ".join(f"{v!r} (row {row_number(r)})" for v, r in new.items())
                values = ", ".join(str(v) for v in domains.get(column, ()))
                notes.append(f"{key}: the log has {column} = {which}, a value the log's first rows did not have; the "
                             f"flip test compares only the values fixed when the watch started ({values}): restart "
                             "the audit to include it")
        if notes:
            obs.notes = tuple(notes)
        yield obs


def live_audit(spec, frames, *, decide, where=None, options: dict, describe: dict | None = None,
               on_progress=None, trace_points="auto", warnings=(), score=None, model=None,
               domains=None) -> Iterator:
    """The monitor over ``frames`` (each poll's new rows, in arrival order) through the driver: each partial
    ``AuditResult`` (``options``: the monitor's resolved options; ``order`` must be ``given``; ``model`` and
    ``domains``: what ``Fair[...]`` re-predicts with, as ``prepare`` gives them)."""
    from fairaudit.engines.base import Context
    from fairaudit.engines.live import LIVE_ASSUMPTION, LiveMonitor, live_batches
    from fairaudit.guarantee import Guarantee
    from fairaudit.run import drive

    engine = LiveMonitor()
    ctx = Context(seed=int(options.get("seed") or 0), time_budget=options.get("time_budget"))
    batches = live_batches(spec, observations(spec, frames, decide=decide, where=where, score=score, model=model,
                                              domains=domains),
                           delta=options["delta"],
                           batch=options["batch"], split=options["split"], bound=options["bound"], ctx=ctx,
                           stop=bool(options.get("stop")))
    guarantee = Guarantee("probabilistic", options["delta"], assumes=LIVE_ASSUMPTION)
    used = {k: options[k] for k in LIVE_OPTIONS if k in options}  # not the options a live run ignores (samples, …)
    results = drive(engine, spec, batches, options={**(describe or {}), **used}, guarantee=guarantee, ctx=ctx,
                    stop=bool(options.get("stop")), on_progress=on_progress, trace_points=trace_points,
                    warnings=list(warnings))
    return _with_rows(results, (describe or {}).get("dataset") or "the log", (describe or {}).get("where"))


def _with_rows(results, name: str, where: str | None = None) -> Iterator:
    """Each result with its rows record: how many rows of the log were audited (those matching ``where``), in
    arrival order."""
    try:
        for result in results:
            n = int((result.info or {}).get("stream_length", 0))
            text = (f"the {n:,} rows matching {where} among the rows of the live log {name} read so far, in the "
                    "order they arrived" if where else
                    f"the first {n:,} rows of the live log {name}, in the order they arrived")
            result.rows = {"policy": "live", "audited": n, "text": text}
            yield result
    finally:
        results.close()


def prepare(spec, source, *, pred: str | None = None, model=None, where: str | None = None, name: str, stop=None,
            poll: float = POLL_SECONDS, idle_timeout: float | None = None, why: dict | None = None, spec_source=None,
            decision=None, where_source=None):
    """Validate a live audit on the log's columns and first rows, before any work: ``(first rows, the model that
    decides, the parsed row filter or None, the warnings, the domains)``. The decisions come from ``pred`` (a
    condition over the log's columns) or from ``model`` (a loaded ``Model``, which reads its feature columns from the
    log). ``Fair[column]`` needs the model; the values it flips the column between (the domains, column → values)
    are fixed by the first rows, as ``fairaudit.engines.observations.fair_domains`` fixes them on a whole dataset
    (a value that first arrives later is told as a warning, ``observations``). The spec,
    the decision and the row filter are checked against the header as soon as it arrives, then against the first
    rows (``fairaudit.preflight``; ``spec_source``/``decision``/``where_source`` position its messages).
    ``FairauditError`` when they do not fit or no row arrives."""
    from fairaudit.models import from_expression
    from fairaudit.preflight import option_source, preflight
    from fairaudit.spec import parse_event

    if (pred is None) == (model is None):
        raise FairauditError("a live log needs one decision: a condition over its columns (pred) or a model")
    fair = [tn.text for tn in spec.leaves if tn.kind == "fair"]
    if fair and model is None:
        raise FairauditError(f"{fair[0]} re-predicts each row with the attribute flipped: it needs a model (--model "
                             "PATH), not a decision expression")
    if pred is not None:
        decision = decision or option_source(pred, "the decision")
    where_source = where_source or (option_source(where, "the row filter") if where else None)
    preflight(None, spec, spec_source=spec_source, decision=decision, where=where_source, uses_model=model is not None)
    events = ([parse_event(pred)] if pred is not None else []) + ([parse_event(where)] if where else [])
    needs = list(getattr(model, "feature_names", ()) or ())

    def check(columns) -> None:
        check_columns(spec, events, columns, f"the log {name}")
        missing = [c for c in needs if c not in columns]
        if missing:
            raise FairauditError(f"the model reads column(s) {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''} "
                                 f"that the log {name} does not have")

    why = {} if why is None else why
    first = first_rows(source, check=check, stop=stop, poll=poll, idle_timeout=idle_timeout, why=why)
    if first is None:
        ended = END_TEXT[why.get("end", STOPPED)].format(idle=idle_timeout or 0)
        raise FairauditError(f"no row arrived in the log {name} ({ended}): nothing to audit")
    dataset = log_dataset(first, name, spec, events)
    found = preflight(dataset, spec, spec_source=spec_source, decision=decision, where=where_source,
                      uses_model=model is not None, count_rows=False)  # rows keep coming: no count of the first
    warnings = [str(w) for w in found]
    domains = {}
    if fair:
        from fairaudit.engines.observations import fair_domains

        domains = fair_domains(spec, dataset.frame, dataset.schema)
    if model is None:
        model = from_expression(pred, dataset)
        warnings += [w for w in model.warnings if w not in warnings]
    return first, model, (parse_event(where) if where else None), warnings, domains


class LiveRun:
    """A live audit in a background thread (the dashboard attaches one to a log and draws ``latest`` as it
    changes): ``latest`` (the last partial ``AuditResult``), ``error`` (one line), ``done``, ``why`` (how the watch
    ended); ``stop()`` ends it (the final result then covers every row read)."""

    def __init__(self, spec, path, *, pred: str | None = None, model=None, options: dict, where: str | None = None,
                 poll: float = POLL_SECONDS, idle_timeout: float | None = None, name: str | None = None,
                 links: bool = True, unwatched: float | None = None, alive=None):
        self.spec, self.path, self.pred, self.model, self.where = spec, path, pred, model, where
        self.options = {**options, "order": "given"}
        self.poll, self.idle_timeout = poll, idle_timeout
        self.name = name or Path(str(path)).name
        self.links = links
        self.stopping = threading.Event()
        self.latest = None
        self.error: str | None = None
        self.done = False
        self.why: dict = {}
        self.started = time.time()
        self.unwatched = unwatched  # stop when nobody looked (``touch``) for this many seconds (a closed page)
        self.alive = alive  # a callable: whether whoever started the run is still connected (then it is watched)
        self.seen = time.monotonic()
        self.thread = threading.Thread(target=self._run, name="fairaudit-live", daemon=True)
        self.thread.start()
        if unwatched is not None:
            threading.Thread(target=self._watchdog, name="fairaudit-live-watchdog", daemon=True).start()

    def touch(self) -> None:
        """Someone is looking at the run (the page drew it)."""
        self.seen = time.monotonic()

    def _watchdog(self) -> None:
        while not self.done and not self.stopping.wait(min(1.0, self.unwatched)):
            if self.alive is not None and self._alive():
                self.touch()
            if time.monotonic() - self.seen > self.unwatched:
                self.why["unwatched"] = True
                self.stopping.set()

    def _run(self) -> None:
        source = None
        try:
            source = open_log(self.path, links=self.links)
            first, decider, where, warnings, domains = prepare(self.spec, source, pred=self.pred, model=self.model,
                                                      where=self.where, name=self.name, stop=self.stopping,
                                                      poll=self.poll, idle_timeout=self.idle_timeout, why=self.why)
            frames = follow(source, stop=self.stopping, poll=self.poll, idle_timeout=self.idle_timeout, first=first,
                            why=self.why)
            model = None if self.model is None else self.model.describe()
            for result in live_audit(self.spec, frames, decide=decider.predict, where=where, options=self.options,
                                     describe={"dataset": self.name, "follow": self.name, "pred": self.pred,
                                               "model": model, "where": self.where}, warnings=warnings,
                                     score=None if self.model is None else self.model.score, model=self.model,
                                     domains=domains):
                self.latest = result
        except FairauditError as err:
            self.error = str(err).replace(str(self.path), self.name)  # the log's name, not the server's path
        except Exception as err:  # noqa: BLE001 - a bug: one line for the page, never a traceback
            self.error = f"internal error: {type(err).__name__}: {' '.join(str(err).split())[:200]}"
        finally:
            if source is not None:
                source.close()
            self.done = True

    @property
    def rows(self) -> int:
        return int(((self.latest.info or {}) if self.latest is not None else {}).get("stream_length", 0))

    def _alive(self) -> bool:
        try:
            return bool(self.alive())
        except Exception:  # noqa: BLE001 - cannot tell: count on the page's own touches
            return False

    def ended(self) -> str | None:
        """How the watch ended, in words (None while it runs)."""
        if not self.done or self.error:
            return None
        if self.why.get("unwatched"):
            return f"stopped: the dashboard was closed (no page of it connected for {self.unwatched:g} s)"
        return END_TEXT[self.why.get("end", STOPPED)].format(idle=self.idle_timeout or 0)

    def stop(self, wait: float | None = 5.0) -> None:
        self.stopping.set()
        if wait:
            self.thread.join(wait)
