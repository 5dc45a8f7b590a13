"""The full trace of a run (every check of every node) written to a Parquet file as the run goes.

The result of a run keeps a bounded display subsample of its checks (``fairaudit.trace.TraceBuilder``); a user who
wants every check asks for this file (``fairaudit audit --full-trace PATH``, ``api.audit(full_trace=PATH)``). Its
rows are the long table of ``Trace.to_frame`` (``step node estimate lo hi delta verdict n certified unfair
undecided evalue evalue_target``), written one row group per part, so memory stays bounded however long the stream is. The file is
written to a temporary name beside ``path`` and renamed when the run ends (an interrupted run leaves no half
file under the name). ``read_full_trace(path)`` gives the table back as a pandas DataFrame.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fairaudit.errors import FairauditError
from fairaudit.trace import Trace

MARK = b"fairaudit.trace"  # schema metadata key that says a Parquet file is a fairaudit full trace


class FullTraceWriter:
    def __init__(self, path, spec_text: str = ""):
        import pyarrow.parquet  # noqa: F401  (fails early when pyarrow is missing)

        self.path = Path(path)
        folder = self.path.parent if str(self.path.parent) else Path(".")
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        os.close(fd)
        self.tmp = Path(tmp)
        self.spec_text = spec_text
        self.rows = 0
        self._writer = None

    def append(self, part: Trace) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not len(part):
            return
        table = pa.Table.from_pandas(part.to_frame(), preserve_index=False)
        if self._writer is None:
            schema = table.schema.with_metadata({MARK: self.spec_text.encode("utf-8")})
            self._writer = pq.ParquetWriter(self.tmp, schema, compression="zstd")
        self._writer.write_table(table.replace_schema_metadata(self._writer.schema.metadata))
        self.rows += len(part)

    def close(self) -> Path:
        """Finish the file and move it to its name (an empty run writes an empty table)."""
        try:
            if self._writer is None:
                import pyarrow as pa
                import pyarrow.parquet as pq

                empty = Trace.empty([]).to_frame()
                pq.write_table(pa.Table.from_pandas(empty, preserve_index=False).replace_schema_metadata(
                    {MARK: self.spec_text.encode("utf-8")}), self.tmp)
            else:
                self._writer.close()
            from fairaudit.outputs import _mode_for

            os.chmod(self.tmp, _mode_for(self.path))  # mkstemp makes 0600: the old file's mode, else the umask's
            os.replace(self.tmp, self.path)
        except OSError as err:
            self.tmp.unlink(missing_ok=True)
            raise FairauditError(f"cannot write the full trace to {self.path}: {err.strerror or err}") from None
        return self.path

    def discard(self) -> None:
        if self._writer is not None:
            self._writer.close()
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
