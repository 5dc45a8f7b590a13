"""A log's parts, one at a time: the partitions of a log read where the work runs (a Dask worker).

A ``Part`` is one part (file) of a ``FileLog``, read by the log's own reader (``FileLog.read_part``: every batch
conformed to the schema the log fixed once, on the client) and made the frame the engines read (``to_frame``).
``log_partitions`` lists them in the log's order — the stream's given order.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from fairaudit.sources.files import FileLog


@dataclass
class Part:
    """One partition: one part (file) of the log, read on a worker by the log's own reader — ``FileLog.read_part``,
    every batch conformed to the schema the client fixed (a value that does not fit is an ``UnfitValue`` naming the
    file and its data row, a renamed or missing column a ``DataError``, both re-raised on the client) — and made the
    frame the engines read (``fairaudit.sources.to_frame``; a missing label kept missing: the client refuses it
    first). ``log``: the log with only this part listed (its schema, format and delimiter: the client's)."""

    log: FileLog
    columns: tuple
    label: str | None = None

    @property
    def path(self) -> str:
        return self.log.parts[0]

    def tables(self, columns=None, encoded: bool = False):
        """The part's conformed Arrow tables, in row order (``columns``: the log's names; default the part's;
        ``encoded``: dictionary-encoded text stays so, ``fairaudit.sources.conform.conform``)."""
        for batch in self.log.read_part(self.path, list(self.columns if columns is None else columns),
                                        encoded=encoded):
            yield batch.table

    def frame(self, columns=None):
        import pyarrow as pa

        from fairaudit.sources import to_frame

        wanted = list(self.columns if columns is None else columns)
        tables = list(self.tables(wanted))
        if not tables:  # a part without rows
            arrow = {"integer": pa.int64(), "float": pa.float64(), "boolean": pa.bool_(), "text": pa.string()}
            tables = [pa.table({c: pa.array([], arrow[self.log.schema.kind(c)]) for c in wanted})]
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        return to_frame(table, self.log.schema, keep_missing=self.label or ())


def log_partitions(log: FileLog, columns, label=None) -> list[Part]:
    """The log's partitions in ``log.parts`` order (natural name order): the stream's given order, the order in
    which the in-process and out-of-core routes read the same parts."""
    out = []
    for path in log.parts:
        one = copy.copy(log)  # the schema fixed once, here; only the part's path differs
        one.source, one.parts = path, [path]  # (not the whole list: a task carries its part only)
        out.append(Part(one, tuple(columns), label))
    return out
