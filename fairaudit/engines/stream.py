"""The monitor's statistics over a stream that arrives in chunks (out-of-core files, live logs, Dask partitions).

``Observations.stats`` (``fairaudit.engines.observations``) takes the cumulative sums of a whole stream held in
memory. ``RunningCounts`` gives the same per-leaf ``LeafStats`` (successes, n at every check) one chunk at a time:
it keeps only each leaf's running totals (the prefix sums' last values) between chunks, so memory is that of one
chunk whatever the stream's length. Checks are the same as the whole stream's (``check_points``: every ``batch``
rows, counted from the stream's first row) except the last one, which only the caller knows (``finish``).

``read_chunks(path)`` reads a CSV or Parquet file in chunks with pyarrow (column types fixed by the first chunk,
so every chunk parses the same way), as pandas DataFrames.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from fairaudit.errors import FairauditError

CHUNK_ROWS = 1 << 16


class RunningCounts:
    """Per leaf running (successes, n); ``consume`` one chunk of observations, get the stats at its checks."""

    def __init__(self, keys, batch: int):
        if batch < 1:
            raise FairauditError(f"batch must be a positive integer, got {batch}")
        self.keys, self.batch = list(keys), int(batch)
        self.rows = 0
        self.successes = {k: 0 for k in self.keys}
        self.n = {k: 0 for k in self.keys}
        self._last = {k: (0, 0) for k in self.keys}

    def consume(self, obs, final: bool = False) -> tuple[np.ndarray, dict]:
        """``(steps, stats)`` for the checks that fall in this chunk (``obs``: its ``Observations``); ``final``:
        the stream ends with this chunk, so its last row is a check too."""
        from fairaudit.bounds.allocation import LeafStats

        start, length = self.rows, int(obs.length)
        first = (-(start + 1)) % self.batch  # 0-based position in the chunk of its first check
        local = np.arange(first, length, self.batch, dtype=np.int64)
        if final and length and (not len(local) or local[-1] != length - 1):
            local = np.append(local, length - 1)
        stats = {}
        for k in self.keys:
            v, m = obs.values[k], obs.masks[k]
            s = np.cumsum(v.astype(np.int64) & m.astype(np.int64)) + self.successes[k]
            n = np.cumsum(m.astype(np.int64)) + self.n[k]
            stats[k] = LeafStats(s[local].astype(float), n[local].astype(float))
            if length:
                self.successes[k], self.n[k] = int(s[-1]), int(n[-1])
        self.rows += length
        return start + local + 1, stats

    def finish(self) -> tuple[np.ndarray, dict]:
        """``(steps, stats)`` of the stream's last check when the stream ends now: its last row, unless that row
        was a check already (then nothing); what ``consume(..., final=True)`` adds, for a stream whose end is
        only known after its last chunk (a live log)."""
        from fairaudit.bounds.allocation import LeafStats

        if not self.rows or self.rows % self.batch == 0:
            return np.zeros(0, dtype=np.int64), {k: LeafStats(np.zeros(0), np.zeros(0)) for k in self.keys}
        return (np.array([self.rows], dtype=np.int64),
                {k: LeafStats(np.array([float(self.successes[k])]), np.array([float(self.n[k])])) for k in self.keys})


def read_chunks(path, rows: int = CHUNK_ROWS, columns=None) -> Iterator:
    """The rows of a CSV or Parquet file as pandas DataFrames of about ``rows`` rows each."""
    import pyarrow as pa

    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=rows, columns=columns):
            yield pa.Table.from_batches([batch]).to_pandas()
        return
    import pyarrow.csv as pc

    block = max(1 << 16, rows * 64)  # bytes per block: about ``rows`` rows of a narrow file
    first = pc.open_csv(path, read_options=pc.ReadOptions(block_size=block))
    schema = first.schema
    first.close()
    reader = pc.open_csv(path, read_options=pc.ReadOptions(block_size=block),
                         convert_options=pc.ConvertOptions(column_types=schema, include_columns=columns))
    for batch in reader:
        yield pa.Table.from_batches([batch]).to_pandas()


class _LazyStats:
    """A leaf's (successes, n) at the checks, computed as the monitor asks for them (``LeafStats.at``'s
    interface)."""

    def __init__(self, owner: "ChunkedObservations", key: str):
        self.owner, self.key = owner, key

    def at(self, index):
        from fairaudit.bounds.allocation import LeafStats

        positions = np.arange(len(self.owner.ends))[index]
        if np.size(positions):
            self.owner.fill(int(np.max(positions)))
        s, n = self.owner.cum[self.key]
        return LeafStats(s[index].astype(float), n[index].astype(float))


class ChunkedObservations:
    """The monitor's ``Observations`` for a stream read chunk by chunk (``chunks``: an iterator of each chunk's
    ``Observations``, in stream order; ``length``: the stream's rows). Only one chunk is in memory at a time; the
    monitor (``monitor_batches``) asks for the statistics of its checks in order, and the chunks are read as far as
    they need. ``values``/``masks`` are not kept, so the halves test of ``OrderEvidence`` (which needs the whole
    stream) is not available: use it with ``order="shuffle"``'s code path only for a stream already in its order."""

    def __init__(self, keys, chunks, length: int):
        self.keys, self.chunks, self.length = list(keys), iter(chunks), int(length)
        self.counts = RunningCounts(self.keys, 1)
        self.ends = np.zeros(0, dtype=np.int64)
        self.cum: dict = {}
        self.filled = 0

    def stats(self, ends: np.ndarray) -> dict:
        self.ends = np.asarray(ends, dtype=np.int64)
        self.cum = {k: (np.zeros(len(self.ends), np.int64), np.zeros(len(self.ends), np.int64)) for k in self.keys}
        return {k: _LazyStats(self, k) for k in self.keys}

    def fill(self, check: int) -> None:
        """Read chunks until the statistics of check ``check`` are known."""
        while self.filled <= check:
            obs = next(self.chunks, None)
            if obs is None:
                raise FairauditError(f"the stream ended after {self.counts.rows:,} rows; {self.length:,} were expected")
            start = self.counts.rows
            stop = int(np.searchsorted(self.ends, start + obs.length - 1, side="right"))
            local = self.ends[self.filled:stop] - start
            for k in self.keys:
                v, m = obs.values[k], obs.masks[k]
                s = np.cumsum(v.astype(np.int64) & m.astype(np.int64)) + self.counts.successes[k]
                n = np.cumsum(m.astype(np.int64)) + self.counts.n[k]
                self.cum[k][0][self.filled:stop] = s[local]
                self.cum[k][1][self.filled:stop] = n[local]
                if obs.length:
                    self.counts.successes[k], self.counts.n[k] = int(s[-1]), int(n[-1])
            self.counts.rows += obs.length
            self.filled = stop


def file_observations(spec, path, pred: str, *, rows: int = CHUNK_ROWS) -> ChunkedObservations:
    """``ChunkedObservations`` of a CSV or Parquet file in its given order, the decision a condition over the rows
    (``pred``, as ``fairaudit audit --pred``), each chunk's leaves evaluated with ``observe``."""
    from fairaudit.engines.observations import observe
    from fairaudit.evaluate import compile_spec
    from fairaudit.spec import parse_event
    from fairaudit.spec import evaluate_event

    condition = parse_event(pred) if isinstance(pred, str) else pred
    length = count_rows(path)

    def chunks():
        for frame in read_chunks(path, rows=rows):
            decided = np.asarray(evaluate_event(condition, frame), dtype=bool).astype(np.int8)
            yield observe(spec, frame, pred=decided)

    return ChunkedObservations(compile_spec(spec).leaf_keys, chunks(), length)


def count_rows(path) -> int:
    """The rows of a CSV (one streaming pass) or Parquet file (its metadata)."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    return sum(len(chunk) for chunk in read_chunks(path, columns=None))
