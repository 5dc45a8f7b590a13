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

#
# A quantity leaf (``E[amount | …]``, ``fairaudit.spec.quantities``) needs a number per row, not a bit: its value
# mapped to [0, 1] by its declared range (``fairaudit.core.observations.observe``) and held in fixed point, an
# integer number of ``QUANTUM``s, in a field ``q<i>`` of a structured code beside the bits (``bits``; the leaf's
# success bit stays 0). Sums of such integers are exact and so are their products by ``QUANTUM`` (up to 2**53
# quanta: 2**31 rows at the top of the range), so the counts of a stream do not depend on how it was split, as
# for events. Rounding a value to the nearest quantum moves a mean by at most QUANTUM / 2, which the leaf's interval
# is widened by (``fairaudit.core.evaluate.CompiledSpec.leaf_value``).

QUANTA = 1 << 22
QUANTUM = 1.0 / QUANTA  # a quantity's fixed-point step on [0, 1]


def code_dtype(keys, quantities=()) -> np.dtype:
    """The type of a row's code for these leaves: an unsigned integer of their bits, or, when some are quantity
    leaves (``quantities``: their keys), a structured type with those bits (``bits``) and one int32 field ``q<i>``
    per quantity leaf (``i``: its position in ``keys``)."""
    keys = list(keys)
    bits = 2 * len(keys)
    for base in (np.uint8, np.uint16, np.uint32, np.uint64):
        if bits <= 8 * np.dtype(base).itemsize:
            break
    else:
        raise FairauditError(f"{bits // 2} distinct E[...] terms: a stream read out of core holds at most 32")
    fields = [(f"q{i}", np.int32) for i, k in enumerate(keys) if k in set(quantities)]
    return np.dtype([("bits", base)] + fields) if fields else np.dtype(base)


def quantity_keys(obs, keys) -> list:
    """The keys among ``keys`` whose observations are numbers (quantity leaves, ``Observations.ranges``), not 0/1."""
    ranges = getattr(obs, "ranges", None) or {}
    return [k for k in keys if k in ranges]


def unit_values(values, mask, bounds) -> np.ndarray:
    """A quantity's values mapped to [0, 1] by its range ``bounds`` and to fixed point (int32 ``QUANTUM``s; 0 where
    ``mask`` is false). The values lie in their range (``fairaudit.core.observations`` refuses any other): the clip
    only absorbs the float rounding of the map."""
    low, high = bounds
    with np.errstate(invalid="ignore"):
        unit = np.clip((np.asarray(values, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    return np.where(np.asarray(mask, dtype=bool), np.rint(unit * QUANTA), 0).astype(np.int32)


def encode(obs, keys) -> np.ndarray:
    """Each row of ``obs`` (``Observations``) as its code (see above)."""
    keys = list(keys)
    quantities = quantity_keys(obs, keys)
    dtype = code_dtype(keys, quantities)
    base = dtype["bits"] if dtype.names else dtype
    code = np.zeros(int(obs.length), dtype=base)
    for i, k in enumerate(keys):
        m = np.asarray(obs.masks[k], dtype=bool)
        if k not in quantities:
            v = np.asarray(obs.values[k], dtype=bool) & m
            code |= v.astype(base) << base.type(2 * i)
        code |= m.astype(base) << base.type(2 * i + 1)
    if not dtype.names:
        return code
    out = np.zeros(int(obs.length), dtype=dtype)
    out["bits"] = code
    for i, k in enumerate(keys):
        if k in quantities:
            out[f"q{i}"] = unit_values(obs.values[k], obs.masks[k], obs.ranges[k])
    return out


def amounts(codes: np.ndarray, i: int) -> np.ndarray | None:
    """Leaf ``i``'s fixed-point values (int64, in ``QUANTUM``s) in a run of codes, or None for an event leaf."""
    names = codes.dtype.names
    if not names or f"q{i}" not in names:
        return None
    return codes[f"q{i}"].astype(np.int64)


def bits_of(codes: np.ndarray) -> np.ndarray:
    """The bits of a run of codes (a structured code's ``bits`` field)."""
    return codes["bits"] if codes.dtype.names else codes



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
    bits = bits_of(codes)
    for i, key in enumerate(keys):
        amount = amounts(codes, i)
        if not len(codes):
            s_at = n_at = np.zeros(0, dtype=np.int64)
            total_s = total_n = 0
        elif len(points):
            s = np.cumsum(_bits(bits, 2 * i) if amount is None else amount, dtype=np.int64)
            m = np.cumsum(_bits(bits, 2 * i + 1), dtype=np.int64)
            s_at, n_at = s[points], m[points]
            total_s, total_n = int(s[-1]), int(m[-1])
        else:  # totals only: no prefix sums
            s_at = n_at = np.zeros(0, dtype=np.int64)
            total_s = int(np.count_nonzero(_bits(bits, 2 * i)) if amount is None else amount.sum())
            total_n = int(np.count_nonzero(_bits(bits, 2 * i + 1)))
        if amount is not None:  # a quantity's sum in units of [0, 1]: exact (module note above)
            s_at, total_s = s_at * QUANTUM, total_s * QUANTUM
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
        s = np.asarray(s)
        out[key] = ((s + bs) if s.dtype.kind == "f" else s.astype(np.int64) + bs, np.asarray(n, dtype=np.int64) + bn)
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


# ---- cell counts: the same three steps for a grouping of the rows (the subgroup scan) ---------------------------
#
# The scan needs of a row its cell — one category code per attribute (``MISSING_CODE`` where the value is missing) —
# and its outcome: ``2 · decision + label`` (0 … 3; the label 0 without one). Step 1 codes a batch so
# (``fairaudit.subgroups.cells.encode`` and the decision, as every route evaluates it); step 2 counts it with one
# ``bincount`` over a combined code per row (``count_cells``: the cells of all the attributes at once, the finest
# grouping, and optionally a *look* per row — when the row enters the stream's prefixes); step 3 merges pieces
# by adding their counts cell by cell (``CellCounts +``: associative, ``CellCounts.zero`` its unit). Every coarser
# grouping — each table of the scan — is a sum over the finest one (``CellCounts.project``), as a database's
# ``GROUP BY CUBE`` derives its grouping sets from one pass. Memory: the cells that occur × looks × 4, not the rows.

MISSING_CODE = -1  # the category code of a missing value
OUTCOMES = 4  # a row's outcome: 2 · decision + label
DENSE_CELLS = 1 << 22  # a piece's combined codes are counted densely up to this many slots; by sorting beyond


@dataclass(frozen=True)
class CellCounts:
    """Rows counted per cell: ``keys`` (cells × attributes: category codes, ``MISSING_CODE`` for a missing value;
    distinct, in lexicographic order) and ``counts`` (cells × looks × ``OUTCOMES``: the rows of the cell that enter
    the stream at each look, by outcome). ``a + b`` counts the rows of both (cells matched by their codes)."""

    keys: np.ndarray
    counts: np.ndarray

    @classmethod
    def zero(cls, attributes: int, looks: int = 1) -> "CellCounts":
        return cls(np.zeros((0, attributes), dtype=np.int64), np.zeros((0, looks, OUTCOMES), dtype=np.int64))

    @property
    def looks(self) -> int:
        return int(self.counts.shape[1])

    @property
    def rows(self) -> int:
        return int(self.counts.sum())

    def __add__(self, other: "CellCounts") -> "CellCounts":
        if other.keys.shape[1] != self.keys.shape[1] or other.looks != self.looks:
            raise ValueError("counts of different attributes or looks cannot be added")
        if not len(other.keys):
            return self
        if not len(self.keys):
            return other
        return CellCounts(*group_sum(np.concatenate([self.keys, other.keys]),
                                     np.concatenate([self.counts, other.counts])))

    def project(self, columns) -> "CellCounts":
        """The counts of the coarser grouping by the attributes ``columns`` (positions): each of its cells the sum
        of the finest cells that agree with it there."""
        columns = list(columns)
        return CellCounts(*group_sum(self.keys[:, columns], self.counts))

    def totals(self) -> np.ndarray:
        """cells × ``OUTCOMES``: every look together."""
        return self.counts.sum(axis=1)


def group_sum(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct keys in lexicographic order, the values of equal keys added)``: ``keys`` rows × columns of
    integers ≥ ``MISSING_CODE``, ``values`` rows × … ."""
    keys = np.asarray(keys, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    if not len(keys):
        return keys.reshape(0, keys.shape[1]), values
    if keys.shape[1] == 0:
        return np.zeros((1, 0), dtype=np.int64), values.sum(axis=0, keepdims=True)
    flat, sizes = _combined(keys)
    if flat is not None:
        distinct, inverse = np.unique(flat, return_inverse=True)
        out_keys = np.stack(np.unravel_index(distinct, sizes), axis=1).astype(np.int64) + MISSING_CODE
    else:
        out_keys, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    out = np.zeros((len(out_keys),) + values.shape[1:], dtype=np.int64)
    np.add.at(out, inverse, values)
    return out_keys.reshape(len(out_keys), keys.shape[1]), out


def _combined(keys: np.ndarray):
    """``(one int64 code per row, the radixes)`` of integer rows ≥ ``MISSING_CODE`` (mixed radix, one pass per
    column), or ``(None, None)`` when the combinations overflow 62 bits."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64), tuple(1 for _ in range(keys.shape[1]))
    sizes = tuple(int(s) - MISSING_CODE + 1 for s in keys.max(axis=0))
    if np.prod([float(s) for s in sizes]) >= 2.0 ** 62:
        return None, None
    flat = np.zeros(len(keys), dtype=np.int64)
    for j, size in enumerate(sizes):
        if j:
            flat *= size
        flat += keys[:, j]
        flat -= MISSING_CODE
    return flat, sizes


def count_cells(codes, outcome, look=None, looks: int = 1, weights=None) -> CellCounts:
    """Step 2 for a piece of the scan's stream: ``codes`` (per attribute, the rows' category codes
    ≥ ``MISSING_CODE``: a rows × attributes array or a list of columns), ``outcome`` (0 … 3 per row), ``look`` (per
    row, 0 … ``looks`` − 1; None: all in look 0) and ``weights`` (rows that stand for that many: a database's
    grouped counts; None: 1 each) → the piece's ``CellCounts``: one ``bincount`` over a combined code per row,
    dense while the cells × looks × outcomes fit ``DENSE_CELLS`` slots, else by sorting the combined codes."""
    columns = _columns(codes)
    m = len(columns)
    outcome = np.asarray(outcome)
    n = len(outcome)
    slot = outcome.astype(np.int64) if look is None else np.asarray(look, dtype=np.int64) * OUTCOMES + outcome
    width = int(looks) * OUTCOMES
    w = None if weights is None else np.asarray(weights, dtype=np.int64)
    if not n:
        return CellCounts.zero(m, looks)
    if m == 0:
        counts = np.bincount(slot, weights=w, minlength=width)[:width]
        return CellCounts(np.zeros((1, 0), dtype=np.int64), np.rint(counts).astype(np.int64).reshape(1, looks,
                                                                                                     OUTCOMES))
    sizes = tuple(int(c.max()) - MISSING_CODE + 1 for c in columns)
    if float(np.prod([float(x) for x in sizes])) * width <= max(DENSE_CELLS, 4 * n):
        size = int(np.prod(sizes))
        flat = _mixed(columns, sizes) * width
        flat += slot
        counts = np.bincount(flat, weights=w, minlength=size * width)
        if w is not None:
            counts = np.rint(counts).astype(np.int64)
        counts = counts.reshape(size, looks, OUTCOMES)
        occupied = np.flatnonzero(counts.reshape(size, width).any(axis=1))
        keys = np.stack(np.unravel_index(occupied, sizes), axis=1).astype(np.int64) + MISSING_CODE
        return CellCounts(keys.reshape(len(occupied), m), counts[occupied])
    stacked = np.stack([np.asarray(c, dtype=np.int64) for c in columns], axis=1)
    flat, sizes = _combined(stacked)
    if flat is not None:
        distinct, inverse = np.unique(flat, return_inverse=True)
        keys = np.stack(np.unravel_index(distinct, sizes), axis=1).astype(np.int64) + MISSING_CODE
    else:
        keys, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    k = len(keys)
    counts = np.bincount(inverse * width + slot, weights=w, minlength=k * width)
    return CellCounts(keys.reshape(k, m), np.rint(counts).astype(np.int64).reshape(k, looks, OUTCOMES))


def _columns(codes) -> list:
    """The per-attribute code columns of ``codes`` (an array rows × attributes, or a list of columns)."""
    if isinstance(codes, np.ndarray):
        if codes.ndim != 2:
            raise ValueError("codes must be rows × attributes")
        return [codes[:, j] for j in range(codes.shape[1])]
    return [np.asarray(c) for c in codes]


def _mixed(columns, sizes) -> np.ndarray:
    """One int64 code per row: the columns (each ≥ ``MISSING_CODE``) in mixed radix ``sizes``."""
    flat = np.asarray(columns[0], dtype=np.int64) - MISSING_CODE
    for column, size in zip(columns[1:], sizes[1:]):
        flat *= size
        flat += column
        flat -= MISSING_CODE
    return flat
