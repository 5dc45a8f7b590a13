"""The joint e-process per comparison (``fairaudit.engines.monitor.eprocess``): its infimum against a brute-force grid, which
comparisons qualify, and its validity at the boundary (1,000 seeded streams per case, wrong verdicts ≤ Δ)."""
import numpy as np
import pytest

from fairaudit.engines.monitor import directed
from fairaudit.engines.monitor.eprocess import disjoint, joint_form, log_evalue, log_evalues, log_mixture
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
    from fairaudit.engines.monitor.eprocess import _nll

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


def test_batched_evalues_are_the_per_test_evalues_bit_for_bit():
    """``log_evalues`` (every test of a chunk at once, what the monitor runs) gives exactly ``log_evalue``'s values:
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
        want = log_evalue(*test)
        assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    assert log_evalues([]) == []

