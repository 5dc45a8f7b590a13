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
                   groups: dict | None = None, bins: int = BINS, split=None) -> np.ndarray:
    """``[P]`` int64: a lower bound on the number of grid points ``x`` (integers ``lo ≤ x ≤ hi``, per feature) with
    ``coef·x + const > 0``, per box. ``lo, hi: [P, F]`` (whole numbers; a feature with ``lo == hi`` is fixed),
    ``coef: [P, F]``, ``const: [P]``. ``groups``: ``{feature: values [P, width]}`` for categorical features, whose
    term is ``values[p, code]`` for the codes ``lo..hi`` (their ``coef`` column is ignored).

    ``split = (feature [P], mid [P])``: count in the two halves of each box instead, ``x[feature] ≤ mid`` and
    ``> mid`` (``[P, 2]``); the other features' distribution is computed once for both."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    coef = np.asarray(coef, dtype=np.float64)
    const = np.asarray(const, dtype=np.float64)
    groups = {j: np.asarray(v, dtype=np.float64) for j, v in (groups or {}).items()}
    if groups:  # a group's term is its values: its coefficient column is not used at all
        coef = coef.copy()
        coef[:, list(groups)] = 0.0
    P, F = lo.shape
    halves = 1 if split is None else 2
    sizes = np.rint(hi - lo).astype(np.int64) + 1
    if split is None:
        feature, child_lo, child_hi = np.full(P, -1), lo[:, :1], hi[:, :1]
        child_sizes = np.prod(sizes, axis=1)[:, None]
    else:
        feature = np.asarray(split[0], dtype=np.int64)
        mid = np.asarray(split[1], dtype=np.float64)
        rows = np.arange(P)
        child_lo = np.stack([lo[rows, feature], mid + 1], axis=1)  # [P, 2]: each half's range of the feature
        child_hi = np.stack([mid, hi[rows, feature]], axis=1)
        rest = np.prod(sizes, axis=1) // sizes[rows, feature]
        child_sizes = rest[:, None] * (np.rint(child_hi - child_lo).astype(np.int64) + 1)
    out = np.zeros((P, halves), dtype=np.int64)
    if P == 0:
        return out if split is not None else out[:, 0]
    # each term's smallest value on the (whole) box and its range above it
    low_term = np.minimum(coef * lo, coef * hi)
    span = np.abs(coef) * (hi - lo)
    magnitude = np.abs(const) + np.maximum(np.abs(coef * lo), np.abs(coef * hi)).sum(axis=1)
    for j, values in groups.items():
        codes = np.arange(values.shape[1])[None, :]
        allowed = (codes >= lo[:, j:j + 1]) & (codes <= hi[:, j:j + 1])
        vmin = np.where(allowed, values, np.inf).min(axis=1)
        vmax = np.where(allowed, values, -np.inf).max(axis=1)
        magnitude += np.maximum(np.abs(vmin), np.abs(vmax)) - np.maximum(np.abs(coef[:, j] * lo[:, j]),
                                                                          np.abs(coef[:, j] * hi[:, j]))
        low_term[:, j] = vmin
        span[:, j] = vmax - vmin
    base = const + low_term.sum(axis=1)  # the smallest value of coef·x + const on the box
    need = RELATIVE_SLACK * (magnitude + 1.0) - base  # counted: the rounded sum of the terms' parts exceeds this
    reach = span.sum(axis=1)
    everything = need < 0  # positive on the whole box (beyond the slack)
    out[everything] = child_sizes[everything]
    todo = np.flatnonzero(~everything & (reach > need))  # boxes where part of it may be positive
    if len(todo):
        out[todo] = _tails(lo[todo], hi[todo], coef[todo], {j: v[todo] for j, v in groups.items()},
                           low_term[todo], need[todo], reach[todo], feature[todo], child_lo[todo],
                           child_hi[todo], child_sizes[todo], bins)
    return out if split is not None else out[:, 0]


def _histogram(first, last, step, box_lo, box_hi, low, delta, N, values=None):
    """``[R, N]``: the share of a feature's values ``first..last`` (per row) in each bin of the rounded term: the
    term above ``low`` (the feature's smallest term on the whole box ``box_lo..box_hi``) divided by ``delta``,
    rounded down (a hair lower, so never into a higher bin than its exact one). A numeric feature: the term is
    ``step·x``; a group: ``values[row, code]``."""
    R = len(first)
    count = np.rint(last - first).astype(np.int64) + 1
    if values is not None:
        codes = np.arange(values.shape[1])[None, :]
        b = np.floor((values - low[:, None]) / delta[:, None] * (1 - RELATIVE_SLACK))
        allowed = (codes >= first[:, None]) & (codes <= last[:, None])
        b = np.where(allowed, np.clip(b, 0, N - 1), N).astype(np.int64)
    else:
        # the term of x is |step|·i above ``low``, with i = x − box_lo for a positive step and box_hi − x for a
        # negative one: i runs over i0 .. i0 + count − 1
        i0 = np.where(step >= 0, first - box_lo, box_hi - last)
        scale = np.abs(step) / delta
        if int(count.max()) > 4 * N:  # a long range: bin q holds the i from ⌈q/scale⌉ (a hair larger) on
            with np.errstate(divide="ignore", invalid="ignore"):
                edge = np.ceil(np.arange(N)[None, :] / scale[:, None] * (1 + RELATIVE_SLACK))
            edge[:, 0] = -np.inf
            edge = np.where(np.isnan(edge), np.inf, edge)
            top = (i0 + count)[:, None].astype(np.float64)
            lo_edge = np.clip(edge, i0[:, None], top)
            hi_edge = np.concatenate([lo_edge[:, 1:], top], axis=1)
            return (hi_edge - lo_edge) / count[:, None]
        k = np.arange(int(count.max()), dtype=np.float64)[None, :]
        b = np.floor(scale[:, None] * (i0[:, None] + k) * (1 - RELATIVE_SLACK))
        b = np.where(k < count[:, None], np.clip(b, 0, N - 1), N).astype(np.int64)
    flat = (np.arange(R)[:, None] * (N + 1) + b).reshape(-1)
    hist = np.bincount(flat, minlength=R * (N + 1)).reshape(R, N + 1)[:, :N]
    return hist / count[:, None]


def _tails(lo, hi, coef, groups, low_term, need, reach, feature, child_lo, child_hi, child_sizes, bins):
    """``[R, halves]``: the counts of ``count_positive`` for the boxes where part of the box may be positive."""
    R, F = lo.shape
    N = bins + 1
    delta = reach / bins  # bin width per box
    common = None
    halves = child_lo.shape[1]
    split = (feature >= 0).any()
    # each half's factor of its split feature (every row has one split feature: set once, never multiplied)
    child = [np.ones((R, N + 1), dtype=complex) if split else None for _ in range(halves)]
    for j in range(F):
        values = groups.get(j)
        here = feature == j
        if values is None and not here.any() and (np.abs(coef[:, j]) * (hi[:, j] - lo[:, j]) < delta).all():
            continue  # every value of this feature in bin 0: nothing to convolve
        hist = _histogram(lo[:, j], hi[:, j], coef[:, j], lo[:, j], hi[:, j], low_term[:, j], delta, N, values)
        factor = np.fft.rfft(hist, n=2 * N)
        if here.any():
            factor[here] = 1.0  # the split feature: each half's own histogram below
            for c in range(halves):
                h = _histogram(child_lo[here, c], child_hi[here, c], coef[here, j], lo[here, j], hi[here, j],
                               low_term[here, j], delta[here], N, None if values is None else values[here])
                child[c][here] = np.fft.rfft(h, n=2 * N)
        common = _times(common, factor)
    out = np.zeros((R, halves), dtype=np.int64)
    # counted: rounded sum·δ > need, i.e. bin index > need/δ
    cut = np.floor(need / delta * (1 + RELATIVE_SLACK) + RELATIVE_SLACK) + 1
    cut = np.clip(cut, 0, 2 * N - 1).astype(np.int64)
    for c in range(halves):
        spectrum = _times(common, child[c])
        if spectrum is None:  # every feature fixed: one point, decided by ``need`` alone
            continue
        pdf = np.fft.irfft(spectrum, n=2 * N)
        tails = np.cumsum(pdf[:, ::-1], axis=1)[:, ::-1]
        tails = np.concatenate([tails, np.zeros((R, 1))], axis=1)
        p = tails[np.arange(R), cut] - FFT_ALLOWANCE
        counted = np.floor(np.clip(p, 0.0, 1.0) * child_sizes[:, c].astype(np.float64) * (1 - RELATIVE_SLACK))
        out[:, c] = np.minimum(counted.astype(np.int64), child_sizes[:, c])
    return out


def _times(spectrum, part):
    """The product of two spectra, either of which may be None (no factor yet)."""
    if part is None:
        return spectrum
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
