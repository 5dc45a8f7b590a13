"""The joint e-process per comparison (``fairaudit.engines.monitor.eprocess``): its infimum against a brute-force grid, which
comparisons qualify, and its validity at the boundary (1,000 seeded streams per case, wrong verdicts ≤ Δ)."""
import numpy as np
import pytest
from scipy.special import betaln

from fairaudit.engines.monitor import directed
from fairaudit.engines.monitor.eprocess import (_EPS, _nll, _slope, disjoint, joint_form, log_evalue, log_evalues,
                                                log_mixture)
from fairaudit.core.evaluate import compile_spec
from fairaudit.spec import parse

from boundary_harness import leaf_stats, wrong_rate

A, B = 'E[y | g == "a"]', 'E[y | g == "b"]'


@pytest.mark.parametrize("sa,na,sb,nb,ca,cb,k,sigma", [
    (30, 50, 10, 60, 1.0, -1.0, -0.1, 1), (30, 50, 10, 60, 1.0, -1.0, -0.1, -1), (5, 40, 30, 40, 1.0, -0.8, 0.0, -1),
    (0, 10, 10, 10, 1.0, -1.0, 0.0, 1), (12, 100, 40, 100, 1.0, -1.0, 0.5, 1)])
def test_infimum_is_a_lower_bound_of_the_grid_minimum(sa, na, sb, nb, ca, cb, k, sigma):
    grid = np.linspace(1e-6, 1 - 1e-6, 2001)
    ma, mb = np.meshgrid(grid, grid, indexing="ij")
    ok = sigma * (ca * ma + cb * mb + k) >= 0
    vals = log_mixture(sa, na, ma) + log_mixture(sb, nb, mb)
    brute = vals[ok].min() if ok.any() else np.inf
    got = float(log_evalue(sa, na, sb, nb, ca, cb, k, sigma))
    assert got <= brute + 1e-9
    assert got >= brute - 1e-3 or not np.isfinite(brute)


def test_which_comparisons_have_a_joint_test():
    assert disjoint(parse(f"{A} < 1").leaves[0].node.given, parse(f"{B} < 1").leaves[0].node.given)
    cs = compile_spec(parse(f"{A} - {B} < 0.1"))
    assert joint_form(cs, cs.root)[2:] == (1.0, -1.0, -0.1)
    cs = compile_spec(parse(f"{A} / {B} > 0.8"))
    assert joint_form(cs, cs.root)[2:] == (1.0, -0.8, 0.0)
    cs = compile_spec(parse(f'E[y | g == "a"] - E[y | h == "b"] < 0.1'))  # the groups may overlap
    assert joint_form(cs, cs.root) is None
    cs = compile_spec(parse('E[y | g == "a"] - E[y] < 0.1'))
    assert joint_form(cs, cs.root) is None


CASES = {
    "difference at threshold": (f"{A} - {B} < 0.1", (0.35, 0.25), False),
    "difference at threshold (<=)": (f"{A} - {B} <= 0.1", (0.35, 0.25), True),
    "ratio at threshold": (f"{A} / {B} > 0.8", (0.32, 0.4), False),
    "and, one conjunct at threshold": (f"({A} - {B} < 0.1) and ({B} - {A} < 0.5)", (0.35, 0.25), False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_joint_test_is_within_delta_at_the_boundary(case):
    text, (ra, rb), truth = CASES[case]
    spec = parse(text)
    keys = compile_spec(spec).leaf_keys
    stats = leaf_stats(dict(zip(keys, (ra, rb))), {k: 0.5 for k in keys}, 1000, 1000, 10, seed=5)
    rate = wrong_rate(directed.directed_verdict(spec, stats, 0.1, "mixture", joint=True), truth)
    print(case, rate)
    assert rate <= 0.1


def test_infimum_matches_a_fine_golden_section_search_on_random_counts():
    """The Newton line search against an independent 200-step golden-section search of the same convex objective
    (a bracket 0.618^200 wide): never above it by more than the rounding margin, and within 1e-6 below it."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = 300
        na, nb = rng.integers(1, 5000, n), rng.integers(1, 5000, n)
        sa, sb = rng.binomial(na, rng.random()), rng.binomial(nb, rng.random())
        ca, cb, k = 1.0, -float(rng.choice([1.0, 0.8, 1.25])), float(rng.uniform(-0.4, 0.4))
        sigma = int(rng.choice([1, -1]))
        got = log_evalue(sa, na, sb, nb, ca, cb, k, sigma)
        # the oracle: the infimum over the null of log M_a + log M_b, by the MLE when inside, else on the line
        const = log_mixture(sa, na, 0.5) + log_mixture(sb, nb, 0.5) - _nll(sa, na - sa, 0.5) - _nll(sb, nb - sb, 0.5)
        pa, pb = sa / na, sb / nb
        inside = sigma * (ca * pa + cb * pb + k) >= 0
        ends = sorted([-k / cb, (-ca - k) / cb])
        lo, hi = max(0.0, ends[0]), min(1.0, ends[1])
        if lo > hi:
            continue

        def g(mb):
            return _nll(sa, na - sa, -(cb * mb + k) / ca) + _nll(sb, nb - sb, mb)

        a, b = np.full(n, lo), np.full(n, hi)
        r = (np.sqrt(5) - 1) / 2
        for _ in range(200):
            x1, x2 = b - r * (b - a), a + r * (b - a)
            left = g(x1) <= g(x2)
            b, a = np.where(left, x2, b), np.where(left, a, x1)
        oracle = np.where(inside, const + _nll(sa, na - sa, pa) + _nll(sb, nb - sb, pb), const + g(0.5 * (a + b)))
        slack = 1e-9 + 1e-11 * np.abs(oracle)
        assert (got <= oracle + slack).all()
        assert (got >= oracle - 1e-6 - 1e-11 * np.abs(oracle)).all()


def one_test_alone(sa, na, sb, nb, ca: float, cb: float, k: float, sigma: int) -> np.ndarray:
    """The reference for ``log_evalues``: one test searched on its own, as the library did before the tests of a
    chunk were searched together (``log_evalues`` must give these values bit for bit).

    The beta-function terms do not depend on (ma, mb) and are computed once; the line search runs only where the
    sample means are outside the null (elsewhere the infimum is at them). On the line the objective is convex, so
    the search is a safeguarded Newton iteration on its derivative (derivatives only, no logarithm per step), and the
    minimum is bounded below by the tangents at the ends of the final bracket, then rounded down."""
    sa, na, sb, nb = np.broadcast_arrays(*(np.asarray(x, float) for x in (sa, na, sb, nb)))
    fa, fb = na - sa, nb - sb
    const = betaln(0.5 + sa, 0.5 + fa) + betaln(0.5 + sb, 0.5 + fb) - 2 * betaln(0.5, 0.5)
    pa = np.where(na > 0, sa / np.maximum(na, 1), 0.5)
    pb = np.where(nb > 0, sb / np.maximum(nb, 1), 0.5)
    at_mle = const + _nll(sa, fa, pa) + _nll(sb, fb, pb)
    inside = sigma * (ca * pa + cb * pb + k) >= 0
    # the line ca·ma + cb·mb + k = 0 parameterised by mb (ma = −(cb·mb + k)/ca), restricted to the square
    ends = sorted([(-k) / cb, (-ca - k) / cb])  # where ma = 0 and ma = 1, as mb
    lo, hi = max(0.0, ends[0]), min(1.0, ends[1])
    if lo > hi:  # the line misses the square: H is the whole square (``inside`` everywhere) or empty
        return np.where(inside, at_mle - 1e-12 * (np.abs(const) + np.abs(at_mle - const)), np.inf)
    out = np.array(at_mle, dtype=float, copy=True)
    need = ~inside
    if not need.any():
        return out - 1e-12 * (np.abs(const) + np.abs(out - const))
    sa_, fa_, sb_, fb_, c_ = (x[need] for x in (sa, fa, sb, fb, const))

    def g(mb):
        return _nll(sa_, fa_, -(cb * mb + k) / ca) + _nll(sb_, fb_, mb)

    def dg(mb):
        return (-cb / ca) * _slope(sa_, sa_ + fa_, -(cb * mb + k) / ca) + _slope(sb_, sb_ + fb_, mb)

    def d2g(mb):  # the curvature: g is convex along the line (a sum of convex functions of affine maps of mb)
        ma = np.clip(-(cb * mb + k) / ca, _EPS, 1 - _EPS)
        m = np.clip(mb, _EPS, 1 - _EPS)
        return (cb / ca) ** 2 * (sa_ / ma ** 2 + fa_ / (1 - ma) ** 2) + sb_ / m ** 2 + fb_ / (1 - m) ** 2

    # the minimiser is where g' changes sign: safeguarded Newton on g' (a Newton step when it stays inside the
    # bracket, else bisection), keeping a bracket [a, b] with g'(a) ≤ 0 ≤ g'(b); only g' and g'' (no logarithm)
    # per step. An end where g' already has the minimiser's sign is the minimiser (convexity): its bracket is empty.
    a, b = np.full(sa_.shape, lo), np.full(sa_.shape, hi)
    da, db = dg(a), dg(b)
    b = np.where(da >= 0, a, b)
    a = np.where(db <= 0, b, a)
    # start where the quadratic (Fisher-information) approximation of g around the sample means is smallest on the
    # line — near the minimiser, so that Newton needs a few steps — or mid-bracket when that point is outside it
    pa_, pb_ = pa[need], pb[need]
    wa = (sa_ + fa_) / np.clip(pa_ * (1 - pa_), 1e-6, None)
    wb = (sb_ + fb_) / np.clip(pb_ * (1 - pb_), 1e-6, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = (ca * pa_ + cb * pb_ + k) / (ca ** 2 / np.maximum(wa, 1e-12) + cb ** 2 / np.maximum(wb, 1e-12))
        x = pb_ - lam * cb / np.maximum(wb, 1e-12)
    x = np.where((x > a) & (x < b) & np.isfinite(x), x, 0.5 * (a + b))
    for _ in range(40):
        d = dg(x)
        a = np.where(d <= 0, x, a)
        b = np.where(d >= 0, x, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - d / d2g(x)
        inside = (step > a) & (step < b) & np.isfinite(step)
        x = np.where(inside, step, 0.5 * (a + b))
        # converged when the tangent gap |g'|·width is below 1e-9 or below g''s own rounding noise (≈ 1e-13 of the
        # size of its terms: with millions of rows g' cannot get nearer 0); the final margin covers that noise
        ma_ = np.clip(-(cb * x + k) / ca, _EPS, 1 - _EPS)
        mb_ = np.clip(x, _EPS, 1 - _EPS)
        size = abs(cb / ca) * (sa_ / ma_ + fa_ / (1 - ma_)) + sb_ / mb_ + fb_ / (1 - mb_)
        if np.all(np.abs(d) * (b - a) <= 1e-9 + 1e-13 * size * (b - a)):
            break
    w = b - a
    ga, gb = g(a), g(b)
    on_line = np.maximum(ga - np.abs(dg(a)) * w, gb - np.abs(dg(b)) * w) - 1e-9
    on_line = np.minimum(on_line, np.minimum(ga, gb))
    out[need] = c_ + on_line
    # rounding: the terms are sums of up to n·|log m| each, evaluated to a few ulps; 1e-12 of their magnitude
    # (≈ 4,500 ulps) rounds the logarithm down past any floating-point error, so the e-value is never overstated
    return out - 1e-12 * (np.abs(const) + np.abs(out - const))


def test_batched_evalues_are_the_per_test_evalues_bit_for_bit():
    """``log_evalues`` (every test of a chunk at once, what the monitor runs) gives exactly the values of each test
    searched alone (``one_test_alone``):
    the same Newton iterations per test, however the tests converge together; leading axes, a line that misses the
    square, scalars and empty checks included."""
    rng = np.random.default_rng(7)
    forms = [(1.0, -1.0, -0.1), (1.0, -1.0, 0.2), (1.0, -0.8, 0.0), (1.0, -1.25, 0.0), (-1.0, 1.0, -0.05),
             (2.0, 3.0, -6.0), (1.0, 1.0, 5.0)]
    tests = []
    for trial in range(120):
        n = int(rng.integers(1, 300))
        shape = (n,) if trial % 3 else (3, n // 3 + 1)
        na = np.cumsum(rng.integers(0, 3, shape), axis=-1).astype(float)
        nb = np.cumsum(rng.integers(0, 3, shape), axis=-1).astype(float)
        pa, pb = rng.uniform(0, 1, 2)
        sa = np.floor(na * pa * rng.uniform(0.5, 1.5)).clip(0, na)
        sb = np.floor(nb * pb * rng.uniform(0.5, 1.5)).clip(0, nb)
        for sigma in (1, -1):
            tests.append((sa, na, sb, nb, *forms[trial % len(forms)], sigma))
    tests += [(5.0, 10.0, 3.0, 10.0, 1.0, -1.0, -0.1, 1), (np.zeros(0),) * 4 + (1.0, -1.0, 0.0, 1)]
    for test, got in zip(tests, log_evalues(tests), strict=True):
        want = one_test_alone(*test)
        assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    assert log_evalues([]) == []

