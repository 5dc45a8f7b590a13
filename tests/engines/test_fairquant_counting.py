"""Counting the fair individuals inside undecided partitions (``fairaudit.engines.fairquant.counting`` and
``count_inside=True``): never more than brute-force enumeration finds, per box and per partition, on random boxes,
one-hot groups, long ranges and random small networks with ties (exact rational outputs)."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fairaudit.engines.fairquant import analysis  # noqa: E402
from fairaudit.engines.fairquant.analysis import FairQuant, exact_outputs, favourable, nnet_domain  # noqa: E402
from fairaudit.engines.fairquant.counting import count_positive, minimum  # noqa: E402
from tests.engines.test_fairquant_linear import exact_truth, grid_points, tie_net  # noqa: E402


def brute(lo, hi, coef, const, groups):
    pts = grid_points(lo, hi)
    terms = pts * coef
    for j, values in groups.items():
        terms[:, j] = values[pts[:, j].astype(int)]
    return int((terms.sum(axis=1) + const > 0).sum()), float((terms.sum(axis=1) + const).min())


@pytest.mark.parametrize("seed", range(20))
def test_count_positive_never_exceeds_the_enumeration(seed):
    rng = np.random.default_rng(seed)
    P, F = 6, int(rng.integers(1, 5))
    lo = rng.integers(-3, 3, (P, F)).astype(float)
    hi = lo + rng.integers(0, 7, (P, F))
    coef = rng.normal(size=(P, F)) * rng.choice([0.0, 1.0, 1e-3, 50.0], (P, F))
    const = rng.normal(size=P) * 3
    groups = {}
    if F > 1 and seed % 2:
        lo[:, 0] = rng.integers(0, 3, P)
        hi[:, 0] = lo[:, 0] + rng.integers(0, 3, P)
        groups[0] = rng.normal(size=(P, 6))
    got = count_positive(lo, hi, coef, const, groups)
    low = minimum(lo, hi, coef, const, groups)
    found = total = 0
    for p in range(P):
        truth, smallest = brute(lo[p], hi[p], coef[p], const[p], {j: v[p] for j, v in groups.items()})
        assert 0 <= got[p] <= truth
        assert low[p] == pytest.approx(smallest, abs=1e-9)
        found, total = found + got[p], total + truth
    assert found >= 0.8 * total  # and it finds most of them (a count of 0 everywhere would be sound too)


@pytest.mark.parametrize("seed", range(12))
def test_the_two_halves_are_counted_like_two_boxes(seed):
    rng = np.random.default_rng(40 + seed)
    P, F = 8, 3
    lo = rng.integers(0, 3, (P, F)).astype(float)
    hi = lo + rng.integers(1, 9, (P, F))
    coef, const = rng.normal(size=(P, F)), rng.normal(size=P) * 2
    groups = {2: rng.normal(size=(P, 12))} if seed % 2 else {}
    feature = rng.integers(0, F, P)
    mid = np.floor((lo[np.arange(P), feature] + hi[np.arange(P), feature]) / 2)
    got = count_positive(lo, hi, coef, const, groups, split=(feature, mid))
    found = total = 0
    for p in range(P):
        for c, (a, b) in enumerate([(lo[p, feature[p]], mid[p]), (mid[p] + 1, hi[p, feature[p]])]):
            l, h = lo[p].copy(), hi[p].copy()
            l[feature[p]], h[feature[p]] = a, b
            truth, _ = brute(l, h, coef[p], const[p], {j: v[p] for j, v in groups.items()})
            assert 0 <= got[p, c] <= truth
            found, total = found + got[p, c], total + truth
    assert found >= 0.8 * total


def test_ties_on_the_boundary_are_not_counted():
    # x + y − 4 > 0 on [0, 4]²: the 15 points with x + y = 4 … 0 are out, exactly 10 are in
    got = count_positive(np.zeros((1, 2)), np.full((1, 2), 4.0), np.ones((1, 2)), np.array([-4.0]))
    assert got[0] <= 10
    assert count_positive(np.zeros((1, 2)), np.full((1, 2), 4.0), np.ones((1, 2)), np.array([-9.0]))[0] == 0
    assert count_positive(np.zeros((1, 2)), np.full((1, 2), 4.0), np.ones((1, 2)), np.array([0.5]))[0] == 25


def test_long_ranges():
    rng = np.random.default_rng(7)
    found = total = 0
    for _ in range(20):
        lo = np.zeros((3, 2))
        hi = np.array([[rng.integers(1100, 3000), rng.integers(0, 4)] for _ in range(3)], dtype=float)
        coef, const = rng.normal(size=(3, 2)), rng.normal(size=3) * 100
        got = count_positive(lo, hi, coef, const)
        for p in range(3):
            truth, _ = brute(lo[p], hi[p], coef[p], const[p], {})
            assert got[p] <= truth
            found, total = found + got[p], total + truth
    assert found >= 0.95 * total


def _fair_in(lb, ub, lookup, j):
    """The fair individuals of a partition (its protected attribute's range collapsed to one value)."""
    lb, ub = lb.copy(), ub.copy()
    ub[j] = lb[j]
    return sum(lookup[tuple(np.delete(p, j))] for p in grid_points(lb, ub))


@pytest.mark.parametrize("seed", range(24))
def test_counted_individuals_are_fair_in_every_pending_partition(seed, monkeypatch):
    """After every batch, the individuals a pending partition is credited with are at most its fair individuals
    (exact arithmetic); certified ≤ truth ≤ 1 − unfair; run to the end the counts are exact."""
    monkeypatch.setattr(analysis, "TRIAL_EVERY", 3)  # "auto": a trial every third batch
    rng = np.random.default_rng(500 + seed)
    n = 3
    hi = [int(v) for v in rng.integers(6, 14, n)]
    hi[1] = 1
    dom = nnet_domain([f"x{i}" for i in range(n)], [0] * n, hi)
    layers = tie_net(rng, n, [[5], [4, 3]][seed % 2])
    values = dom.values_of(1)
    pts, fair_at = exact_truth(layers, dom, 1, values)
    truth = Fraction(int(fair_at.sum()), len(pts))
    lookup = {tuple(np.delete(p, 1)): bool(f) for p, f in zip(pts, fair_at)}
    fq = FairQuant(layers, dom, 1, max_depth=None, sample_depth=2, samples=2, seed=seed, batch=1 + seed % 3,
                   bounds="linear", refine_counterexamples=True, first_depth=(None, 3)[seed % 2],
                   count_inside=True, tighten=(False, True, "auto", False)[seed % 4], order=("depth-first", "breadth-first")[seed % 3 > 0])
    credited = []

    def check(a):
        r = a.rates()
        assert r["certified"] <= truth <= 1 - r["unfair"]
        lbs = [a.pending.lb] + [d[0] for d in a.deferred]
        ubs = [a.pending.ub] + [d[1] for d in a.deferred]
        credits = [a.pending.credit] + [d[4] for d in a.deferred]
        for lb, ub, cr in zip(np.concatenate(lbs), np.concatenate(ubs), np.concatenate(credits)):
            if cr:
                assert cr <= _fair_in(lb, ub, lookup, 1)
                credited.append(cr)
        assert a.counts.credited == int(sum(int(c.sum()) for c in credits))

    r = fq.run(on_step=check)
    assert fq.stopped == "complete"
    assert (r["certified"], r["unfair"], r["undecided"]) == (truth, 1 - truth, 0)


def test_counting_certifies_more_early_on_a_larger_grid():
    """On a grid where the decision boundary crosses most partitions, counting proves more individuals fair after
    the same partitions, and stays a lower bound."""
    rng = np.random.default_rng(3)
    dom = nnet_domain(["a", "p", "b", "c"], [0, 0, 0, 0], [60, 1, 60, 40])
    layers = [(rng.normal(size=(8, 4)), rng.normal(size=8)), (rng.normal(size=(1, 8)), rng.normal(size=1))]
    kw = dict(max_depth=None, bounds="linear", refine_counterexamples=True, first_depth=20, batch=64, seed=0)
    plain, counting = FairQuant(layers, dom, 1, **kw), FairQuant(layers, dom, 1, count_inside=True, **kw)
    for _ in range(6):
        plain.step()
        counting.step()
    assert counting.pops == plain.pops
    assert counting.rates()["certified"] > plain.rates()["certified"]


def test_the_partition_check_sees_counted_individuals():
    """The check above is not vacuous: on these grids partitions are credited before they are refined."""
    hits = 0
    for seed in range(24):
        rng = np.random.default_rng(500 + seed)
        hi = [int(v) for v in rng.integers(6, 14, 3)]
        hi[1] = 1
        dom = nnet_domain(["x0", "x1", "x2"], [0] * 3, hi)
        layers = tie_net(rng, 3, [[5], [4, 3]][seed % 2])
        fq = FairQuant(layers, dom, 1, max_depth=None, sample_depth=2, samples=2, seed=seed, batch=1 + seed % 3,
                       bounds="linear", refine_counterexamples=True, first_depth=(None, 3)[seed % 2],
                       count_inside=True)
        seen = []
        fq.run(on_step=lambda a: seen.append(a.counts.credited))
        hits += max(seen) > 0
    assert hits >= 6


def _mixed_domain(rng, one_hot_protected: bool, one_hot_other: bool, k: int):
    from fairaudit.engines.fairquant.analysis import Domain, Feature

    feats, start = [Feature("a", "int", -9.0, float(rng.integers(0, 12)), 0)], 1
    if one_hot_protected:
        feats.append(Feature("p", "cat", 0.0, float(k - 1), start, tuple(f"v{i}" for i in range(k))))
        start += k
    else:
        feats.append(Feature("p", "int", -1.0, float(k - 2), start))
        start += 1
    if one_hot_other:
        feats.append(Feature("g", "cat", 0.0, 3.0, start, ("q", "r", "s", "t")))
        start += 4
    else:
        feats.append(Feature("g", "int", 0.0, 3.0, start))
        start += 1
    feats.append(Feature("b", "int", -3.0, float(rng.integers(2, 6)), start))
    return Domain(tuple(feats), start + 1)


@pytest.mark.parametrize("seed", range(16))
def test_counting_with_one_hot_groups_three_copies_negative_ranges_and_a_depth_limit(seed, monkeypatch):
    """One-hot protected attribute or feature, k = 2 or 3 copies (the base copy is chosen), negative grid values,
    a small depth limit (credits of dropped and counterexample partitions kept): after every batch the certified
    count is at most the fair individuals and every waiting partition's credit at most its own."""
    monkeypatch.setattr(analysis, "TRIAL_EVERY", 3)
    rng = np.random.default_rng(seed)
    k = 2 + seed % 2
    dom = _mixed_domain(rng, bool(seed % 4 // 2), bool(seed % 8 // 4), k)
    sizes = [dom.n_inputs] + [[5], [4, 3], [3, 3, 3]][seed % 3] + [1]
    layers = [(rng.normal(size=(b, a)) * 3, rng.normal(size=b) * 3) for a, b in zip(sizes, sizes[1:])]
    fq = FairQuant(layers, dom, 1, max_depth=(None, 3)[seed % 2], sample_depth=seed % 3, samples=2, seed=seed,
                   batch=1 + seed % 4, bounds="linear", refine_counterexamples=seed % 5 > 0,
                   first_depth=(None, 2)[seed % 2], count_inside=True, tighten=(False, "auto", True)[seed % 3],
                   order=("depth-first", "breadth-first")[seed // 8])
    ranges = [range(int(f.lo), int(f.hi) + 1) for f in dom.features]
    ranges[1] = [int(fq.values[0])]
    pts = np.array(list(itertools.product(*ranges)), dtype=float)
    outs = []
    for v in fq.values:
        X = pts.copy()
        X[:, 1] = v
        outs.append([favourable(o) for o in exact_outputs(fq.layers_np, dom.encode(X))])
    fair_at = (np.array(outs) == np.array(outs)[:1]).all(axis=0)
    lookup = {tuple(np.delete(p, 1)): bool(f) for p, f in zip(pts, fair_at)}
    fair, total = int(fair_at.sum()), len(pts)
    assert fq.counts.total == total

    def check(a):
        assert a.counts.fair_proven <= fair and a.counts.unfair <= total - fair
        lbs = np.concatenate([a.pending.lb] + [d[0] for d in a.deferred])
        ubs = np.concatenate([a.pending.ub] + [d[1] for d in a.deferred])
        credits = np.concatenate([a.pending.credit] + [d[4] for d in a.deferred])
        for lb, ub, cr in zip(lbs, ubs, credits):
            if cr:
                assert cr <= _fair_in(lb, ub, lookup, 1)
        r = a.rates()
        assert r["undecided_cex"] >= 0 and r["undecided_open"] >= 0

    fq.run(on_step=check)
    if fq.stopped == "complete" and fq.rates()["undecided"] == 0:
        assert fq.rates()["certified"] == Fraction(fair, total)


def test_auto_tightening_tries_both_and_ends_exact(monkeypatch):
    """``tighten="auto"``: trial batches analyse both ways (recorded in ``trials``, proven per second ≥ 0), the
    choice is one of the two, and a run to the end gives the same exact counts as either choice alone; on a network
    with one hidden layer there is nothing to tighten, so no trial is made."""
    monkeypatch.setattr(analysis, "TRIAL_EVERY", 2)
    rng = np.random.default_rng(7)
    dom = nnet_domain(["a", "p", "b"], [0, 0, 0], [9, 1, 11])
    results = {}
    for tighten in (False, True, "auto"):
        layers = tie_net(np.random.default_rng(3), 3, [4, 3])
        fq = FairQuant(layers, dom, 1, max_depth=None, batch=2, bounds="linear", refine_counterexamples=True,
                       count_inside=True, tighten=tighten, seed=1)
        fq.run()
        assert fq.stopped == "complete"
        results[tighten] = fq.rates()
        if tighten == "auto":
            assert fq.adaptive and len(fq.trials) >= 2
            assert all(a >= 0 and b >= 0 for _, a, b in fq.trials)
            assert fq.tighten in (True, False)
    assert results[False] == results[True] == results["auto"]
    shallow = FairQuant(tie_net(rng, 3, [4]), dom, 1, bounds="linear", count_inside=True, tighten="auto")
    shallow.run()
    assert not shallow.adaptive and not shallow.trials
    with pytest.raises(ValueError, match="tighten"):
        FairQuant(tie_net(rng, 3, [4]), dom, 1, bounds="linear", tighten="sometimes")
