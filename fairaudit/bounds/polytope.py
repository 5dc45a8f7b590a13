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
decomposition use :mod:`fairaudit.bounds.volume`'s 160-bit evaluation.
"""
from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Sequence

from fairaudit.bounds import volume
from fairaudit.programs import ir
from fairaudit.programs.paths import Affine, Constraint, Nonlinear, step_mass, support

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
# Gaussian tails in floats, enclosed
# ---------------------------------------------------------------------------------------------------------
def q_lower(z: float) -> float:
    """A lower bound on Q(z) = P[N(0,1) > z]."""
    if z == INF or z > _ZCLAMP:
        return 0.0
    if z == -INF:
        return 1.0
    if z < -_ZCLAMP:
        return math.nextafter(1.0, 0.0)
    v = 0.5 * math.erfc(z / _SQRT2)
    return max(0.0, dn(v - v * _REL * max(1.0, z * z) - _ABS))


def q_upper(z: float) -> float:
    """An upper bound on Q(z)."""
    if z == INF:
        return 0.0
    if z > _ZCLAMP:
        return 1e-300
    if z == -INF or z < -_ZCLAMP:
        return 1.0
    v = 0.5 * math.erfc(z / _SQRT2)
    return min(1.0, up(v + v * _REL * max(1.0, z * z) + _ABS))


@dataclass(frozen=True)
class _Normal:
    """N(mean, var) with exact parameters and float enclosures of the mean and the standard deviation."""
    mean: Fraction
    var: Fraction

    def __post_init__(self):
        if self.var <= 0:
            raise ValueError("a Gaussian needs a positive variance")
        object.__setattr__(self, "mu", (fdown(self.mean), fup(self.mean)))
        v_lo, v_hi = fdown(self.var), fup(self.var)
        object.__setattr__(self, "sd", (dn(math.sqrt(v_lo)) if v_lo > 0 else 0.0, up(math.sqrt(v_hi))))
        object.__setattr__(self, "approx", NormalDist(float(self.mean), math.sqrt(float(self.var))))

    def z(self, lo: float, hi: float) -> tuple[float, float]:
        """Enclosure of (x − μ)/σ over x ∈ [lo, hi]."""
        n_lo = -INF if lo == -INF else (INF if lo == INF else dn(lo - self.mu[1]))
        n_hi = INF if hi == INF else (-INF if hi == -INF else up(hi - self.mu[0]))
        s_lo, s_hi = self.sd
        z_lo = n_lo if math.isinf(n_lo) else dn(n_lo / (s_hi if n_lo >= 0 else s_lo))
        z_hi = n_hi if math.isinf(n_hi) else up(n_hi / (s_lo if n_hi >= 0 else s_hi))
        return z_lo, z_hi

    def greater(self, t_lo: float, t_hi: float) -> tuple[float, float]:
        """Enclosure of P[X > t] over t ∈ [t_lo, t_hi]."""
        z_lo, _ = self.z(t_lo, t_lo)
        _, z_hi = self.z(t_hi, t_hi)
        return q_lower(z_hi), q_upper(z_lo)

    def less(self, t_lo: float, t_hi: float) -> tuple[float, float]:
        """Enclosure of P[X < t] over t ∈ [t_lo, t_hi] (= P[−X > −t], Q(−z))."""
        z_lo, _ = self.z(t_lo, t_lo)
        _, z_hi = self.z(t_hi, t_hi)
        return q_lower(-z_lo), q_upper(-z_hi)

    def mass(self, a: float, b: float) -> tuple[float, float]:
        """Enclosure of P[a < X < b]."""
        if not a < b:
            return 0.0, 0.0
        za, zb = self.z(a, a), self.z(b, b)
        if za[0] >= 0:                       # both in the right tail: Q(a) − Q(b)
            lo = dn(q_lower(za[1]) - q_upper(zb[0]))
            hi = up(q_upper(za[0]) - q_lower(zb[1]))
        elif zb[1] <= 0:                     # both in the left tail: Q(−b) − Q(−a)
            lo = dn(q_lower(-zb[0]) - q_upper(-za[1]))
            hi = up(q_upper(-zb[1]) - q_lower(-za[0]))
        else:                                # straddles the mean: 1 − Q(−a) − Q(b)
            lo = dn(dn(1.0 - q_upper(-za[1])) - q_upper(zb[0]))
            hi = up(up(1.0 - q_lower(-za[0])) - q_lower(zb[1]))
        return max(0.0, lo), min(1.0, hi)

    def cdf(self, x: float) -> float:
        return 0.0 if x == -INF else 1.0 if x == INF else self.approx.cdf(x)

    def quantile(self, p: float) -> float:
        return self.approx.inv_cdf(min(max(p, 1e-300), 1 - 1e-16))


class _StepDim:
    """A step (piecewise-uniform) distribution: exact rational masses."""

    def __init__(self, dist: ir.Step):
        self.dist = dist
        self.pieces = [(float(lo), float(hi), float(p)) for lo, hi, p in dist.pieces if p > 0]

    def mass(self, a: float, b: float) -> tuple[float, float]:
        m = step_mass(self.dist, a if math.isinf(a) else Fraction(a), b if math.isinf(b) else Fraction(b))
        return fdown(m), fup(m)

    def cdf(self, x: float) -> float:
        return float(step_mass(self.dist, -INF, x if math.isinf(x) else Fraction(x)))

    def quantile(self, p: float) -> float:
        acc = 0.0
        for lo, hi, w in self.pieces:
            if acc + w >= p:
                return lo + (p - acc) / w * (hi - lo)
            acc += w
        return self.pieces[-1][1]


def _dim(dist):
    if isinstance(dist, ir.Gaussian):
        return _Normal(Fraction(dist.mean), Fraction(dist.variance))
    return _StepDim(dist)


def _float_box(dim, lo, hi) -> tuple[tuple[float, float], float]:
    """The largest float interval inside the exact interval (lo, hi), and an upper bound on the mass between
    the two (the ends of a constraint such as ``x < 1/3`` are rarely floats)."""
    f_lo = lo if lo == -INF else fup(lo)
    f_hi = hi if hi == INF else fdown(hi)
    slack = 0.0
    if f_lo != lo:
        slack = up(slack + dim.mass(fdown(lo), f_lo)[1])
    if f_hi != hi:
        slack = up(slack + dim.mass(f_hi, fup(hi))[1])
    if not f_lo < f_hi:     # narrower than two floats: keep the outer interval, all of it counted as slack
        f_lo, f_hi = (lo if lo == -INF else fdown(lo)), (hi if hi == INF else fup(hi))
        slack = up(slack + dim.mass(f_lo, f_hi)[1])
        f_hi = f_lo
    return (f_lo, f_hi), slack


# ---------------------------------------------------------------------------------------------------------
# Constraints on cells
# ---------------------------------------------------------------------------------------------------------
def _coef_iv(a: Fraction) -> tuple[float, float, int]:
    return fdown(a), fup(a), (1 if a > 0 else -1)


def _term(a, box_lo: float, box_hi: float) -> tuple[float, float]:
    """Enclosure of a·x over x ∈ [box_lo, box_hi], a given as (lo, hi, sign)."""
    a_lo, a_hi, sign = a
    if sign > 0:
        lo = a_lo * box_lo if box_lo >= 0 else a_hi * box_lo
        hi = a_hi * box_hi if box_hi >= 0 else a_lo * box_hi
    else:
        lo = a_lo * box_hi if box_hi >= 0 else a_hi * box_hi
        hi = a_hi * box_lo if box_lo >= 0 else a_lo * box_lo
    return dn(lo), up(hi)


def _mul(a, b):
    ps = []
    for x in a:
        for y in b:
            p = x * y
            ps.append(0.0 if math.isnan(p) else p)
    return dn(min(ps)), up(max(ps))


def _div(a, b):
    if b[0] <= 0 <= b[1]:
        return -INF, INF
    return _mul(a, (dn(1 / b[1]), up(1 / b[0])))


class _Linear:
    """``const + Σ coef·x_outer + Z op 0`` (``Z`` the private Gaussian, or none)."""

    def __init__(self, terms, const: Fraction, op: str, private: _Normal | None):
        self.terms = [(pos, _coef_iv(a)) for pos, a in terms]
        self.const = (fdown(const), fup(const))
        self.op = op
        self.private = private
        self.positions = [pos for pos, _ in terms]
        scale = float(private.sd[1]) if private is not None else 1.0
        self._weights = {pos: abs(float(a)) / scale for pos, a in terms}

    def weight(self, i: int) -> float:
        return self._weights.get(i, 0.0)

    def coefficient(self, i: int):
        """The (lo, hi, sign) enclosure of the coefficient of outer dimension ``i``, or None."""
        for pos, a in self.terms:
            if pos == i:
                return a
        return None

    def bound_on(self, i: int, box) -> tuple[str, float, float]:
        """This constraint as a bound on dimension ``i`` given the others in ``box``: ("lower"|"upper", lo, hi)
        where the bound ranges over [lo, hi] (``x_i > −s/a`` or ``x_i < −s/a``)."""
        a = self.coefficient(i)
        s_lo, s_hi = self.s_range(box, skip=i)
        b_lo, b_hi = _div((-s_hi, -s_lo), (a[0], a[1]))
        lower = (self.op in (">", ">=")) == (a[2] > 0)
        return ("lower" if lower else "upper"), b_lo, b_hi

    def s_range(self, box, skip: int | None = None) -> tuple[float, float]:
        lo, hi = self.const
        for pos, a in self.terms:
            if pos == skip:
                continue
            t_lo, t_hi = _term(a, *box[pos])
            lo, hi = dn(lo + t_lo), up(hi + t_hi)
        return lo, hi

    def factor(self, box) -> tuple[float, float]:
        s_lo, s_hi = self.s_range(box)
        if self.private is not None:   # s + Z op 0  ⇔  Z op −s
            if self.op in (">", ">="):
                return self.private.greater(-s_hi, -s_lo)
            return self.private.less(-s_hi, -s_lo)
        return _membership(s_lo, s_hi, self.op)


class _Nonlinear:
    """A non-linear constraint ``value op 0``, judged on a cell by interval arithmetic."""

    def __init__(self, value, op: str, position: dict[int, int]):
        self.value, self.op, self.position = value, op, position
        self.positions = sorted(position[d] for d in value.dims)

    def weight(self, i: int) -> float:
        return 1.0 if i in self.positions else 0.0

    def range(self, v, box):
        if isinstance(v, Affine):
            lo, hi = fdown(v.const), fup(v.const)
            for d, a in v.coef:
                t_lo, t_hi = _term(_coef_iv(a), *box[self.position[d]])
                lo, hi = dn(lo + t_lo), up(hi + t_hi)
            return lo, hi
        left, right = self.range(v.left, box), self.range(v.right, box)
        if v.op == "+":
            return dn(left[0] + right[0]), up(left[1] + right[1])
        if v.op == "*":
            return _mul(left, right)
        return _div(left, right)

    def factor(self, box) -> tuple[float, float]:
        lo, hi = self.range(self.value, box)
        if math.isnan(lo) or math.isnan(hi):
            return 0.0, 1.0
        # strict tests: the range is only an enclosure, so a touching bound proves nothing
        if self.op in (">", ">="):
            return (1.0, 1.0) if lo > 0 else (0.0, 0.0) if hi < 0 else (0.0, 1.0)
        return (1.0, 1.0) if hi < 0 else (0.0, 0.0) if lo > 0 else (0.0, 1.0)


def _membership(s_lo: float, s_hi: float, op: str) -> tuple[float, float]:
    """Over the OPEN cell a non-constant linear s ranges strictly inside (min, max): faces have probability 0."""
    if op in (">", ">="):
        return (1.0, 1.0) if s_lo >= 0 else (0.0, 0.0) if s_hi <= 0 else (0.0, 1.0)
    return (1.0, 1.0) if s_hi <= 0 else (0.0, 0.0) if s_lo >= 0 else (0.0, 1.0)


# ---------------------------------------------------------------------------------------------------------
# A component: cells over its outer dimensions
# ---------------------------------------------------------------------------------------------------------
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
        masses = tuple((1.0, 1.0) if i == self.f else d.mass(a, b) for i, (d, (a, b)) in enumerate(zip(dims, root)))
        self._add(tuple(root), masses, self._value(tuple(root), masses))

    def _integration_dim(self) -> int | None:
        """A Gaussian outer dimension to integrate exactly on every cell (never split): one that only linear
        constraints without a private Gaussian use — the one they weigh most."""
        # A bound x_f > −s/a_f is loose by the range of s over the cell divided by a_f: prefer the dimension
        # whose weight (|a|·σ) is largest relative to the other dimensions' in EVERY constraint that uses it.
        sd = [d.sd[1] if isinstance(d, _Normal) else 1.0 for d in self.dims]
        best, best_key = None, None
        for i, dim in enumerate(self.dims):
            if not isinstance(dim, _Normal):
                continue
            users = [c for c in self.constraints if i in c.positions]
            if not users or any(not isinstance(c, _Linear) or c.private is not None for c in users):
                continue
            ratios = []
            for c in users:
                others = sum(c.weight(j) * sd[j] for j in c.positions if j != i)
                ratios.append(c.weight(i) * sd[i] / others if others > 0 else INF)
            key = (min(ratios), len(users))
            if best_key is None or key > best_key:
                best, best_key = i, key
        return best

    def _f_factor(self, box) -> tuple[float, float]:
        """Enclosure of P[x_f satisfies every constraint using it | the other dimensions anywhere in the cell]:
        the interval of x_f allowed for every point of the cell, and the one allowed for some point."""
        f_lo_root, f_hi_root = box[self.f]
        inner = [f_lo_root, f_hi_root]   # max lower bound (worst case), min upper bound (worst case)
        outer = [f_lo_root, f_hi_root]
        for c in self.f_cons:
            kind, b_lo, b_hi = c.bound_on(self.f, box)
            if kind == "lower":
                inner[0], outer[0] = max(inner[0], b_hi), max(outer[0], b_lo)
            else:
                inner[1], outer[1] = min(inner[1], b_lo), min(outer[1], b_hi)
        dim = self.dims[self.f]
        lo = dim.mass(*inner)[0] if inner[0] < inner[1] else 0.0
        hi = dim.mass(*outer)[1] if outer[0] < outer[1] else 0.0
        return lo, hi

    def _value(self, box, masses) -> tuple[float, float]:
        lo = hi = 1.0
        for m_lo, m_hi in masses:
            lo, hi = dn(lo * m_lo), up(hi * m_hi)
        for c in self.cell_cons:
            if hi == 0.0:
                break
            f_lo, f_hi = c.factor(box)
            lo, hi = max(0.0, dn(lo * f_lo)), up(hi * f_hi)
        if self.f is not None and hi > 0.0:
            f_lo, f_hi = self._f_factor(box)
            lo, hi = max(0.0, dn(lo * f_lo)), up(hi * f_hi)
        return max(0.0, lo), min(1.0, hi)

    def _add(self, box, masses, value) -> None:
        lo, hi = value
        self.lo_sum.add(lo)
        self.hi_sum.add(hi)
        self.cells += 1
        if hi > lo:
            heapq.heappush(self.heap, (-(hi - lo), next(self.counter), box, masses, value))

    @property
    def bounds(self) -> tuple[Fraction, Fraction]:
        return self.lo_sum.fraction(), self.hi_sum.fraction()

    def _spread(self, i: int, interval: tuple[float, float]) -> float:
        """How much the constraints' values vary along dimension ``i`` over ``interval`` (width capped at the
        distribution's central 1 − 10⁻⁹ range, so an unbounded side still compares)."""
        dim = self.dims[i]
        lo, hi = interval
        if math.isinf(lo) or math.isinf(hi):
            lo = max(lo, dim.quantile(1e-9)) if math.isinf(lo) else lo
            hi = min(hi, dim.quantile(1 - 1e-9)) if math.isinf(hi) else hi
        width = max(hi - lo, 0.0)
        return width * sum(c.weight(i) for c in self.constraints)

    def refine(self, splits: int) -> int:
        done = 0
        while self.heap and done < splits:
            _, _, box, masses, value = heapq.heappop(self.heap)
            best = None
            for i, dim in enumerate(self.dims):
                if i == self.f:
                    continue
                x = _split_point(dim, *box[i])
                if x is None:
                    continue
                children = []
                for part in ((box[i][0], x), (x, box[i][1])):
                    nb = box[:i] + (part,) + box[i + 1:]
                    nm = masses[:i] + (dim.mass(*part),) + masses[i + 1:]
                    children.append((nb, nm, self._value(nb, nm)))
                gap = sum(v[1] - v[0] for _, _, v in children)
                # no split may narrow a cell that is mixed throughout (every child still [0, mass]): then the
                # dimension along which the constraints vary most over the cell breaks the tie
                key = (round(gap / (value[1] - value[0]), 9), -self._spread(i, box[i]))
                if best is None or key < best[0]:
                    best = (key, children)
            self.lo_sum.sub(value[0])
            self.hi_sum.sub(value[1])
            self.cells -= 1
            if best is None:   # too narrow to split in floating point: its gap stays, counted once
                self.lo_sum.add(value[0])
                self.hi_sum.add(value[1])
                self.cells += 1
                continue
            for child in best[1]:
                self._add(*child)
            done += 1
            self.splits += 1
        return done


def _split_point(dim, lo: float, hi: float) -> float | None:
    """A point strictly inside (lo, hi) splitting its probability about in half (any point is sound)."""
    try:
        x = dim.quantile((dim.cdf(lo) + dim.cdf(hi)) / 2)
    except (ValueError, OverflowError):
        x = math.nan
    if not lo < x < hi:
        if math.isinf(lo) and math.isinf(hi):
            x = 0.0
        elif math.isinf(lo):
            x = hi - max(1.0, abs(hi))
        elif math.isinf(hi):
            x = lo + max(1.0, abs(lo))
        else:
            x = lo + (hi - lo) / 2
    return x if lo < x < hi else None


# ---------------------------------------------------------------------------------------------------------
# A path: factors
# ---------------------------------------------------------------------------------------------------------
class PathVolume:
    """Anytime bounds on the probability of one path (``fairaudit.programs.paths.Path``): ``bounds`` (exact
    rationals, lower never decreasing, upper never increasing) and ``refine(splits)``."""

    def __init__(self, dists: Sequence, box: dict, constraints: Sequence[Constraint]):
        self.fixed_lo, self.fixed_hi = Fraction(1), Fraction(1)
        self.components: list[Component] = []
        general = [c for c in constraints]
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
                m_lo, m_hi = volume.gauss_mass(_ex(lo), _ex(hi), dist.mean, dist.variance)
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

    def refine(self, splits: int) -> int:
        """Split up to ``splits`` cells of the component that matters most; returns how many were split."""
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
        done = comp.refine(splits)
        self._update()
        return done


def _ex(x):
    return x if isinstance(x, float) and math.isinf(x) else Fraction(x)


def _merged(c: Constraint, dists, coef) -> tuple[Fraction, Fraction]:
    """Mean and variance of Σ a·X over ``coef``'s (Gaussian) dimensions."""
    mean, var = Fraction(0), Fraction(0)
    for d, a in coef:
        g = dists[d]
        mean += a * Fraction(g.mean)
        var += a * a * Fraction(g.variance)
    return mean, var
