"""Closed forms for linear events (notes §A8 Examples 3.1/3.2, §A11 #2, #3, toys T1–T3), against scipy,
exact mpmath closed forms and Monte Carlo with its own confidence interval."""
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm

from fairaudit.engines.fairsquare import volume as V

HP = mpmath.MPContext()
HP.prec = 300
G01 = V.Gaussian(0, 1)


def inside(iv, x, tol=0.0):
    return iv[0] - tol <= x <= iv[1] + tol


def test_example_3_1():
    iv = V.prob_linear([1, 1], [G01, G01], op=">=", c=0)
    assert iv[0] <= 0.5 <= iv[1] and iv[1] - iv[0] < 1e-15


def test_example_3_2_variance_convention():
    # x ~ gauss(0, sd 2) = gaussian(0, VARIANCE 4); y ~ gaussian(-1, 1); P[x + y >= 0] = 1 − Φ(1/√5)
    iv = V.prob_linear([1, 1], [V.Gaussian(0, 4), V.Gaussian(-1, 1)], op=">=", c=0)
    exact = HP.erfc(1 / HP.sqrt(5) / HP.sqrt(2)) / 2
    assert HP.mpf(iv[0]) <= exact <= HP.mpf(iv[1])
    assert abs(iv[0] - 0.327360423) < 1e-9
    wrong = V.prob_linear([1, 1], [V.Gaussian(0, 2), V.Gaussian(-1, 1)], op=">=", c=0)   # var 2 ⇒ 0.2819
    assert abs(wrong[0] - 0.2819) < 1e-4


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(-10, 10), st.floats(0.01, 50)), min_size=1, max_size=5),
       st.floats(-10, 10), st.floats(-30, 30), st.sampled_from([">", ">=", "<", "<="]))
def test_gaussian_combination_vs_mpmath(terms, b, c, op):
    a = [t[0] for t in terms]
    dists = [V.Gaussian(t[1], t[2]) for t in terms]
    iv = V.prob_linear(a, dists, b, op, c)
    m = sum(Fraction(ai) * Fraction(t[1]) for ai, t in zip(a, terms)) + Fraction(b)
    v = sum(Fraction(ai) ** 2 * Fraction(t[2]) for ai, t in zip(a, terms))
    if v == 0:
        want = {">": m > c, ">=": m >= c, "<": m < c, "<=": m <= c}[op]
        assert iv == ((1.0, 1.0) if want else (0.0, 0.0))
        return
    d = Fraction(c) - m
    z = (HP.mpf(d.numerator) / d.denominator) / HP.sqrt(HP.mpf(v.numerator) / v.denominator)
    if abs(z) > 1e4:       # beyond mpmath's erfc; the true value is within 2^-(10^7) of 0 or 1
        far = (z > 0) == (op in (">", ">="))
        assert (iv[0] == 0.0 and 0 < iv[1] < 1e-300) if far else (iv[1] == 1.0 and iv[0] > 1 - 1e-15)
        return
    exact = HP.erfc(z / HP.sqrt(2)) / 2 if op in (">", ">=") else HP.erfc(-z / HP.sqrt(2)) / 2
    assert HP.mpf(iv[0]) <= exact <= HP.mpf(iv[1])
    # and agrees with scipy to float accuracy
    sp = norm.sf(float(z)) if op in (">", ">=") else norm.cdf(float(z))
    assert inside(iv, sp, 1e-12)


def uniform_tail_exact(alpha, beta, lo, hi):
    """E[Q(alpha − beta·U)], U ~ U[lo, hi], in closed form: ∫Φ(t)dt = tΦ(t) + φ(t), at 300 bits."""
    Phi = lambda t: HP.erfc(-t / HP.sqrt(2)) / 2  # noqa: E731
    G = lambda t: t * Phi(t) + HP.exp(-t * t / 2) / HP.sqrt(2 * HP.pi)  # noqa: E731
    # Q(alpha − beta u) = Φ(beta u − alpha); substitute t = beta u − alpha
    t0, t1 = beta * HP.mpf(lo) - alpha, beta * HP.mpf(hi) - alpha
    return (G(t1) - G(t0)) / (beta * (HP.mpf(hi) - HP.mpf(lo)))


def test_step_mixture_quadrature_is_nested_and_converges():
    """P[X + 2U > 1], X ~ N(0,1), U ~ step([(0,1,0.4),(1,3,0.6)]): exact by the closed form per piece."""
    s = V.Step([(0, 1, "0.4"), (1, 3, "0.6")])
    exact = HP.mpf(4) / 10 * uniform_tail_exact(1, 2, 0, 1) + HP.mpf(6) / 10 * uniform_tail_exact(1, 2, 1, 3)
    prev = (0.0, 1.0)
    widths = []
    for iv in V.refine_linear([1, 2], [G01, s], 0, ">", 1, k0=1, rounds=9):
        assert HP.mpf(iv[0]) <= exact <= HP.mpf(iv[1])
        assert prev[0] <= iv[0] and iv[1] <= prev[1]
        prev = iv
        widths.append(iv[1] - iv[0])
    assert widths[-1] < 2e-3 and widths[-1] < widths[0] / 100     # width ∝ 1/k


def test_raw_quadrature_never_looser_on_refinement():
    s = V.Step([(-1, 1, 1)])
    prev = None
    for k in (1, 2, 4, 8, 16, 32):
        iv = V.prob_linear([1.5, -0.7], [s, V.Gaussian(0.2, 2)], 0.1, "<=", 0.3, k=k)
        if prev:
            assert iv[0] >= prev[0] and iv[1] <= prev[1]
        prev = iv


def test_toy_T1():
    """s ~ step([(0,1,0.3),(1,2,0.7)]); x ~ N(0,1); min ⇔ s < 1 shifts x by −1; target x > 0."""
    t_min = V.prob_linear([1], [G01], b=-1, op=">", c=0)
    t_not = V.prob_linear([1], [G01], op=">", c=0)
    assert inside(t_min, 0.1586553, 1e-7) and inside(t_not, 0.5)
    p_min = V.Step([(0, 1, "0.3"), (1, 2, "0.7")]).mass(-math.inf, 1)
    joint_min, joint_not = V.iv_mul(p_min, t_min), V.iv_mul(V.iv_sub((1.0, 1.0), p_min), t_not)
    assert inside(joint_min, 0.0475966, 1e-7) and inside(joint_not, 0.35, 1e-15)
    r = V.ratio_bounds(p_min, joint_min, joint_not)
    assert inside(r, 0.3173105, 1e-7) and r[1] - r[0] < 1e-12


def test_toy_T2():
    t_min = V.prob_linear([1, 1], [G01, G01], b=-1, op=">", c=0)
    exact = HP.erfc(1 / HP.sqrt(2) / HP.sqrt(2)) / 2
    assert HP.mpf(t_min[0]) <= exact <= HP.mpf(t_min[1]) and abs(t_min[0] - 0.2397501) < 1e-7
    r = V.iv_div(t_min, V.prob_linear([1, 1], [G01, G01], op=">", c=0))
    assert inside(r, 0.4795001, 1e-7)


def test_toy_T3_pure_step_quadrature():
    """u ~ U[0,1]; min: 0.5u > 0.4 ⇔ P = 1/5; ¬min: u > 0.4 ⇒ 3/5. No Gaussian: the integrand is an indicator,
    lower/upper sums use strict/non-strict comparisons, so the cells touching the jump stay undecided."""
    u = V.Step([(0, 1, 1)])
    iv = V.prob_linear([Fraction(1, 2)], [u], op=">", c=Fraction(2, 5), k=5)     # jump at u = 0.8 is a grid point
    assert Fraction(iv[0]) <= Fraction(1, 5) <= Fraction(iv[1]) and iv == (0.0, 0.4)   # the two cells beside it
    iv = V.prob_linear([1], [u], op=">", c="0.4", k=7)                          # not on the grid: one cell wide
    assert Fraction(iv[0]) <= Fraction(3, 5) <= Fraction(iv[1]) and iv[1] - iv[0] <= 1 / 7 + 1e-15


def test_monte_carlo_mixed_event():
    """P[0.8X − 1.3U + 0.5Y ≥ −0.2]; X ~ N(1, 2), Y ~ N(−1, 0.5), U ~ step: bounds vs a 1e6-sample estimate with a
    Hoeffding interval at δ = 1e-6 (the two intervals must intersect)."""
    s = V.Step([(-2, 0, "0.25"), (0, 1, "0.5"), (1, 4, "0.25")])
    dists = [V.Gaussian(1, 2), s, V.Gaussian(-1, 0.5)]
    iv = V.prob_linear([0.8, -1.3, 0.5], dists, 0, ">=", -0.2, k=64)
    assert iv[1] - iv[0] < 0.01
    rng = np.random.default_rng(14)
    n = 1_000_000
    piece = rng.choice(3, size=n, p=[0.25, 0.5, 0.25])
    lo, hi = np.array([-2, 0, 1])[piece], np.array([0, 1, 4])[piece]
    u = lo + (hi - lo) * rng.random(n)
    x, y = rng.normal(1, math.sqrt(2), n), rng.normal(-1, math.sqrt(0.5), n)
    est = float(np.mean(0.8 * x - 1.3 * u + 0.5 * y >= -0.2))
    rad = math.sqrt(math.log(2 / 1e-6) / (2 * n))
    assert iv[0] <= est + rad and est - rad <= iv[1]


def test_bad_operator():
    with pytest.raises(ValueError):
        V.prob_linear([1], [G01], op="==")


@settings(max_examples=20, deadline=None)
@given(st.floats(0.2, 3), st.floats(-3, 3).filter(lambda d: abs(d) > 0.05), st.floats(-4, 4),
       st.lists(st.tuples(st.floats(-3, 3), st.floats(0.1, 2), st.integers(1, 5)), min_size=1, max_size=3),
       st.sampled_from([">", "<="]))
def test_random_step_mixtures_vs_exact_closed_form(sd, d, c, raw_pieces, op):
    """P[X + d·U op c], X ~ N(0, sd²), U ~ step: quadrature enclosure (k = 8) contains the exact value
    Σ p·E[Q((c − d·U)/sd)] computed with ∫Φ = tΦ + φ at 300 bits."""
    total = sum(w for _, _, w in raw_pieces)
    pieces = [(lo, lo + width, Fraction(w, total)) for lo, width, w in raw_pieces]
    s = V.Step(pieces)
    iv = V.prob_linear([1, d], [V.Gaussian(0, sd * sd), s], 0, op, c, k=8)
    sd_hp = HP.sqrt(HP.mpf(sd * sd))    # the variance passed is the float sd*sd, exactly
    exact = HP.mpf(0)
    for lo, hi, p in pieces:
        # P[X > c − d u] = Q((c − d u)/sd) = Q(alpha − beta u) with alpha = c/sd, beta = d/sd
        e = uniform_tail_exact(HP.mpf(c) / sd_hp, HP.mpf(d) / sd_hp, lo, hi)
        exact += HP.mpf(p.numerator) / p.denominator * e
    if op == "<=":
        exact = 1 - exact
    slack = HP.mpf(10) ** -80     # the reference's own cancellation error (G(t1) − G(t0) with t up to ~100)
    assert HP.mpf(iv[0]) - slack <= exact <= HP.mpf(iv[1]) + slack


def test_two_step_variables_agree_with_boxes():
    """P[U1 + U2 + X > 1] by 2-D monotone quadrature and by box decomposition: the enclosures must intersect."""
    u1, u2 = V.Step([(0, 1, 1)]), V.Step([(0, 2, "0.5"), (2, 3, "0.5")])
    dists = [u1, u2, G01]
    q = V.prob_linear([1, 1, 1], dists, 0, ">", 1, k=32)
    assert q[1] - q[0] < 0.02
    *_, b = V.decompose(dists, V.halfspace([1, 1, 1], 0, ">", 1), max_rounds=3000, every=10**9)
    assert b.lo <= q[1] and q[0] <= b.hi
