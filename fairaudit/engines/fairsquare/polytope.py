"""Anytime, sound bounds on the probability of one program path: independent draws, each confined to an interval,
and constraints over several draws (linear, or non-linear ones judged by interval arithmetic).

The probability is a product of independent factors:

* a dimension constrained only by its interval contributes its mass (exact for a step, a Gaussian CDF
  difference otherwise);
* the constraints over several dimensions are grouped into *components* (constraints sharing a dimension);
  components are independent of each other.

In a component, a Gaussian dimension whose interval is the whole line and which appears in exactly one (linear)
constraint is *private* to it: all of a constraint's private dimensions combine exactly into one Gaussian
``Z = Σ aᵢXᵢ ~ N(Σ aᵢμᵢ, Σ aᵢ²vᵢ)``. A constraint with no other dimension is then a closed form (one Gaussian
tail). Otherwise the remaining (*outer*) dimensions are decomposed into boxes (*cells*). On a cell, a
constraint ``s(x) + Z op 0`` holds with a probability that is monotone in ``s``, so its values at the two ends
of ``s``'s exact range over the cell bound it; a constraint without a private Gaussian is inside (1), outside (0)
or mixed ([0, 1]) on the cell. Given the outer values the constraints' private Gaussians are independent, so a
cell contributes ``mass(cell) · Π factors`` — bounded below and above. Each refinement splits the cell with the
widest gap, along the dimension whose split narrows it most (both halves are evaluated for every dimension),
at that dimension's conditional median. The sums are kept exactly (integers in units of 2^-1074), so the lower
bound never decreases and the upper bound never increases.

Rounding: every float operation on a bound is rounded outward (``math.nextafter``). The Gaussian tail
``Q(z) = erfc(z/√2)/2`` uses the platform's ``math.erfc`` with a declared relative error of ``2^-36·max(1, z²)``
plus 10^-305 absolute (glibc documents a few ulps, ≈ 2^-50; ``tests/bounds/test_polytope.py`` checks the
enclosure against mpmath at 200 bits) — the one thing these bounds take on trust. Closed forms with no cell
decomposition use :mod:`fairaudit.engines.fairsquare.volume`'s 160-bit evaluation.
"""
from __future__ import annotations

import heapq
import itertools
import math
from fractions import Fraction
from typing import Sequence

import numpy as np
from scipy import special

from fairaudit.engines.fairsquare import volume
from fairaudit.programs import ir
from fairaudit.engines.fairsquare.paths import Affine, Constraint, literal, step_mass, support

INF = math.inf
_SQRT2 = math.sqrt(2.0)
_REL = 2.0 ** -36
_ABS = 1e-305
_ZCLAMP = 38.0          # Q(38) ≈ 2.9e-316 < 1e-300
_SHIFT = 1074           # every float is an integer multiple of 2^-1074


# ---------------------------------------------------------------------------------------------------------
# Outward rounding
# ---------------------------------------------------------------------------------------------------------
def dn(x: float) -> float:
    return x if math.isinf(x) else math.nextafter(x, -INF)


def up(x: float) -> float:
    return x if math.isinf(x) else math.nextafter(x, INF)


def fdown(x) -> float:
    """Largest float ≤ the exact rational ``x``."""
    return volume.down(x)


def fup(x) -> float:
    return volume.up(x)


class ExactSum:
    """An exact sum of floats (an integer count of 2^-1074)."""
    __slots__ = ("total",)

    def __init__(self):
        self.total = 0

    @staticmethod
    def units(x: float) -> int:
        n, d = x.as_integer_ratio()
        return n << (_SHIFT - (d.bit_length() - 1))

    def add(self, x: float) -> None:
        self.total += self.units(x)

    def sub(self, x: float) -> None:
        self.total -= self.units(x)

    def fraction(self) -> Fraction:
        return Fraction(self.total, 1 << _SHIFT)


# ---------------------------------------------------------------------------------------------------------
# Outward rounding on arrays
# ---------------------------------------------------------------------------------------------------------
def vdn(x: np.ndarray) -> np.ndarray:
    """Every element stepped one float down (infinities kept): a lower bound of a rounded-to-nearest result."""
    return np.where(np.isinf(x), x, np.nextafter(x, -INF))


def vup(x: np.ndarray) -> np.ndarray:
    return np.where(np.isinf(x), x, np.nextafter(x, INF))


# ---------------------------------------------------------------------------------------------------------
# Gaussian tails in floats, enclosed
# ---------------------------------------------------------------------------------------------------------
def _q_lo(z: np.ndarray) -> np.ndarray:
    """Lower bounds on Q(z) = P[N(0,1) > z], elementwise."""
    zc = np.clip(z, -_ZCLAMP, _ZCLAMP)
    v = 0.5 * special.erfc(zc / _SQRT2)
    lo = np.maximum(0.0, vdn(v - v * (_REL * np.maximum(1.0, zc * zc)) - _ABS))
    lo = np.where(z > _ZCLAMP, 0.0, lo)
    return np.where(z < -_ZCLAMP, math.nextafter(1.0, 0.0), lo)


def _q_hi(z: np.ndarray) -> np.ndarray:
    """Upper bounds on Q(z), elementwise."""
    zc = np.clip(z, -_ZCLAMP, _ZCLAMP)
    v = 0.5 * special.erfc(zc / _SQRT2)
    hi = np.minimum(1.0, vup(v + v * (_REL * np.maximum(1.0, zc * zc)) + _ABS))
    hi = np.where(z > _ZCLAMP, np.where(z == INF, 0.0, 1e-300), hi)
    return np.where(z < -_ZCLAMP, 1.0, hi)


def q_lower(z: float) -> float:
    """A lower bound on Q(z) = P[N(0,1) > z]."""
    with np.errstate(invalid="ignore", over="ignore"):
        return float(_q_lo(np.array([float(z)]))[0])


def q_upper(z: float) -> float:
    """An upper bound on Q(z)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return float(_q_hi(np.array([float(z)]))[0])


class _Normal:
    """N(mean, var) with exact parameters; float enclosures of the mean and the standard deviation; every method
    takes and returns arrays."""

    def __init__(self, mean: Fraction, var: Fraction):
        if var <= 0:
            raise ValueError("a Gaussian needs a positive variance")
        self.mean, self.var = mean, var
        self.mu = (fdown(mean), fup(mean))
        v_lo, v_hi = fdown(var), fup(var)
        self.sd = (dn(math.sqrt(v_lo)) if v_lo > 0 else 0.0, up(math.sqrt(v_hi)))
        self.approx = (_safe_float(mean), math.sqrt(_safe_float(var)))

    def z_lo(self, x: np.ndarray) -> np.ndarray:
        """A lower bound on (x − μ)/σ."""
        n = vdn(x - self.mu[1])
        return vdn(n / np.where(n >= 0, self.sd[1], self.sd[0]))

    def z_hi(self, x: np.ndarray) -> np.ndarray:
        n = vup(x - self.mu[0])
        return vup(n / np.where(n >= 0, self.sd[0], self.sd[1]))

    def greater(self, t_lo, t_hi):
        """Enclosure of P[X > t] for t anywhere in [t_lo, t_hi]."""
        return _q_lo(self.z_hi(t_hi)), _q_hi(self.z_lo(t_lo))

    def less(self, t_lo, t_hi):
        """Enclosure of P[X < t] = Q(−z) for t anywhere in [t_lo, t_hi]."""
        return _q_lo(-self.z_lo(t_lo)), _q_hi(-self.z_hi(t_hi))

    def mass(self, a, b):
        """Enclosure of P[a < X < b] (0 where a ≥ b)."""
        za_lo, za_hi, zb_lo, zb_hi = self.z_lo(a), self.z_hi(a), self.z_lo(b), self.z_hi(b)
        right = za_lo >= 0          # both ends in the right tail: Q(a) − Q(b)
        left = zb_hi <= 0           # both in the left tail: Q(−b) − Q(−a)
        lo = np.where(right, vdn(_q_lo(za_hi) - _q_hi(zb_lo)),
                      np.where(left, vdn(_q_lo(-zb_lo) - _q_hi(-za_hi)),
                               vdn(vdn(1.0 - _q_hi(-za_hi)) - _q_hi(zb_lo))))   # 1 − Q(−a) − Q(b)
        hi = np.where(right, vup(_q_hi(za_lo) - _q_lo(zb_hi)),
                      np.where(left, vup(_q_hi(-zb_hi) - _q_lo(-za_lo)),
                               vup(vup(1.0 - _q_lo(-za_lo)) - _q_lo(zb_hi))))
        empty = ~(a < b)
        return np.where(empty, 0.0, np.clip(lo, 0.0, 1.0)), np.where(empty, 0.0, np.clip(hi, 0.0, 1.0))

    def cdf(self, x):
        return special.ndtr((x - self.approx[0]) / self.approx[1])

    def quantile(self, p):
        return self.approx[0] + self.approx[1] * special.ndtri(np.clip(p, 1e-300, 1 - 1e-16))


class _StepDim:
    """A step (piecewise-uniform) distribution; masses enclosed with outward rounding."""

    def __init__(self, dist: ir.Step):
        # the pieces exactly (``paths.literal``), each enclosed by floats: (lo, hi) of every end, the
        # width and the weight
        self.pieces = []
        xs, cs, acc = [], [], 0.0
        for lo, hi, p in dist.pieces:
            lo, hi, p = literal(lo), literal(hi), literal(p)
            if p <= 0:
                continue
            self.pieces.append(((fdown(lo), fup(lo)), (fdown(hi), fup(hi)), (fdown(hi - lo), fup(hi - lo)),
                                (fdown(p), fup(p))))
            xs += [float(lo), float(hi)]
            cs += [acc, acc + float(p)]
            acc += float(p)
        self.knots, self.cum = np.array(xs), np.array(cs) / max(acc, 1e-300)

    def mass(self, a, b):
        lo = np.zeros(np.shape(a))
        hi = np.zeros(np.shape(a))
        for (plo_lo, plo_hi), (phi_lo, phi_hi), (w_lo, w_hi), (p_lo, p_hi) in self.pieces:
            o_lo = np.maximum(0.0, vdn(np.minimum(phi_lo, b) - np.maximum(plo_hi, a)))
            o_hi = np.maximum(0.0, vup(np.minimum(phi_hi, b) - np.maximum(plo_lo, a)))
            lo = vdn(lo + vdn(vdn(p_lo * o_lo) / w_hi))
            hi = vup(hi + vup(vup(p_hi * o_hi) / w_lo))
        return np.maximum(lo, 0.0), np.minimum(hi, 1.0)

    def cdf(self, x):
        return np.interp(x, self.knots, self.cum)

    def quantile(self, p):
        return np.interp(p, self.cum, self.knots)


def _safe_float(x) -> float:
    """float(x), ±1e300 beyond the float range (only for heuristics: split choices, never for a bound)."""
    try:
        return float(x)
    except OverflowError:
        return 1e300 if x > 0 else -1e300


def _dim(dist):
    if isinstance(dist, ir.Gaussian):
        return _Normal(literal(dist.mean), literal(dist.variance))
    return _StepDim(dist)


def _scalar_mass(dim, a: float, b: float) -> tuple[float, float]:
    lo, hi = dim.mass(np.array([a]), np.array([b]))
    return float(lo[0]), float(hi[0])


def _float_box(dim, lo, hi) -> tuple[tuple[float, float], float]:
    """The largest float interval inside the exact interval (lo, hi), and an upper bound on the mass between
    the two (the ends of a constraint such as ``x < 1/3`` are rarely floats)."""
    f_lo = lo if lo == -INF else fup(lo)
    f_hi = hi if hi == INF else fdown(hi)
    slack = 0.0
    if f_lo != lo:
        slack = up(slack + _scalar_mass(dim, fdown(lo), f_lo)[1])
    if f_hi != hi:
        slack = up(slack + _scalar_mass(dim, f_hi, fup(hi))[1])
    if not f_lo < f_hi:     # narrower than two floats: all of it counted as slack, the box left empty
        f_lo, f_hi = (lo if lo == -INF else fdown(lo)), (hi if hi == INF else fup(hi))
        slack = up(slack + _scalar_mass(dim, f_lo, f_hi)[1])
        f_hi = f_lo
    return (f_lo, f_hi), slack


# ---------------------------------------------------------------------------------------------------------
# Constraints on cells (arrays of cells: L, U are (cells × dims) lower and upper ends)
# ---------------------------------------------------------------------------------------------------------
def _coef_iv(a: Fraction) -> tuple[float, float, int]:
    return fdown(a), fup(a), (1 if a > 0 else -1)


def _term(a, lo, hi):
    """Enclosure of a·x over x ∈ [lo, hi] (arrays), a given as (lo, hi, sign) of a non-zero rational."""
    a_lo, a_hi, sign = a
    if sign > 0:
        t_lo = np.where(lo >= 0, a_lo * lo, a_hi * lo)
        t_hi = np.where(hi >= 0, a_hi * hi, a_lo * hi)
    else:
        t_lo = np.where(hi >= 0, a_lo * hi, a_hi * hi)
        t_hi = np.where(lo >= 0, a_hi * lo, a_lo * lo)
    return vdn(t_lo), vup(t_hi)


def _mul(a, b):
    products = [np.nan_to_num(x * y, nan=0.0, posinf=INF, neginf=-INF) for x in a for y in b]
    return vdn(np.minimum.reduce(products)), vup(np.maximum.reduce(products))


def _div(a, b):
    """[a] / [b] elementwise ((−inf, inf) where [b] contains 0)."""
    zero = (b[0] <= 0) & (b[1] >= 0)
    with np.errstate(divide="ignore"):
        inv = (vdn(1.0 / np.where(zero, 1.0, b[1])), vup(1.0 / np.where(zero, 1.0, b[0])))
    lo, hi = _mul(a, inv)
    return np.where(zero, -INF, lo), np.where(zero, INF, hi)


def _quotient(n_lo, n_hi, a):
    """Enclosure of n / a for n ∈ [n_lo, n_hi] (arrays) and a ≠ 0 given as (lo, hi, sign)."""
    a_lo, a_hi, sign = a
    if sign > 0:
        lo = np.where(n_lo >= 0, n_lo / a_hi, n_lo / a_lo)
        hi = np.where(n_hi >= 0, n_hi / a_lo, n_hi / a_hi)
    else:
        lo = np.where(n_hi >= 0, n_hi / a_hi, n_hi / a_lo)
        hi = np.where(n_lo >= 0, n_lo / a_lo, n_lo / a_hi)
    return vdn(lo), vup(hi)


def _membership(s_lo, s_hi, op: str):
    """Over the OPEN cell a non-constant linear s ranges strictly inside (min, max): faces have probability 0."""
    if op in (">", ">="):
        inside, outside = s_lo >= 0, s_hi <= 0
    else:
        inside, outside = s_hi <= 0, s_lo >= 0
    return np.where(inside, 1.0, 0.0), np.where(outside, 0.0, 1.0)


class _Linear:
    """``const + Σ coef·x_outer + Z op 0`` (``Z`` the private Gaussian, or none)."""

    def __init__(self, terms, const: Fraction, op: str, private: _Normal | None):
        self.terms = [(pos, _coef_iv(a)) for pos, a in terms]
        self.const = (fdown(const), fup(const))
        self.op = op
        self.private = private
        self.positions = [pos for pos, _ in terms]
        scale = float(private.sd[1]) if private is not None else 1.0
        self.magnitudes = {pos: min(abs(_safe_float(a)), 1e300) for pos, a in terms}
        self.z_spread = 8.0 * scale if private is not None else 0.0   # the private Gaussian's own spread
        self._weights = {pos: m / scale for pos, m in self.magnitudes.items()}

    def weight(self, i: int) -> float:
        return self._weights.get(i, 0.0)

    def coefficient(self, i: int):
        for pos, a in self.terms:
            if pos == i:
                return a
        return None

    def s_range(self, L, U, skip: int | None = None):
        lo = np.full(len(L), self.const[0])
        hi = np.full(len(L), self.const[1])
        for pos, a in self.terms:
            if pos == skip:
                continue
            t_lo, t_hi = _term(a, L[:, pos], U[:, pos])
            lo, hi = vdn(lo + t_lo), vup(hi + t_hi)
        return lo, hi

    def bound_on(self, i: int, L, U):
        """This constraint as a bound on dimension ``i`` given the others: ("lower"|"upper", lo, hi) arrays, the
        bound −s/a ranging over [lo, hi] on each cell."""
        a = self.coefficient(i)
        s_lo, s_hi = self.s_range(L, U, skip=i)
        b_lo, b_hi = _quotient(-s_hi, -s_lo, a)
        lower = (self.op in (">", ">=")) == (a[2] > 0)
        return ("lower" if lower else "upper"), b_lo, b_hi

    def factor(self, L, U):
        s_lo, s_hi = self.s_range(L, U)
        if self.private is not None:   # s + Z op 0  ⇔  Z op −s
            if self.op in (">", ">="):
                return self.private.greater(-s_hi, -s_lo)
            return self.private.less(-s_hi, -s_lo)
        return _membership(s_lo, s_hi, self.op)


class _Nonlinear:
    """A non-linear constraint ``value op 0``, judged on cells by interval arithmetic."""

    def __init__(self, value, op: str, position: dict[int, int]):
        self.value, self.op, self.position = value, op, position
        self.positions = sorted(position[d] for d in value.dims)
        self.private = None
        self.magnitudes = {i: 1.0 for i in self.positions}
        self.z_spread = 0.0
        self._cache: dict = {}

    def _affine(self, v: Affine):
        """The constant's and the coefficients' float enclosures of an affine leaf (computed once)."""
        key = id(v)
        if key not in self._cache:
            self._cache[key] = ((fdown(v.const), fup(v.const)),
                                [(self.position[d], _coef_iv(a)) for d, a in v.coef], v)  # v kept: id stays unique
        return self._cache[key]

    def range(self, v, L, U):
        if isinstance(v, Affine):
            (c_lo, c_hi), terms, _ = self._affine(v)
            lo = np.full(len(L), c_lo)
            hi = np.full(len(L), c_hi)
            for pos, a in terms:
                t_lo, t_hi = _term(a, L[:, pos], U[:, pos])
                lo, hi = vdn(lo + t_lo), vup(hi + t_hi)
            return lo, hi
        left, right = self.range(v.left, L, U), self.range(v.right, L, U)
        if v.op == "+":
            return vdn(left[0] + right[0]), vup(left[1] + right[1])
        if v.op == "*":
            return _mul(left, right)
        return _div(left, right)

    def factor(self, L, U):
        lo, hi = self.range(self.value, L, U)
        bad = np.isnan(lo) | np.isnan(hi)
        # strict tests: the range is only an enclosure, so a touching bound proves nothing
        if self.op in (">", ">="):
            inside, outside = lo > 0, hi < 0
        else:
            inside, outside = hi < 0, lo > 0
        return np.where(inside & ~bad, 1.0, 0.0), np.where(outside & ~bad, 0.0, 1.0)


# ---------------------------------------------------------------------------------------------------------
# A component: cells over its outer dimensions
# ---------------------------------------------------------------------------------------------------------
BATCH = 1024    # cells split together (the widest first)
AHEAD = 4.0     # how much wider (in spread) a dimension may get than the one split before it is split instead,
SLOW = 0.9      # when the greedy split narrows the cell's gap by less than 1 − SLOW


class Component:
    """Anytime bounds on P[all of ``constraints``] for outer dimensions ``dims`` (distributions, root box)."""

    def __init__(self, dims: list, root: list[tuple[float, float]], constraints: list, slack: float = 0.0):
        self.dims = dims
        self.constraints = constraints
        self.lo_sum, self.hi_sum = ExactSum(), ExactSum()
        self.heap: list = []
        self.counter = itertools.count()
        self.cells = 0
        self.splits = 0
        self.hi_sum.add(slack)  # mass just outside the root box (see ``PathVolume``), counted in the upper bound
        self.f = self._integration_dim()
        self.f_cons = [c for c in constraints if self.f is not None and self.f in c.positions]
        self.cell_cons = [c for c in constraints if c not in self.f_cons]
        d = len(dims)
        with np.errstate(all="ignore"):
            self.central = [(float(dim.quantile(np.array([1e-9]))[0]), float(dim.quantile(np.array([1 - 1e-9]))[0]))
                            for dim in dims]
            L = np.array([[lo for lo, _ in root]], dtype=float)
            U = np.array([[hi for _, hi in root]], dtype=float)
            M_lo, M_hi = np.ones((1, d)), np.ones((1, d))
            for i, dim in enumerate(dims):
                if i != self.f:
                    M_lo[:, i], M_hi[:, i] = dim.mass(L[:, i], U[:, i])
            v_lo, v_hi = self._values(L, U, M_lo, M_hi)
        self._push(L, U, M_lo, M_hi, v_lo, v_hi)

    def _integration_dim(self) -> int | None:
        """A Gaussian outer dimension to integrate exactly on every cell (never split): one that only linear
        constraints without a private Gaussian use. A bound x_f > −s/a_f is loose by the range of s over the cell
        divided by a_f: prefer the dimension whose weight (|a|·σ) is largest relative to the other dimensions' in
        every constraint that uses it."""
        sd = [d.sd[1] if isinstance(d, _Normal) else 1.0 for d in self.dims]
        best, best_key = None, None
        for i, dim in enumerate(self.dims):
            if not isinstance(dim, _Normal):
                continue
            users = [c for c in self.constraints if i in c.positions]
            if not users or any(not isinstance(c, _Linear) or c.private is not None for c in users):
                continue
            if any(abs(c.coefficient(i)[0]) < 1e-200 and abs(c.coefficient(i)[1]) < 1e-200 for c in users):
                continue
            ratios = []
            for c in users:
                others = sum(c.weight(j) * sd[j] for j in c.positions if j != i)
                ratios.append(c.weight(i) * sd[i] / others if others > 0 else INF)
            key = (min(ratios), len(users))
            if best_key is None or key > best_key:
                best, best_key = i, key
        return best

    def _values(self, L, U, M_lo, M_hi):
        """Enclosures of each cell's contribution: mass × the constraints' factors (arrays)."""
        lo = np.ones(len(L))
        hi = np.ones(len(L))
        for i in range(len(self.dims)):
            if i != self.f:
                lo, hi = vdn(lo * M_lo[:, i]), vup(hi * M_hi[:, i])
        for c in self.cell_cons:
            f_lo, f_hi = c.factor(L, U)
            lo, hi = vdn(lo * f_lo), vup(hi * f_hi)
        if self.f is not None:
            f = self.f
            inner_lo, inner_hi = L[:, f].copy(), U[:, f].copy()   # allowed for every point of the cell
            outer_lo, outer_hi = L[:, f].copy(), U[:, f].copy()   # allowed for some point
            for c in self.f_cons:
                kind, b_lo, b_hi = c.bound_on(f, L, U)
                if kind == "lower":
                    inner_lo, outer_lo = np.maximum(inner_lo, b_hi), np.maximum(outer_lo, b_lo)
                else:
                    inner_hi, outer_hi = np.minimum(inner_hi, b_lo), np.minimum(outer_hi, b_hi)
            dim = self.dims[f]
            f_lo = dim.mass(inner_lo, inner_hi)[0]
            f_hi = dim.mass(outer_lo, outer_hi)[1]
            lo, hi = vdn(lo * f_lo), vup(hi * f_hi)
        return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)

    def _push(self, L, U, M_lo, M_hi, v_lo, v_hi) -> None:
        for r in range(len(L)):
            lo, hi = float(v_lo[r]), float(v_hi[r])
            self.lo_sum.add(lo)
            self.hi_sum.add(hi)
            self.cells += 1
            if hi > lo:
                heapq.heappush(self.heap, (lo - hi, next(self.counter), L[r], U[r], M_lo[r], M_hi[r], lo, hi))

    @property
    def bounds(self) -> tuple[Fraction, Fraction]:
        return self.lo_sum.fraction(), self.hi_sum.fraction()

    def _shares(self, L, U) -> np.ndarray:
        """(cells × dims): for each dimension, the sum over the constraints of its share of the constraint's range
        over the cell (|a|·width over Σ|a|·width, widths capped at the central 1 − 2·10⁻⁹ of the distribution, a
        private Gaussian counted with 8 σ). Dimensionless: how much splitting the dimension can still narrow."""
        low = np.maximum(L, np.array([c[0] for c in self.central]))
        high = np.minimum(U, np.array([c[1] for c in self.central]))
        width = np.nan_to_num(np.maximum(high - low, 0.0), posinf=1e300)
        total = np.zeros_like(width)
        for c in self.constraints:
            contrib = np.zeros_like(width)
            for i, m in c.magnitudes.items():
                contrib[:, i] = m * width[:, i]
            denom = contrib.sum(axis=1, keepdims=True) + c.z_spread
            total += np.where(denom > 0, contrib / np.where(denom > 0, denom, 1.0), 0.0)
        return total

    def refine(self, splits: int, expired=None) -> int:
        """Split up to ``splits`` cells, the widest first, each along the dimension whose split narrows it most;
        ``expired()`` (optional) is asked between batches and ends the refinement early."""
        done = 0
        with np.errstate(all="ignore"):
            while self.heap and done < splits and not (expired is not None and expired()):
                k = min(max(8, BATCH * 4 // max(4, len(self.dims))), splits - done, len(self.heap))
                popped = [heapq.heappop(self.heap) for _ in range(k)]
                done += self._split(popped)
        self.splits += done
        return done

    def _split(self, popped) -> int:
        L = np.array([e[2] for e in popped])
        U = np.array([e[3] for e in popped])
        M_lo = np.array([e[4] for e in popped])
        M_hi = np.array([e[5] for e in popped])
        p_lo = np.array([e[6] for e in popped])
        p_hi = np.array([e[7] for e in popped])
        k, d = L.shape
        shares = self._shares(L, U)
        options = []
        for i, dim in enumerate(self.dims):
            if i == self.f:
                continue
            x = dim.quantile((dim.cdf(L[:, i]) + dim.cdf(U[:, i])) / 2)
            x = np.where((L[:, i] < x) & (x < U[:, i]), x, _fallback_split(L[:, i], U[:, i]))
            ok = (L[:, i] < x) & (x < U[:, i])
            children = []
            for side in (0, 1):
                cl, cu = L.copy(), U.copy()
                if side == 0:
                    cu[:, i] = x
                else:
                    cl[:, i] = x
                m_lo, m_hi = M_lo.copy(), M_hi.copy()
                m_lo[:, i], m_hi[:, i] = dim.mass(cl[:, i], cu[:, i])
                children.append((cl, cu, m_lo, m_hi, *self._values(cl, cu, m_lo, m_hi)))
            gap = (children[0][5] - children[0][4]) + (children[1][5] - children[1][4])
            ratio = np.where(ok, np.round(gap / (p_hi - p_lo), 9), INF)
            options.append((i, ratio, shares[:, i], children))
        if not options:   # the only dimension is integrated exactly: the cells stay as they are (still summed)
            return 0
        ratios = np.array([o[1] for o in options])
        spreads = np.array([o[2] for o in options])
        best_ratio = ratios.min(axis=0)
        # no split narrows a cell that is mixed throughout (every child still [0, mass]): then the dimension along
        # which the constraints vary most over the cell breaks the tie
        choice = np.argmax(np.where(ratios == best_ratio, spreads, -1.0), axis=0)
        # but a greedy choice may narrow one factor forever, a little at a time, while a constraint over the other
        # dimensions stays mixed on every cell: when the greedy split gains little, split the dimension of widest
        # spread instead once it is AHEAD times the chosen one's (every dimension then keeps shrinking)
        widest = np.argmax(np.where(np.isfinite(ratios), spreads, -1.0), axis=0)
        columns = np.arange(k)
        lagging = (spreads[widest, columns] > AHEAD * spreads[choice, columns]) & (best_ratio > SLOW)
        choice = np.where(lagging & np.isfinite(ratios[widest, columns]), widest, choice)
        splittable = np.isfinite(best_ratio)
        for r in range(k):
            self.lo_sum.sub(float(p_lo[r]))
            self.hi_sum.sub(float(p_hi[r]))
            self.cells -= 1
        frozen = [popped[r] for r in range(k) if not splittable[r]]
        for j, (_, _, _, children) in enumerate(options):
            rows = np.flatnonzero((choice == j) & splittable)
            if len(rows):
                for child in children:
                    self._push(*(a[rows] for a in child))
        for e in frozen:   # too narrow to split in floating point: its gap stays, counted once
            self.lo_sum.add(e[6])
            self.hi_sum.add(e[7])
            self.cells += 1
        return int(splittable.sum())


def _fallback_split(lo, hi):
    """A point inside (lo, hi) when the quantile split fails (far tails)."""
    both = np.isinf(lo) & np.isinf(hi)
    left = np.isinf(lo) & ~both
    right = np.isinf(hi) & ~both
    mid = lo + (hi - lo) / 2
    x = np.where(left, hi - np.maximum(1.0, np.abs(hi)), mid)
    x = np.where(right, lo + np.maximum(1.0, np.abs(lo)), x)
    return np.where(both, 0.0, x)


# ---------------------------------------------------------------------------------------------------------
# A path: factors
# ---------------------------------------------------------------------------------------------------------
class PathVolume:
    """Anytime bounds on the probability of one path (``fairaudit.engines.fairsquare.paths.Path``): ``bounds`` (exact
    rationals, lower never decreasing, upper never increasing) and ``refine(splits)``."""

    def __init__(self, dists: Sequence, box: dict, constraints: Sequence[Constraint]):
        self.fixed_lo, self.fixed_hi = Fraction(1), Fraction(1)
        self.components: list[Component] = []
        general = list(constraints)
        in_general: dict[int, int] = {}
        for c in general:
            for d in c.dims:
                in_general[d] = in_general.get(d, 0) + 1
        nonlinear_dims = set().union(*(c.dims for c in general if not c.linear)) if general else set()
        # dimensions only confined to an interval: exact-ish mass factors
        for d, (lo, hi) in box.items():
            if d in in_general:
                continue
            dist = dists[d]
            if isinstance(dist, ir.Step):
                m = step_mass(dist, lo, hi)
                self.fixed_lo, self.fixed_hi = self.fixed_lo * m, self.fixed_hi * m
            else:
                m_lo, m_hi = volume.gauss_mass(_ex(lo), _ex(hi), literal(dist.mean), literal(dist.variance))
                self.fixed_lo, self.fixed_hi = self.fixed_lo * Fraction(m_lo), self.fixed_hi * Fraction(m_hi)

        def private(d: int) -> bool:
            return (isinstance(dists[d], ir.Gaussian) and d not in box and in_general.get(d) == 1
                    and d not in nonlinear_dims)

        # merge each constraint's private Gaussians; group the rest into components by shared outer dims
        parent: dict[int, int] = {}

        def find(x):
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        prepared = []
        for c in general:
            outer = sorted(d for d in c.dims if not (c.linear and private(d)))
            for a, b in zip(outer, outer[1:]):
                parent[find(a)] = find(b)
            for d in outer:
                find(d)
            prepared.append((c, outer))
        groups: dict = {}
        for c, outer in prepared:
            if not outer:       # only private Gaussians: one closed-form tail
                mean, var = _merged(c, dists, c.value.coef)
                lo, hi = volume.gauss_tail(-c.value.const, mean, var, ">" if c.op in (">", ">=") else "<")
                self.fixed_lo, self.fixed_hi = self.fixed_lo * Fraction(lo), self.fixed_hi * Fraction(hi)
                continue
            groups.setdefault(find(outer[0]), []).append((c, outer))
        for members in groups.values():
            dims = sorted(set().union(*(outer for _, outer in members)))
            position = {d: i for i, d in enumerate(dims)}
            built = []
            for c, outer in members:
                if c.linear:
                    priv = [(d, a) for d, a in c.value.coef if d not in position]
                    z = _Normal(*_merged(c, dists, priv)) if priv else None
                    terms = [(position[d], a) for d, a in c.value.coef if d in position]
                    built.append(_Linear(terms, c.value.const, c.op, z))
                else:
                    built.append(_Nonlinear(c.value, c.op, position))
            outer_dims = [_dim(dists[d]) for d in dims]
            root, slack = [], 0.0
            for d, dim in zip(dims, outer_dims):
                interval, extra = _float_box(dim, *box.get(d, support(dists[d])))
                root.append(interval)
                slack = up(slack + extra)
            self.components.append(Component(outer_dims, root, built, slack))
        self.fixed_lo, self.fixed_hi = fdown(self.fixed_lo), fup(self.fixed_hi)
        self._best = (0.0, 1.0)
        self._update()

    def _update(self) -> None:
        lo, hi = Fraction(self.fixed_lo), Fraction(self.fixed_hi)
        for comp in self.components:
            c_lo, c_hi = comp.bounds
            lo, hi = lo * max(c_lo, Fraction(0)), hi * min(c_hi, Fraction(1))
        lo, hi = fdown(lo), fup(hi)
        # keep the tightest bounds seen (each is sound, so is their intersection)
        self._best = (max(self._best[0], lo), min(self._best[1], hi))

    @property
    def bounds(self) -> tuple[float, float]:
        return self._best

    @property
    def gap(self) -> float:
        return self._best[1] - self._best[0]

    @property
    def settled(self) -> bool:
        """No cell is left to split (the bounds cannot get tighter)."""
        return all(not comp.heap for comp in self.components)

    @property
    def cells(self) -> int:
        return sum(c.cells for c in self.components)

    def refine(self, splits: int, expired=None) -> int:
        """Split up to ``splits`` cells of the component that matters most (``expired()``, optional, ends it
        early); returns how many were split."""
        live = [c for c in self.components if c.heap]
        if not live:
            return 0
        weights = []
        for comp in live:
            others = Fraction(self.fixed_hi)
            for other in self.components:
                if other is not comp:
                    others *= other.bounds[1]
            c_lo, c_hi = comp.bounds
            weights.append((c_hi - c_lo) * others)
        comp = live[max(range(len(live)), key=weights.__getitem__)]
        done = comp.refine(splits, expired)
        self._update()
        return done


def _ex(x):
    return x if isinstance(x, float) and math.isinf(x) else Fraction(x)


def _merged(c: Constraint, dists, coef) -> tuple[Fraction, Fraction]:
    """Mean and variance of Σ a·X over ``coef``'s (Gaussian) dimensions."""
    mean, var = Fraction(0), Fraction(0)
    for d, a in coef:
        g = dists[d]
        mean += a * literal(g.mean)
        var += a * a * literal(g.variance)
    return mean, var
