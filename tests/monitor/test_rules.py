"""Inference rules: soundness on grids of intervals, Kleene tables, cmp verdicts."""
import itertools

import numpy as np
import pytest

from fairaudit.bounds import rules as R
from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN, Interval

ENDPOINTS = [-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5]


def _intervals():
    out = [(a, b) for a, b in itertools.product(ENDPOINTS, ENDPOINTS) if a <= b]
    out += [(-np.inf, 1.0), (0.5, np.inf), (-np.inf, np.inf)]
    return out


def _points(lo, hi):
    lo_f = lo if np.isfinite(lo) else -1e6
    hi_f = hi if np.isfinite(hi) else 1e6
    return np.unique(np.clip(np.array([lo_f, hi_f, (lo_f + hi_f) / 2, lo_f + 0.1 * (hi_f - lo_f),
                                       0.0, 1.0, -1.0]), lo_f, hi_f))


PAIRS = list(itertools.product(_intervals(), _intervals()))


def _vec(pairs):
    a = Interval(np.array([(p[0][0] + p[0][1]) / 2 if np.all(np.isfinite(p[0])) else 0.0 for p in pairs]),
                 np.array([p[0][0] for p in pairs]), np.array([p[0][1] for p in pairs]))
    b = Interval(np.array([(p[1][0] + p[1][1]) / 2 if np.all(np.isfinite(p[1])) else 0.0 for p in pairs]),
                 np.array([p[1][0] for p in pairs]), np.array([p[1][1] for p in pairs]))
    return a, b


@pytest.mark.parametrize("kind,fn", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                                     ("div", np.divide)])
def test_binary_rules_are_sound_on_a_grid(kind, fn):
    a, b = _vec(PAIRS)
    out = R.TERM_RULES[kind].interval(a, b)
    for i, ((alo, ahi), (blo, bhi)) in enumerate(PAIRS):
        assert out.lo[i] <= out.hi[i]
        for x in _points(alo, ahi):
            for y in _points(blo, bhi):
                if kind == "div" and y == 0:
                    continue
                v = fn(x, y)
                assert out.lo[i] <= v <= out.hi[i], (kind, (alo, ahi), (blo, bhi), x, y, v, out.lo[i], out.hi[i])


def test_division_by_interval_containing_zero_is_unbounded():
    a = Interval(np.array(1.0), np.array(0.5), np.array(1.5))
    b = Interval(np.array(0.1), np.array(-0.2), np.array(0.4))
    out = R.DIV.interval(a, b)
    assert out.lo == -np.inf and out.hi == np.inf
    verdict = R.CMP.interval("<", out, Interval.exact(1.1))
    assert verdict == UNKNOWN


def test_product_never_wider_than_avoir_rule_for_nonnegative():
    rng = np.random.default_rng(0)
    ex, ey = rng.uniform(0.3, 1, 200), rng.uniform(0.3, 1, 200)
    epx, epy = rng.uniform(0, 0.3, 200), rng.uniform(0, 0.3, 200)
    out = R.MUL.interval(Interval(ex, ex - epx, ex + epx), Interval(ey, ey - epy, ey + epy))
    avoir = epx * epy + ex * epy + ey * epx
    assert np.all(out.lo >= ex * ey - avoir - 1e-12) and np.all(out.hi <= ex * ey + avoir + 1e-12)


def test_neg_rule():
    out = R.NEG.interval(Interval(np.array(0.2), np.array(-1.0), np.array(0.5)))
    assert (out.lo, out.hi, out.estimate) == (-0.5, 1.0, -0.2)


@pytest.mark.parametrize("op,fn", [("<", np.less), ("<=", np.less_equal), (">", np.greater),
                                   (">=", np.greater_equal), ("==", np.equal), ("!=", np.not_equal)])
def test_cmp_verdicts_are_sound(op, fn):
    a, b = _vec(PAIRS)
    verdict = R.CMP.interval(op, a, b)
    for i, ((alo, ahi), (blo, bhi)) in enumerate(PAIRS):
        results = {bool(fn(x, y)) for x in _points(alo, ahi) for y in _points(blo, bhi)}
        if verdict[i] == TRUE:
            assert results == {True}
        elif verdict[i] == FALSE:
            assert results == {False}
    # decided when it should be
    assert R.CMP.interval("<", Interval.exact(0.2), Interval.exact(0.5)) == TRUE
    assert R.CMP.interval("==", Interval.exact(0.5), Interval.exact(0.5)) == TRUE
    assert R.CMP.interval("<", Interval(np.array(.6), np.array(.55), np.array(.7)), Interval.exact(0.5)) == FALSE


def test_kleene_tables():
    vals = [TRUE, FALSE, UNKNOWN]
    sem = {TRUE: {True}, FALSE: {False}, UNKNOWN: {True, False}}
    for a, b in itertools.product(vals, vals):
        for rule, fn in ((R.AND, lambda x, y: x and y), (R.OR, lambda x, y: x or y)):
            out = int(rule.interval(np.int8(a), np.int8(b)))
            possible = {fn(x, y) for x in sem[a] for y in sem[b]}
            expected = TRUE if possible == {True} else FALSE if possible == {False} else UNKNOWN
            assert out == expected
        out = int(R.NOT.interval(np.int8(a)))
        assert out == {TRUE: FALSE, FALSE: TRUE, UNKNOWN: UNKNOWN}[a]


def test_boolean_needs():
    assert R.AND.needs(True) == [[(0, True), (1, True)]]
    assert R.AND.needs(False) == [[(0, False)], [(1, False)]]
    assert R.OR.needs(True) == [[(0, True)], [(1, True)]]
    assert R.OR.needs(False) == [[(0, False), (1, False)]]
    assert R.NOT.needs(True) == [[(0, False)]]


def test_cmp_needs_match_verdicts():
    """Every constraint set of CMP.needs, when satisfied by numbers, gives the wanted verdict."""
    rng = np.random.default_rng(1)
    for _ in range(500):
        l = np.sort(rng.choice([0.0, 0.5, 1.0, rng.uniform(-1, 2)], 2))
        r = np.sort(rng.choice([0.0, 0.5, 1.0, rng.uniform(-1, 2)], 2))
        for op in ("<", "<=", ">", ">=", "==", "!="):
            for want in (True, False):
                for constraints in R.CMP.needs(op, want, tuple(l), tuple(r)):
                    if all(bool(c) for c in constraints):
                        v = R.CMP.interval(op, Interval(l.mean(), l[0], l[1]), Interval(r.mean(), r[0], r[1]))
                        assert v == (TRUE if want else FALSE)
