"""The confidence sequences for a bounded quantity's mean (``fairaudit.bounds.bounded``): exact on 0/1 values,
in the quantity's units, and valid under continuous monitoring on streams inside the range that are skewed, piled at
the ends or concentrated in the middle — with a negative control that the same harness rejects."""
from __future__ import annotations

import numpy as np
import pytest

from fairaudit.bounds.bounded import bounded_mean_interval, outside_range, scaled_sum
from fairaudit.bounds.concentration import get_bound


@pytest.mark.parametrize("bound", ["mixture", "hoeffding"])
def test_on_zero_one_values_it_is_the_bernoulli_bound(bound):
    s = np.array([0, 1, 7, 50, 99, 100], dtype=float)
    n = np.full(len(s), 100.0)
    lo, hi = bounded_mean_interval(s, n, 0.05, 0.0, 1.0, bound)
    want = get_bound(bound).interval(s, n, 0.05)
    assert np.array_equal(lo, want[0]) and np.array_equal(hi, want[1])


def test_the_interval_is_in_the_quantitys_units():
    # amounts in [2,000, 50,000]: the interval of the scaled sum, mapped back
    rng = np.random.default_rng(3)
    x = rng.uniform(2_000, 50_000, 500)
    lo, hi = bounded_mean_interval(x.sum(), len(x), 0.05, 2_000, 50_000)
    ylo, yhi = get_bound("mixture").interval(((x - 2_000) / 48_000).sum(), len(x), 0.05)
    assert lo == pytest.approx(2_000 + 48_000 * ylo, rel=1e-12) and hi == pytest.approx(2_000 + 48_000 * yhi,
                                                                                          rel=1e-12)
    assert lo < x.mean() < hi
    assert bounded_mean_interval(0.0, 0, 0.05, 2_000, 50_000) == (2_000, 50_000)
    assert scaled_sum(3 * 50_000 + 1e-9, 3, 2_000, 50_000) == 3.0  # rounding never leaves [0, n]


@pytest.mark.parametrize("lo, hi", [(1.0, 1.0), (2.0, 1.0), (0.0, np.inf), (np.nan, 1.0)])
def test_a_range_needs_finite_ends_in_order(lo, hi):
    with pytest.raises(ValueError, match="range"):
        bounded_mean_interval(1.0, 2, 0.05, lo, hi)


def test_values_outside_the_range_are_found_not_clipped():
    assert outside_range([0.0, 1.0, 1.5, -0.1, np.nan, 0.5], 0.0, 1.0).tolist() == [2, 3, 4]


SHAPES = {  # streams in [0, 1] and their true means
    "skewed (Beta(0.3, 3))": (lambda rng, size: rng.beta(0.3, 3.0, size), 0.3 / 3.3),
    "piled at the ends": (lambda rng, size: np.where(rng.random(size) < 0.9, (rng.random(size) < 0.2) * 1.0,
                                                     rng.random(size)), 0.9 * 0.2 + 0.1 * 0.5),
    "concentrated in the middle": (lambda rng, size: rng.uniform(0.45, 0.55, size), 0.5),
}


def wrong_at_some_look(lo, hi, mu) -> float:
    return float(((lo > mu) | (hi < mu)).any(axis=1).mean())


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("bound", ["mixture", "hoeffding", "bernstein"])
def test_valid_at_every_look_and_the_harness_rejects_a_fixed_sample_interval(shape, bound):
    runs, steps, delta = 300, 1_000, 0.1
    draw, mu = SHAPES[shape]
    x = draw(np.random.default_rng(11), (runs, steps))
    total = np.cumsum(x, axis=1)
    n = np.broadcast_to(np.arange(1, steps + 1, dtype=float), total.shape)
    every = slice(None) if bound != "bernstein" else slice(4, None, 5)  # (bernstein: a look every 5 rows, for time)
    total, n, squares = total[:, every], n[:, every], np.cumsum(x * x, axis=1)[:, every]
    lo, hi = bounded_mean_interval(total, n, delta, 0.0, 1.0, bound, total_sq=squares)
    margin = 3 * np.sqrt(delta * (1 - delta) / runs)  # Monte Carlo error of the rate
    assert wrong_at_some_look(lo, hi, mu) <= delta + margin
    # the negative control: a fixed-sample normal interval at the same level, looked at after every row
    mean = total / n
    sd = np.sqrt(np.maximum(squares / n - mean ** 2, 1e-12))
    radius = 1.645 * sd / np.sqrt(n)
    assert wrong_at_some_look(mean - radius, mean + radius, mu) > delta + margin


def test_bernstein_adapts_to_the_variance_and_its_ends_are_outside_the_rejected_set():
    from fairaudit.bounds.bounded import LAMBDAS, bernstein_interval

    rng = np.random.default_rng(5)
    mid = rng.uniform(0.45, 0.55, 5_000)
    lo, hi = bounded_mean_interval(mid.sum(), len(mid), 0.05, 0.0, 1.0, "bernstein", total_sq=(mid ** 2).sum())
    mlo, mhi = bounded_mean_interval(mid.sum(), len(mid), 0.05, 0.0, 1.0, "mixture")
    assert lo < mid.mean() < hi and (hi - lo) < (mhi - mlo) / 4  # far sharper for a concentrated quantity
    # each end is on the rejected side: the average bet's wealth at the end is at least 2/δ, just inside it is not
    s, q, n, delta = mid.sum(), (mid ** 2).sum(), len(mid), 0.05
    lam = LAMBDAS
    psi = -np.log1p(-lam) - lam

    def wealth(m, sign):
        return np.mean(np.exp(lam * sign * (s - n * m) - psi * (q - 2 * m * s + n * m * m)))

    a, b = bernstein_interval(s, q, n, delta)
    assert wealth(a, 1.0) >= 2 / delta > wealth(a + 1e-9, 1.0)
    assert wealth(b, -1.0) >= 2 / delta > wealth(b - 1e-9, -1.0)
    with pytest.raises(ValueError, match="squares"):
        bounded_mean_interval(1.0, 2, 0.05, 0.0, 1.0, "bernstein")
