"""Where rows come from: one ingestion pipeline for every route.

A *source* gives a log's rows in the stream's order, in chunks: a CSV or Parquet file, a folder or glob of parts
(``FileLog``, on ``pyarrow.dataset``/pyarrow's CSV reader), the same file held as bytes (an upload), a live log (a
growing CSV, a folder of Parquet files, JSON lines: ``fairaudit.engines.monitor.livelog``), or Dask partitions (one part each,
read on the worker by ``FileLog.read_part``). Whatever the source:

* the **schema** — each column's type — is fixed **once**, before any row is counted
  (``fairaudit.sources.schema``: a store's types, a declared type, or the first rows of text);
* every chunk, part, partition and poll is checked against it and cleaned by **one** function
  (``fairaudit.sources.conform.conform``) and made a pandas frame by one function (``to_frame``); a value that does
  not fit is an error naming its file and row, never coerced;
* what the engines compute from a frame — the spec's values validated, events evaluated, observations encoded — is
  one function each (``fairaudit.core.preflight``, ``fairaudit.spec.events``, ``fairaudit.core.observations``).

The routes differ only in where the chunks come from and where the encoding runs (this process, a Dask worker).
"""
from fairaudit.sources.conform import UnfitValue, check_columns, conform, to_frame
from fairaudit.sources.files import Batch, FileLog, list_parts
from fairaudit.sources.schema import KINDS, TYPE_ROWS, LogSchema, parse_declared

__all__ = ["Batch", "FileLog", "KINDS", "LogSchema", "TYPE_ROWS", "UnfitValue", "check_columns", "conform",
           "list_parts", "parse_declared", "to_frame"]
