"""Anytime-valid confidence sequences for the mean of a Bernoulli stream.

A *confidence sequence* at level δ is a sequence of intervals ``CI_t`` with
``Pr[∀t ≥ 1: μ ∈ CI_t] ≥ 1 − δ`` (uniform over time), so it may be inspected after every observation
and the stream may be stopped at a data-dependent time. Every bound here is a function of the
sufficient statistics ``(successes, n)`` of the stream seen so far and of δ, vectorised over numpy
arrays (broadcasting), and every interval is clipped to ``[0, 1]`` (the mean of a Bernoulli variable
lies there surely, so ``δ = 0`` or ``n = 0`` gives ``[0, 1]``).

Two bounds, chosen by name (``get_bound(name)``):

``hoeffding`` (VeriFair and AVOIR, kept to reproduce their figures; Zhao et al. 2016 "Adaptive concentration inequalities
for sequential decision problems", Theorem 1 as used by Bastani et al. 2019 and AVOIR Appendix B)
    symmetric radius ``ε(δ, n) = sqrt((0.6·ln(log_1.1(n) + 1) + (5/9)·ln(24/δ)) / n)`` around the
    sample mean. ``hoeffding_delta`` is its inverse in δ.

``mixture`` (the default: the Krichevsky–Trofimov / Jeffreys beta-binomial mixture; ``betting`` is
accepted as its old, deprecated name)
    For a candidate mean ``m`` let ``M_t(m) = B(a + S_t, b + F_t) / B(a, b) / (m^S_t (1 − m)^F_t)``
    (``S_t`` successes, ``F_t = t − S_t`` failures, ``B`` the beta function, prior ``Beta(a, b)`` with
    ``a = b = 1/2``, Krichevsky–Trofimov). ``M_t(m)`` is the wealth of a gambler who starts with 1 and
    bets on each observation with the Bayesian predictive (KT) probability against the odds implied
    by ``m``; it is a nonnegative martingale with mean 1 when the true mean is ``m``, so by Ville's
    inequality ``Pr[∃t: M_t(μ) ≥ 1/δ] ≤ δ`` and ``CI_t = {m : M_t(m) < 1/δ}`` is a two-sided
    confidence sequence. Equivalently ``CI_t = {m : S ln m + F ln(1 − m) > L_t + ln δ}`` with
    ``L_t = ln B(a + S, b + F) − ln B(a, b)``; the left side is concave in ``m`` with its maximum at
    the sample mean, so the interval is found by bisection on each side. Sources: H. Robbins,
    "Statistical methods related to the law of the iterated logarithm", Ann. Math. Stat. 1970;
    Howard, Ramdas, McAuliffe & Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence
    sequences", Ann. Stat. 2021, §3.2 and Prop. 6 (conjugate beta-binomial mixtures); the prior is
    Krichevsky & Trofimov, "The performance of universal encoding", IEEE Trans. Inf. Theory 1981.
    It is *not* the hedged capital process of Waudby-Smith & Ramdas (JRSS-B 2023), which this
    docstring used to cite: that one bets a predictable fraction λ_t, this one mixes the likelihood
    ratio over a prior on the alternative (both are test martingales; the mixture is what is computed).
    The interval adapts to the variance ``m(1 − m)``, so it is much tighter than Hoeffding for rates
    far from 1/2, and its width shrinks like ``sqrt(m(1−m)·(ln(1/δ) + ½ ln t) / t)``.

Both bounds are monotone: the interval shrinks when δ grows (AVOIR Appendix C requires this), and
each is a confidence sequence *for a fixed δ*.
"""
from __future__ import annotations

import math

import numpy as np

_LN_1_1 = math.log(1.1)
KT_PRIOR = 0.5  # Beta(1/2, 1/2)


def _arrays(*values):
    return np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in values))


def hoeffding_radius(delta, n) -> np.ndarray:
    """``ε(δ, n) = sqrt((0.6·ln(log_1.1(n) + 1) + (5/9)·ln(24/δ)) / n)``; ``inf`` when ``n < 1`` or ``δ ≤ 0``."""
    delta, n = _arrays(delta, n)
    out = np.full(delta.shape, np.inf)
    ok = (n >= 1) & (delta > 0)
    nn, dd = n[ok], delta[ok]
    out[ok] = np.sqrt((0.6 * np.log(np.log(nn) / _LN_1_1 + 1.0) + (5.0 / 9.0) * np.log(24.0 / dd)) / nn)
    return out if out.ndim else out[()]


def fixed_n_radius(delta: float, n: int) -> float:
    """Hoeffding's two-sided radius for a mean of ``n`` observations in [0, 1] fixed in advance (not
    anytime-valid): ``P(|mean − μ| ≥ ε) ≤ δ`` for ``ε = sqrt(ln(2/δ) / (2n))``; it also holds for sampling
    without replacement from a finite population (Hoeffding 1963, §6)."""
    return math.sqrt(math.log(2.0 / delta) / (2.0 * n)) if n >= 1 else math.inf


def hoeffding_delta(eps, n) -> np.ndarray:
    """Inverse of ``hoeffding_radius`` in δ: ``δ = 24·exp(−(9/5)(n ε² − 0.6 ln(log_1.1(n) + 1)))``.

    The value may exceed 1 (the radius is then vacuous at every δ ≤ 1); ``n < 1`` gives ``inf``.
    """
    eps, n = _arrays(eps, n)
    out = np.full(eps.shape, np.inf)
    ok = n >= 1
    nn, ee = n[ok], eps[ok]
    out[ok] = 24.0 * np.exp(-(9.0 / 5.0) * (nn * ee**2 - 0.6 * np.log(np.log(nn) / _LN_1_1 + 1.0)))
    return out if out.ndim else out[()]


def mixture_log_threshold(successes, n, delta) -> np.ndarray:
    """``L + ln δ``: the interval is ``{m : S ln m + F ln(1 − m) > L + ln δ}`` (see module doc)."""
    from scipy.special import betaln  # here, not at import: scipy.special takes ~0.15 s to import

    s, n, delta = _arrays(successes, n, delta)
    f = n - s
    with np.errstate(divide="ignore"):
        return betaln(KT_PRIOR + s, KT_PRIOR + f) - betaln(KT_PRIOR, KT_PRIOR) + np.log(delta)


def _loglik(m, s, f):
    m = np.clip(m, 1e-300, 1.0 - 1e-16)  # 0·log 0 = 0 without branches
    return s * np.log(m) + f * np.log1p(-m)


# Relative error allowed for the floating-point evaluation of ``loglik`` and of the threshold (each is
# a sum of a few terms with a relative error of a few ulps; scipy.special.betaln is off by ~1e-12
# relative for a large first argument and b = ½, measured against mpmath).
# A bisection point counts as *outside* the interval only when it is outside by more than this
# margin, so the returned endpoints are outside the exact interval (outward rounding).
_LOGLIK_RTOL = 1e-10
# Absolute outward margin for the Hoeffding endpoints ``p ± ε`` (p, ε and the subtraction are each
# accurate to a few ulps of numbers ≤ O(1); the statistical radius is ≫ 1e-12).
_HOEFFDING_ATOL = 1e-12


def mixture_interval(successes, n, delta, iterations: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """The beta-binomial (KT) mixture confidence sequence at level δ: ``(lo, hi)``, vectorised.

    Each endpoint is found by Newton's method from outside the interval (``_newton_ends``): the log-likelihood
    ``g(m) = S ln m + F ln(1 − m)`` is concave, so Newton from a point below the lower end (above the upper end)
    climbs towards it monotonically and never crosses it; it targets the threshold lowered by a little more than the
    floating-point margin, and every endpoint is then checked to be *outside* the interval by more than that
    margin (outward rounding, as the bisection guarantees). The few endpoints that fail the check (or whose start
    could not be verified outside) are computed by the bisection to ``2^-iterations`` (``_bisect_ends``). Either
    way the returned interval contains the exact one; Newton needs a handful of steps where the bisection needs
    48 per end (the monitor computes an interval per leaf at every check).
    """
    s, n, delta = _arrays(successes, n, delta)
    shape = s.shape
    s, n, delta = s.ravel().copy(), n.ravel().copy(), np.minimum(delta.ravel(), 1.0)
    f = n - s
    thr = mixture_log_threshold(s, n, np.where(delta > 0, delta, 1.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, s / np.where(n > 0, n, 1), 0.5)
    vacuous = (n < 1) | (delta <= 0)
    lo, hi, bad_lo, bad_hi = _newton_ends(s, f, n, p, thr, ~vacuous & (s > 0), ~vacuous & (f > 0))
    if bad_lo.any() or bad_hi.any():
        sel = bad_lo | bad_hi
        blo, bhi = _bisect_ends(s[sel], f[sel], p[sel], thr[sel], iterations)
        lo[sel] = np.where(bad_lo[sel], blo, lo[sel])
        hi[sel] = np.where(bad_hi[sel], bhi, hi[sel])
    lo = np.where(vacuous | (s <= 0), 0.0, lo)
    hi = np.where(vacuous | (f <= 0), 1.0, hi)
    lo, hi = np.clip(lo, 0.0, 1.0).reshape(shape), np.clip(hi, 0.0, 1.0).reshape(shape)
    return (lo if lo.ndim else lo[()]), (hi if hi.ndim else hi[()])


def _inside(m, s, f, thr):
    """The bisection's test: ``m`` is inside unless it is outside by more than the floating-point margin."""
    ll = _loglik(m, s, f)
    return ll > thr - _LOGLIK_RTOL * (1.0 + np.abs(ll) + np.abs(thr))


_NEWTON_STEPS = 40
_NEWTON_SWEEPS = 3  # Newton steps taken on every endpoint at once; the few not converged then go on alone
_NEWTON_TOL = 1e-12  # a relative step this small: converged (quadratic convergence leaves an error of ~1e-24)


def _newton_ends(s, f, n, p, thr, want_lo, want_hi):
    """``(lo, hi, bad_lo, bad_hi)``: Newton's endpoints (see ``mixture_interval``); ``bad_*`` marks those wanted
    (``want_*``) that could not be certified outside, to be bisected instead."""
    target = thr - 1.05 * _LOGLIK_RTOL * (1.0 + 2.0 * np.abs(thr))  # g = target: outside by more than the margin
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # starts outside: the larger (lower end) of Pinsker's (n KL(p‖m) ≥ 2n(p − m)², and g(p) − g(m) =
        # n KL(p‖m)) and g(m) ≤ S ln m, each outside for sure; and the local quadratic approximation (variance
        # p(1 − p)) widened by a fifth, when it is checked to be outside — the usual case, a few steps from the end
        top = _loglik(p, s, f)
        excess = np.maximum(top - target, 0.0) / np.maximum(n, 1.0)
        radius = np.sqrt(excess / 2.0) * (1.0 + 1e-9) + 1e-15
        local = 1.2 * np.sqrt(2.0 * excess * p * (1.0 - p))
        safe_s, safe_f = np.where(s > 0, s, 1.0), np.where(f > 0, f, 1.0)
        sure_lo = np.minimum(np.maximum(p - radius, np.exp(target / safe_s) * (1.0 - 1e-12)), p)
        sure_hi = np.minimum(p + radius, -np.expm1(target / safe_f) * (1.0 + 1e-12))
        sure_hi = np.maximum(np.where(sure_hi >= 1.0, np.nextafter(1.0, 0.0), sure_hi), p)
        near_lo, near_hi = np.maximum(p - local, sure_lo), np.minimum(p + local, sure_hi)
        starts = []
        for near, sure, want in ((near_lo, sure_lo, want_lo), (near_hi, sure_hi, want_hi)):
            use = _loglik(near, s, f) <= target
            ok = want & use
            far = np.flatnonzero(want & ~use)  # the sure start, checked too (rounding) where it is needed
            ok[far] = _loglik(sure[far], s[far], f[far]) <= target[far]
            starts.append((np.where(use, near, sure), ok))
        (lo, ok_lo), (hi, ok_hi) = starts
        for side, m, ok in (("lo", lo, ok_lo), ("hi", hi, ok_hi)):

            def step(mm, ss, ff, tt, pp):
                g = ss * np.log(mm) + ff * np.log1p(-mm) - tt
                new = mm - g / (ss / mm - ff / (1.0 - mm))
                new = np.where(np.isfinite(new), new, mm)
                # a step only moves towards the end: stay between the start and p
                return np.clip(new, mm, pp) if side == "lo" else np.clip(new, pp, mm)

            moved = ok
            for _ in range(_NEWTON_SWEEPS):  # every endpoint at once (no indexing: cheap per element)
                new = step(m, s, f, target, p)
                moved = np.abs(new - m) > _NEWTON_TOL * np.maximum(m, 1e-300)
                m[:] = np.where(ok, new, m)
            active = ok & moved
            for _ in range(_NEWTON_STEPS):  # the few still moving, alone
                idx = np.flatnonzero(active)
                if not len(idx):
                    break
                mm = m[idx]
                new = step(mm, s[idx], f[idx], target[idx], p[idx])
                m[idx] = new
                active[idx[np.abs(new - mm) <= _NEWTON_TOL * np.maximum(mm, 1e-300)]] = False
        bad_lo = want_lo & ~(ok_lo & ~_inside(lo, s, f, thr))
        bad_hi = want_hi & ~(ok_hi & ~_inside(hi, s, f, thr))
    return lo, hi, bad_lo, bad_hi


def _bisect_ends(s, f, p, thr, iterations: int):
    """The endpoints by bisection to ``2^-iterations``, rounded outwards (the outside points of the brackets)."""
    lo_a, lo_b = np.zeros_like(p), p.copy()      # invariant: a outside (or 0), b inside
    hi_a, hi_b = np.ones_like(p), p.copy()       # invariant: a outside (or 1), b inside
    for _ in range(iterations):
        mid = 0.5 * (lo_a + lo_b)
        inside = _inside(mid, s, f, thr)
        lo_b = np.where(inside, mid, lo_b)
        lo_a = np.where(inside, lo_a, mid)
        mid = 0.5 * (hi_a + hi_b)
        inside = _inside(mid, s, f, thr)
        hi_b = np.where(inside, mid, hi_b)
        hi_a = np.where(inside, hi_a, mid)
    return lo_a, hi_a


betting_log_threshold = mixture_log_threshold  # old names, kept for callers of the library
betting_interval = mixture_interval


class Bound:
    """A named confidence sequence for a Bernoulli mean, given ``(successes, n)`` and δ."""

    name = "abstract"
    elementwise = False  # True: each entry's interval depends on that entry's (successes, n, δ) alone

    def interval(self, successes, n, delta) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def intervals(self, questions) -> list[tuple[np.ndarray, np.ndarray]]:
        """``[self.interval(s, n, δ) for s, n, δ in questions]`` (several leaves' intervals at once). A bound whose
        entries are independent (``elementwise``) answers them in one call on the questions laid end to end — the
        same values, computed with a few numpy calls instead of a few per question (issue 30)."""
        questions = list(questions)
        if not self.elementwise or len(questions) < 2:
            return [self.interval(*q) for q in questions]
        arrays = [_arrays(*q) for q in questions]
        if any(a[0].ndim == 0 for a in arrays):
            return [self.interval(*q) for q in questions]
        lo, hi = self.interval(*(np.concatenate([a[i].ravel() for a in arrays]) for i in range(3)))
        ends = np.cumsum([a[0].size for a in arrays])
        return [(l.reshape(a[0].shape).copy(), h.reshape(a[0].shape).copy())
                for a, l, h in zip(arrays, np.split(np.asarray(lo), ends[:-1]), np.split(np.asarray(hi), ends[:-1]))]

    def __repr__(self) -> str:
        return f"<bound {self.name}>"


class HoeffdingBound(Bound):
    """Adaptive Hoeffding: sample mean ± ``hoeffding_radius(δ, n)``, clipped to [0, 1]."""

    name = "hoeffding"
    elementwise = True

    def interval(self, successes, n, delta):
        s, n, delta = _arrays(successes, n, delta)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(n > 0, s / np.where(n > 0, n, 1), 0.5)
        eps = hoeffding_radius(delta, n)
        lo = np.clip(p - eps - _HOEFFDING_ATOL, 0.0, 1.0)  # outward: floating-point error of p and ε
        hi = np.clip(p + eps + _HOEFFDING_ATOL, 0.0, 1.0)
        return lo, hi


class MixtureBound(Bound):
    """The beta-binomial (KT) mixture confidence sequence (see the module doc)."""

    name = "mixture"
    elementwise = True

    def interval(self, successes, n, delta):
        return mixture_interval(successes, n, delta)


class ReusedBound(Bound):
    """``bound`` answering a question it was just asked from memory: the monitor asks for the same leaf's interval
    at the same checks and δ more than once (the displayed intervals and the order evidence both use the equal
    split before a decision, and a directed decision often freezes the same levels), and a bound costs far more
    than comparing its arguments. The answers are exactly ``bound``'s (the last ``size`` questions are kept)."""

    def __init__(self, bound: Bound, size: int = 8):
        self.inner, self.name, self.size = bound, bound.name, size
        self._memo: list = []

    def _recall(self, s, nn, d):
        for ks, kn, kd, lo, hi in self._memo:
            if ks.shape == s.shape and np.array_equal(ks, s) and np.array_equal(kn, nn) and np.array_equal(kd, d):
                return lo.copy(), hi.copy()
        return None

    def _keep(self, s, nn, d, lo, hi):
        lo, hi = np.asarray(lo), np.asarray(hi)
        self._memo = [(s.copy(), nn.copy(), d.copy(), lo.copy(), hi.copy())] + self._memo[:self.size - 1]
        return (lo if lo.ndim else lo[()]), (hi if hi.ndim else hi[()])

    def interval(self, successes, n, delta):
        s, nn, d = _arrays(successes, n, delta)
        hit = self._recall(s, nn, d)
        if hit is not None:
            return hit
        return self._keep(s, nn, d, *self.inner.interval(successes, n, delta))

    def intervals(self, questions):
        """The questions asked before answered from memory, the others by ``bound`` in one call."""
        questions = list(questions)
        asked = [_arrays(*q) for q in questions]
        out = [self._recall(*a) for a in asked]
        todo = [i for i, hit in enumerate(out) if hit is None]
        for i, (lo, hi) in zip(todo, self.inner.intervals([questions[i] for i in todo])):
            out[i] = self._keep(*asked[i], lo, hi)
        return out


BettingBound = MixtureBound  # the old (mislabelled) name of the class
BOUNDS = {"mixture": MixtureBound(), "hoeffding": HoeffdingBound()}
DEFAULT_BOUND = "mixture"
BOUND_ALIASES = {"betting": "mixture"}  # deprecated names still accepted (spec-file headers, CLI, API)


def get_bound(name: str | Bound) -> Bound:
    """The bound called ``name`` (``mixture`` or ``hoeffding``; ``betting`` is the deprecated name of
    ``mixture``); a ``Bound`` passes through."""
    if isinstance(name, Bound):
        return name
    try:
        return BOUNDS[BOUND_ALIASES.get(name, name)]
    except KeyError:
        from fairaudit.base.errors import FairauditError

        raise FairauditError(f"unknown bound {name!r}; choose one of: {', '.join(BOUNDS)}") from None
