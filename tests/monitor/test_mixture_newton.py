"""The mixture bound's Newton endpoints (``fairaudit.bounds.concentration._newton_ends``) against the bisection they
replaced (an independent computation of the same set): never narrower than the bisection by more than rounding,
never wider than it by more than the floating-point margin both use; the fallback is the bisection itself;
``ReusedBound`` answers exactly as its bound; and the monitor's batches growing changes no check's values."""
import numpy as np
import pytest

from fairaudit.bounds import concentration as c


def cases(seed=0, k=4000):
    rng = np.random.default_rng(seed)
    n = np.concatenate([rng.integers(1, 60, k), rng.integers(60, 10**4, k), rng.integers(10**4, 10**9, k)]).astype(float)
    p = np.concatenate([rng.random(k), rng.random(k) ** 4, 1 - rng.random(k) ** 4])
    s = np.floor(n * p)
    s[:50], s[50:100] = 0, n[50:100]
    d = np.exp(-rng.random(len(n)) * 25)
    return s, n, d


def bisection(s, n, d):
    f = n - s
    thr = c.mixture_log_threshold(s, n, d)
    p = s / n
    lo, hi = c._bisect_ends(s, f, p, thr, 48)
    return np.where(s <= 0, 0.0, lo), np.where(f <= 0, 1.0, hi)


def test_newton_matches_the_bisection():
    s, n, d = cases()
    lo, hi = c.mixture_interval(s, n, d)
    blo, bhi = bisection(s, n, d)
    assert np.all(lo <= blo + 1e-14) and np.all(hi >= bhi - 1e-14)  # at least as wide (outward), up to rounding
    # no wider than the margin: relative 1e-10 of the log-threshold, i.e. tiny in m
    assert np.max(blo - lo) < 1e-7 and np.max(hi - bhi) < 1e-7
    assert np.median(np.abs(lo - blo)) < 1e-10


def test_fallback_is_the_bisection(monkeypatch):
    s, n, d = cases(1, 500)

    def refuse(s, f, n, p, thr, want_lo, want_hi):
        return np.zeros_like(p), np.ones_like(p), want_lo.copy(), want_hi.copy()

    monkeypatch.setattr(c, "_newton_ends", refuse)
    lo, hi = c.mixture_interval(s, n, d)
    blo, bhi = bisection(s, n, d)
    assert np.array_equal(lo, blo) and np.array_equal(hi, bhi)


def test_reused_bound_answers_as_its_bound():
    s, n, d = cases(2, 300)
    inner = c.get_bound("mixture")
    reused = c.ReusedBound(inner, size=2)
    for delta in (d, 0.05, d, 0.01, 0.05):
        got, want = reused.interval(s, n, delta), inner.interval(s, n, delta)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    got = reused.interval(s + 1, n + 1, 0.05)  # other statistics: not the memo's answer
    want = inner.interval(s + 1, n + 1, 0.05)
    assert np.array_equal(got[0], want[0])
    assert reused.interval(3, 10, 0.05) == inner.interval(3, 10, 0.05)  # scalars stay scalars


@pytest.mark.parametrize("split", ["directed", "equal"])
def test_batch_lengths_change_no_check(split):
    from fairaudit.core.engine import Context
    from fairaudit.engines.monitor.engine import Monitor, monitor_batches
    from fairaudit.core.guarantee import Guarantee
    from fairaudit.core.driver import drive, last
    from fairaudit.core.observations import observe
    from fairaudit import data
    from fairaudit.spec import parse

    frame = data.load("compas").frame
    spec = parse('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.1 or '
                 'E[pred | sex == "Female"] > 0.6')
    obs = observe(spec, frame, pred=(frame["priors_count"] > 1).to_numpy())
    def run(c0, c1):
        batches = monitor_batches(spec, obs, batch=1, delta=0.1, bound="mixture", split=split, chunk=c0,
                                  chunk_limit=c1)
        return last(drive(Monitor(), spec, batches, options={}, guarantee=Guarantee("probabilistic", 0.1),
                          ctx=Context(), trace_points=None))

    runs = [run(c0, c1) for c0, c1 in ((256, 256), (256, 8192), (7, 100))]
    a = runs[0]
    for b in runs[1:]:
        assert (a.verdict, a.stop_step, a.verdict_step) == (b.verdict, b.stop_step, b.verdict_step)
        ta, tb = a.trace_table, b.trace_table
        assert np.array_equal(ta.steps, tb.steps)
        for name in ("estimate", "lo", "hi", "delta", "verdict", "n"):
            assert np.array_equal(getattr(ta, name), getattr(tb, name), equal_nan=True), name
