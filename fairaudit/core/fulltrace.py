"""The full trace of a run (every check of every node) written to a Parquet file as the run goes.

The result of a run keeps a bounded display subsample of its checks (``fairaudit.core.trace.TraceBuilder``); a user who
wants every check asks for this file (``fairaudit audit --full-trace PATH``, ``api.audit(full_trace=PATH)``). Its
rows are the long table of ``Trace.to_frame`` (``step node estimate lo hi delta verdict n certified unfair
undecided evalue evalue_target``), written one row group per part, so memory stays bounded however long the stream is. The file is
written to a temporary name beside ``path`` and renamed when the run ends (an interrupted run leaves no half
file under the name). ``read_full_trace(path)`` gives the table back as a pandas DataFrame.
"""
from __future__ import annotations

from pathlib import Path

from fairaudit.base.errors import FairauditError
from fairaudit.core.trace import Trace

MARK = b"fairaudit.core.trace"  # schema metadata key that says a Parquet file is a fairaudit full trace


class FullTraceWriter:
    """Writes the full trace of one run to a temporary file of its own beside ``path`` (created with the first rows,
    so a run that never starts leaves nothing) and moves it to ``path`` on ``close``: a run never appends to
    another run's file, and two runs writing the same path never mix their rows. ``discard`` removes the temporary
    file (a failed or interrupted run)."""

    def __init__(self, path, spec_text: str = ""):
        import pyarrow.parquet  # noqa: F401  (fails early when pyarrow is missing)

        from fairaudit.base.files import check_path

        # a path that cannot be a file fails here, before the run (the CLI has checked the rest, --force included)
        self.path = check_path(path, what="full trace")
        self.tmp: Path | None = None
        self.spec_text = spec_text
        self.rows = 0
        self._writer = None

    def _temporary(self) -> Path:
        from fairaudit.base.files import temporary_beside

        if self.tmp is None:
            try:
                self.tmp = temporary_beside(self.path)
            except OSError as err:
                raise self._error(err) from None
        return self.tmp

    def _error(self, err: OSError) -> FairauditError:
        from fairaudit.base.errors import path_error

        return path_error(err, "write the full trace to", self.path)  # the target, not the temporary file

    def append(self, part: Trace) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not len(part):
            return
        table = pa.Table.from_pandas(part.to_frame(), preserve_index=False)
        if self._writer is None:
            schema = table.schema.with_metadata({MARK: self.spec_text.encode("utf-8")})
            self._writer = pq.ParquetWriter(self._temporary(), schema, compression="zstd")
        self._writer.write_table(table.replace_schema_metadata(self._writer.schema.metadata))
        self.rows += len(part)

    def close(self) -> Path:
        """Finish the file and move it to its name (an empty run writes an empty table)."""
        from fairaudit.base.files import publish

        try:
            if self._writer is None:
                import pyarrow as pa
                import pyarrow.parquet as pq

                empty = Trace.empty([]).to_frame()
                pq.write_table(pa.Table.from_pandas(empty, preserve_index=False).replace_schema_metadata(
                    {MARK: self.spec_text.encode("utf-8")}), self._temporary())
            else:
                self._writer.close()
            publish(self.tmp, self.path)
        except OSError as err:
            self.discard()
            raise self._error(err) from None
        except BaseException:  # an interrupt while the file is finished: nothing stays behind
            self.discard()
            raise
        return self.path

    def discard(self) -> None:
        writer, self._writer = self._writer, None
        try:
            if writer is not None:
                writer.close()
        finally:
            if self.tmp is not None:
                self.tmp.unlink(missing_ok=True)


def read_full_trace(path):
    """The full trace written by ``FullTraceWriter`` as a pandas DataFrame."""
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pandas()


def is_full_trace(path) -> bool:
    try:
        import pyarrow.parquet as pq

        metadata = pq.read_schema(path).metadata or {}
    except Exception:  # not a Parquet file, or pyarrow missing
        return False
    return MARK in metadata
