"""Concentration bounds: formulas, inverse, monotonicity, and anytime validity by simulation."""
import math

import numpy as np
import pytest

from fairaudit.bounds.concentration import (betting_interval, get_bound, hoeffding_delta,
                                            hoeffding_radius)


def test_hoeffding_radius_formula():
    n, d = 1550, 0.05
    expected = math.sqrt((0.6 * math.log(math.log(n, 1.1) + 1) + 5 / 9 * math.log(24 / d)) / n)
    assert hoeffding_radius(d, n) == pytest.approx(expected, rel=1e-12)
    assert np.isinf(hoeffding_radius(0.1, 0)) and np.isinf(hoeffding_radius(0.0, 10))


def test_hoeffding_vectorised_and_inverse():
    n = np.array([1, 10, 310, 1550, 48842])
    d = np.array([0.5, 0.1, 0.05, 1e-4, 1e-9])
    eps = hoeffding_radius(d, n)
    assert eps.shape == (5,)
    np.testing.assert_allclose(hoeffding_delta(eps, n), d, rtol=1e-9)
    # monotone: shrinks with n and with δ
    assert np.all(np.diff(hoeffding_radius(0.05, np.arange(1, 5000))) < 0)
    assert np.all(np.diff(hoeffding_radius(np.linspace(0.001, 0.5, 50), 100)) < 0)


@pytest.mark.parametrize("name", ["hoeffding", "betting"])
def test_interval_basic_properties(name):
    bound = get_bound(name)
    s = np.array([0, 3, 50, 100, 0])
    n = np.array([100, 10, 100, 100, 0])
    lo, hi = bound.interval(s, n, 0.05)
    p = np.where(n > 0, s / np.maximum(n, 1), 0.5)
    assert np.all((0 <= lo) & (lo <= p) & (p <= hi) & (hi <= 1))
    assert lo[-1] == 0 and hi[-1] == 1  # no data: vacuous
    lo0, hi0 = bound.interval(s, n, 0.0)  # δ = 0: certain, so vacuous
    assert np.all(lo0 == 0) and np.all(hi0 == 1)
    # intervals shrink as δ grows
    lo2, hi2 = bound.interval(s, n, 0.2)
    assert np.all(lo2 >= lo) and np.all(hi2 <= hi)


def test_betting_interval_matches_definition():
    """Endpoints solve S ln m + F ln(1-m) = ln B(a+S, b+F) - ln B(a, b) + ln δ, and lie outside."""
    from scipy.special import betaln
    s, n, d = 37, 200, 0.05
    lo, hi = betting_interval(s, n, d)
    f = n - s
    thr = betaln(0.5 + s, 0.5 + f) - betaln(0.5, 0.5) + math.log(d)
    ll = lambda m: s * math.log(m) + f * math.log1p(-m)  # noqa: E731
    assert ll(lo) <= thr and ll(hi) <= thr  # endpoints are (just) outside: outward rounding
    assert ll(lo + 1e-9) > thr and ll(hi - 1e-9) > thr


def test_betting_is_tighter_than_hoeffding():
    for p in (0.2, 0.5):
        n = 1000
        s = int(p * n)
        blo, bhi = betting_interval(s, n, 0.05)
        eps = hoeffding_radius(0.05, n)
        assert bhi - blo < 2 * eps


@pytest.mark.parametrize("name", ["hoeffding", "betting"])
@pytest.mark.parametrize("p", [0.05, 0.3, 0.5])
def test_anytime_validity_by_simulation(name, p):
    """Pr[∃t ≤ T: p ∉ CI_t] ≤ δ, checked on 2000 simulated streams at every observation up to
    T = 300 and then every 10th observation up to 3000."""
    rng = np.random.default_rng(12345)
    runs, T, delta = 2000, 3000, 0.1
    x = rng.random((runs, T)) < p
    s = np.cumsum(x, axis=1)
    t = np.concatenate([np.arange(1, 301), np.arange(310, T + 1, 10)])
    s = s[:, t - 1]
    lo, hi = get_bound(name).interval(s, np.broadcast_to(t, s.shape), delta)
    missed = np.any((lo > p) | (hi < p), axis=1).mean()
    assert missed <= delta, missed
