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
* ``bernstein`` (variance-adaptive; needs ``Σ Y²`` too). For ``ξ ≥ −1`` and ``λ ∈ [0, 1)``,
  ``exp(λξ − ψ(λ) ξ²) ≤ 1 + λξ`` with ``ψ(λ) = −ln(1 − λ) − λ`` (Fan, Grama & Liu, "Exponential inequalities for
  martingales with applications", Electron. J. Probab. 2015). With ``ξ = Y − m`` (or ``m − Y``), ``|ξ| ≤ 1``, so
  ``exp(λ Σξ − ψ(λ) Σξ²)`` is a nonnegative supermartingale when the mean is ``m``; its sums are
  ``Σξ = ±(S − n m)`` and ``Σξ² = Q − 2mS + n m²`` (``Q = Σ Y²``): sufficient statistics again. The two sides, each
  an equal-weight average over a geometric grid of ``LAMBDAS`` (an average of supermartingales is one), are tested
  at ``2/δ`` each (Ville, a union over the two sides). On ``λ ≤ ½``, ``2ψ(λ) < λ``, so each side's logarithm is
  strictly monotone in ``m`` between 0 (or 1) and the sample mean: each end is found by bisection on that side and
  reported on its rejected side (outward). It adapts to the variance ``Σ(Y − m)²``: far sharper than the mixture for
  amounts concentrated in the middle of their range, somewhat wider for amounts piled at its ends.

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


LAMBDAS = 0.5 * 2.0 ** (-np.arange(32) / 2.0)  # the bets λ of ``bernstein``: ½ down to ~2e-5, a factor √2 apart
_ITERATIONS = 48  # bisection steps of ``bernstein``'s ends (2^-48 of the unit range)
_ATOL = 1e-12  # the ends moved outward by this (floating-point error of the sums)


def bounded_mean_interval(total, n, delta, lo: float, hi: float, bound: str = "mixture", total_sq=None):
    """An anytime-valid interval for the mean of a quantity in ``[lo, hi]`` from the sum ``total`` of its ``n``
    values and the level ``delta`` (vectorised), in the quantity's units: ``[lo, hi]`` itself when ``n = 0``.
    ``bound="bernstein"`` also needs ``total_sq``, the sum of the values' squares."""
    width = _width(lo, hi)
    s = scaled_sum(total, n, lo, hi)
    if bound == "bernstein":
        if total_sq is None:
            raise ValueError("the bernstein bound needs the sum of the squares (total_sq)")
        nn = np.asarray(n, dtype=np.float64)
        q = (np.asarray(total_sq, dtype=np.float64) - 2 * lo * np.asarray(total, dtype=np.float64)
             + nn * lo * lo) / (width * width)
        ylo, yhi = bernstein_interval(s, np.clip(q, 0.0, s), nn, delta)  # (Σy² ≤ Σy on [0, 1])
    else:
        ylo, yhi = get_bound(bound).interval(s, n, delta)
    return lo + width * np.asarray(ylo), lo + width * np.asarray(yhi)


def bernstein_interval(s, q, n, delta):
    """The ``bernstein`` confidence sequence (module doc) on the ``[0, 1]`` scale from ``Σ Y``, ``Σ Y²`` and ``n``
    (vectorised); ``[0, 1]`` where ``n = 0`` or ``δ = 0``."""
    s, q, n, delta = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (s, q, n, delta)))
    ok = (n > 0) & (delta > 0)
    nn = np.where(ok, n, 1.0)
    mean = np.where(ok, s / nn, 0.5)
    threshold = np.log(2.0 / np.where(ok, np.minimum(delta, 1.0), 1.0))
    lam = LAMBDAS.reshape((-1,) + (1,) * s.ndim)
    psi = -np.log1p(-lam) - lam

    def evidence(m, sign):  # log of the average over λ of exp(λ Σξ − ψ Σξ²), ξ = sign · (Y − m)
        log_terms = lam * sign * (s - nn * m) - psi * (q - 2 * m * s + nn * m * m)
        top = log_terms.max(axis=0)
        return top + np.log(np.exp(log_terms - top).mean(axis=0)) - threshold

    ends = []
    for sign, far in ((1.0, 0.0), (-1.0, 1.0)):  # the lower end on [0, mean], the upper on [mean, 1]
        rejected, accepted = np.full(s.shape, far), mean.copy()
        whole = evidence(rejected, sign) < 0  # not even the range's end is rejected
        for _ in range(_ITERATIONS):
            mid = (rejected + accepted) / 2
            no = evidence(mid, sign) >= 0
            rejected, accepted = np.where(no, mid, rejected), np.where(no, accepted, mid)
        ends.append(np.where(whole | ~ok, far, rejected))
    lo = np.clip(ends[0] - _ATOL, 0.0, 1.0)
    hi = np.clip(ends[1] + _ATOL, 0.0, 1.0)
    return (lo if lo.ndim else lo[()]), (hi if hi.ndim else hi[()])


def outside_range(values, lo: float, hi: float) -> np.ndarray:
    """The positions of the values outside ``[lo, hi]`` (a missing value — NaN — is not in the range either)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(~((values >= lo) & (values <= hi)))


def _width(lo: float, hi: float) -> float:
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"a range needs finite ends with lo < hi, not [{lo}, {hi}]")
    return float(hi) - float(lo)
