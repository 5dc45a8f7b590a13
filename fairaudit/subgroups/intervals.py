"""A table's intervals: each cell's rate, its impact ratio to the table's most-selected cell, its flag, and how many
more rows would decide it (the proof: ``docs/methods/scan.md``).

Rates (``rate_intervals``), by mode:

``anytime``   the monitor's confidence sequence (``fairaudit.bounds.concentration``: the KT mixture by default, or
              adaptive Hoeffding) at the cell's δ_c — valid at every look of a growing log at once;
``one-look``  the Clopper–Pearson interval (``fairaudit.bounds.fixed_sample``) at δ_c — for one look at these rows;
``exact``     the rows' own rate (lo = hi = estimate): a statement about these rows, not a population.

Ratios (``ratio_intervals``): the impact ratio of a cell is its rate divided by the rate of its table's *reference*
cell — the most-selected cell (highest estimated rate) among those not under the minimum share, as NYC LL144 and the
EEOC's four-fifths rule define it. On the event that every rate interval of the table holds,
``p_c / p_ref ∈ [l_c / u_ref, u_c / l_ref]`` — no extra δ (the reference may be chosen from the data: the event
covers every cell at once). The reference's own ratio is ``p_ref / p_ref = 1`` exactly: its interval is [1, 1].

Flags (``flags``): ``excluded`` (under the minimum share: a rate, no ratio), ``certified_below`` (the ratio's upper
end < threshold), ``certified_above`` (its lower end ≥ threshold), else ``undecided``.
"""
from __future__ import annotations

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.subgroups.options import MODES

FLAGS = ("certified_below", "undecided", "certified_above", "excluded")


def interval_function(mode: str, bound: str = "mixture"):
    """``(successes, n, delta) -> (lo, hi)`` for ``mode`` (vectorised)."""
    if mode == "anytime":
        from fairaudit.bounds.concentration import get_bound

        chosen = get_bound(bound)
        return chosen.interval
    if mode == "one-look":
        from fairaudit.bounds.fixed_sample import clopper_pearson

        return clopper_pearson
    if mode == "exact":
        def exact(successes, n, delta):
            s, nn = np.broadcast_arrays(np.asarray(successes, dtype=float), np.asarray(n, dtype=float))
            with np.errstate(invalid="ignore", divide="ignore"):
                p = np.where(nn > 0, s / np.where(nn > 0, nn, 1.0), np.nan)
            return p, p.copy()
        return exact
    raise FairauditError(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")


def estimates(successes, n) -> np.ndarray:
    s, nn = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(nn > 0, s / np.where(nn > 0, nn, 1.0), np.nan)


def rate_intervals(successes, n, delta, interval) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(estimate, lo, hi)`` per cell (NaN estimate, [0, 1] for a cell without rows)."""
    est = estimates(successes, n)
    lo, hi = interval(np.asarray(successes, dtype=float), np.asarray(n, dtype=float), np.asarray(delta, dtype=float))
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    empty = np.asarray(n) <= 0
    return est, np.where(empty, 0.0, lo), np.where(empty, 1.0, hi)


def ratio_intervals(est, lo, hi, reference) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(estimate, lo, hi, index of the reference cell)``: every cell's ratio to the rate of the table's
    most-selected cell among the ``reference`` cells (a boolean mask), ``[l_c / u_ref, u_c / l_ref]`` (0 where
    ``u_ref`` is 0, ∞ where ``l_ref`` is 0); the reference cell itself: exactly 1, interval [1, 1]. A reference rate
    estimated at 0 leaves the other estimates undefined (NaN). Without a reference cell every ratio is undefined and
    the index is −1."""
    est, lo, hi = (np.asarray(a, dtype=float) for a in (est, lo, hi))
    reference = np.asarray(reference, dtype=bool)
    k = len(est)
    if not reference.any():
        return np.full(k, np.nan), np.zeros(k), np.full(k, np.inf), -1
    ref_est = np.where(reference, np.nan_to_num(est, nan=-1.0), -np.inf)
    best = int(np.argmax(ref_est))
    top_est, top_lo, top_hi = est[best], lo[best], hi[best]
    with np.errstate(invalid="ignore", divide="ignore"):
        r_est = np.where(top_est > 0, est / top_est, np.nan)
        r_lo = np.where(top_hi > 0, lo / top_hi, 0.0)
        r_hi = np.where(top_lo > 0, hi / top_lo, np.inf)
    r_lo = np.minimum(r_lo, r_hi)
    r_est[best], r_lo[best], r_hi[best] = 1.0, 1.0, 1.0  # p_ref / p_ref, by definition
    return r_est, r_lo, r_hi, best


def ratio_intervals_by_row(est, lo, hi, reference) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ratio_intervals`` for every row of 2-d arrays at once (a row per look, a column per cell): the ratios of the
    reference cells of each row to that row's most-selected one (NaN for the others, and for every cell of a row
    without reference cells)."""
    est, lo, hi = (np.asarray(a, dtype=float) for a in (est, lo, hi))
    ref = np.asarray(reference, dtype=bool)
    rows = np.arange(est.shape[0])
    best = np.argmax(np.where(ref, np.nan_to_num(est, nan=-1.0), -np.inf), axis=1)
    any_ref = ref.any(axis=1)
    top_est = np.where(any_ref, est[rows, best], np.nan)[:, None]
    top_lo = np.where(any_ref, lo[rows, best], np.nan)[:, None]
    top_hi = np.where(any_ref, hi[rows, best], np.nan)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        r_est = np.where(top_est > 0, est / top_est, np.nan)
        r_lo = np.where(top_hi > 0, lo / top_hi, 0.0)
        r_hi = np.where(top_lo > 0, hi / top_lo, np.inf)
    r_lo = np.minimum(r_lo, r_hi)
    is_best = (np.arange(est.shape[1])[None, :] == best[:, None]) & any_ref[:, None]
    r_est, r_lo, r_hi = (np.where(is_best, 1.0, x) for x in (r_est, r_lo, r_hi))
    out = [np.where(ref, x, np.nan) for x in (r_est, r_lo, r_hi)]
    return out[0], out[1], out[2]


def flags(r_lo, r_hi, reference, threshold: float) -> np.ndarray:
    """The flag of every cell (see the module doc)."""
    r_lo, r_hi = np.asarray(r_lo, dtype=float), np.asarray(r_hi, dtype=float)
    out = np.where(r_hi < threshold, "certified_below", np.where(r_lo >= threshold, "certified_above", "undecided"))
    out = np.where(np.isnan(r_hi) | np.isnan(r_lo), "undecided", out)
    return np.where(np.asarray(reference, dtype=bool), out, "excluded").astype(object)


FACTOR_CHUNK = 25  # factors of the grid evaluated at once by ``more_rows``


def more_rows(successes, n, deltas, reference, threshold: float, interval, total: int, undecided,
              factors=None) -> np.ndarray:
    """For each cell: how many more rows (of the whole scan, every cell growing in proportion) would decide its flag
    if every rate stayed at its estimate and every δ as it is — the smallest scale factor f on the suggestion
    machinery's grid (``fairaudit.core.suggest.FACTORS``, up to ``MAX_FACTOR``) at which the ratio interval is
    decided, as ``total · (f − 1)`` rows. −1 where no factor on the grid decides it; 0 for cells not ``undecided``.
    A projection that assumes the estimates stay where they are, not a guarantee."""
    from fairaudit.core.suggest import FACTORS

    factors = FACTORS if factors is None else np.asarray(factors, dtype=float)
    s, nn, d = (np.asarray(a, dtype=float) for a in (successes, n, deltas))
    undecided = np.asarray(undecided, dtype=bool)
    out = np.zeros(len(s), dtype=np.int64)
    if not undecided.any() or not np.asarray(reference).any():
        return out
    ref = np.asarray(reference, dtype=bool)
    best = int(np.argmax(np.where(ref, np.where(nn > 0, s / np.maximum(nn, 1), -1.0), -np.inf)))
    # the grid in order, a chunk of factors at a time, for the cells still undecided on it (and the reference cell):
    # the same first factor as the whole grid at once, at the cost of the cells that need it
    waiting = np.flatnonzero(undecided)
    for start in range(0, len(factors), FACTOR_CHUNK):
        if not len(waiting):
            break
        f = factors[start:start + FACTOR_CHUNK]
        rows = np.append(waiting, best)
        grid_n, grid_s = nn[rows, None] * f[None, :], s[rows, None] * f[None, :]
        lo, hi = interval(grid_s, grid_n, np.broadcast_to(d[rows, None], grid_n.shape))
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        top_lo, top_hi = lo[-1], hi[-1]  # the reference cell's interval, per factor
        with np.errstate(invalid="ignore", divide="ignore"):
            r_lo = np.where(top_hi > 0, lo[:-1] / top_hi, 0.0)
            r_hi = np.where(top_lo > 0, hi[:-1] / top_lo, np.inf)
        decided = (r_hi < threshold) | (r_lo >= threshold)
        hit = decided.any(axis=1)
        first = f[decided.argmax(axis=1)[hit]]
        out[waiting[hit]] = np.maximum(1, np.ceil(total * first).astype(np.int64) - int(total))
        waiting = waiting[~hit]
    out[waiting] = -1
    return out
