"""When each row enters the scan's stream: the looks of the convergence plot, the same on every route.

A scan at rest reports its intervals at a few *looks* — prefixes of the stream of audited rows — besides the final
one (``ScanResult.history``). The looks are fixed on a grid that does not depend on how the rows are read: a row's
*time* is its position among the audited rows (``order="given"``: file order) or a seeded uniform draw
(``order="shuffle"``), and a look closes when time passes ``FIRST_LOOK · LOOK_RATIO**k``. So a row's look is a
function of its position and the seed alone (``look_of``): the rows can be counted in any pieces — a frame in
memory in slices, a file's chunks, Dask partitions — and the looks add up to the same prefixes.

In the shuffle, time is ``u · SCALE`` with ``u`` a uniform draw per row (a seeded 64-bit mix of the row's position,
``uniform``): ordering the rows by ``u`` is a uniformly random permutation, independent of the data, and each look
is a prefix of it — of a random length, about ``SCALE / time`` of the rows, known once every row is counted.
The intervals hold at every prefix at once (the anytime mode's confidence sequences), so at these ones too.
"""
from __future__ import annotations

import numpy as np

FIRST_LOOK = 100  # the first look: about this many rows
LOOK_RATIO = 1.5  # each look about this many times the rows of the one before
SCALE = float(1 << 52)  # shuffle: a row's time is its draw u ∈ (0, 1] times this
LOOKS = int(np.ceil(np.log(SCALE / FIRST_LOOK) / np.log(LOOK_RATIO))) + 2  # grid slots, every time covered

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (a bijection of 64-bit words with good avalanche), wrapping arithmetic."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _MIX1
        x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


def uniform(seed: int, start: int, n: int) -> np.ndarray:
    """The draws ``u ∈ (0, 1]`` of the rows at positions ``start … start + n − 1`` (a function of the seed and the
    position alone)."""
    with np.errstate(over="ignore"):
        base = _mix(np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF) + _GOLDEN)
        x = _mix(np.arange(start, start + n, dtype=np.uint64) * _GOLDEN + base)
    return ((x >> np.uint64(11)).astype(np.float64) + 1.0) / float(1 << 53)


def look_of(start: int, n: int, order: str, seed: int) -> np.ndarray:
    """The grid slot (0 … ``LOOKS`` − 1) of the audited rows at positions ``start … start + n − 1``."""
    if order == "shuffle":
        time = uniform(seed, start, n) * SCALE
    else:
        time = np.arange(start + 1, start + n + 1, dtype=np.float64)
    slot = np.ceil(np.log(np.maximum(time, 1.0) / FIRST_LOOK) / np.log(LOOK_RATIO))
    return np.clip(slot, 0, LOOKS - 1).astype(np.int64)


def chosen(rows_per_slot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(the slots that close a look, the rows up to each)``: every slot that holds rows, once the stream has at
    least ``FIRST_LOOK`` rows (or all of them); the last look is every row."""
    rows = np.cumsum(np.asarray(rows_per_slot, dtype=np.int64))
    if not len(rows) or rows[-1] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first = min(FIRST_LOOK, int(rows[-1]))
    held = np.asarray(rows_per_slot) > 0
    slots = np.flatnonzero(held & (rows >= first))
    return slots, rows[slots]
