"""Rigorous weighted-volume primitives for the FairSquare engine (issue 14; notes §A4, §A5).

Every function here returns an interval ``(lo, hi)`` of Python floats that *provably* contains the true
real number (probability, mass, ratio). Nothing here knows any program syntax: the engine maps program paths
to linear events, boxes and membership oracles and calls these.

How the rounding is made rigorous
---------------------------------
* **Exact rationals.** Every float is an exact dyadic rational. Sums and products of floats, step-distribution
  masses (piecewise-uniform CDFs are rational), means and variances of linear combinations, box products and
  interval ratios are computed *exactly* with :class:`fractions.Fraction`, and only the final result is rounded
  to float, downward for ``lo`` and upward for ``hi`` (:func:`down`, :func:`up`: ``float()`` rounds to nearest,
  then one exact comparison decides whether to step one ulp with :func:`math.nextafter`).
* **Gaussian tails.** ``Q(z) = erfc(z/√2)/2`` is evaluated with :mod:`mpmath` in a private context at
  ``PREC = 160`` bits. mpmath computes ``erfc`` with guard bits to (close to) full working precision; the
  argument ``z = (x − μ)/√v`` is formed from the exact rationals at 160 bits (relative error ≤ 2^-158, which
  moves Q by a relative ≈ z²·2^-158). We declare a relative error of ``2^-128·max(1, z²)`` per tail value — a
  margin of ~2⁷⁵ over the 53-bit float returned —, add the rounding of the final 160-bit subtraction, and round
  outward. Interval masses ``Q(a) − Q(b)`` use the representation that avoids cancellation (right tail, left
  tail, or 1 − both tails); for very narrow intervals, where the difference still cancels, the enclosure is
  intersected with ``w·min φ ≤ mass ≤ w·max φ`` (φ unimodal, w from the exact b − a). For ``|z| > 10^4`` z is
  clamped and an absolute error ``2^-(10^7) > Q(10^4)`` is added (mpmath's erfc overflows there).
  The one trust assumption: mpmath's ``erfc`` is accurate to 128 bits at 160-bit precision (not formally
  proved; ``mpmath.iv.erfc`` is the generic series evaluated in interval arithmetic, slower and not better
  founded). ``tests/bounds_volume`` checks ``lo ≤ exact ≤ hi`` against mpmath at ≥ 400 bits on random inputs.
* **Boxes** are judged by their interior: every distribution here is atomless, so faces have probability 0.

Conventions: ``Gaussian(mean, var)`` takes the VARIANCE, as FairSquare's ``gaussian(mean, variance)``;
``Step([(lo, hi, p), ...])`` is the piecewise-uniform mixture of ``step(...)``. Floats are taken as their exact
binary value; pass ``str`` or :class:`~fractions.Fraction` (e.g. ``"0.3"``) for exact decimal semantics.
"""
from __future__ import annotations

import functools
import heapq
import itertools
import math
import time
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Callable, Iterator, Sequence

import mpmath

PREC = 160
_CTX = mpmath.MPContext()
_CTX.prec = PREC
_REL = _CTX.mpf(2) ** -(PREC - 32)   # declared relative error of one tail value Q(z)
_ULP = _CTX.mpf(2) ** -(PREC - 8)    # generous bound on the rounding of one 160-bit add/subtract
INF = math.inf
_TIGHT = 2.0 ** -60                  # below this relative width the narrow-interval bound is not needed
ZMAX = 10 ** 4                       # Q(10^4) ≈ exp(-5·10^7) < 2^-(10^7)
_CLAMP_ERR = _CTX.mpf(2) ** -(10 ** 7)

Iv = tuple  # (lo, hi) of floats


# ---------------------------------------------------------------------------------------------------------
# Directed rounding and exact interval arithmetic
# ---------------------------------------------------------------------------------------------------------
def down(x) -> float:
    """The largest float ≤ ``x`` (``x`` a Fraction, int, float or mpmath ``mpf``; ±inf passes through)."""
    if isinstance(x, float) and math.isinf(x):
        return x
    f = _float(x)
    if f > x:
        f = math.nextafter(f, -INF)
    return f


def up(x) -> float:
    """The smallest float ≥ ``x``."""
    if isinstance(x, float) and math.isinf(x):
        return x
    f = _float(x)
    if f < x:
        f = math.nextafter(f, INF)
    return f


def _float(x) -> float:
    """float(x) to nearest, or ±inf beyond the float range (the directed step then lands on ±max)."""
    try:
        return float(x)
    except OverflowError:
        return INF if x > 0 else -INF


def _q(x) -> Fraction:
    """Exact rational of a number given as Fraction/int/float/str (floats exactly, strings as decimals)."""
    return x if isinstance(x, Fraction) else Fraction(x)


def _prob(lo, hi) -> Iv:
    """Outward-rounded interval clamped to [0, 1]."""
    return max(0.0, down(lo)), min(1.0, up(hi))


def iv_add(a: Iv, b: Iv) -> Iv:
    """[a] + [b], rounded outward."""
    return _ext(lambda x, y: x + y, a, b, mono=True)


def iv_sub(a: Iv, b: Iv) -> Iv:
    """[a] − [b], rounded outward."""
    return _ext(lambda x, y: x - y, a, (b[1], b[0]), mono=True)


def iv_mul(a: Iv, b: Iv) -> Iv:
    """[a] · [b] (any signs), rounded outward."""
    return _ext(lambda x, y: x * y, a, b)


def iv_div(a: Iv, b: Iv) -> Iv:
    """[a] / [b], rounded outward; ``(-inf, inf)`` if 0 ∈ [b]."""
    if b[0] <= 0 <= b[1]:
        return -INF, INF
    return iv_mul(a, (1 / _q(b[1]) if not math.isinf(b[1]) else Fraction(0),
                      1 / _q(b[0]) if not math.isinf(b[0]) else Fraction(0)))


def _ext(op, a, b, mono=False):
    """Corner evaluation of ``op``: exact on finite endpoints, IEEE rules with an infinite one (0·∞ counts as 0,
    the interval convention), then directed rounding. ``mono``: ``op`` is monotone, use (lo, lo) and (hi, hi)."""
    pairs = [(a[0], b[0]), (a[1], b[1])] if mono else [(x, y) for x in a for y in b]
    vals = []
    for x, y in pairs:
        if _isinf(x) or _isinf(y):
            v = op(float(x), float(y))
            vals.append(0.0 if math.isnan(v) else v)
        else:
            vals.append(op(_q(x), _q(y)))
    return (down(vals[0]), up(vals[1])) if mono else (down(min(vals)), up(max(vals)))


def ratio_bounds(p_min: Iv, p_t_min: Iv, p_t_notmin: Iv) -> Iv:
    """Bounds on ``P[T|min] / P[T|¬min] = (P[T∧min]/P[min]) / (P[T∧¬min]/(1 − P[min]))`` (notes §A6, A11 #9),
    treating the three probabilities as independent intervals (sound, not always tightest)."""
    cond_min = iv_div(p_t_min, p_min)
    cond_not = iv_div(p_t_notmin, iv_sub((1.0, 1.0), p_min))
    return iv_div(cond_min, cond_not)


# ---------------------------------------------------------------------------------------------------------
# Gaussian tails
# ---------------------------------------------------------------------------------------------------------
def _mpf(x):
    """mpf of an exact rational (160-bit rounding of num/den)."""
    x = _q(x)
    return _CTX.mpf(x.numerator) / _CTX.mpf(x.denominator)


def _isinf(z) -> bool:
    """True infinities only (a huge mpf is finite even if float() of it would overflow)."""
    return isinstance(z, float) and math.isinf(z)


def _rel(z):
    """Declared relative error of Q(z) or φ(z) at 160 bits: 2^-128, times z² for the error of z itself
    (a relative 2^-158 error of z moves Q and φ by a relative ≈ z²·2^-158)."""
    if _isinf(z):
        return 0                     # Q(±inf) is exactly 0 or 1
    return _REL if abs(z) <= 1 else _REL * z * z


def _tail(z) -> "mpmath.mpf":
    """Q(z) = P[N(0,1) > z] at working precision (z an mpf or ±inf)."""
    if z == INF:
        return _CTX.mpf(0)
    if z == -INF:
        return _CTX.mpf(1)
    return _CTX.erfc(z / _CTX.sqrt(2)) / 2


def _z(x, mean: Fraction, var: Fraction):
    if isinstance(x, float) and math.isinf(x):
        return x
    return (_mpf(_q(x) - mean)) / _CTX.sqrt(_mpf(var))


def gauss_cdf(x, mean=0, var=1) -> Iv:
    """Enclosure of Φ((x − μ)/σ), σ = √var (the CDF of N(mean, var) at x)."""
    return gauss_mass(-INF, x, mean, var)


def gauss_mass(a, b, mean=0, var=1) -> Iv:
    """Enclosure of P[a ≤ X ≤ b] for X ~ N(mean, var) (VARIANCE, as FairSquare's ``gaussian``)."""
    return _gauss_mass(a, b, _q(mean), _q(var))


@functools.lru_cache(maxsize=1 << 17)
def _gauss_mass(a, b, mean: Fraction, var: Fraction) -> Iv:
    # cached: box decomposition meets the same split intervals again and again in each dimension
    if var <= 0:
        raise ValueError("gaussian variance must be > 0")
    if not a < b:
        return 0.0, 0.0
    za, zb = _z(a, mean, var), _z(b, mean, var)
    # |z| > ZMAX: Q(|z|) < Q(ZMAX) < 2^-(10^7) (far below the float range); clamp and count it as absolute error
    clamped = any(not _isinf(z) and abs(z) > ZMAX for z in (za, zb))
    za, zb = (z if _isinf(z) else max(-ZMAX, min(ZMAX, z)) for z in (za, zb))
    if za >= 0:                      # right tail: Q(za) − Q(zb)
        ta, tb = _tail(za), _tail(zb)
    elif zb <= 0:                    # left tail: Q(−zb) − Q(−za)
        ta, tb = _tail(-zb), _tail(-za)
    else:                            # straddles the mean: 1 − Q(−za) − Q(zb)
        ta, tb = 1 - _tail(-za), _tail(zb)
    v = ta - tb
    rounding = 0 if _isinf(za) and _isinf(zb) else (abs(v) + abs(ta)) * _ULP  # 1 − Q, ta − tb
    err = (ta + tb) * max(_rel(za), _rel(zb)) + rounding
    err += _CLAMP_ERR if clamped else 0
    lo, hi = max(v - err, 0), v + err
    if not (_isinf(za) or _isinf(zb) or clamped) and err > v * _TIGHT:
        # Narrow intervals: Q(a) − Q(b) cancels, but the mass is ∫ φ over [za, zb] with the width w taken from
        # the exact b − a, and φ is unimodal, so w·min φ(ends) ≤ mass ≤ w·max φ. Tight when w is small.
        pdf = lambda z: _CTX.exp(-z * z / 2) / _CTX.sqrt(2 * _CTX.pi)  # noqa: E731
        w = _mpf(_q(b) - _q(a)) / _CTX.sqrt(_mpf(var))
        r = _rel(za) + _rel(zb) + _ULP
        d_lo = w * min(pdf(za), pdf(zb)) * (1 - r)
        d_hi = w * (pdf(0) if za < 0 < zb else max(pdf(za), pdf(zb))) * (1 + r)
        lo, hi = max(lo, d_lo), min(hi, d_hi)
    return _prob(lo, hi)


def gauss_tail(thr, mean=0, var=1, op=">") -> Iv:
    """Enclosure of P[X op thr] for X ~ N(mean, var); ``var == 0`` means X = mean exactly."""
    mean, var = _q(mean), _q(var)
    if var == 0:
        return (1.0, 1.0) if _cmp(mean, op, _q(thr)) else (0.0, 0.0)
    return gauss_mass(thr, INF, mean, var) if op in (">", ">=") else gauss_mass(-INF, thr, mean, var)


def _cmp(x, op, y) -> bool:
    return {">": x > y, ">=": x >= y, "<": x < y, "<=": x <= y}[op]


# ---------------------------------------------------------------------------------------------------------
# Distributions
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gaussian:
    """N(mean, var); ``var`` is the VARIANCE (FairSquare's ``gaussian(mean, variance)``)."""
    mean: float
    var: float

    def mass(self, a, b) -> Iv:
        """Enclosure of P[a ≤ X ≤ b]."""
        return gauss_mass(a, b, self.mean, self.var)

    def support(self) -> Iv:
        return -INF, INF

    def cdf_approx(self, x: float) -> float:
        return NormalDist(float(self.mean), math.sqrt(float(self.var))).cdf(x) if not math.isinf(x) else \
            (1.0 if x > 0 else 0.0)

    def quantile_approx(self, p: float) -> float:
        """Approximate inverse CDF (used only to choose split points; soundness never depends on it)."""
        p = min(max(p, 1e-300), 1 - 1e-16)
        return NormalDist(float(self.mean), math.sqrt(float(self.var))).inv_cdf(p)


@dataclass(frozen=True)
class Step:
    """Piecewise-uniform mixture ``step([(lo, hi, p), ...])``: with prob. p, uniform on [lo, hi]."""
    pieces: tuple

    def __init__(self, pieces):
        ps = tuple((_q(lo), _q(hi), _q(p)) for lo, hi, p in pieces)
        if any(not lo < hi or p < 0 for lo, hi, p in ps):
            raise ValueError("step pieces need lo < hi and p >= 0")
        object.__setattr__(self, "pieces", ps)

    def support(self) -> Iv:
        return float(min(lo for lo, _, _ in self.pieces)), float(max(hi for _, hi, _ in self.pieces))

    def mass_exact(self, a, b) -> Fraction:
        """Exact P[a ≤ X ≤ b] (a rational)."""
        total = Fraction(0)
        for lo, hi, p in self.pieces:
            left = max(lo, a if math.isinf(a) else _q(a))      # Fraction vs ±inf compares exactly
            right = min(hi, b if math.isinf(b) else _q(b))
            if right > left:
                total += p * (right - left) / (hi - lo)
        return total

    def mass(self, a, b) -> Iv:
        m = self.mass_exact(a, b)
        return _prob(m, m)

    def cdf_approx(self, x: float) -> float:
        return float(self.mass_exact(-INF, x))

    def quantile_approx(self, p: float) -> float:
        acc = 0.0
        for lo, hi, w in self.pieces:
            if w and acc + float(w) >= p:
                return float(lo) + (p - acc) / float(w) * float(hi - lo)
            acc += float(w)
        return float(self.pieces[-1][1])


Dist = Gaussian | Step


def box_mass(box: Sequence[Iv], dists: Sequence[Dist]) -> Iv:
    """Enclosure of the weighted volume of the box ∏[lo_i, hi_i] under independent ``dists`` (notes §A5.1):
    the product of the per-dimension masses, computed exactly on the enclosures and rounded outward."""
    return _product([d.mass(lo, hi) for (lo, hi), d in zip(box, dists, strict=True)])


def _product(factors: Sequence[Iv]) -> Iv:
    lo, hi = Fraction(1), Fraction(1)
    for flo, fhi in factors:
        lo, hi = lo * _q(flo), hi * _q(fhi)
    return _prob(lo, hi)


# ---------------------------------------------------------------------------------------------------------
# Closed forms for linear events
# ---------------------------------------------------------------------------------------------------------
def prob_linear(a: Sequence, dists: Sequence[Dist], b=0, op: str = ">", c=0, k: int = 16) -> Iv:
    """Enclosure of P[a·X + b op c] (op one of > >= < <=) for independent ``dists``.

    Gaussian coordinates combine in closed form (Σ aᵢXᵢ ~ N(Σ aᵢμᵢ, Σ aᵢ²vᵢ)). Step coordinates are conditioned on
    each combination of pieces; inside a combination the uniform part ``T = Σ dⱼUⱼ`` is integrated by monotone
    quadrature: each piece is cut into ``k`` equal cells, and on a cell ``t ∈ [t_lo, t_hi]`` the integrand
    ``P[Z op c − t]`` is monotone in t, so its values at the two extreme t bound it (lower/upper sums). With
    no step coordinates the result is exact up to rounding. Cost: ∏ (pieces·k) over step coordinates.
    """
    if op not in (">", ">=", "<", "<="):
        raise ValueError(f"bad operator {op!r}")
    a = [_q(x) for x in a]
    mean, var = _q(b), Fraction(0)
    steps = []
    for ai, d in zip(a, dists, strict=True):
        if ai == 0:
            continue
        if isinstance(d, Gaussian):
            mean, var = mean + ai * _q(d.mean), var + ai * ai * _q(d.var)
        else:
            steps.append((ai, d))
    c = _q(c)
    if not steps:
        return gauss_tail(c, mean, var, op)
    increasing = op in (">", ">=")      # P[Z op c − t] grows with t for > and >=
    # the lower sum uses the strict operator and the upper sum the non-strict one: sound even when var == 0
    op_lo, op_hi = (">", ">=") if increasing else ("<", "<=")
    lo_sum, hi_sum = Fraction(0), Fraction(0)
    cells_per_var = []
    for dj, d in steps:
        cells = []
        for plo, phi, p in d.pieces:
            if p == 0:
                continue
            w = (phi - plo) / k
            for i in range(k):
                u0, u1 = plo + i * w, plo + (i + 1) * w
                t0, t1 = sorted((dj * u0, dj * u1))
                cells.append((p / k, t0, t1))
        cells_per_var.append(cells)
    for combo in itertools.product(*cells_per_var):
        w = math.prod((cw for cw, _, _ in combo), start=Fraction(1))
        t_lo = sum((t0 for _, t0, _ in combo), start=Fraction(0))
        t_hi = sum((t1 for _, _, t1 in combo), start=Fraction(0))
        t_small, t_big = (t_lo, t_hi) if increasing else (t_hi, t_lo)
        lo_sum += w * _q(gauss_tail(c - t_small, mean, var, op_lo)[0])
        hi_sum += w * _q(gauss_tail(c - t_big, mean, var, op_hi)[1])
    return _prob(lo_sum, hi_sum)


def refine_linear(a, dists, b=0, op=">", c=0, k0: int = 2, rounds: int = 8) -> Iterator[Iv]:
    """Anytime :func:`prob_linear`: k = k0, 2k0, 4k0, … (each grid refines the previous one); yields the running
    intersection, so the bounds are nested (never loosen) by construction."""
    lo, hi = 0.0, 1.0
    for r in range(rounds):
        l, h = prob_linear(a, dists, b, op, c, k=k0 * 2 ** r)
        lo, hi = max(lo, l), min(hi, h)
        yield lo, hi


# ---------------------------------------------------------------------------------------------------------
# Membership oracles (interval arithmetic on boxes)
# ---------------------------------------------------------------------------------------------------------
INSIDE, OUTSIDE, MIXED = "inside", "outside", "mixed"
Oracle = Callable[[Sequence[Iv]], str]


def linear_range(a: Sequence, b, box: Sequence[Iv]) -> tuple:
    """Exact bounds [inf, sup] of a·x + b over the box (±inf for unbounded sides; returned as
    Fractions when finite)."""
    lo, hi = _q(b), _q(b)
    for ai, (l, u) in zip(map(_q, a), box, strict=True):
        if ai == 0:
            continue
        x_lo, x_hi = (l, u) if ai > 0 else (u, l)
        lo = -INF if lo == -INF or math.isinf(x_lo) else lo + ai * _q(x_lo)
        hi = INF if hi == INF or math.isinf(x_hi) else hi + ai * _q(x_hi)
    return lo, hi


def halfspace(a: Sequence, b=0, op: str = ">", c=0) -> Oracle:
    """Oracle for the event ``a·x + b op c``: ``inside`` if every point of the box satisfies it, ``outside`` if
    none does, else ``mixed`` (exact, by :func:`linear_range`).

    Oracles judge the OPEN box (its interior): faces have probability zero under the atomless distributions
    here, so the mass of a box whose interior lies in the event is still a sound lower bound. This lets a box
    ``[0, ∞)`` count as inside ``x > 0``. Over an open box a non-constant a·x + b ranges over the open interval
    (min, max), so strict and non-strict comparisons classify alike.
    """
    c = _q(c)

    def oracle(box):
        lo, hi = linear_range(a, b, box)
        if lo == hi:                                   # constant on the box (all used coefficients are 0)
            return INSIDE if _cmp(lo, op, c) else OUTSIDE
        if op in (">", ">="):
            return INSIDE if lo >= c else OUTSIDE if hi <= c else MIXED
        return INSIDE if hi <= c else OUTSIDE if lo >= c else MIXED
    return oracle


def all_of(*oracles: Oracle) -> Oracle:
    """Conjunction: inside if all are inside, outside if any is outside."""
    def oracle(box):
        rs = [o(box) for o in oracles]
        return OUTSIDE if OUTSIDE in rs else INSIDE if all(r == INSIDE for r in rs) else MIXED
    return oracle


def any_of(*oracles: Oracle) -> Oracle:
    """Disjunction: inside if any is inside, outside if all are outside."""
    def oracle(box):
        rs = [o(box) for o in oracles]
        return INSIDE if INSIDE in rs else OUTSIDE if all(r == OUTSIDE for r in rs) else MIXED
    return oracle


def negate(o: Oracle) -> Oracle:
    """Complement (boundaries have measure zero for continuous distributions)."""
    return lambda box: {INSIDE: OUTSIDE, OUTSIDE: INSIDE, MIXED: MIXED}[o(box)]


def overlaps(h1: Sequence[Iv], h2: Sequence[Iv]) -> bool:
    """Whether two boxes share interior points — what SYMVOL's ``block(H)`` forbids (notes §A5.3, A11 #5);
    touching faces are allowed (measure zero)."""
    return all(max(l1, l2) < min(u1, u2) for (l1, u1), (l2, u2) in zip(h1, h2, strict=True))


# ---------------------------------------------------------------------------------------------------------
# ADFs (approximate density functions, notes §A5.4)
# ---------------------------------------------------------------------------------------------------------
def adf_area(adf: Sequence[tuple], l, u) -> Fraction:
    """Def. 4.9: δ = Σ cᵢ·max(min(bᵢ, u) − max(aᵢ, l), 0) for bars ``(aᵢ, bᵢ, cᵢ)``, exactly."""
    return sum((_q(c) * max(min(_q(b), _q(u)) - max(_q(a), _q(l)), 0) for a, b, c in adf), start=Fraction(0))


def adf_for_gaussian(mean: float, sd: float, bars: int = 5, width_sds: float = 3.0) -> list:
    """The tool's ADF for N(mean, sd²): ``bars`` equal bars on mean ± width_sds·sd, each as high as the density
    at its edge farther from the mean (notes A11 #6). Guides search only; never affects soundness."""
    nd = NormalDist(mean, sd)
    lo, w = mean - width_sds * sd, 2 * width_sds * sd / bars
    out = []
    for i in range(bars):
        a, b = lo + i * w, lo + (i + 1) * w
        out.append((a, b, min(nd.pdf(a), nd.pdf(b))))
    return out


# ---------------------------------------------------------------------------------------------------------
# Anytime box decomposition
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Bounds:
    """One round's state of :func:`decompose`."""
    round: int
    lo: float
    hi: float
    inside: int
    outside: int
    mixed: int
    seconds: float

    @property
    def width(self) -> float:
        return self.hi - self.lo


def decompose(dists: Sequence[Dist], oracle: Oracle, *, root: Sequence[Iv] | None = None,
              max_rounds: int | None = None, timeout: float | None = None, target_width: float = 0.0,
              every: int = 1) -> Iterator[Bounds]:
    """Anytime bounds on P[X ∈ region] for X with independent ``dists``, the region given by ``oracle``.

    lo = mass of the boxes proven inside; hi = mass(root) − mass of the boxes proven outside (sums kept exact,
    so lo never decreases and hi never increases). Each round pops the mixed box with the largest mass (a heap),
    splits it in two along the dimension carrying the most probability, at that dimension's approximate
    conditional median (equal-probability halves; any split point is sound), and classifies the halves.
    The default ``root`` is the product of the supports (ℝ for a Gaussian, the hull of the pieces for a step).
    Yields the bounds before the first split (round 0) and then every ``every`` rounds, and a last time when it
    stops (budget reached, width ≤ ``target_width``, or no mixed box left). Boxes too narrow to split in
    floating point stay mixed and are dropped from the queue (their mass stays in the gap).
    """
    t0 = time.perf_counter()
    root = tuple(root) if root is not None else tuple(d.support() for d in dists)
    factors = tuple(d.mass(l, u) for (l, u), d in zip(root, dists, strict=True))
    root_hi = _q(_product(factors)[1])
    inside_acc, outside_acc = Fraction(0), Fraction(0)
    n_in = n_out = 0
    heap, counter = [], itertools.count()

    def add(box, fs):
        nonlocal inside_acc, outside_acc, n_in, n_out
        m_lo, m_hi = _product(fs)
        verdict = oracle(box)
        if verdict == INSIDE:
            inside_acc += _q(m_lo)
            n_in += 1
        elif verdict == OUTSIDE:
            outside_acc += _q(m_lo)
            n_out += 1
        elif m_hi > 0:
            heapq.heappush(heap, (-m_hi, next(counter), box, fs))

    def state(r):
        return Bounds(r, max(0.0, down(inside_acc)), min(1.0, up(root_hi - outside_acc)), n_in, n_out,
                      len(heap), time.perf_counter() - t0)

    add(root, factors)
    r = 0
    last = state(0)
    yield last
    target = _q(target_width)
    while heap:
        if (max_rounds is not None and r >= max_rounds) \
                or (timeout is not None and time.perf_counter() - t0 >= timeout) \
                or root_hi - outside_acc - inside_acc <= target:        # exact width, before rounding
            break
        _, _, box, fs = heapq.heappop(heap)
        split = _split(box, fs, dists)
        r += 1
        if split is not None:
            i, x = split
            for part in ((box[i][0], x), (x, box[i][1])):
                nb = box[:i] + (part,) + box[i + 1:]
                nf = fs[:i] + (dists[i].mass(*part),) + fs[i + 1:]
                add(nb, nf)
        if r % every == 0 or not heap:
            last = state(r)
            yield last
    if last.round != r:
        yield state(r)


def _split(box, fs, dists):
    """(dimension, point) splitting ``box`` into two halves of (about) equal probability, or None."""
    for i in sorted(range(len(box)), key=lambda j: -fs[j][1]):
        lo, hi = box[i]
        d = dists[i]
        x = d.quantile_approx((d.cdf_approx(lo) + d.cdf_approx(hi)) / 2)
        if not lo < x < hi:
            x = (lo + hi) / 2 if not (math.isinf(lo) or math.isinf(hi)) else (hi - 1 if math.isinf(lo) else lo + 1)
            if math.isinf(x) or math.isnan(x):
                x = 0.0
        if lo < x < hi:
            return i, x
    return None
