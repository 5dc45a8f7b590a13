"""Validity: on simulated streams with a known truth, the fraction of runs that ever claim a wrong
verdict (at the decision or at any later check) stays ≤ Δ — for both bounds and both splits.
(Δ is what the equal split guarantees; the optimised split only guarantees k·Δ in general — see
``test_soundness_optimized.py`` — but on these two-leaf streams it also stays within Δ.)

Setup: 2,000 observations, group g ~ Bernoulli(0.3), pred | g ~ Bernoulli(0.3 + d), pred | not g ~
Bernoulli(0.3); spec ``E[pred | g == 1] - E[pred | g == 0] < 0.1``; Δ = 0.1, a check every 5.
Cases: d = 0 (true by a margin), d = 0.2 (false by a margin), d = 0.1 (exactly at the threshold:
the spec is false, so any TRUE claim is wrong). 1,000 seeds per case and bound.

Vectorised: a run can only claim a wrong verdict if some leaf interval misses its true mean at some
check with δ = Δ for that leaf (every allocation uses δᵢ ≤ Δ, i.e. wider intervals, and verdicts are
monotone). That screen is computed for all seeds at once; the monitor itself (both splits, the real
code path) runs only on the screened seeds, so the counts are exact.
"""
import numpy as np
import pytest

from fairaudit.bounds.allocation import LeafStats
from fairaudit.bounds.concentration import get_bound
from fairaudit.engines.monitor import Observations, check_points, run_monitor
from fairaudit.spec import parse

SPEC = parse("E[pred | g == 1] - E[pred | g == 0] < 0.1")
KEYS = [tn.text for tn in SPEC.leaves]
N, SEEDS, DELTA, BATCH = 2000, 1000, 0.1, 5
CASES = {"true_by_margin": (0.0, "false"), "false_by_margin": (0.2, "true"), "at_threshold": (0.1, "true")}


def _simulate(d, seeds):
    rng = np.random.default_rng(1000 + int(d * 100))
    g = rng.random((seeds, N)) < 0.3
    pred = np.where(g, rng.random((seeds, N)) < 0.3 + d, rng.random((seeds, N)) < 0.3)
    return g, pred


def _screen(g, pred, d, bound):
    idx = check_points(N, BATCH)
    miss = np.zeros(len(g), dtype=bool)
    for mask, p in ((g, 0.3 + d), (~g, 0.3)):
        s = np.cumsum(pred & mask, axis=1)[:, idx]
        n = np.cumsum(mask, axis=1)[:, idx]
        lo, hi = get_bound(bound).interval(s, n, DELTA)
        miss |= np.any((lo > p) | (hi < p), axis=1)
    return np.flatnonzero(miss)


@pytest.mark.slow
@pytest.mark.parametrize("bound", ["hoeffding", "betting"])
@pytest.mark.parametrize("case", list(CASES))
def test_wrong_claims_at_most_delta(case, bound):
    d, wrong = CASES[case]
    g, pred = _simulate(d, SEEDS)
    screened = _screen(g, pred, d, bound)
    errors = {"equal": 0, "optimized": 0}
    for i in screened:
        obs = Observations({KEYS[0]: pred[i], KEYS[1]: pred[i]}, {KEYS[0]: g[i], KEYS[1]: ~g[i]}, N)
        for split in errors:
            r = run_monitor(SPEC, obs, delta=DELTA, batch=BATCH, split=split, bound=bound)
            errors[split] += bool((r.by_node("n0").verdict == wrong).any())
    rates = {k: v / SEEDS for k, v in errors.items()}
    print(f"{case} {bound}: screened {len(screened)}/{SEEDS}, wrong-claim rate {rates}")
    assert all(rate <= DELTA for rate in rates.values())
