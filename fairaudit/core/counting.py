"""The one counting kernel: what every route does with an audited stream once its rows are read.

The monitor's statistics depend on a row only through two bits per distinct leaf of the specification: whether
the row counts for the leaf (its condition holds: ``E[A | B]`` counts only rows satisfying ``B``) and whether it is a
success there. So every route — in memory, a file read out of core, a live log, Dask partitions, and any later
source — does the same three things, with these same functions, and differs only in where its rows come from and
where the work runs:

1. **A batch of rows becomes observation codes** (``fairaudit.core.codes``: every leaf observed by
   ``fairaudit.core.observations.observe`` and packed by ``encode`` into one small unsigned integer per row).
2. **Codes become counts** (``count``): each leaf's running (successes, n) at the positions asked for — the check
   points of the schedule that fall in the piece — and the piece's totals (``Counts``).
3. **Pieces combine by one associative merge**: the ``Counts`` of consecutive pieces add up (``+``), and the counts
   at a later piece's points are shifted by the ``Counts`` of everything before it (``shift``). A piece may be a
   chunk read on the client or a partition counted on a Dask worker: the merge does not care where it ran, and
   splitting a stream anywhere (a constant piece, a single row, an empty piece, a boundary on a check) gives the
   same counts as the whole stream at once.

No route keeps a count of its own: an unconditional leaf's ``n`` is counted from its bits like any other (the
shortcut "n is the row's position" holds only from the stream's first row, which a piece does not know).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairaudit.base.errors import FairauditError


# ---- row codes: what the monitor needs of a row, a few bits per leaf ---------------------------------
#
# The monitor's statistics depend on a row only through each distinct leaf's two bits: whether the row counts
# for it (its mask: the ``given`` condition) and whether it is a success (value and mask). ``encode`` packs them
# into one unsigned integer per row (leaf i: bit 2i = success, bit 2i + 1 = counts), the smallest of 8/16/32/64
# bits that holds them (at most 32 distinct leaves); ``fairaudit.core.codes.decode`` gives back the same ``Observations``. A stream of
# codes is therefore the stream of rows for the monitor, at 1 byte a row for up to four leaves.

def code_dtype(keys) -> np.dtype:
    """The unsigned integer type of a row's code for these leaves."""
    bits = 2 * len(list(keys))
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if bits <= 8 * np.dtype(dtype).itemsize:
            return np.dtype(dtype)
    raise FairauditError(f"{bits // 2} distinct E[...] terms: a stream read out of core holds at most 32")


def encode(obs, keys) -> np.ndarray:
    """Each row of ``obs`` (``Observations``) as its code (see above)."""
    keys = list(keys)
    dtype = code_dtype(keys)
    code = np.zeros(int(obs.length), dtype=dtype)
    for i, k in enumerate(keys):
        m = np.asarray(obs.masks[k], dtype=bool)
        v = np.asarray(obs.values[k], dtype=bool) & m
        code |= v.astype(dtype) << dtype.type(2 * i)
        code |= m.astype(dtype) << dtype.type(2 * i + 1)
    return code



@dataclass(frozen=True)
class Counts:
    """Per leaf (in ``keys`` order) the successes and observations over some rows of the stream, and how many rows
    (``rows``). Two add up (``a + b``: the rows of ``a`` followed by those of ``b``), and adding is associative with
    ``zero`` as its unit, so the totals of pieces counted anywhere, in any grouping, are the whole stream's."""

    keys: tuple
    rows: int
    successes: tuple
    n: tuple

    @classmethod
    def zero(cls, keys) -> "Counts":
        keys = tuple(keys)
        return cls(keys, 0, (0,) * len(keys), (0,) * len(keys))

    def __add__(self, other: "Counts") -> "Counts":
        if other.keys != self.keys:
            raise ValueError(f"counts of different leaves cannot be added: {self.keys} and {other.keys}")
        return Counts(self.keys, self.rows + other.rows, tuple(a + b for a, b in zip(self.successes, other.successes)),
                      tuple(a + b for a, b in zip(self.n, other.n)))

    def of(self, key) -> tuple[int, int]:
        """``(successes, n)`` of one leaf."""
        i = self.keys.index(key)
        return self.successes[i], self.n[i]


def _bits(codes: np.ndarray, bit: int) -> np.ndarray:
    return (codes >> codes.dtype.type(bit)) & codes.dtype.type(1)


def count(codes, keys, points=()) -> tuple[dict, Counts]:
    """``(at, totals)`` of a piece of the stream given as its row codes (``encode``; leaf ``i`` of
    ``keys``: bit ``2i`` a success, bit ``2i + 1`` the row counts for it): ``at[key] = (successes, n)``, int64
    arrays of the leaf's counts over the piece's rows ``0 … p`` for each position ``p`` of ``points`` (0-based in
    the piece, any order, each < the piece's length), and the piece's ``Counts``."""
    codes = np.asarray(codes)
    keys = tuple(keys)
    points = np.asarray(points, dtype=np.int64).reshape(-1)
    if len(points) and (points.min() < 0 or points.max() >= len(codes)):
        raise ValueError(f"points outside a piece of {len(codes):,} rows")
    at, successes, n = {}, [], []
    for i, key in enumerate(keys):
        if not len(codes):
            s_at = n_at = np.zeros(0, dtype=np.int64)
            total_s = total_n = 0
        elif len(points):
            s = np.cumsum(_bits(codes, 2 * i), dtype=np.int64)
            m = np.cumsum(_bits(codes, 2 * i + 1), dtype=np.int64)
            s_at, n_at = s[points], m[points]
            total_s, total_n = int(s[-1]), int(m[-1])
        else:  # totals only: no prefix sums
            s_at = n_at = np.zeros(0, dtype=np.int64)
            total_s = int(np.count_nonzero(_bits(codes, 2 * i)))
            total_n = int(np.count_nonzero(_bits(codes, 2 * i + 1)))
        at[key] = (s_at, n_at)
        successes.append(total_s)
        n.append(total_n)
    return at, Counts(keys, int(len(codes)), tuple(successes), tuple(n))


def shift(at: dict, before: Counts) -> dict:
    """The counts ``at`` of a piece's points (``count``) as counts of the whole stream: each leaf's successes and
    observations plus those of every row before the piece (``before``) — the merge applied to prefix sums."""
    out = {}
    for key, (s, n) in at.items():
        bs, bn = before.of(key)
        out[key] = (np.asarray(s, dtype=np.int64) + bs, np.asarray(n, dtype=np.int64) + bn)
    return out


def halves(pieces, keys, half: int) -> dict:
    """Per leaf ``(n1, s1, n2, s2)``: observations and successes among the first ``half`` rows of a stream given as
    its pieces' row codes (in order) and among the rest — the totals (``count``) of each side, added up (the halves
    test of ``fairaudit.engines.monitor.engine.OrderEvidence``)."""
    keys = tuple(keys)
    first, rest, seen = Counts.zero(keys), Counts.zero(keys), 0
    for part in pieces:
        part = np.asarray(part)
        cut = min(max(int(half) - seen, 0), len(part))
        first = first + count(part[:cut], keys)[1]
        rest = rest + count(part[cut:], keys)[1]
        seen += len(part)
    return {k: (first.of(k)[1], first.of(k)[0], rest.of(k)[1], rest.of(k)[0]) for k in keys}


CODE_LEAVES = 32  # the most leaves one row code holds (``code_dtype``: 64 bits)


def count_rows(obs, keys, points=()) -> tuple[dict, Counts]:
    """``count`` of a piece given as its ``Observations`` (a route that observed its rows in memory): the rows
    encoded (``encode``) ``CODE_LEAVES`` leaves at a time and counted by ``count``."""
    keys = tuple(keys)
    at, total = {}, None
    for a in range(0, max(1, len(keys)), CODE_LEAVES):
        group = keys[a:a + CODE_LEAVES]
        part_at, part = count(encode(obs, group), group, points)
        at.update(part_at)
        total = part if total is None else Counts(total.keys + part.keys, part.rows, total.successes + part.successes,
                                                  total.n + part.n)
    return at, total
