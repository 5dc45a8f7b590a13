"""The paired confidence sequence (``fairaudit.bounds.paired``): it contains the exact projection of the trinomial
mixture's confidence set (checked against a brute-force grid), it covers the true difference at every look with
probability ≥ 1 − δ, and it is tighter than two separate intervals when the models mostly agree."""
from __future__ import annotations

import numpy as np
import pytest

from fairaudit.bounds.concentration import mixture_interval
from fairaudit.bounds.paired import difference_interval, log_threshold, running


def brute_projection(n10, n01, same, delta, grid=1200):
    thr = log_threshold(n10, n01, same, delta)
    xs = np.linspace(0, 1, grid + 1)
    p10, p01 = np.meshgrid(xs, xs, indexing="ij")
    ps = 1 - p10 - p01
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = (np.where(n10 > 0, n10 * np.log(p10), 0) + np.where(n01 > 0, n01 * np.log(p01), 0)
              + np.where(same > 0, same * np.log(np.clip(ps, 0, 1)), 0))
    inside = (ps >= -1e-12) & (ll > thr)
    d = (p10 - p01)[inside]
    return d.min(), d.max()


@pytest.mark.parametrize("counts", [(5, 3, 40, 0.05), (0, 0, 10, 0.05), (10, 0, 0, 0.1), (0, 7, 3, 0.01),
                                    (30, 10, 500, 0.05), (1, 1, 1, 0.5), (200, 150, 5000, 0.001)])
def test_contains_the_exact_projection(counts):
    lo, hi = difference_interval(*counts)
    blo, bhi = brute_projection(*counts)
    step = 2.0 / 1200  # the grid's resolution in d
    assert lo <= blo + 1e-12 and hi >= bhi - 1e-12  # outward
    assert blo - lo < 2 * step and hi - bhi < 2 * step  # and not much wider than the exact set


def test_vacuous_without_pairs_or_level():
    assert difference_interval(0, 0, 0, 0.05) == (-1.0, 1.0)
    assert difference_interval(5, 2, 9, 0.0) == (-1.0, 1.0)


def test_covers_at_every_look():
    rng = np.random.default_rng(7)
    p = np.array([0.07, 0.05, 0.88])
    truth = p[0] - p[1]
    delta, runs, misses = 0.1, 300, 0
    looks = np.unique(np.geomspace(1, 3000, 120).astype(int)) - 1
    for _ in range(runs):
        x = rng.choice(3, size=3000, p=p)
        c = [np.cumsum(x == k)[looks] for k in range(3)]
        lo, hi = running(*difference_interval(c[0], c[1], c[2], delta))
        misses += bool(np.any((lo > truth) | (hi < truth)))
    assert misses / runs <= delta


def test_paired_is_tighter_than_two_intervals_when_models_agree():
    n = 5000
    lo, hi = difference_interval(300, 200, 4500, 0.05)
    la, ha = mixture_interval(1300, n, 0.025)
    lb, hb = mixture_interval(1200, n, 0.025)
    assert (hi - lo) < 0.5 * ((ha - lb) - (la - hb))
