"""Inference rules: one small rule per operator of the specification language (auto_LiRPA style).

Each rule does two things for its operator:

* ``interval(...)`` — numeric propagation, vectorised over numpy arrays: the children's
  ``Interval(estimate, lo, hi)`` → the node's interval (term operators), or the children's verdicts →
  the node's three-valued verdict (boolean operators), or two term intervals → a verdict (``cmp``).
  Rounding is outward (one ulp per operation), so an interval that contains its children's true
  values contains the node's true value: the rules are *sound* for any intervals, not only for
  Bernoulli means (verifier engines pass exact intervals with δ = 0).
* ``symbolic(...)`` / ``needs(...)`` — the same rule written over Pyomo expressions for the
  δ-allocation problem (``fairaudit.core.allocation``): a node's interval as expressions of the
  leaves' δ's, plus the constraints under which the rule applies (AVOIR Fig. 5's "constr." rules).

Correspondence with AVOIR's Figure 5 (``X : (E, ε, δ)`` means ``|Ê − E| ≤ ε`` with prob. ≥ 1 − δ):

=================  ===========================================================================
AVOIR rule         here
=================  ===========================================================================
X ± Y              ``AddRule`` / ``SubRule``: ``[a.lo ± b.{lo,hi}, a.hi ± b.{hi,lo}]`` (for
                   symmetric intervals this is exactly ``Ê_X ± Ê_Y, ε_X + ε_Y``)
X × Y              ``MulRule``: min/max of the four endpoint products (sound for any signs; for
                   non-negative X, Y it is never wider than AVOIR's ``ε_Xε_Y + Ê_Xε_Y + Ê_Yε_X``)
X⁻¹ (+ constr.)    ``DivRule``: ``a × [1/b.hi, 1/b.lo]`` when ``0 ∉ b``; ``[a.lo/b.hi, inf)`` when ``a ≥ 0`` and
                   ``b ∈ [0, b.hi]`` (where the ratio is defined); otherwise ``(−inf, inf)``
                   and the comparison above is unknown. Symbolically the constraint
                   ``b.lo > 0`` (or ``b.hi < 0``) is added, as in "Inverse Constr."
−X                 ``NegRule``
True / False       ``CmpRule``: TRUE when the whole interval of ``left − right`` satisfies the
(+ constr.)        comparison, FALSE when the whole interval violates it, else UNKNOWN;
                   symbolically: the constraint ``left.hi − right.lo < 0`` etc.
and / or           ``AndRule`` / ``OrRule``: Kleene logic; δ's add up (union bound). To prove
(+ constr.)        ``and`` TRUE both children must be TRUE; FALSE needs one child FALSE (a
                   disjunction of constraint sets), dually for ``or``
not                ``NotRule`` (not in AVOIR's figure): swaps TRUE and FALSE
=================  ===========================================================================
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TRUE, FALSE, UNKNOWN = 1, 0, -1
VERDICT_NAMES = {TRUE: "true", FALSE: "false", UNKNOWN: "unknown"}
STRICT_MARGIN = 1e-9  # strict inequalities in the optimisation model: ``x < 0`` becomes ``x <= -STRICT_MARGIN``


@dataclass
class Interval:
    """Estimate and interval of a term; numpy arrays of one shape (or scalars)."""

    estimate: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def exact(cls, value, shape=()) -> "Interval":
        v = np.full(shape, float(value))
        return cls(v, v.copy(), v.copy())


def _down(x):
    """One ulp down. A lower endpoint of +inf can only come from overflow (the true value is finite):
    it becomes the largest float, so the interval still contains it."""
    return np.where(x == -np.inf, x, np.nextafter(x, -np.inf))


def _up(x):
    """One ulp up; an overflowed upper endpoint of −inf becomes the most negative float."""
    return np.where(x == np.inf, x, np.nextafter(x, np.inf))


def _exact(*intervals: Interval):
    """True where every input interval is a single point (results of constants stay exact)."""
    out = True
    for iv in intervals:
        out = out & (np.asarray(iv.lo) == np.asarray(iv.hi))
    return out


def _outward(lo, hi, exact):
    return np.where(exact, lo, _down(lo)), np.where(exact, hi, _up(hi))


# ------------------------------------------------------------------------------------------
# term rules


class AddRule:
    kind = "add"

    def interval(self, a: Interval, b: Interval) -> Interval:
        with np.errstate(over="ignore"):  # an overflow to ±inf is still a sound bound
            lo, hi = _outward(a.lo + b.lo, a.hi + b.hi, False)
            return Interval(a.estimate + b.estimate, lo, hi)

    def symbolic(self, build, a, b):
        return a[0] + b[0], a[1] + b[1]


class SubRule:
    kind = "sub"

    def interval(self, a: Interval, b: Interval) -> Interval:
        with np.errstate(over="ignore", invalid="ignore"):  # ±inf is sound; inf − inf estimates are NaN
            lo, hi = _outward(a.lo - b.hi, a.hi - b.lo, False)
            return Interval(a.estimate - b.estimate, lo, hi)

    def symbolic(self, build, a, b):
        return a[0] - b[1], a[1] - b[0]


class NegRule:
    kind = "neg"

    def interval(self, a: Interval) -> Interval:
        return Interval(-a.estimate, -a.hi, -a.lo)

    def symbolic(self, build, a):
        return -a[1], -a[0]


def _products(alo, ahi, blo, bhi):
    with np.errstate(invalid="ignore", over="ignore"):
        ps = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
    return [np.where(np.isnan(p), 0.0, p) for p in ps]  # 0 · inf = 0 in interval arithmetic


class MulRule:
    kind = "mul"

    def interval(self, a: Interval, b: Interval) -> Interval:
        ps = _products(a.lo, a.hi, b.lo, b.hi)
        lo, hi = _outward(np.minimum.reduce(ps), np.maximum.reduce(ps), False)
        with np.errstate(invalid="ignore", over="ignore"):
            return Interval(a.estimate * b.estimate, lo, hi)

    def symbolic(self, build, a, b):
        """``lo ≤`` each endpoint product ``≤ hi``: exact min/max when the optimiser wants the
        interval tight (it always does: verdicts are monotone in the intervals)."""
        lo, hi = build.var(), build.var()
        for x in (a[0], a[1]):
            for y in (b[0], b[1]):
                build.require(lo <= x * y)
                build.require(hi >= x * y)
        return lo, hi


class DivRule:
    kind = "div"

    def interval(self, a: Interval, b: Interval) -> Interval:
        positive, negative = b.lo > 0, b.hi < 0
        ok = positive | negative
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            safe_lo = np.where(ok, b.lo, 1.0)
            safe_hi = np.where(ok, b.hi, 1.0)
            rlo, rhi = _down(1.0 / safe_hi), _up(1.0 / safe_lo)
            est = np.where(b.estimate != 0, a.estimate / np.where(b.estimate != 0, b.estimate, 1.0), np.nan)
        ps = _products(a.lo, a.hi, rlo, rhi)
        lo, hi = _outward(np.minimum.reduce(ps), np.maximum.reduce(ps), False)
        # a ratio of non-negative quantities (probabilities) whose divisor may be as small as 0: where it is
        # defined (divisor > 0) it is at least a.lo / b.hi — not "anything from −inf"
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            floor = np.maximum(_down(a.lo / np.where(b.hi > 0, b.hi, 1.0)), 0.0)  # a ≥ 0, b > 0: never below 0
        nonneg = ~ok & (a.lo >= 0) & (b.lo >= 0) & (b.hi > 0)
        return Interval(est, np.where(ok, lo, np.where(nonneg, floor, -np.inf)), np.where(ok, hi, np.inf))

    def symbolic(self, build, a, b, sign: int = 1):
        """Inverse Constr.: require ``b.lo > 0`` (``sign=1``) or ``b.hi < 0`` (``sign=-1``), then
        ``a × [1/b.hi, 1/b.lo]``."""
        if sign > 0:
            build.require(b[0] >= STRICT_MARGIN)
        else:
            build.require(b[1] <= -STRICT_MARGIN)
        return MUL.symbolic(build, a, (1.0 / b[1], 1.0 / b[0]))


# ------------------------------------------------------------------------------------------
# comparison


class CmpRule:
    """``left op right``. Verdicts compare endpoints directly (no rounding involved)."""

    kind = "cmp"

    def interval(self, op: str, l: Interval, r: Interval) -> np.ndarray:
        """The three-valued verdict (int8 array: 1 true, 0 false, -1 unknown)."""
        true, false = self._cases(op, l.lo, l.hi, r.lo, r.hi)
        out = np.full(np.broadcast(l.lo, r.lo).shape, UNKNOWN, dtype=np.int8)
        out = np.where(true, TRUE, np.where(false, FALSE, out)).astype(np.int8)
        return out

    @staticmethod
    def _cases(op, llo, lhi, rlo, rhi):
        if op == "<":
            return lhi < rlo, llo >= rhi
        if op == "<=":
            return lhi <= rlo, llo > rhi
        if op == ">":
            return llo > rhi, lhi <= rlo
        if op == ">=":
            return llo >= rhi, lhi < rlo
        point = (llo == lhi) & (rlo == rhi) & (llo == rlo)
        apart = (llo > rhi) | (lhi < rlo)
        if op == "==":
            return point, apart
        if op == "!=":
            return apart, point
        raise ValueError(f"unknown comparison {op!r}")

    def difference(self, l: Interval, r: Interval) -> Interval:
        """What a comparison node displays: the interval of ``left − right``."""
        return SUB.interval(l, r)

    def needs(self, op: str, want: bool, l, r) -> list[list]:
        """Alternatives (a disjunction) of constraint lists under which ``left op right`` has verdict
        ``want`` (True Constr. / False Constr.); ``l``, ``r`` are ``(lo, hi)`` expressions."""
        m = STRICT_MARGIN
        lt = [l[1] - r[0] <= -m]      # whole interval: left < right
        le = [l[1] - r[0] <= 0]
        gt = [l[0] - r[1] >= m]
        ge = [l[0] - r[1] >= 0]
        point = [l[1] - r[0] <= 0, l[0] - r[1] >= 0]
        table = {
            ("<", True): [lt], ("<", False): [ge],
            ("<=", True): [le], ("<=", False): [gt],
            (">", True): [gt], (">", False): [le],
            (">=", True): [ge], (">=", False): [lt],
            ("==", True): [point], ("==", False): [gt, lt],
            ("!=", True): [gt, lt], ("!=", False): [point],
        }
        return table[(op, bool(want))]


# ------------------------------------------------------------------------------------------
# boolean rules (Kleene logic)


class AndRule:
    kind = "and"

    def interval(self, a, b):
        a, b = np.asarray(a), np.asarray(b)
        return np.where((a == FALSE) | (b == FALSE), FALSE,
                        np.where((a == TRUE) & (b == TRUE), TRUE, UNKNOWN)).astype(np.int8)

    def needs(self, want: bool) -> list[list[tuple[int, bool]]]:
        """Alternatives of (child index, wanted verdict): TRUE needs both, FALSE needs either."""
        return [[(0, True), (1, True)]] if want else [[(0, False)], [(1, False)]]


class OrRule:
    kind = "or"

    def interval(self, a, b):
        a, b = np.asarray(a), np.asarray(b)
        return np.where((a == TRUE) | (b == TRUE), TRUE,
                        np.where((a == FALSE) & (b == FALSE), FALSE, UNKNOWN)).astype(np.int8)

    def needs(self, want: bool):
        return [[(0, True)], [(1, True)]] if want else [[(0, False), (1, False)]]


class NotRule:
    kind = "not"

    def interval(self, a):
        a = np.asarray(a)
        return np.where(a == TRUE, FALSE, np.where(a == FALSE, TRUE, UNKNOWN)).astype(np.int8)

    def needs(self, want: bool):
        return [[(0, not want)]]


ADD, SUB, NEG, MUL, DIV = AddRule(), SubRule(), NegRule(), MulRule(), DivRule()
CMP, AND, OR, NOT = CmpRule(), AndRule(), OrRule(), NotRule()

TERM_RULES = {"add": ADD, "sub": SUB, "neg": NEG, "mul": MUL, "div": DIV}
BOOL_RULES = {"and": AND, "or": OR, "not": NOT}
RULES = {**TERM_RULES, **BOOL_RULES, "cmp": CMP}
