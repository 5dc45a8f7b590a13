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
monotone), and misses it on the side that moves the difference's interval [lo₁ − hi₀, hi₁ − lo₀] past
the threshold: a wrong TRUE (the difference claimed below 0.1 while it is ≥ 0.1) needs hi₁ below the
mean of the ``g == 1`` leaf or lo₀ above the ``g == 0`` one; a wrong FALSE the other two sides. That screen
is computed for all seeds at once; the monitor itself (both splits, the real code path) runs only on the
screened seeds, so the counts are exact. (The one-sided screen halves the seeds the monitor runs on; on
every case and bound, and for the fixed-n negative control below, the monitor run on every seed of the
two-sided screen made its wrong claims only on seeds of the one-sided one — the betting bound's one
wrong claim at the threshold among them.)

Negative control (the check can fail): a fixed-n Hoeffding interval re-used at every check is wrong in
15 % of 300 runs at Δ = 0.1 on a one-leaf spec exactly at its threshold; adaptive Hoeffding 0 %,
betting 2 % on the same streams.
"""
import numpy as np
import pytest

from fairaudit.core.allocation import LeafStats
from fairaudit.bounds.concentration import get_bound
from fairaudit.engines.monitor.engine import Observations, check_points, run_monitor
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


def _screen(g, pred, d, bound, wrong):
    """The seeds whose interval of a leaf (δ = Δ) lies on the side of its mean that a ``wrong`` claim needs, at
    some check: below it for the ``g == 1`` leaf and above it for the other when ``wrong`` is TRUE, the reverse
    for FALSE."""
    idx = check_points(N, BATCH)
    miss = np.zeros(len(g), dtype=bool)
    for mask, p, below in ((g, 0.3 + d, wrong == "true"), (~g, 0.3, wrong != "true")):
        s = np.cumsum(pred & mask, axis=1)[:, idx]
        n = np.cumsum(mask, axis=1)[:, idx]
        lo, hi = get_bound(bound).interval(s, n, DELTA)
        miss |= np.any(hi < p, axis=1) if below else np.any(lo > p, axis=1)
    return np.flatnonzero(miss)


@pytest.mark.slow
@pytest.mark.parametrize("bound", ["hoeffding", "betting"])
@pytest.mark.parametrize("case", list(CASES))
def test_wrong_claims_at_most_delta(case, bound):
    d, wrong = CASES[case]
    g, pred = _simulate(d, SEEDS)
    screened = _screen(g, pred, d, bound, wrong)
    errors = {"equal": 0, "optimized": 0}
    for i in screened:
        obs = Observations({KEYS[0]: pred[i], KEYS[1]: pred[i]}, {KEYS[0]: g[i], KEYS[1]: ~g[i]}, N)
        for split in errors:
            r = run_monitor(SPEC, obs, delta=DELTA, batch=BATCH, split=split, bound=bound)
            errors[split] += bool((r.by_node("n0").verdict == wrong).any())
    rates = {k: v / SEEDS for k, v in errors.items()}
    print(f"{case} {bound}: screened {len(screened)}/{SEEDS}, wrong-claim rate {rates}")
    assert all(rate <= DELTA for rate in rates.values())


class _FixedSampleHoeffding:
    """A negative control: the classical fixed-n Hoeffding interval p̂ ± sqrt(ln(2/δ) / 2n), valid at one
    pre-chosen n but not when it is looked at after every batch (no correction for peeking)."""

    name = "fixed-n hoeffding (not anytime-valid)"

    def interval(self, successes, n, delta):
        s, n = np.asarray(successes, float), np.asarray(n, float)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(n > 0, s / np.where(n > 0, n, 1), 0.5)
            eps = np.where(n > 0, np.sqrt(np.log(2 / np.asarray(delta, float)) / (2 * np.maximum(n, 1))), 1.0)
        return np.clip(p - eps, 0, 1), np.clip(p + eps, 0, 1)


@pytest.mark.slow
def test_the_validity_check_catches_a_bound_that_is_not_anytime_valid():
    """The check above has teeth: ``E[x] < 0.5`` with x ~ Bernoulli(0.5) is false (exactly at the
    threshold), and a fixed-n interval re-used at every check claims TRUE in more than Δ of the runs,
    while the anytime-valid bounds stay within Δ on the same streams."""
    from fairaudit.bounds.concentration import Bound

    fixed_n = type("FixedN", (Bound,), dict(_FixedSampleHoeffding.__dict__))()
    spec = parse("E[x] < 0.5")
    key = spec.leaves[0].text
    seeds = 300
    n = 5000  # a check after every observation: the most peeking
    x = np.random.default_rng(77).random((seeds, n)) < 0.5
    ones = np.ones(n, dtype=bool)
    rates = {}
    for name, bound in (("fixed-n", fixed_n), ("hoeffding", "hoeffding"), ("betting", "betting")):
        wrong = 0
        for i in range(seeds):
            r = run_monitor(spec, Observations({key: x[i]}, {key: ones}, n), delta=DELTA, batch=1,
                            split="equal", bound=bound)
            wrong += bool((r.by_node("n0").verdict == "true").any())
        rates[name] = wrong / seeds
    print(f"E[x] < 0.5 at its threshold, wrong TRUE claims: {rates}")
    assert rates["fixed-n"] > DELTA
    assert rates["hoeffding"] <= DELTA and rates["betting"] <= DELTA
