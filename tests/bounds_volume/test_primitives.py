"""Rigour of the primitives of ``fairaudit.engines.fairsquare.volume``: outward rounding against mpmath at 400 bits,
the notes' catalogue items §A11 #1, #5, #6, #9 (exact answers), and exact step masses."""
import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings, strategies as st

from fairaudit.engines.fairsquare import volume as V

HP = mpmath.MPContext()
HP.prec = 400


def hp_cdf(x, mean, var):
    """Φ((x − μ)/√var) at 400 bits, from exact rationals."""
    if math.isinf(x):
        return HP.mpf(1 if x > 0 else 0)
    z = (HP.mpf(x) - HP.mpf(mean)) / HP.sqrt(HP.mpf(var))
    return HP.erfc(-z / HP.sqrt(2)) / 2


def hp_mass(a, b, mean, var):
    """P[a ≤ X ≤ b] at 400 bits plus as many bits as the width b − a cancels (so narrow intervals are exact too)."""
    extra = 0 if math.isinf(a) or math.isinf(b) or b <= a else max(0, -math.frexp(b - a)[1]) + 64
    with HP.workprec(400 + extra):
        def z(x):
            return (HP.inf if x > 0 else -HP.inf) if math.isinf(x) else (HP.mpf(x) - HP.mpf(mean)) / HP.sqrt(HP.mpf(var))
        za, zb = z(a), z(b)
        q = lambda t: HP.erfc(t / HP.sqrt(2)) / 2   # noqa: E731  (erfc(±inf) is exact in mpmath)
        return +(q(za) - q(zb) if (za >= 0 or zb > 0) else q(-zb) - q(-za))


def contains(iv, exact):
    lo, hi = iv
    return HP.mpf(lo) <= exact <= HP.mpf(hi)


finite = st.floats(-60, 60, allow_nan=False)
means = st.floats(-50, 50, allow_nan=False)
variances = st.floats(1e-6, 1e4, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(finite, means, variances)
def test_gauss_cdf_outward(x, mean, var):
    iv = V.gauss_cdf(x, mean, var)
    assert 0.0 <= iv[0] <= iv[1] <= 1.0
    assert contains(iv, hp_cdf(x, mean, var))
    assert iv[1] - iv[0] <= 4 * math.ulp(max(iv[1], 1e-300)) + 1e-320   # and tight: a few ulp


@settings(max_examples=300, deadline=None)
@given(finite, finite, means, variances)
def test_gauss_mass_outward(a, b, mean, var):
    a, b = min(a, b), max(a, b)
    iv = V.gauss_mass(a, b, mean, var)
    exact = hp_mass(a, b, mean, var) if a < b else HP.mpf(0)
    assert contains(iv, exact)
    if exact > 1e-200:      # relative tightness where the float range allows it
        assert (HP.mpf(iv[1]) - HP.mpf(iv[0])) <= exact * 1e-12


@settings(max_examples=100, deadline=None)
@given(st.floats(-40, 40), st.floats(0.0, 40))
def test_narrow_and_tail_masses(a, w):
    """Narrow intervals far in a tail: no cancellation blow-up, still enclosed."""
    b = a + w * 1e-6
    iv = V.gauss_mass(a, b)
    exact = hp_mass(a, b, 0, 1) if a < b else HP.mpf(0)
    assert contains(iv, exact)


def test_infinite_and_degenerate():
    assert V.gauss_mass(-math.inf, math.inf) == (1.0, 1.0)
    assert V.gauss_mass(2, 2) == (0.0, 0.0)
    assert V.gauss_mass(3, 1) == (0.0, 0.0)
    lo, hi = V.gauss_cdf(-40)       # ≈ 3.6e-350: below the float range, still enclosed
    assert lo == 0.0 < hi
    assert V.gauss_cdf(40) [1] == 1.0
    with pytest.raises(ValueError):
        V.gauss_mass(0, 1, 0, 0)


def test_directed_rounding():
    third = Fraction(1, 3)
    assert Fraction(V.down(third)) < third < Fraction(V.up(third))
    assert V.down(Fraction(1, 2)) == V.up(Fraction(1, 2)) == 0.5
    assert V.up(Fraction(1, 10**400)) == 5e-324 and V.down(Fraction(1, 10**400)) == 0.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=4, max_size=4), st.sampled_from(["add", "sub", "mul", "div"]))
def test_interval_arithmetic_encloses(xs, opname):
    a, b = (min(xs[0], xs[1]), max(xs[0], xs[1])), (min(xs[2], xs[3]), max(xs[2], xs[3]))
    fn = getattr(V, "iv_" + opname)
    lo, hi = fn(a, b)
    exact = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
             "div": lambda x, y: x / y}[opname]
    if opname == "div" and b[0] <= 0 <= b[1]:
        assert (lo, hi) == (-math.inf, math.inf)
        return
    for x in (a[0], a[1], sum(a) / 2):
        for y in (b[0], b[1]):
            v = exact(Fraction(x), Fraction(y))
            assert (lo == -math.inf or Fraction(lo) <= v) and (hi == math.inf or v <= Fraction(hi))


def test_step_mass_exact():
    s = V.Step([(0, 1, "0.3"), (1, 2, "0.7")])
    assert s.mass_exact(-math.inf, math.inf) == 1
    assert s.mass_exact(0.5, 1.5) == Fraction(3, 20) + Fraction(7, 20)
    assert s.mass_exact(-math.inf, 1) == Fraction(3, 10)
    assert s.mass_exact(1.5, math.inf) == Fraction(7, 20)
    assert s.mass_exact(5, 6) == 0
    lo, hi = s.mass(-math.inf, 1)
    assert Fraction(lo) <= Fraction(3, 10) <= Fraction(hi) and lo < hi    # 0.3 is not a float: 1-ulp enclosure
    assert V.Step([(0, 1, 1)]).mass(0.25, 0.5) == (0.25, 0.25)


def test_catalogue_1_box_volumes():
    g = [V.Gaussian(0, 1)] * 2
    lo, hi = V.box_mass([(0, math.inf), (0, math.inf)], g)
    assert lo <= 0.25 <= hi and hi - lo < 1e-15
    exact = (2 * hp_cdf(1, 0, 1) - 1) ** 2
    iv = V.box_mass([(-1, 1), (-1, 1)], g)
    assert contains(iv, exact) and abs(iv[0] - 0.466065) < 1e-6
    # the paper's example box 0 ≤ x1 ≤ 100 ∧ 4 ≤ x2 ≤ 10 factorises as (F1(100) − F1(0))·(F2(10) − F2(4))
    d = [V.Gaussian(50, 400), V.Gaussian(5, 9)]
    exact = (hp_cdf(100, 50, 400) - hp_cdf(0, 50, 400)) * (hp_cdf(10, 5, 9) - hp_cdf(4, 5, 9))
    assert contains(V.box_mass([(0, 100), (4, 10)], d), exact)


def test_box_mass_mixed_dists_and_product_rounding():
    d = [V.Gaussian(0, 1), V.Step([(0, 1, 1)]), V.Gaussian(3, 2)]
    box = [(-0.5, 0.7), (0.25, 0.75), (2, 5)]
    exact = (hp_mass(-0.5, 0.7, 0, 1)) * HP.mpf(0.5) * hp_mass(2, 5, 3, 2)
    assert contains(V.box_mass(box, d), exact)


def test_catalogue_5_block():
    h = [(0, 1), (0, 1)]
    assert V.overlaps(h, [(0.5, 2), (0.5, 2)])          # blocked
    assert not V.overlaps(h, [(1, 2), (0, 1)])          # touching face: allowed
    assert V.overlaps(h, h)


def test_catalogue_6_adf():
    assert V.adf_area([(0, 1, 1)], 0.2, 0.7) == Fraction(0.7) - Fraction(0.2)
    assert abs(float(V.adf_area([(0, 1, 1)], 0.2, 0.7)) - 0.5) < 1e-15
    assert V.adf_area([(0, 1, 1)], 2, 3) == 0
    adf = V.adf_for_gaussian(0, 3)
    edges = [a for a, _, _ in adf] + [adf[-1][1]]
    assert [round(e, 9) for e in edges] == [-9, -5.4, -1.8, 1.8, 5.4, 9]
    pdf = lambda x: math.exp(-x * x / 18) / (3 * math.sqrt(2 * math.pi))  # noqa: E731
    heights = [c for _, _, c in adf]
    for got, want in zip(heights, [pdf(9), pdf(5.4), pdf(1.8), pdf(5.4), pdf(9)]):
        assert got == pytest.approx(want, rel=1e-12)


def test_catalogue_9_ratio():
    lo, hi = V.ratio_bounds((0.15, 0.17), (0.01, 0.02), (0.15, 0.16))
    exact_lo = (Fraction("0.01") / Fraction("0.17")) / (Fraction("0.16") / Fraction("0.83"))
    exact_hi = (Fraction("0.02") / Fraction("0.15")) / (Fraction("0.15") / Fraction("0.85"))
    assert abs(lo - 0.305147) < 1e-6 and abs(hi - 0.755556) < 1e-6
    assert Fraction(lo) <= exact_lo * (1 + Fraction(1, 10**14)) and Fraction(hi) >= exact_hi * (1 - Fraction(1, 10**14))
    assert hi < 0.9                                     # UNFAIR at ε = 0.1


def test_regressions_found_by_hypothesis():
    """1 − Q(15) rounds to 1 at 160 bits: the final subtraction's rounding must be accounted for."""
    lo, hi = V.gauss_cdf(0.0, -15.0, 1.0)
    assert lo < 1.0 == hi
    assert contains(V.gauss_mass(-math.inf, 0.0, -15.0, 1.0), hp_cdf(0.0, -15.0, 1.0))
    assert contains(V.gauss_mass(0.0, 3.7914685207003147e-63, 1.0, 1.0), hp_mass(0.0, 3.7914685207003147e-63, 1.0, 1.0))


def test_interval_arithmetic_with_infinities():
    lo, hi = V.iv_mul((1.0, math.inf), (0.1, 0.3))
    assert Fraction(lo) <= Fraction(0.1) and hi == math.inf
    assert V.iv_mul((0.0, 1.0), (1.0, math.inf)) == (0.0, math.inf)
    lo, hi = V.iv_add((0.1, math.inf), (0.2, 0.3))
    assert Fraction(lo) <= Fraction(0.1) + Fraction(0.2) and hi == math.inf
    assert V.iv_div((1.0, 2.0), (2.0, math.inf)) == (0.0, 1.0)
