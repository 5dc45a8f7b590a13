"""End-to-end soundness of the monitor against an independent oracle.

Random small specs (2–4 leaves, some rejection-sampled, a shared leaf, sub / div / and / or / not,
thresholds near and far from the truth) on simulated i.i.d. streams with known leaf means. The true
verdict and every node's true value are computed exactly (``soundness_oracle.concrete``, rational
arithmetic) — not with the code under test. For both splits and both bounds:

* the rate of runs that ever show a wrong decided root verdict is ≤ Δ;
* the displayed interval of every node contains its true value at every check, at a rate consistent
  with the node's recorded δ (total misses over (run, node) pairs ≤ Σ of the largest δ displayed, up
  to sampling noise);
* every decided boolean node is right unless some leaf interval below it missed.

A run can only be wrong if some leaf's interval at δ = Δ misses its mean at some check (every δ the
engine uses is ≤ Δ and intervals are nested in δ), so the engine runs only on those seeds (plus a
few others as a control); the counts are exact.
"""
from fractions import Fraction

import numpy as np
import pytest

from fairaudit.bounds.concentration import get_bound
from fairaudit.engines.monitor.engine import check_points, run_monitor
from fairaudit.core.evaluate import compile_spec
from soundness_oracle import node_truths, random_spec, simulate

N, BATCH, DELTA = 1200, 10, 0.1


def _leaf_mean(text, means):
    return means[text.split("[")[1].split("]")[0].split(" ")[0]]


def _run_seed(seed, bound, force=False):
    rng = np.random.default_rng(seed)
    means = {n: float(rng.uniform(0.1, 0.9)) for n in ("x0", "x1", "x2", "x3")}
    spec, env = random_spec(rng, means)
    obs = simulate(spec, means, N, rng)
    idx = check_points(N, BATCH)
    missed = False
    for key, s in obs.stats(idx).items():
        lo, hi = get_bound(bound).interval(s.successes, s.n, DELTA)
        mu = _leaf_mean(key, means)
        missed |= bool(np.any((lo > mu) | (hi < mu)))
    truths = node_truths(spec, env)
    if not (missed or force):
        return {split: dict(root_wrong=False, misses=0, delta_sum=_equal_delta_sum(spec, truths), bool_wrong=0,
                            ran=0) for split in ("equal", "optimized")}
    out = {}
    for split in ("equal", "optimized"):
        r = run_monitor(spec, obs, delta=DELTA, batch=BATCH, split=split, bound=bound)
        t = r.trace_table
        stats = dict(root_wrong=False, misses=0, delta_sum=0.0, bool_wrong=0, ran=1)
        for j, tn in enumerate(spec.nodes):
            truth = truths[tn.id]
            if tn.kind in ("and", "or", "not", "cmp"):
                holds = truth[1] if tn.kind == "cmp" else truth
                wrong = bool((t.verdict[:, j] == (0 if holds else 1)).any())
                stats["bool_wrong"] += wrong
                if j == 0:
                    stats["root_wrong"] = wrong
                if tn.kind != "cmp":
                    continue
                truth = truth[0]
            if tn.kind == "const" or truth is None:
                continue
            lo, hi = t.lo[:, j], t.hi[:, j]
            near = np.flatnonzero((lo > float(truth) - 1e-9) | (hi < float(truth) + 1e-9))
            stats["misses"] += any((np.isfinite(lo[c]) and Fraction(float(lo[c])) > truth)
                                   or (np.isfinite(hi[c]) and Fraction(float(hi[c])) < truth) for c in near)
            stats["delta_sum"] += float(np.max(t.delta[:, j]))
        if not missed:
            assert stats["misses"] == 0 and stats["bool_wrong"] == 0, (seed, spec.text)
        out[split] = stats
    return out


def _equal_delta_sum(spec, truths):
    """Σ over the nodes with a numeric truth of their δ under the equal split (what the engine shows
    before a decision; for ``split="equal"`` at every check)."""
    cs = compile_spec(spec)
    total = 0.0
    for tn in spec.nodes:
        truth = truths[tn.id][0] if tn.kind == "cmp" else truths[tn.id]
        if tn.kind in ("and", "or", "not", "const") or truth is None:
            continue
        total += DELTA * len(cs.leaves_below[tn.id]) / len(cs.leaf_keys)
    return total


@pytest.mark.slow
@pytest.mark.parametrize("bound", ["hoeffding", "betting"])
def test_random_specs_end_to_end(bound):
    seeds = 400
    totals = {s: dict(root_wrong=0, misses=0, delta_sum=0.0, bool_wrong=0, ran=0) for s in ("equal", "optimized")}
    for seed in range(seeds):
        res = _run_seed(seed, bound, force=seed < 8)  # a few unscreened runs as a control
        for split, st in res.items():
            for k, v in st.items():
                totals[split][k] += v
    print(bound, totals)
    for split, st in totals.items():
        assert st["root_wrong"] / seeds <= DELTA, (split, st)
        # misses summed over (run, node) pairs vs the δ's displayed: E[Σ misses] ≤ Σ δ (for runs the
        # engine did not need to run, the equal-split δ's, which is what is displayed before a decision)
        assert st["misses"] <= st["delta_sum"] + 3 * np.sqrt(max(st["delta_sum"], 1.0)), (split, st)
