"""Where rows come from: one ingestion pipeline for every route.

A *source* gives a log's rows in the stream's order, in batches, behind one of two faces:

* **at rest** — ``schema`` fixed once, ``name``, and ``batches(columns, rows, encoded)`` yielding conformed
  ``Batch``es in stream order: a CSV or Parquet file, a folder or glob of parts, the same file held as bytes (an
  upload) (``FileLog``, on ``pyarrow.dataset``/pyarrow's CSV reader; ``fairaudit.sources.files``), a log in object
  storage (``fairaudit.sources.remote.RemoteLog``, a ``FileLog`` read through fsspec), a table of a DuckDB or
  SQLite database (``fairaudit.sources.database.TableLog``: its declared types, read-only; a decision and a row filter
  that translate to SQL, ``fairaudit.sources.sql``, let the database count), and one part of a log read where the
  work runs — a Dask partition (``fairaudit.sources.parts.Part``);
* **growing** — ``poll()`` yielding each poll's new rows (``follow`` waits, ``END_TEXT`` says how the watch ended):
  a growing CSV, a folder of Parquet files, JSON lines (``fairaudit.sources.live``).

Whatever the source:

* the **schema** — each column's type — is fixed **once**, before any row is counted
  (``fairaudit.sources.schema``: a store's types, a declared type, or the first rows of text), and only the columns a
  run reads are typed and read;
* every chunk, part, partition and poll is checked against it and cleaned by **one** function
  (``fairaudit.sources.conform.conform``) and made a pandas frame by one function (``to_frame``); a value that does
  not fit is an error naming its file and row, never coerced; every compressed part is inflated by one bounded reader
  (``fairaudit.sources.compressed``), and a folder, a glob and a followed folder list their parts by one rule
  (``fairaudit.sources.files.find_parts``);
* what a run computes from the rows is one function each, on every route: the spec's values validated
  (``fairaudit.core.preflight``), a batch turned into observation codes (``fairaudit.core.codes``), codes turned
  into counts and pieces merged (the one counting kernel, ``fairaudit.core.counting``).

The routes differ only in where the batches come from and where the work runs (this process, a Dask worker).
"""
from fairaudit.sources.conform import UnfitValue, check_columns, conform, to_frame
from fairaudit.sources.files import Batch, FileLog, list_parts
from fairaudit.sources.schema import KINDS, TYPE_ROWS, LogSchema, parse_declared

__all__ = ["Batch", "FileLog", "KINDS", "LogSchema", "TYPE_ROWS", "UnfitValue", "check_columns", "conform",
           "list_parts", "parse_declared", "to_frame"]
