"""The monitor's statistics over a stream that arrives in chunks (out-of-core files, live logs, Dask partitions).

``Observations.stats`` (``fairaudit.core.observations``) takes the cumulative sums of a whole stream held in
memory. ``RunningCounts`` gives the same per-leaf ``LeafStats`` (successes, n at every check) one chunk at a time:
it keeps only each leaf's running totals (the prefix sums' last values) between chunks, so memory is that of one
chunk whatever the stream's length. Checks are the same as the whole stream's (``check_points``: every ``batch``
rows, counted from the stream's first row) except the last one, which only the caller knows (``finish``).

``ChunkedObservations`` is the monitor's view of such a stream: the statistics of the checks it asks for, read as far
as needed, a window of checks kept (``CheckPoints``: the checks themselves without an array of them all).

Row codes (``encode`` / ``decode`` / ``CodeStore``): the monitor needs of a row only two bits per distinct leaf, so
a stream is stored as one small integer per row (1 byte for up to four leaves), in memory or in a file, and read
back in chunks. ``shuffle_codes`` puts them in a seeded uniformly random order, in memory (the in-memory monitor's
own permutation) or by spill files beyond (its docstring proves the order uniform). ``fairaudit.engines.monitor.outofcore`` builds
an audit of a file on these.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterator

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.core.codes import decode
from fairaudit.core.counting import code_dtype, encode  # noqa: F401 (the codes a CodeStore holds)

# ---------------------------------------------------------------------------------------------- the check schedule
GROWTH_DENOMINATOR = 10_000  # after ``thin_after`` observations the checks are 1/10,000 (0.01 %) of the stream apart
_THINNED: dict = {}  # (batch, t0) -> list of thinned check steps, extended as far as asked (a pure function's cache)
_THINNED_LOCK = threading.Lock()  # the dashboard's sessions and the driver's threads extend it one at a time


def thinning_start(batch: int, thin_after: int) -> int | None:
    """The last regular check step (a multiple of ``batch`` ≤ ``thin_after``) after which the checks thin out;
    None when they never do (``thin_after`` 0)."""
    return None if not thin_after else (int(thin_after) // int(batch)) * int(batch)


def _thinned_upto(batch: int, t0: int, hi: int) -> np.ndarray:
    """The thinned check steps after ``t0`` that are ≤ ``hi``: from step t the next is the smallest multiple of
    ``batch`` that is ≥ t·(1 + 1/GROWTH_DENOMINATOR) and > t."""
    with _THINNED_LOCK:
        steps = _THINNED.setdefault((batch, t0), [])
        t = steps[-1] if steps else t0
        while t < hi:
            t = batch * max(t // batch + 1, -(-(t * (GROWTH_DENOMINATOR + 1)) // (GROWTH_DENOMINATOR * batch)))
            steps.append(t)
        arr = np.asarray(steps, dtype=np.int64)
    return arr[:int(np.searchsorted(arr, hi, side="right"))]


def schedule_steps(lo: int, hi: int, batch: int, thin_after: int = 0) -> np.ndarray:
    """The check steps (observations seen at the check) in ``(lo, hi]``, the stream's last row aside: every
    ``batch`` observations up to ``thin_after``, then geometrically (``_thinned_upto``). A pure function of the
    step, ``batch`` and ``thin_after``: every route computes its checks with it."""
    if batch < 1:
        raise FairauditError(f"batch must be a positive integer, got {batch}")
    lo, hi, batch = int(lo), int(hi), int(batch)
    t0 = thinning_start(batch, thin_after)
    cut = hi if t0 is None else min(hi, t0)
    regular = np.arange((lo // batch + 1) * batch, cut + 1, batch, dtype=np.int64)
    if t0 is None or hi <= t0:
        return regular
    thinned = _thinned_upto(batch, t0, hi)
    return np.concatenate([regular, thinned[int(np.searchsorted(thinned, lo, side="right")):]])


def schedule_resolution(batch: int, thin_after: int, length: int | None) -> str | None:
    """The one sentence that says at what resolution the checks (so the stop step) fall, when a stream of
    ``length`` rows (None: not known) goes past ``thin_after``; None when every check is ``batch`` apart."""
    t0 = thinning_start(batch, thin_after)
    if t0 is None or (length is not None and length <= t0):
        return None
    return (f"checks every {batch:,} observations up to {t0:,}, then every {100 / GROWTH_DENOMINATOR:g} % of the "
            "stream (the stop step is the first of these checks at which the verdict is decided)")


def checks_in(start: int, rows: int, batch: int, thin_after: int = 0, end: int | None = None) -> np.ndarray:
    """The 0-based positions, within the piece of ``rows`` rows that starts at stream row ``start``, of the checks
    that fall in it: the schedule's steps (``schedule_steps``, counted from the stream's first row), and the stream's
    last row when the stream is known to end (``end``: its length) inside the piece. One function for every route:
    the monitor's checks on a whole stream (``check_points``), a chunk of a file or a live log (``RunningCounts``),
    a Dask partition (``fairaudit.engines.monitor.distributed.partition_counts``)."""
    start, rows = int(start), int(rows)
    local = schedule_steps(start, start + rows, batch, thin_after) - start - 1
    if end is not None and start <= int(end) - 1 < start + rows and (not len(local) or local[-1] != int(end) - 1 - start):
        local = np.append(local, int(end) - 1 - start)
    return local.astype(np.int64)


class RunningCounts:
    """Per leaf running (successes, n) of a stream taken a chunk at a time; ``consume`` one chunk's codes (or its
    ``Observations``), get the stats at its checks. The counts are the kernel's (``fairaudit.core.counting``: each
    chunk counted by ``count`` at its ``checks_in``, shifted by the ``Counts`` of the chunks before it)."""

    def __init__(self, keys, batch: int, thin_after: int = 0, extra=None):
        from fairaudit.core.counting import Counts

        if batch < 1:
            raise FairauditError(f"batch must be a positive integer, got {batch}")
        self.keys, self.batch, self.thin_after = list(keys), int(batch), int(thin_after)
        self.last_check = 0  # the step of the last check so far
        # ``extra(lo, hi)``: more steps in ``(lo, hi]`` whose stats ``consume`` keeps in ``extra_seen`` (not checks:
        # the live halves test's epochs, which the thinned schedule need not contain)
        self.extra, self.extra_seen = extra, (np.zeros(0, dtype=np.int64), {})
        self.counts = Counts.zero(self.keys)

    @property
    def rows(self) -> int:
        return self.counts.rows

    @property
    def successes(self) -> dict:
        return dict(zip(self.counts.keys, self.counts.successes))

    @property
    def n(self) -> dict:
        return dict(zip(self.counts.keys, self.counts.n))

    def consume(self, chunk, final: bool = False) -> tuple[np.ndarray, dict]:
        """``(steps, stats)`` for the checks that fall in this chunk (``chunk``: its row codes, or its
        ``Observations``); ``final``: the stream ends with this chunk, so its last row is a check too."""
        from fairaudit.core.allocation import LeafStats
        from fairaudit.core.counting import shift

        start, length = self.counts.rows, rows_of(chunk)
        local = checks_in(start, length, self.batch, self.thin_after, end=start + length if final else None)
        extra = (np.zeros(0, dtype=np.int64) if self.extra is None
                 else np.asarray(self.extra(start, start + length), dtype=np.int64).reshape(-1))
        at, total = count_piece(chunk, self.keys, np.concatenate([local, extra - start - 1]))
        at = shift(at, self.counts)
        stats = {k: LeafStats(s[:len(local)].astype(float), n[:len(local)].astype(float)) for k, (s, n) in at.items()}
        if self.extra is not None:
            self.extra_seen = (extra, {k: LeafStats(s[len(local):].astype(float), n[len(local):].astype(float))
                                       for k, (s, n) in at.items()})
        self.counts = self.counts + total
        if len(local):
            self.last_check = start + int(local[-1]) + 1
        return start + local + 1, stats

    def finish(self) -> tuple[np.ndarray, dict]:
        """``(steps, stats)`` of the stream's last check when the stream ends now: its last row, unless that row
        was a check already (then nothing); what ``consume(..., final=True)`` adds, for a stream whose end is
        only known after its last chunk (a live log)."""
        from fairaudit.core.allocation import LeafStats

        if not self.rows or self.rows == self.last_check:
            return np.zeros(0, dtype=np.int64), {k: LeafStats(np.zeros(0), np.zeros(0)) for k in self.keys}
        self.last_check = self.rows
        return (np.array([self.rows], dtype=np.int64),
                {k: LeafStats(np.array([float(s)]), np.array([float(n)]))
                 for k, s, n in zip(self.keys, self.counts.successes, self.counts.n)})


def rows_of(piece) -> int:
    """The rows of a piece of the stream: row codes, ``Observations`` or a ``Counted`` piece."""
    if isinstance(piece, np.ndarray):
        return len(piece)
    return int(piece.rows if isinstance(piece, Counted) else piece.length)


def count_piece(piece, keys, points) -> tuple[dict, object]:
    """The kernel's ``(at, total)`` of one piece of the stream at ``points`` (``fairaudit.core.counting``): row codes
    counted by ``count``, ``Observations`` by ``count_rows``, a ``Counted`` piece as it was counted."""
    from fairaudit.core.counting import count, count_rows

    if isinstance(piece, np.ndarray):
        return count(piece, keys, points)
    if isinstance(piece, Counted):
        return piece.count(points)
    return count_rows(piece, keys, points)


class CheckPoints:
    """``fairaudit.engines.monitor.engine.check_points(length, batch, thin_after) + offset`` without building the
    array of the regular checks: the checks of a stream of any length in small memory (20 M checks would be 160 MB
    per array; the thinned checks after ``thin_after`` grow only with the logarithm of the length and are held).
    Supports ``len``, indexing by an int, a slice or an array (numpy values), ``+ k`` and ``count_upto``."""

    def __init__(self, length: int, batch: int, offset: int = 0, thin_after: int = 0):
        if batch < 1:
            raise FairauditError(f"batch must be a positive integer, got {batch}")
        self.length, self.batch, self.offset = int(length), int(batch), int(offset)
        self.thin_after = int(thin_after)
        t0 = thinning_start(self.batch, self.thin_after)
        self.regular = (self.length if t0 is None else min(self.length, t0)) // self.batch
        self.tail = (np.zeros(0, dtype=np.int64) if t0 is None or self.length <= t0
                     else _thinned_upto(self.batch, t0, self.length))  # thinned steps ≤ length
        last = self.tail[-1] if len(self.tail) else self.regular * self.batch
        self.size = self.regular + len(self.tail) + (1 if self.length and last != self.length else 0)

    def __len__(self) -> int:
        return self.size

    def _values(self, i: np.ndarray) -> np.ndarray:
        i = np.asarray(i, dtype=np.int64)
        if not len(self.tail):
            return np.where(i < self.regular, (i + 1) * self.batch - 1, self.length - 1) + self.offset
        j = np.clip(i - self.regular, 0, len(self.tail) - 1)
        thinned = np.where(i - self.regular < len(self.tail), self.tail[j] - 1, self.length - 1)
        return np.where(i < self.regular, (i + 1) * self.batch - 1, thinned) + self.offset

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self._values(np.arange(*key.indices(self.size), dtype=np.int64))
        if np.ndim(key) == 0:
            i = int(key) + (self.size if int(key) < 0 else 0)
            if not 0 <= i < self.size:
                raise IndexError(f"check {key} of {self.size}")
            return self._values(np.int64(i))[()]
        key = np.asarray(key)
        key = np.flatnonzero(key) if key.dtype == bool else np.where(key < 0, key + self.size, key)
        return self._values(key)

    def __add__(self, k: int) -> "CheckPoints":
        return CheckPoints(self.length, self.batch, self.offset + int(k), self.thin_after)

    def count_upto(self, x: int) -> int:
        """How many checks are ≤ ``x`` (``np.searchsorted(checks, x, side="right")``)."""
        y = int(x) - self.offset
        if y < 0:
            return 0
        count = min((y + 1) // self.batch, self.regular)
        count += int(np.searchsorted(self.tail, min(y + 1, self.length), side="right"))
        if self.size > self.regular + len(self.tail) and y >= self.length - 1:
            count += 1
        return count


def _count_upto(ends, x: int) -> int:
    if isinstance(ends, CheckPoints):
        return ends.count_upto(x)
    return int(np.searchsorted(ends, x, side="right"))


def _span(index, size: int) -> tuple[int, int]:
    """``(lowest, highest)`` check position that ``index`` (an int, a slice or an array of positions) selects,
    without building an array of every check; ``(0, -1)`` for an empty selection."""
    if isinstance(index, slice):
        r = range(*index.indices(size))
        return (min(r[0], r[-1]), max(r[0], r[-1])) if len(r) else (0, -1)
    if np.ndim(index) == 0:
        i = int(index)
        i = i + size if i < 0 else i
        return i, i
    arr = np.asarray(index)
    if not arr.size:
        return 0, -1
    if arr.dtype == bool:
        hit = np.flatnonzero(arr)
        return (int(hit[0]), int(hit[-1])) if len(hit) else (0, -1)
    arr = np.where(arr < 0, arr + size, arr)
    return int(arr.min()), int(arr.max())


class _LazyStats:
    """A leaf's (successes, n) at the checks, computed as the monitor asks for them (``LeafStats.at``'s
    interface; the monitor asks in increasing order of checks, so the checks before the lowest one asked
    for are forgotten: memory is a window of checks, not the stream's)."""

    def __init__(self, owner: "ChunkedObservations", key: str):
        self.owner, self.key = owner, key

    def at(self, index):
        from fairaudit.core.allocation import LeafStats

        low, high = _span(index, len(self.owner.ends))
        if high >= low:
            self.owner.fill(high)
            self.owner.forget(low)
        base = self.owner.base
        s, n = self.owner.cum[self.key]
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self.owner.ends))
            local = slice(start - base, max(stop - base, 0) if step > 0 else None, step) if high >= low else \
                slice(0, 0)
        elif np.ndim(index) == 0:
            local = (int(index) + (len(self.owner.ends) if int(index) < 0 else 0)) - base
        else:
            arr = np.asarray(index)
            local = (np.flatnonzero(arr) if arr.dtype == bool else np.where(arr < 0, arr + len(self.owner.ends),
                                                                             arr)) - base
        return LeafStats(s[local].astype(float), n[local].astype(float))


class Counted:
    """A piece of the stream counted where it was read (a Dask worker): its ``rows``, the kernel's counts at its
    ``points`` (``fairaudit.core.counting.count``: 0-based positions in the piece, increasing; ``at[key] =
    (successes, n)``, not yet shifted by the rows before the piece) and its totals (``Counts``)."""

    def __init__(self, rows: int, points, at: dict, total):
        self.rows, self.points, self.at, self.total = int(rows), np.asarray(points, dtype=np.int64), at, total

    def count(self, wanted) -> tuple[dict, object]:
        """``(at, total)`` as ``count`` gives them for the positions ``wanted`` (each one of ``points``)."""
        wanted = np.asarray(wanted, dtype=np.int64)
        where = np.searchsorted(self.points, wanted)
        if len(wanted) and (where.max() >= len(self.points) or (self.points[where] != wanted).any()):
            raise RuntimeError("a piece of the stream was not counted at every check that falls in it")
        return {k: (np.asarray(s)[where], np.asarray(n)[where]) for k, (s, n) in self.at.items()}, self.total


class ChunkedObservations:
    """The monitor's ``Observations`` for a stream read chunk by chunk (``chunks``: an iterator of the pieces of
    the stream in stream order — each a chunk's row codes (``fairaudit.core.counting.encode``), its ``Observations``,
    or a ``Counted`` piece counted where it was read; ``length``: the stream's rows). Every piece is counted by the
    one kernel (``fairaudit.core.counting``: ``count`` at the checks that fall in it, ``shift`` by the ``Counts``
    of the pieces before, ``+``), wherever it was read. Only one chunk is in memory at a time, and
    of the checks' statistics only a window (from the lowest check the monitor last asked for): the monitor
    (``monitor_batches``) asks for the statistics of its checks in order, and the chunks are read as far as they
    need. ``values``/``masks`` are not kept; the halves test of ``OrderEvidence`` (file order) uses
    ``half_counts`` (``halves``: per leaf ``(n1, s1, n2, s2)``, the counts of the stream's first ``length // 2``
    rows and of the rest, known before the run, e.g. from ``CodeStore.half_counts``). Without it that test is
    skipped with a warning-free empty answer: give it for a stream in file order."""

    def __init__(self, keys, chunks, length: int, halves: dict | None = None, flips=None):
        from fairaudit.core.counting import Counts

        self.keys, self.chunks, self.length = list(keys), iter(chunks), int(length)
        self.counts = Counts.zero(self.keys)  # the pieces read so far
        self.held = 0  # the most checks held at once so far
        self.ends = np.zeros(0, dtype=np.int64)
        self.cum: dict = {}
        self.filled = 0  # checks known: [0, filled); kept: [base, filled)
        self.base = 0
        self.halves = halves
        self.flips = flips  # the ``Fair[...]`` leaves' first counterexamples (``FirstFlips``), or None
        self.missing: dict = {}  # leaf key -> ``Missing``: the stream's rows each leaf leaves out (known up front)

    def missing_warnings(self) -> list[str]:
        """The warning for each leaf that leaves rows out for a missing value (``observations.missing_warning``)."""
        from fairaudit.core.observations import missing_warnings

        return missing_warnings(self.missing)

    def counterexamples(self, upto: int | None = None):
        """The ``Fair[...]`` leaves' counterexamples among the first ``upto`` rows (``upto`` a check's step, as
        the monitor asks; None without such leaves), their count read off the leaves' successes in the window
        (``fairaudit.core.observations.FirstFlips``)."""
        if self.flips is None or not self.flips.keys:
            return None
        upto = self.length if upto is None else int(upto)
        return self.flips.upto(upto, {k: self._successes(k, upto) for k in self.flips.keys})

    def _successes(self, key: str, upto: int) -> int:
        """A leaf's successes among the first ``upto`` rows, ``upto`` the step of a check in the window."""
        if upto <= 0:
            return 0
        i = _count_upto(self.ends, upto - 1) - 1
        if i < 0 or int(self.ends[i]) != upto - 1:
            raise FairauditError(f"internal: no check ends at row {upto:,}")
        self.fill(i)
        if i < self.base:
            raise FairauditError(f"internal: check {i:,} was forgotten before its counterexamples were asked for")
        return int(self.cum[key][0][i - self.base])

    def half_counts(self, key: str):
        """``(n1, s1, n2, s2)`` of ``key`` over the first half of the stream and the rest (None if unknown)."""
        return None if self.halves is None else self.halves.get(key)

    lazy_checks = True  # the monitor may give ``stats`` a ``CheckPoints`` (no array of every check)

    def stats(self, ends) -> dict:
        self.ends = ends if isinstance(ends, CheckPoints) else np.asarray(ends, dtype=np.int64)
        self.cum = {k: (np.zeros(0, np.int64), np.zeros(0, np.int64)) for k in self.keys}
        self.base = self.filled = 0
        return {k: _LazyStats(self, k) for k in self.keys}

    def forget(self, low: int) -> None:
        """Drop the statistics of the checks before ``low`` (never asked for again)."""
        if low > self.base:
            cut = min(low, self.filled) - self.base
            if cut > 0:
                self.cum = {k: (s[cut:].copy(), n[cut:].copy()) for k, (s, n) in self.cum.items()}
                self.base += cut

    def fill(self, check: int) -> None:
        """Read pieces until the statistics of check ``check`` are known."""
        from fairaudit.core.counting import shift

        while self.filled <= check:
            piece = next(self.chunks, None)
            if piece is None:
                raise FairauditError(f"the stream ended after {self.counts.rows:,} rows; {self.length:,} were expected")
            rows = rows_of(piece)
            start = self.counts.rows
            stop = _count_upto(self.ends, start + rows - 1) if rows else self.filled
            local = np.asarray(self.ends[self.filled:stop], dtype=np.int64) - start
            at, total = count_piece(piece, self.keys, local)
            for k, (s, n) in shift(at, self.counts).items():
                old_s, old_n = self.cum[k]
                self.cum[k] = (np.concatenate([old_s, s]), np.concatenate([old_n, n]))
            self.counts = self.counts + total
            self.filled = stop
            self.held = max(self.held, self.filled - self.base)


class CodeStore:
    """A stream of row codes: in memory (``codes``) or in a binary file of ``dtype`` items (``path``), appended
    to chunk by chunk and read back in chunks."""

    def __init__(self, dtype, path=None, codes: np.ndarray | None = None):
        self.dtype, self.path = np.dtype(dtype), (None if path is None else Path(path))
        self._parts = [] if codes is None else [codes]  # in memory: the appended arrays, joined when read
        self.rows = 0 if codes is None else len(codes)
        self._out = None
        if self.path is not None and codes is None:
            self._out = open(self.path, "wb")

    def append(self, codes: np.ndarray) -> None:
        codes = np.asarray(codes, dtype=self.dtype)
        if self._out is not None:
            self._out.write(codes.tobytes())
        else:
            self._parts.append(codes.copy())
        self.rows += len(codes)

    @property
    def codes(self) -> np.ndarray:
        """The codes held in memory, as one array (joined once: appending stays linear in the stream)."""
        if len(self._parts) != 1:
            self._parts = [np.concatenate(self._parts) if self._parts else np.zeros(0, self.dtype)]
        return self._parts[0]

    def close(self) -> "CodeStore":
        if self._out is not None:
            self._out.close()
            self._out = None
        return self

    def chunks(self, rows: int = 1 << 20) -> Iterator[np.ndarray]:
        """The codes in order, ``rows`` at a time."""
        self.close()
        if self.path is None:  # the appended arrays as they are (no joined copy of them all)
            for part in list(self._parts):
                for a in range(0, len(part), rows):
                    yield part[a:a + rows]
            return
        with open(self.path, "rb") as f:
            while True:
                part = np.fromfile(f, dtype=self.dtype, count=rows)
                if not len(part):
                    return
                yield part

    def load(self) -> np.ndarray:
        """Every code in one array (the caller has decided it fits in memory)."""
        if self.path is None:
            return self.codes
        self.close()
        return np.fromfile(self.path, dtype=self.dtype)

    def half_counts(self, keys) -> dict:
        """Per leaf ``(n1, s1, n2, s2)``: observations and successes among the first ``rows // 2`` codes and the
        rest (the halves test of ``OrderEvidence``), in one pass (``fairaudit.core.counting.halves``)."""
        from fairaudit.core.counting import halves

        return halves(self.chunks(), keys, self.rows // 2)

    def observations(self, keys, rows: int = 1 << 16, halves: bool = False, flips=None) -> ChunkedObservations:
        """The monitor's observations of this stream, decoded ``rows`` codes at a time (with the halves' counts
        for the file-order test when ``halves``; ``flips``: the ``Fair[...]`` leaves' first counterexamples,
        ``ChunkedObservations.counterexamples``)."""
        keys = list(keys)
        counts = self.half_counts(keys) if halves else None
        return ChunkedObservations(keys, self.chunks(rows), self.rows, halves=counts, flips=flips)

    def first_flipped(self, keys, fair_keys, keep: int) -> dict:
        """Per ``Fair[...]`` leaf of ``fair_keys``, the stream positions of its first ``keep`` rows whose decision the
        flip changes (a row counted for the leaf, not a success), increasing; one pass over the codes."""
        keys = list(keys)
        found = {k: [] for k in fair_keys}
        seen = 0
        for part in self.chunks():
            obs = decode(part, keys)
            for k in fair_keys:
                if len(found[k]) < keep:
                    hit = np.flatnonzero(obs.masks[k] & ~obs.values[k])[: keep - len(found[k])]
                    found[k].extend((hit + seen).tolist())
            seen += len(part)
            if all(len(v) >= keep for v in found.values()):
                break
        return {k: np.asarray(v, dtype=np.int64) for k, v in found.items()}

    def take(self, positions: np.ndarray) -> np.ndarray:
        """The codes at the stream ``positions`` (any order), read without loading a stream kept in a file."""
        positions = np.asarray(positions, dtype=np.int64)
        if self.path is None:
            return self.codes[positions]
        self.close()
        if not self.rows:
            return np.zeros(0, self.dtype)
        return np.asarray(np.memmap(self.path, dtype=self.dtype, mode="r", shape=(self.rows,))[positions])


def _fresh(folder, prefix: str) -> Path:
    """A new, empty file's path in ``folder`` (never one another run is using)."""
    import os
    import tempfile

    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".codes", dir=folder)
    os.close(fd)
    return Path(name)


MEMORY_SHUFFLE_BYTES = 1 << 30  # codes up to this size are shuffled in memory (1 GiB: 1 G rows of ≤ 4 leaves)


def shuffle_codes(store: CodeStore, seed: int, *, memory_bytes: int = MEMORY_SHUFFLE_BYTES, folder=None,
                  buckets: int | None = None) -> tuple[CodeStore, dict]:
    """``(the codes in a uniformly random order drawn with seed, how)``.

    In memory when ``rows × itemsize ≤ memory_bytes``: ``order_rng(seed).shuffle`` (Fisher–Yates;
    ``fairaudit.base.order``: the seed and the project's salt), the very permutation ``order_rng(seed).permutation(rows)``
    that the in-memory monitor applies to the audited
    rows, so the stream is the in-memory run's, row for row.

    Otherwise externally, in ``folder``: every code is sent to one of ``B`` spill files chosen independently and
    uniformly (``B = buckets`` or enough for a file to fit in half of ``memory_bytes``); then each spill file in
    turn is read, Fisher–Yates shuffled, and appended to the output.

    Why the external order is uniform. Give every row an independent key U ~ Uniform(0, 1) and sort by it: every
    order is equally likely (the keys are exchangeable and tie with probability 0). Write U = (J + V) / B with
    J = ⌊B U⌋ the bucket and V = B U − J: J is uniform on {0, …, B − 1}, V uniform on (0, 1), and J, V and the
    other rows' keys are independent. Sorting by U is sorting by J, then, within a bucket, by V. Given the
    buckets, the V's of a bucket's rows are i.i.d. uniform and independent of everything else, so their order
    within the bucket is a uniform random permutation of the bucket, independent across buckets — which is what
    Fisher–Yates with fresh random draws produces. So bucket-then-shuffle has the distribution of a sort by i.i.d.
    keys: every one of the n! orders has probability 1/n!, whatever B (B = 1 is plain Fisher–Yates). The draws
    come from one seeded generator, so the same seed gives the same order
    (``tests/engines/test_outofcore_shuffle.py`` checks uniformity by enumeration and reproducibility)."""
    from fairaudit.base.order import order_rng

    rng = order_rng(seed)
    size = store.rows * store.dtype.itemsize
    if buckets is None and size <= memory_bytes:
        codes = np.array(store.load(), copy=True)
        rng.shuffle(codes)
        return CodeStore(store.dtype, codes=codes), {"shuffle": "in memory", "seed": int(seed)}
    import tempfile

    folder = Path(folder or tempfile.gettempdir())
    count = int(buckets or max(2, -(-2 * size // max(1, memory_bytes))))
    spills = [CodeStore(store.dtype, path=_fresh(folder, f"spill{j}-")) for j in range(count)]
    try:
        for part in store.chunks():
            which = rng.integers(0, count, size=len(part))
            order = np.argsort(which, kind="stable")
            bounds = np.searchsorted(which[order], np.arange(count + 1))
            for j in range(count):
                if bounds[j + 1] > bounds[j]:
                    spills[j].append(part[order[bounds[j]:bounds[j + 1]]])
        out = CodeStore(store.dtype, path=_fresh(folder, "shuffled-"))
        for spill in spills:
            codes = np.array(spill.close().load(), copy=True)
            rng.shuffle(codes)
            out.append(codes)
            spill.path.unlink()
        return out.close(), {"shuffle": f"external, {count} spill files", "seed": int(seed)}
    finally:
        for spill in spills:
            spill.close()
            if spill.path.exists():
                spill.path.unlink()


def shuffle_rows(store: CodeStore, seed: int, *, memory_bytes: int = MEMORY_SHUFFLE_BYTES,
                 folder=None) -> tuple[CodeStore, CodeStore, dict]:
    """``(the codes in a seeded uniformly random order, ids, how)`` where ``ids`` holds, at each position of the new
    order, the position the code had in ``store`` — for a stream whose rows must be found again after the shuffle
    (the ``Fair[...]`` counterexamples). The row ids 0, 1, … are shuffled by ``shuffle_codes`` (the same draws
    whatever the item type, so in memory this is the very permutation ``shuffle_codes`` applies to the codes, and
    the in-memory monitor's), then the codes are gathered in that order. It holds 4 bytes a row (8 beyond 2³²
    rows) more than ``shuffle_codes``: use it only when the rows are needed."""
    import tempfile

    folder = Path(folder or tempfile.gettempdir())
    dtype = np.dtype(np.uint32 if store.rows < (1 << 32) else np.uint64)
    spill = store.rows * dtype.itemsize > memory_bytes
    rows = CodeStore(dtype, path=_fresh(folder, "ids-") if spill else None)
    for a in range(0, store.rows, 1 << 20):
        rows.append(np.arange(a, min(a + (1 << 20), store.rows), dtype=dtype))
    ids, how = shuffle_codes(rows.close(), seed, memory_bytes=memory_bytes, folder=folder)
    if rows.path is not None:
        rows.path.unlink()
    if ids.path is None and store.path is None:
        return CodeStore(store.dtype, codes=store.codes[ids.codes]), ids, how
    out = CodeStore(store.dtype, path=_fresh(folder, "shuffled-"))
    for part in ids.chunks():
        out.append(store.take(part))
    return out.close(), ids, how
