"""How the scan shares the failure probability Δ among its intervals (the proof: ``docs/methods/scan.md``).

1. **Tables**: every table (a set of attributes) gets ``Δ / number of tables`` — a fixed rule, from the attributes
   and the depth alone.
2. **Metrics**: within a table, the selection (or scoring) rate gets the whole table's share; with a label it gets
   ``METRIC_SHARES`` of it and TPR and FPR the rest.
3. **Cells**: within a table and metric, ``δ_c = Δ_T · w_c / Σ_j w_j``. A cell that can decide its flag gets
   ``w = 1``; a cell that cannot — under the minimum share (its ratio is not reported: LL144's 2 % rule) or with
   fewer rows than a flag needs (``decisive_rows``: even with none of its rows selected its upper end would not
   fall below the threshold) — gets
   ``w = HOPELESS_WEIGHT``: it still gets an interval, but a wide one.

The weights use the cells' **row counts only** (which cell each row is in, never a decision or an outcome), so,
conditionally on the sequence of a table's group labels, each cell's decisions are i.i.d. and its confidence
sequence at level δ_c misses with conditional probability at most δ_c; the union bound over the cells, metrics and
tables gives Δ. For a growing log the weights must not change once used: ``Allocation.freeze`` fixes them at the
first look (the label counts of the burn-in rows) and keeps ``NEW_CELL_RESERVE`` of every table's share for cells
first seen later — the j-th new cell of a table gets ``reserve · 6 / (π² j²)`` (these sum to the reserve).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.subgroups.options import ALLOCATIONS

HOPELESS_WEIGHT = 0.1  # a cell that cannot decide its flag gets this weight (a decisive one gets 1)
METRIC_SHARES = {"rate": 0.5, "tpr": 0.25, "fpr": 0.25}  # the table's share per metric when a label is given
NEW_CELL_RESERVE = 0.05  # a growing log: the share of every table's Δ kept for cells first seen after the first look
SCHEMES = ALLOCATIONS  # decisive: weights as above; equal: every cell of a table the same δ


def metric_shares(has_label: bool) -> dict[str, float]:
    """The share of a table's Δ per metric: the rate alone, or the rate, TPR and FPR with a label."""
    return dict(METRIC_SHARES) if has_label else {"rate": 1.0}


def decisive_rows(delta: float, threshold: float, interval) -> int:
    """The fewest rows with which a cell's rate interval at level ``delta`` can certify its ratio below
    ``threshold`` at all: its upper end with none of its rows selected falls below ``threshold`` (the ratio to a best
    rate of at most 1 is then below it for sure). A cell with fewer rows decides nothing unless every rate is small;
    it is a rule for the weights only (any weights that do not look at decisions keep the guarantee).
    ``interval(successes, n, delta) -> (lo, hi)``."""
    if not 0 < threshold < 1:
        return 1
    n = 1
    while float(interval(0.0, float(n), delta)[1]) >= threshold:
        n *= 2
        if n > 1 << 40:
            return n
    lo, hi = n // 2, n  # hi decides, lo does not (or is 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(interval(0.0, float(mid), delta)[1]) < threshold:
            hi = mid
        else:
            lo = mid
    return hi


def weights(rows: np.ndarray, total: int, *, delta_equal: float, min_share: float, threshold: float, interval,
            scheme: str = "decisive") -> np.ndarray:
    """The weight of each cell of a table from its row count ``rows`` (of ``total`` rows): 1 if it can decide its
    flag, ``HOPELESS_WEIGHT`` if not (see the module doc); all 1 for ``scheme="equal"``."""
    rows = np.asarray(rows, dtype=np.int64)
    if scheme == "equal":
        return np.ones(len(rows))
    if scheme not in SCHEMES:
        raise FairauditError(f"unknown allocation {scheme!r}; choose one of: {', '.join(SCHEMES)}")
    need = decisive_rows(delta_equal, threshold, interval)
    share = rows / max(int(total), 1)
    decisive = (share >= min_share) & (rows >= need)
    return np.where(decisive, 1.0, HOPELESS_WEIGHT)


@dataclass
class Allocation:
    """The δ of every interval: per table (its index), per metric, per cell (keyed by its category codes).

    ``frozen``: the weights were fixed at a first look and cells seen later draw on the reserve (a growing log);
    otherwise ``deltas`` were computed from the final counts (every row at once)."""

    delta: float
    n_tables: int
    shares: dict
    reserve: float = 0.0
    cells: dict = field(default_factory=dict)  # (table, metric) -> {key tuple: δ}
    new_cells: dict = field(default_factory=dict)  # table -> number of cells first seen after the freeze

    @property
    def table_delta(self) -> float:
        return self.delta / self.n_tables

    def set_table(self, table: int, keys: np.ndarray, rows: np.ndarray, total: int, *, min_share: float,
                  threshold: float, interval, scheme: str = "decisive") -> None:
        """Fix the δ of every cell of ``table`` (``keys``, their row counts ``rows``) for every metric."""
        rows = np.asarray(rows)
        k = max(len(rows), 1)
        for metric, share in self.shares.items():
            budget = self.table_delta * share * (1.0 - self.reserve)
            w = weights(rows, total, delta_equal=budget / k, min_share=min_share, threshold=threshold,
                        interval=interval, scheme=scheme if metric == "rate" else "equal")
            d = budget * w / w.sum() if len(w) else w
            self.cells[(table, metric)] = {tuple(key): float(x) for key, x in zip(keys.tolist(), d)}

    def deltas(self, table: int, keys: np.ndarray, metric: str) -> np.ndarray:
        """The δ of each cell ``keys`` of ``table`` for ``metric``; a cell not seen when the table was set draws on
        the reserve (the next new cell's share), or gets 0 (a vacuous interval) when there is none."""
        known = self.cells.setdefault((table, metric), {})
        out = np.empty(len(keys))
        for i, key in enumerate(keys.tolist()):
            key = tuple(key)
            if key not in known:
                j = self.new_cells.get((table, metric), 0) + 1
                self.new_cells[(table, metric)] = j
                known[key] = (self.table_delta * self.shares[metric] * self.reserve * 6.0 / (math.pi ** 2 * j * j))
            out[i] = known[key]
        return out

    def spent(self) -> float:
        """The δ handed out so far (at most ``delta``)."""
        return float(sum(sum(d.values()) for d in self.cells.values()))
