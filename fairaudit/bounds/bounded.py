"""Anytime-valid confidence sequences for the mean of a bounded quantity (an amount in a declared range).

A quantity ``X`` declared to lie in ``[lo, hi]`` is scaled to ``Y = (X − lo) / (hi − lo)`` in ``[0, 1]``; the
stream's sufficient statistics are then ``(Σ Y, n)`` — a real sum instead of a count of successes — and **the
Bernoulli bounds of** ``fairaudit.bounds.concentration`` **hold for it unchanged**:

* ``mixture`` (the beta-binomial mixture). For a candidate mean ``m`` and any ``p`` the one-step likelihood ratio
  ``r(y) = (p / m)^y · ((1 − p) / (1 − m))^(1 − y)`` is ``c · e^(β y)``, convex in ``y``; on ``[0, 1]`` it lies
  below its chord, so for any ``Y ∈ [0, 1]`` with conditional mean ``m``, ``E[r(Y)] ≤ (1 − m) r(0) + m r(1) = 1``.
  The product of the ratios is therefore a nonnegative supermartingale when the mean is ``m`` ("sub-Bernoulli"),
  and so is its mixture over ``p ~ Beta(½, ½)``, which is the closed form
  ``B(½ + S, ½ + n − S) / B(½, ½) / (m^S (1 − m)^(n − S))`` with ``S = Σ Y`` real — the same expression the
  Bernoulli bound computes (``scipy.special.betaln`` takes real arguments). Ville's inequality gives
  ``Pr[∃t: M_t(μ) ≥ 1/δ] ≤ δ``, uniformly over time, for i.i.d. rows (or any rows whose conditional mean given the
  past is μ). The convexity step is the one in W. Hoeffding's proof of his inequality (JASA 1963); bounded means
  by betting martingales: Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting", JRSS-B
  2024. The interval is as wide as for a 0/1 quantity with the same
  mean (it assumes the largest variance the range allows, ``m(1 − m)``): sharp for amounts piled at the ends of
  their range, conservative for amounts concentrated in the middle.
* ``hoeffding`` (adaptive Hoeffding, Zhao et al. 2016): holds for any ``[0, 1]``-bounded increments as stated.

``bounded_mean_interval(total, n, delta, lo, hi, bound)`` gives the interval in the quantity's own units.
``outside_range(values, lo, hi)`` finds the rows a declared range does not cover: a value outside its range is an
error naming the row, never clipped (a clipped value would make the guarantee about another quantity).
"""
from __future__ import annotations

import numpy as np

from fairaudit.bounds.concentration import get_bound


def scaled_sum(total, n, lo: float, hi: float) -> np.ndarray:
    """``Σ (X − lo) / (hi − lo)`` from ``Σ X`` and ``n`` (the sum of the quantity scaled to ``[0, 1]``), kept in
    ``[0, n]`` against rounding."""
    width = _width(lo, hi)
    total, n = np.asarray(total, dtype=np.float64), np.asarray(n, dtype=np.float64)
    return np.clip((total - n * lo) / width, 0.0, n)


def bounded_mean_interval(total, n, delta, lo: float, hi: float, bound: str = "mixture"):
    """An anytime-valid interval for the mean of a quantity in ``[lo, hi]`` from the sum ``total`` of its ``n``
    values and the level ``delta`` (vectorised), in the quantity's units: ``[lo, hi]`` itself when ``n = 0``."""
    width = _width(lo, hi)
    ylo, yhi = get_bound(bound).interval(scaled_sum(total, n, lo, hi), n, delta)
    return lo + width * np.asarray(ylo), lo + width * np.asarray(yhi)


def outside_range(values, lo: float, hi: float) -> np.ndarray:
    """The positions of the values outside ``[lo, hi]`` (a missing value — NaN — is not in the range either)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(~((values >= lo) & (values <= hi)))


def _width(lo: float, hi: float) -> float:
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"a range needs finite ends with lo < hi, not [{lo}, {hi}]")
    return float(hi) - float(lo)
