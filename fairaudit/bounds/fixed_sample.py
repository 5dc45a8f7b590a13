"""Fixed-sample (one-look) confidence intervals for a binomial proportion: Clopper–Pearson.

For ``s`` successes in ``n`` independent Bernoulli(p) trials, with ``n`` fixed before looking, the exact
two-sided interval at level δ is ``[B(δ/2; s, n − s + 1), B(1 − δ/2; s + 1, n − s)]`` where ``B(q; a, b)`` is the
q-quantile of the Beta(a, b) distribution (``lo = 0`` when ``s = 0``, ``hi = 1`` when ``s = n``): each end misses p
with probability at most δ/2 for every p (Clopper & Pearson, Biometrika 1934), by the duality between the binomial
tail and the beta distribution. It is *not* a confidence sequence: it holds for one look at a number of rows fixed
in advance, and re-checking it as rows arrive inflates the error (the monitor's bounds are for that).

``clopper_pearson(successes, n, delta)`` is vectorised; ``n = 0`` or ``δ = 0`` gives [0, 1]. The ends are moved
outward by ``_ATOL`` (scipy's beta quantiles are accurate to ~1e-15 relative; the statistical width is ≫ 1e-12).
"""
from __future__ import annotations

import numpy as np

_ATOL = 1e-12


def clopper_pearson(successes, n, delta) -> tuple[np.ndarray, np.ndarray]:
    # the Beta quantiles from scipy.special (what scipy.stats.beta.ppf / .isf call, bit for bit), not scipy.stats,
    # whose import parses every distribution's docstring (~1 s)
    from scipy.special import betainccinv, betaincinv

    s, n, delta = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (successes, n, delta)))
    ok = (n >= 1) & (delta > 0)
    q = np.where(ok, np.minimum(delta, 1.0) / 2.0, 0.5)
    nn = np.where(ok, n, 1.0)
    ss = np.where(ok, s, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(ss > 0, betaincinv(np.maximum(ss, 1e-300), nn - ss + 1, q), 0.0)
        hi = np.where(ss < nn, betainccinv(ss + 1, np.maximum(nn - ss, 1e-300), q), 1.0)
    lo = np.where(ok, np.clip(np.nan_to_num(lo, nan=0.0) - _ATOL, 0.0, 1.0), 0.0)
    hi = np.where(ok, np.clip(np.nan_to_num(hi, nan=1.0) + _ATOL, 0.0, 1.0), 1.0)
    return (lo if lo.ndim else lo[()]), (hi if hi.ndim else hi[()])
