"""The margin a set of thresholds must reach on the search rows to count as feasible: a fixed number, or sized from
the certification part (``"auto"``) so that the certificate (one look: ``fairaudit.repairs.repair.CERTIFY_ENGINE``)
can certify it there.

``Fixed(x)``: every comparison must be at least ``x`` inside its satisfied side.

``Certifiable(rows_ratio, leaf_delta)`` — the default — asks of each set of thresholds, from its own rates on the
search rows, what the certificate will need on the certification rows: every leaf ``E[...]`` of rate ``p`` counted
on ``n`` search rows is expected on ``n × rows_ratio`` certification rows, where the certificate's exact binomial
(Clopper–Pearson) interval (``fairaudit.bounds.fixed_sample.clopper_pearson``) at the leaf's share ``leaf_delta`` of
Δ (Δ / k for k distinct leaves, the equal split) has some half-width; propagated through the
specification's arithmetic by the evaluator's interval rules (``fairaudit.core.evaluate.term_intervals``), it gives
each comparison's half-width ``w_cert``. To it is added ``w_search``, the same propagation of one standard error of
each leaf on the search rows (√(p(1 − p)/n)): the chosen thresholds are the search rows' best, so their margin there
is optimistic by about that much. The required margin of the comparison is ``w_cert + w_search``.

Sizing it per set of thresholds (not once, at the original model's rates) matters: a rate near 0 or 1 has a narrow
interval, a rate near ½ a wide one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fairaudit.core.evaluate import LeafValue, term_intervals


@dataclass(frozen=True)
class Fixed:
    """Every comparison must be ``margin`` inside its satisfied side."""

    margin: float

    def need(self, search, rates: dict, counts: dict) -> dict:
        return {nid: self.margin for nid in search.cmps}

    def describe(self) -> str:
        return f"{self.margin:g} (given)"


@dataclass(frozen=True)
class Certifiable:
    """The margin the certificate needs on the certification rows (module doc): ``rows_ratio`` = certification rows ÷
    search rows, ``leaf_delta`` = each leaf's share of Δ."""

    rows_ratio: float
    leaf_delta: float

    def need(self, search, rates: dict, counts: dict) -> dict:
        """Per comparison, an array (one entry per set of thresholds): ``w_cert + w_search`` (module doc).
        ``rates``/``counts``: per leaf key, its rate and its number of rows on the search rows (arrays)."""
        from fairaudit.bounds.fixed_sample import clopper_pearson

        cert, noise = {}, {}
        for key in search.keys:
            n = np.asarray(counts[key], dtype=float)
            p = np.where(n > 0, np.nan_to_num(np.asarray(rates[key], dtype=float), nan=0.5), 0.5)
            m = n * self.rows_ratio
            lo, hi = clopper_pearson(np.round(p * m), np.round(m), np.full(p.shape, self.leaf_delta))
            cert[key] = LeafValue(p, np.asarray(lo, float), np.asarray(hi, float))
            with np.errstate(invalid="ignore", divide="ignore"):
                se = np.where(n > 0, np.sqrt(p * (1 - p) / np.where(n > 0, n, 1.0)), 0.5)
            noise[key] = LeafValue(p, p - se, p + se)
        a, b = term_intervals(search.spec, cert), term_intervals(search.spec, noise)
        return {nid: half_width(search, nid, a) + half_width(search, nid, b) for nid in search.cmps}

    def describe(self) -> str:
        return "auto (sized from the certification rows)"


def half_width(search, nid: str, intervals: dict) -> np.ndarray:
    """The larger distance from a comparison's ``l − r`` estimate to an end of its interval (``intervals``: the
    term intervals); 1 where it is not finite (a leaf without rows)."""
    left, right = (intervals[c] for c in search.compiled.nodes[nid].children)
    est = np.asarray(left.estimate, float) - np.asarray(right.estimate, float)
    lo = np.asarray(left.lo, float) - np.asarray(right.hi, float)
    hi = np.asarray(left.hi, float) - np.asarray(right.lo, float)
    width = np.maximum(est - lo, hi - est)
    return np.where(np.isfinite(width), width, 1.0)


def requirement(margin, *, search_rows: int, certification_rows: int, delta: float, leaves: int):
    """``Fixed(margin)`` for a number, ``Certifiable`` for ``"auto"`` (module doc)."""
    if margin == "auto":
        return Certifiable(certification_rows / max(search_rows, 1), float(delta) / max(leaves, 1))
    value = float(margin)
    if not math.isfinite(value):
        raise ValueError(margin)
    return Fixed(value)
