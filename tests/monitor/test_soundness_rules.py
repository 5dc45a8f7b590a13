"""Independent soundness review of the interval rules and of the shared evaluator (property tests).

Oracle: exact rational arithmetic (``fractions.Fraction``) on the corners of random input boxes and
on dense samples inside them. A rule is sound when the computed interval contains ``f(x, y)`` for
every ``x`` in box A and ``y`` in box B (with outward rounding, the *exact* real result, not only the
float one). A comparison verdict is sound when TRUE implies every point pair satisfies the
comparison and FALSE implies none does; for ``< <= > >=`` (monotone in the endpoints) the verdict
must also be decided whenever the corners decide it. Boxes include ones touching / containing 0,
half-infinite and fully infinite ones, and degenerate (single-point) ones.
"""
from __future__ import annotations

import itertools
import math
import operator
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairaudit.bounds import rules as R
from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN, Interval
from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.spec import ast as A
from soundness_oracle import CMP_FN, EXACT, concrete
from spec_helpers import C, X, make_spec

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BIG = 1e6  # finite stand-in for an infinite endpoint when sampling points

special = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-300, -1e-300, 0.1, 1 / 3, 2.0, -3.0,
                           5e-324, -5e-324, 2.2250738585e-313, 1e300, -1e300, 1.7e308, -1.7e308])
finite = st.one_of(special, st.floats(-50, 50, allow_nan=False, allow_infinity=False))
endpoint = st.one_of(finite, st.sampled_from([-math.inf, math.inf]))


@st.composite
def boxes(draw, allow_inf=True):
    a = draw(endpoint if allow_inf else finite)
    kind = draw(st.sampled_from(["point", "box", "box", "box"]))
    if kind == "point" and math.isfinite(a):
        return (a, a)
    b = draw(endpoint if allow_inf else finite)
    lo, hi = min(a, b), max(a, b)
    if lo == hi and not math.isfinite(lo):  # [inf, inf] is not a set of reals
        lo, hi = (-math.inf, lo) if lo > 0 else (lo, math.inf)
    return (lo, hi)


def _points(box, dense: int = 9):
    """Finite points of the box: its finite corners, points near infinite ends, 0 if inside, and a grid."""
    lo, hi = box
    flo = lo if math.isfinite(lo) else (-BIG if hi > -BIG else hi - BIG)
    fhi = hi if math.isfinite(hi) else (BIG if lo < BIG else lo + BIG)
    pts = {flo, fhi}
    pts.update(flo + (fhi - flo) * i / (dense - 1) for i in range(dense))
    if lo <= 0.0 <= hi:
        pts.update({0.0, min(fhi, 1e-9), max(flo, -1e-9)})
    return sorted(p for p in pts if lo <= p <= hi and math.isfinite(p))


def _iv(box) -> Interval:
    lo, hi = box
    est = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (lo if math.isfinite(lo) else hi)
    if not math.isfinite(est):
        est = 0.0
    return Interval(np.array(est), np.array(lo), np.array(hi))


def _contains(lo: float, hi: float, exact: Fraction) -> bool:
    ok_lo = lo == -math.inf or (lo != math.inf and Fraction(lo) <= exact)
    ok_hi = hi == math.inf or (hi != -math.inf and exact <= Fraction(hi))
    return ok_lo and ok_hi


@pytest.mark.parametrize("kind", ["add", "sub", "mul", "div"])
@SETTINGS
@given(a=boxes(), b=boxes())
def test_binary_rule_contains_exact_result(kind, a, b):
    out = R.TERM_RULES[kind].interval(_iv(a), _iv(b))
    lo, hi = float(out.lo), float(out.hi)
    assert not (math.isnan(lo) or math.isnan(hi)), (kind, a, b, lo, hi)
    assert lo <= hi and lo != math.inf and hi != -math.inf
    for x in _points(a):
        for y in _points(b):
            if kind == "div" and y == 0:
                continue
            exact = EXACT[kind](Fraction(x), Fraction(y))
            assert _contains(lo, hi, exact), (kind, a, b, x, y, lo, hi)


@SETTINGS
@given(a=boxes(), b=boxes())
def test_division_is_unbounded_exactly_when_the_denominator_may_be_zero(a, b):
    out = R.DIV.interval(_iv(a), _iv(b))
    if b[0] <= 0 <= b[1]:
        assert float(out.hi) == math.inf
        if a[0] >= 0 and b[0] >= 0 and b[1] > 0:   # non-negative over (0, b.hi]: at least a.lo / b.hi where defined
            assert 0 <= float(out.lo)
            if math.isfinite(a[0]) and math.isfinite(b[1]):
                assert _contains(float(out.lo), math.inf, Fraction(a[0]) / Fraction(b[1]))
        else:
            assert float(out.lo) == -math.inf
    elif max(map(abs, a)) < 1e100 and abs(b[0]) > 1e-200 and abs(b[1]) > 1e-200:
        assert math.isfinite(float(out.lo)) and math.isfinite(float(out.hi))


@SETTINGS
@given(a=boxes())
def test_neg_rule_contains_exact_result(a):
    out = R.NEG.interval(_iv(a))
    for x in _points(a):
        assert _contains(float(out.lo), float(out.hi), -Fraction(x))


@SETTINGS
@given(a=boxes(allow_inf=False), b=boxes(allow_inf=False))
def test_vectorised_rules_agree_with_scalar_calls(a, b):
    """The evaluator calls the rules on arrays (one entry per check); the result must not depend on
    the other entries (no accidental reduction across the array)."""
    other = (0.25, 0.75)
    va = Interval(np.array([0.0, (a[0] + a[1]) / 2]), np.array([other[0], a[0]]), np.array([other[1], a[1]]))
    vb = Interval(np.array([0.0, (b[0] + b[1]) / 2]), np.array([other[0], b[0]]), np.array([other[1], b[1]]))
    for kind in ("add", "sub", "mul", "div"):
        vec = R.TERM_RULES[kind].interval(va, vb)
        one = R.TERM_RULES[kind].interval(_iv(a), _iv(b))
        assert (float(vec.lo[1]), float(vec.hi[1])) == (float(one.lo), float(one.hi))


@pytest.mark.parametrize("op", list(CMP_FN))
@SETTINGS
@given(a=boxes(), b=boxes())
def test_cmp_verdict_sound_and_tight(op, a, b):
    v = int(R.CMP.interval(op, _iv(a), _iv(b)))
    outcomes = {CMP_FN[op](Fraction(x), Fraction(y)) for x in _points(a) for y in _points(b)}
    if v == TRUE:
        assert outcomes == {True}, (op, a, b)
    elif v == FALSE:
        assert outcomes == {False}, (op, a, b)
    else:
        assert v == UNKNOWN
    # tight: for the order comparisons the corners decide, so an all-agreeing box must be decided
    finite_box = all(math.isfinite(t) for t in a + b)
    if finite_box and op in ("<", "<=", ">", ">="):
        assert v == (TRUE if outcomes == {True} else FALSE if outcomes == {False} else UNKNOWN), (op, a, b)


@pytest.mark.parametrize("op,l,r,want", [
    ("<", (0.0, 0.5), (0.5, 1.0), UNKNOWN),    # touching: 0.5 < 0.5 is false at the corner
    ("<=", (0.0, 0.5), (0.5, 1.0), TRUE),
    (">", (0.5, 1.0), (0.0, 0.5), UNKNOWN),
    (">=", (0.5, 1.0), (0.0, 0.5), TRUE),
    ("<", (0.5, 1.0), (0.0, 0.5), FALSE),      # every pair has l >= r
    ("<=", (0.5, 1.0), (0.0, 0.5), UNKNOWN),   # 0.5 <= 0.5 at the corner
    ("==", (0.5, 0.5), (0.5, 0.5), TRUE),
    ("==", (0.4, 0.5), (0.5, 0.5), UNKNOWN),
    ("==", (0.4, 0.49), (0.5, 0.6), FALSE),
    ("!=", (0.4, 0.49), (0.5, 0.6), TRUE),
    ("!=", (0.4, 0.5), (0.5, 0.6), UNKNOWN),
    ("!=", (0.5, 0.5), (0.5, 0.5), FALSE),
    ("<", (-math.inf, 0.3), (0.5, math.inf), TRUE),
    ("<", (-math.inf, math.inf), (0.5, 0.5), UNKNOWN),
])
def test_cmp_boundary_table(op, l, r, want):
    assert int(R.CMP.interval(op, _iv(l), _iv(r))) == want


# ---------------------------------------------------------------------------------------------
# the evaluator on random specs: verdicts vs concrete evaluation at sampled leaf values

LEAVES = ["a", "b", "c"]


def _terms(depth):
    leaf = st.one_of(st.sampled_from(LEAVES).map(X), st.sampled_from([0.0, 0.1, 0.5, 1.0, -0.2]).map(C))
    if depth == 0:
        return leaf
    sub = _terms(depth - 1)
    return st.one_of(leaf, st.builds(A.Add, sub, sub), st.builds(A.Sub, sub, sub), st.builds(A.Mul, sub, sub),
                     st.builds(A.Div, sub, sub), st.builds(A.Neg, sub))


def _specs(depth):
    cmp = st.builds(A.Cmp, st.sampled_from(list(CMP_FN)), _terms(2), _terms(1))
    if depth == 0:
        return cmp
    sub = _specs(depth - 1)
    return st.one_of(cmp, st.builds(A.And, sub, sub), st.builds(A.Or, sub, sub), st.builds(A.Not, sub))


leaf_box = st.tuples(st.floats(0, 1), st.floats(0, 1)).map(lambda t: (min(t), max(t)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(root=_specs(2), boxes_=st.fixed_dictionaries({k: leaf_box for k in LEAVES}), seed=st.integers(0, 2**31))
def test_evaluator_verdicts_hold_for_every_point_of_the_leaf_boxes(root, boxes_, seed):
    """A shared leaf takes one value everywhere it occurs; TRUE/FALSE must hold for every choice.

    Where a denominator is exactly 0 the spec has no value (AVOIR requires E[C] ≠ 0 for terms under
    an inverse); such points are skipped. Note the convention ``0 · (−∞, ∞) = 0``: a quotient whose
    denominator interval contains 0 is "any real", so ``0 * (E[a] / 0) < 1`` is TRUE."""
    spec = make_spec(root)
    leaves = {f"E[{k}]": LeafValue(np.array((lo + hi) / 2), np.array(lo), np.array(hi), 0.01)
              for k, (lo, hi) in boxes_.items()}
    values = evaluate(spec, leaves)
    rng = np.random.default_rng(seed)
    envs = [dict(zip(LEAVES, corner)) for corner in itertools.product(*(boxes_[k] for k in LEAVES))]
    envs += [{k: lo + (hi - lo) * rng.random() for k, (lo, hi) in boxes_.items()} for _ in range(20)]
    envs = [{k: Fraction(v) for k, v in e.items()} for e in envs]
    for tn in spec.nodes:
        nv = values[tn.id]
        assert not np.isnan(nv.delta).any()
        if tn.kind in ("and", "or", "not", "cmp"):
            v = int(nv.verdict)
            if v == UNKNOWN:
                continue
            for env in envs:
                truth = concrete(tn.node, env)
                if truth is None:  # a division by exactly 0: the spec has no value there
                    continue
                assert truth == (v == TRUE), (tn.text, boxes_, env, v)
        else:
            lo, hi = float(nv.lo), float(nv.hi)
            assert not (math.isnan(lo) or math.isnan(hi)), tn.text
            for env in envs:
                value = concrete(tn.node, env)
                if value is not None:
                    assert _contains(lo, hi, value), (tn.text, boxes_, env, lo, hi)
        if tn.kind == "cmp":  # the displayed interval is left − right, and it must agree with the verdict
            v = int(nv.verdict)
            if tn.node.op == "<" and v == TRUE:
                assert float(nv.hi) <= 0 or float(nv.hi) < 1e-300
            if tn.node.op in ("<", "<=") and v == FALSE:
                assert float(nv.lo) >= -1e-300
        # δ of a node: each distinct leaf below it counted once
        below = {t.text for t in spec.nodes if t.kind == "expect"
                 and t.id in _descendants(spec, tn.id)}
        assert float(nv.delta) == pytest.approx(0.01 * len(below))


def _descendants(spec, nid):
    by_id = {t.id: t for t in spec.nodes}
    out, stack = set(), [nid]
    while stack:
        cur = stack.pop()
        out.add(cur)
        stack.extend(by_id[cur].children)
    return out


@pytest.mark.parametrize("kind,x", [("div", 2.2250738585e-313), ("mul", 1e200), ("add", 1e308), ("sub", 1e308)])
def test_overflow_keeps_the_true_value_inside(kind, x):
    """Before the fix, [x, x] / [x, x] with a subnormal x gave [inf, inf] (1/x overflows and the
    lower endpoint stayed +inf), which does not contain the true value 1; likewise an overflowing
    product or sum gave [inf, inf]."""
    a = Interval(np.array(x), np.array(x), np.array(x))
    b = Interval(np.array(-x if kind == "sub" else x), np.array(-x if kind == "sub" else x),
                 np.array(-x if kind == "sub" else x))
    with np.errstate(over="ignore"):
        out = R.TERM_RULES[kind].interval(a, b)
    exact = EXACT[kind](Fraction(x), Fraction(float(b.lo)))
    assert _contains(float(out.lo), float(out.hi), exact)
