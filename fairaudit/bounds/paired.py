"""An anytime-valid confidence sequence for the difference of two paired Bernoulli means.

Setting: each observation is a pair ``(a, b) ∈ {0, 1}²`` (the same individual's outcome under two models), the pairs
are i.i.d., and the quantity of interest is ``μ_a − μ_b = p₁₀ − p₀₁`` where ``p₁₀ = Pr[a = 1, b = 0]`` and
``p₀₁ = Pr[a = 0, b = 1]`` (the pairs that agree do not move the difference). Each pair falls in one of three cells
— ``10``, ``01`` or "same" — with probabilities ``p = (p₁₀, p₀₁, p₌)``.

The sequence is the trinomial analogue of the monitor's KT mixture (``fairaudit.bounds.concentration``): for a
candidate ``p`` let ``M_t(p) = D(n) / Π pᵢ^{nᵢ}`` where ``nᵢ`` counts the pairs in cell i so far and
``D(n) = Γ(3/2) / Γ(3/2 + t) · Π Γ(½ + nᵢ) / Γ(½)`` is the Dirichlet(½, ½, ½) mixture's probability of the counts
(the Krichevsky–Trofimov prior on three cells). ``M_t(p)`` is a nonnegative martingale with mean 1 when ``p`` is the
truth (a mixture of likelihood ratios), so by Ville's inequality ``Pr[∃t: M_t(p) ≥ 1/δ] ≤ δ`` and
``C_t = {p : Σ nᵢ ln pᵢ > ln D(n) + ln δ}`` is a confidence sequence for the vector ``p``; its projection
``{p₁₀ − p₀₁ : p ∈ C_t}`` is one for the difference, at the same level, uniformly over time.

Why paired is tighter: the width adapts to ``Var(a − b) ≈ p₁₀ + p₀₁``, the share of individuals the two models decide
differently, where two separate intervals on ``μ_a`` and ``μ_b`` pay for ``μ_a(1 − μ_a) + μ_b(1 − μ_b)``.

Computing the projection: ``ℓ(p) = Σ nᵢ ln pᵢ`` is concave, so its profile ``g(d) = max {ℓ(p) : p₁₀ − p₀₁ = d}`` is
concave in d with its maximum at the sample difference, and the projection is the interval where ``g(d)`` exceeds the
threshold. For fixed d, writing ``x = p₀₁`` (so ``p₁₀ = x + d`` and ``p₌ = 1 − 2x − d``), the stationary point of
``n₁₀ ln(x + d) + n₀₁ ln x + n₌ ln(1 − 2x − d)`` solves the quadratic
``2t·x² + (2d(n₀₁ + n₌) − (n₁₀ + n₀₁)(1 − d))·x − n₀₁·d·(1 − d) = 0``; the concave function's maximum over the feasible
segment ``[max(0, −d), (1 − d)/2]`` is at that point or at an end, so the profile is exact (no inner search). Each end of
the interval is then found by bisection, and a point counts as inside unless it is outside by more than a
floating-point margin, so the returned interval contains the exact one (outward rounding).
"""
from __future__ import annotations

import numpy as np

_RTOL = 1e-10  # the relative floating-point margin of the log-likelihood and the threshold (as in ``concentration``)
_ITERATIONS = 52


def _xlogy(n, p):
    """``n · ln p`` with ``0 · ln 0 = 0`` and ``n · ln 0 = −inf`` for ``n > 0`` (no warnings)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, n * np.log(np.maximum(p, 0.0)), 0.0)


def log_threshold(n10, n01, same, delta) -> np.ndarray:
    """``ln D(n) + ln δ``: the sequence is ``{p : Σ nᵢ ln pᵢ > ln D(n) + ln δ}`` (module doc)."""
    from scipy.special import gammaln

    n10, n01, same, delta = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (n10, n01, same, delta)))
    t = n10 + n01 + same
    log_d = (gammaln(1.5) - gammaln(1.5 + t) + gammaln(0.5 + n10) + gammaln(0.5 + n01) + gammaln(0.5 + same)
             - 3 * gammaln(0.5))
    with np.errstate(divide="ignore"):
        return log_d + np.log(delta)


def profile(d, n10, n01, same) -> np.ndarray:
    """``g(d) = max {Σ nᵢ ln pᵢ : p₁₀ − p₀₁ = d}`` (vectorised; −inf where no ``p`` with positive likelihood has
    that difference)."""
    d, n10, n01, same = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (d, n10, n01, same)))
    t = n10 + n01 + same
    lo_x = np.maximum(0.0, -d)
    hi_x = np.maximum(lo_x, (1.0 - d) / 2.0)
    b = 2.0 * d * (n01 + same) - (n10 + n01) * (1.0 - d)
    c = -n01 * d * (1.0 - d)
    a2 = 2.0 * np.where(t > 0, t, 1.0)
    root = np.sqrt(np.maximum(b * b - 4.0 * a2 * c, 0.0))  # the quadratic's A is 2t = a2
    best = np.full(d.shape, -np.inf)
    for x in ((-b + root) / (2.0 * a2), (-b - root) / (2.0 * a2), lo_x, hi_x):
        x = np.clip(x, lo_x, hi_x)
        value = _xlogy(n10, x + d) + _xlogy(n01, x) + _xlogy(same, 1.0 - 2.0 * x - d)
        best = np.maximum(best, np.where(np.isnan(value), -np.inf, value))
    return best


def _outside(g, thr):
    """Outside the sequence by more than the floating-point margin (the bisection's test)."""
    scale = np.abs(thr) + np.where(np.isfinite(g), np.abs(g), 0.0) + 1.0
    return g < thr - _RTOL * scale


def difference_interval(n10, n01, same, delta) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` of the paired confidence sequence for ``μ_a − μ_b`` at level ``delta`` after ``n10`` pairs with
    ``a = 1, b = 0``, ``n01`` with ``a = 0, b = 1`` and ``same`` that agree (vectorised). ``[−1, 1]`` without pairs or
    with ``δ = 0``; the interval contains the exact projection (outward)."""
    n10, n01, same, delta = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (n10, n01, same, delta)))
    shape = n10.shape
    n10, n01, same, delta = (np.ravel(v).copy() for v in (n10, n01, same, delta))
    t = n10 + n01 + same
    vacuous = (t < 1) | (delta <= 0)
    thr = log_threshold(n10, n01, same, np.where(vacuous, 1.0, np.minimum(delta, 1.0)))
    centre = np.where(t > 0, (n10 - n01) / np.where(t > 0, t, 1.0), 0.0)
    ends = []
    for edge in (-1.0, 1.0):
        out = np.full(centre.shape, edge)        # a point outside (or the edge of [−1, 1] when even that is inside)
        inside = centre.copy()                   # a point inside: the sample difference maximises the profile
        edge_in = ~_outside(profile(out, n10, n01, same), thr)
        for _ in range(_ITERATIONS):
            mid = (out + inside) / 2.0
            away = _outside(profile(mid, n10, n01, same), thr)
            out = np.where(away, mid, out)
            inside = np.where(away, inside, mid)
        ends.append(np.where(edge_in | vacuous, edge, out))
    lo, hi = (np.clip(e, -1.0, 1.0).reshape(shape) for e in ends)
    return (lo if lo.ndim else lo[()]), (hi if hi.ndim else hi[()])


def running(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The running intersection over the first axis (the looks): on the event that every interval of a confidence
    sequence holds, so does their intersection, which only narrows. An empty one (possible only off that event:
    rows not in random order) keeps the latest interval and is left to the caller to report."""
    run_lo = np.maximum.accumulate(lo, axis=0)
    run_hi = np.minimum.accumulate(hi, axis=0)
    empty = run_lo > run_hi
    return np.where(empty, lo, run_lo), np.where(empty, hi, run_hi)
