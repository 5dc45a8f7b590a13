"""Counting the grid points of a box on which a linear function is positive: a sound lower bound, for many boxes at
once (numpy).

The refinement of ``fairaudit.engines.fairquant.analysis`` decides whole partitions; a partition the decision
boundary crosses stays undecided however tight its bounds. But the back-substituted bounds are *linear functions*
of the inputs, ``L_c(x) ≤ out_c(x) ≤ U_c(x)`` for every copy ``c``, and every individual ``x`` of the partition with
``L_c(x) > 0`` for every ``c`` is fair (all copies favourable), as is every one with ``U_c(x) < 0`` for every ``c``.
Counting those individuals certifies part of an undecided partition. Two steps make the count cheap:

* **One linear function per side.** ``min_c L_c(x) ≥ L_b(x) + min(0, min_box min_c (L_c − L_b))`` for a base copy
  ``b``; ``L_c − L_b`` is linear in the shared inputs and usually nearly constant, so one shifted ``L_b`` loses
  little (and symmetrically ``max_c U_c ≤ U_b + max(0, max_box max_c (U_c − U_b))``).
* **The count of ``{x in box : a·x + d > 0}``** is the upper tail of the sum of independent per-feature terms
  ``a_i·x_i`` (``x`` uniform on the box's grid). Each term is rounded *down* to a multiple of a bin width ``δ``
  (``K`` bins over the sum's range), so the rounded sum never exceeds the true one and every point counted is truly
  in the set; the distribution of the rounded sum is the product of the terms' characteristic functions (one
  batched FFT), its upper tail a probability ``p``, and the count ``⌊size·(p − 10⁻⁹)⌋``: the 10⁻⁹ covers the
  FFT's rounding, which for probability vectors of length ``N`` is of the order of ``u·log₂N`` per transform
  (``u = 2⁻⁵³``), some 10⁻¹³ for the dozen transforms here; a point's own float rounding is covered by widening
  the threshold by ``slack`` (below). What is lost: the points within ``F·δ`` of the boundary (``F`` features),
  at most ``F/K`` of the sum's range.

Pure numpy; the caller gives the linear functions over the raw features (a one-hot group's function is its column's
coefficient per code).
"""
from __future__ import annotations

import numpy as np

BINS = 255            # K: bins over the range of the sum
FFT_ALLOWANCE = 1e-9  # subtracted from the tail probability: far above the FFT's rounding (~1e-13)
RELATIVE_SLACK = 1e-12  # the threshold is widened by this times the magnitude of the terms (float rounding)


def count_positive(lo: np.ndarray, hi: np.ndarray, coef: np.ndarray, const: np.ndarray,
                   groups: dict | None = None, bins: int = BINS) -> np.ndarray:
    """``[P]`` int64: a lower bound on the number of grid points ``x`` (integers ``lo ≤ x ≤ hi``, per feature) with
    ``coef·x + const > 0``, per box. ``lo, hi: [P, F]`` (whole numbers; a feature with ``lo == hi`` is fixed),
    ``coef: [P, F]``, ``const: [P]``. ``groups``: ``{feature: values [P, width]}`` for categorical features, whose
    term is ``values[p, code]`` for the codes ``lo..hi`` (their ``coef`` column is ignored)."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    coef = np.asarray(coef, dtype=np.float64)
    const = np.asarray(const, dtype=np.float64)
    groups = groups or {}
    P, F = lo.shape
    sizes = np.rint(hi - lo).astype(np.int64) + 1
    total = np.prod(sizes, axis=1)
    out = np.zeros(P, dtype=np.int64)
    if P == 0:
        return out
    # each term's smallest value and its range above it
    low_term = np.minimum(coef * lo, coef * hi)
    span = np.abs(coef) * (hi - lo)
    magnitude = np.abs(const) + np.maximum(np.abs(coef * lo), np.abs(coef * hi)).sum(axis=1)
    cat_values = {}
    for j, values in groups.items():
        values = np.asarray(values, dtype=np.float64)
        codes = np.arange(values.shape[1])[None, :]
        allowed = (codes >= lo[:, j:j + 1]) & (codes <= hi[:, j:j + 1])
        vmin = np.where(allowed, values, np.inf).min(axis=1)
        vmax = np.where(allowed, values, -np.inf).max(axis=1)
        low_term[:, j] = vmin
        span[:, j] = vmax - vmin
        magnitude = magnitude - np.maximum(np.abs(coef[:, j] * lo[:, j]), np.abs(coef[:, j] * hi[:, j]))
        magnitude = magnitude + np.maximum(np.abs(vmin), np.abs(vmax))
        cat_values[j] = (values, allowed, vmin)
    base = const + low_term.sum(axis=1)  # the smallest value of coef·x + const on the box
    slack = RELATIVE_SLACK * (magnitude + 1.0)
    need = slack - base  # a point is counted when the rounded sum of the spans' parts exceeds this
    reach = span.sum(axis=1)
    everything = need < 0  # positive on the whole box (beyond the slack)
    out[everything] = total[everything]
    todo = np.flatnonzero(~everything & (reach > need))  # boxes where part of it may be positive
    if not len(todo):
        return out
    delta = reach[todo] / bins  # bin width per box
    N = bins + 1
    q = np.arange(N, dtype=np.float64)
    spectrum = None
    for j in range(F):
        if j in cat_values:
            values, allowed, vmin = cat_values[j]
            v = values[todo] - vmin[todo][:, None]
            b = np.floor(v / delta[:, None] * (1 - RELATIVE_SLACK))  # rounded down: never a higher bin
            b = np.clip(np.where(allowed[todo], b, -1), -1, bins).astype(np.int64)
            hist = np.zeros((len(todo), N + 1))
            np.add.at(hist, (np.repeat(np.arange(len(todo)), b.shape[1]), (b + 1).reshape(-1)), 1.0)
            hist = hist[:, 1:] / sizes[todo, j][:, None]
        else:
            s = sizes[todo, j]
            if (s == 1).all():
                continue
            step = np.abs(coef[todo, j])
            # the points x = lo + i (or hi − i for a negative coefficient), i = 0..s−1, have the term step·i above
            # the smallest; it is put in bin ⌊step·i/δ⌋, taken a hair smaller (never a higher bin than its exact
            # one)
            if int(s.max()) > 4 * N:  # a long range: bin q holds the i from ⌈q·δ/step⌉ (a hair larger) on
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(step > 0, delta / step, np.inf)
                first = np.ceil(np.arange(N)[None, :] * ratio[:, None] * (1 + RELATIVE_SLACK))
                first[:, 0] = 0.0
                first = np.minimum(first, s[:, None].astype(np.float64))
                nxt = np.concatenate([first[:, 1:], s[:, None].astype(np.float64)], axis=1)
                spectrum = _times(spectrum, np.fft.rfft((nxt - first) / s[:, None], n=2 * N))
                continue
            i = np.arange(int(s.max()), dtype=np.float64)[None, :]
            b = np.floor(step[:, None] / delta[:, None] * i * (1 - RELATIVE_SLACK))
            b = np.where(i < s[:, None], np.clip(b, 0, bins), N)  # N: past the last point of a shorter row
            flat = (np.arange(len(todo))[:, None] * (N + 1) + b.astype(np.int64)).reshape(-1)
            hist = np.bincount(flat, minlength=len(todo) * (N + 1)).reshape(len(todo), N + 1)[:, :N]
            hist = hist / s[:, None]
        spectrum = _times(spectrum, np.fft.rfft(hist, n=2 * N))
    if spectrum is None:  # every feature fixed: the box is one point, decided by ``need`` alone
        return out
    pdf = np.fft.irfft(spectrum, n=2 * N)[:, :N + bins]
    # counted: rounded sum·δ > need, i.e. bin index > need/δ
    cut = np.floor(need[todo] / delta * (1 + RELATIVE_SLACK) + RELATIVE_SLACK) + 1
    cut = np.clip(cut, 0, pdf.shape[1]).astype(np.int64)
    tails = np.cumsum(pdf[:, ::-1], axis=1)[:, ::-1]
    tails = np.concatenate([tails, np.zeros((len(todo), 1))], axis=1)
    p = tails[np.arange(len(todo)), cut] - FFT_ALLOWANCE
    counted = np.floor(np.clip(p, 0.0, 1.0) * total[todo].astype(np.float64) * (1 - RELATIVE_SLACK))
    out[todo] = np.minimum(counted.astype(np.int64), total[todo])
    return out


def _times(spectrum, part):
    return part if spectrum is None else spectrum * part


def minimum(lo: np.ndarray, hi: np.ndarray, coef: np.ndarray, const: np.ndarray,
            groups: dict | None = None) -> np.ndarray:
    """``[P]``: the smallest value of ``coef·x + const`` over each box (``groups`` as in ``count_positive``), in
    float64 (the caller widens it by its own rounding allowance)."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    terms = np.minimum(coef * lo, coef * hi)
    for j, values in (groups or {}).items():
        codes = np.arange(values.shape[1])[None, :]
        allowed = (codes >= lo[:, j:j + 1]) & (codes <= hi[:, j:j + 1])
        terms[:, j] = np.where(allowed, values, np.inf).min(axis=1)
    return const + terms.sum(axis=1)
