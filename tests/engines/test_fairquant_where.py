"""Issue 33 item 5, the engine side: where a fairquant refinement's undecided individuals are
(``FairQuant.undecided_where`` / ``undecided_bins``), checked against a brute-force enumeration of tiny grids — every
individual not in a partition decided fair / unfair, and not the witness of its counterexample partition, is
undecided; the bins of every feature sum to the undecided rates exactly."""
import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("torch")

from fairaudit.engines.fairquant.analysis import Domain, Feature, FairQuant, nnet_domain  # noqa: E402
from fairaudit.engines.fairquant.where import MAX_BINS, feature_bins  # noqa: E402


def _net(sizes, seed):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(b, a)).round(3), (rng.normal(size=b) * 0.5).round(3))
            for a, b in zip(sizes, sizes[1:])]


def _brute(fq: FairQuant, log: list) -> dict:
    """Per feature index: ``(counterexample, limit)`` undecided fractions per bin, by enumerating the grid."""
    dom, j = fq.domain, fq.j
    axes = [range(int(f.lo), int(f.hi) + 1) if k != j else [int(f.lo)] for k, f in enumerate(dom.features)]
    grid = np.array(list(itertools.product(*axes)), dtype=float)  # the protected attribute pinned: one per individual
    free = [k for k in range(len(dom.features)) if k != j]

    def inside(lb, ub):
        return ((grid[:, free] >= lb[free]) & (grid[:, free] <= ub[free])).all(axis=1)

    decided = np.zeros(len(grid), dtype=bool)
    cex = np.zeros(len(grid), dtype=bool)
    for lb, ub, _, status, _ in log:
        if status in ("fair", "unfair"):
            decided |= inside(lb, ub)
        elif status == "counterexample":
            box = inside(lb, ub)
            witnesses = [c.point for c in fq.counterexamples if inside(lb, ub)[_index(grid, c.point, free)]]
            assert len(witnesses) == 1  # refinement stopped at it: one witness kept (random probes: inside)
            box[_index(grid, witnesses[0], free)] = False  # counted unfair
            decided[_index(grid, witnesses[0], free)] = True
            cex |= box
    limit = ~decided & ~cex
    n = len(grid)
    out = {}
    for k in free:
        bins = feature_bins(dom.features[k])
        in_bin = [(grid[:, k] >= lo) & (grid[:, k] <= hi) for lo, hi in bins]
        out[k] = ([Fraction(int((cex & b).sum()), n) for b in in_bin],
                  [Fraction(int((limit & b).sum()), n) for b in in_bin])
    return out


def _index(grid, point, free) -> int:
    hits = np.flatnonzero((grid[:, free] == np.asarray(point, dtype=float)[free]).all(axis=1))
    assert len(hits) == 1
    return int(hits[0])


def _check(fq: FairQuant, log: list):
    got = fq.undecided_bins()
    want = _brute(fq, log)
    assert got == want
    r = fq.rates()
    for cex, limit in got.values():  # every feature's bins sum to the rates exactly
        assert sum(cex) == r["undecided_cex"] and sum(limit) == r["undecided_open"]
        assert sum(cex) + sum(limit) == r["undecided"]
    summary = json.loads(json.dumps(fq.summary()))["undecided_where"]
    assert summary["undecided"] == pytest.approx(float(r["undecided"]))
    for feat in summary["features"]:
        assert sum(b["domain"] for b in feat["bins"]) == pytest.approx(1.0)
        assert sum(b["undecided"] for b in feat["bins"]) == pytest.approx(float(r["undecided"]))
    return got


@pytest.mark.parametrize("steps", [1, 3, 8, None])
def test_integer_grid_counterexamples_depth_limit_and_pending(steps):
    """A random 4-8-6-1 network on a 10·2·8·13 grid, shallow depth limit and early sampling: partitions dropped with
    a counterexample, at the depth limit and still pending (cut after ``steps`` batches) all land in the bins."""
    layers = _net([4, 8, 6, 1], 7)
    dom = nnet_domain(["a", "p", "b", "c"], [0, 0, 0, 3], [9, 1, 7, 15])
    log: list = []
    fq = FairQuant(layers, dom, "p", max_depth=5, sample_depth=2, samples=10, batch=3, tolerance=0, keep=10 ** 6,
                   log=log, seed=3)
    if steps is None:
        fq.run()
    else:
        for _ in range(steps):
            fq.step()
    got = _check(fq, log)
    assert len(got) == 3 and [len(feature_bins(dom.features[k])) for k in got] == [MAX_BINS, 8, MAX_BINS]
    if steps is None:
        r = fq.rates()
        assert r["undecided_cex"] > 0 and r["undecided_open"] > 0  # both kinds occur in this case


def test_one_hot_group_bins_are_its_categories():
    dom = Domain((Feature("age", "int", 0.0, 11.0, 0), Feature("job", "cat", 0.0, 3.0, 1, ("a", "b", "c", "d")),
                  Feature("sex", "int", 0.0, 1.0, 5)), 6)
    layers = _net([6, 7, 1], 11)
    log: list = []
    fq = FairQuant(layers, dom, "sex", max_depth=3, sample_depth=1, samples=6, batch=2, tolerance=0, keep=10 ** 6,
                   log=log, seed=1)
    fq.run()
    _check(fq, log)
    job = next(f for f in fq.undecided_where()["features"] if f["name"] == "job")
    assert [b["value"] for b in job["bins"]] == ["a", "b", "c", "d"]


def test_real_features_sum_to_the_rates_and_rank_by_unevenness():
    """With a real-valued feature a point has no mass: the bins (dyadic eighths of its range) still sum exactly to
    the undecided rates; features are ranked by how unevenly the undecided mass is spread."""
    dom = Domain((Feature("x0", "real", 0.0, 100.0, 0), Feature("x1", "int", 0.0, 1.0, 1),
                  Feature("x2", "real", -1.0, 9.0, 2)), 3)
    layers = _net([3, 6, 1], 2)
    fq = FairQuant(layers, dom, "x1", max_depth=6, sample_depth=3, batch=4, tolerance=0)
    for _ in range(5):
        fq.step()
    got = fq.undecided_bins()
    r = fq.rates()
    for cex, limit in got.values():
        assert sum(cex) == r["undecided_cex"] and sum(limit) == r["undecided_open"]
    feats = fq.undecided_where()["features"]
    assert [f["unevenness"] for f in feats] == sorted((f["unevenness"] for f in feats), reverse=True)
    assert all(0 <= f["unevenness"] <= 1 for f in feats)


@pytest.mark.parametrize("steps", [2, 6, 40])
def test_the_second_rounds_queue_counts_as_left_by_the_limit(steps):
    """Two rounds (counterexample partitions set aside, refined later): the queue for the second round is undecided
    mass "left by the depth or time limit" until it is analysed; the bins still sum to the rates exactly."""
    layers = _net([4, 8, 6, 1], 7)
    dom = nnet_domain(["a", "p", "b", "c"], [0, 0, 0, 3], [9, 1, 7, 15])
    fq = FairQuant(layers, dom, "p", max_depth=None, sample_depth=2, samples=10, batch=3, tolerance=0, seed=3,
                   refine_counterexamples=True, first_depth=4)
    for _ in range(steps):
        fq.step()
    r = fq.rates()
    for cex, limit in fq.undecided_bins().values():
        assert sum(cex) == r["undecided_cex"] and sum(limit) == r["undecided_open"]


@pytest.mark.parametrize("steps", [2, 6, None])
def test_with_counting_the_bins_sum_to_the_reported_undecided(steps):
    """``count_inside``: a partition holds only its individuals not yet proven fair; spread evenly over it, the bins
    are integers that sum exactly to the undecided count the rates report, on every feature."""
    dom = nnet_domain(["a", "p", "b", "c"], [0, 0, 0, 0], [40, 1, 30, 20])
    fq = FairQuant(_net([4, 8, 1], 5), dom, 1, max_depth=None, bounds="linear", refine_counterexamples=True,
                   first_depth=6, batch=16, count_inside=True, seed=0)
    for _ in range(steps or 0):
        fq.step()
    if steps is None:
        fq.run(time_limit=2.0)
    r = fq.rates()
    got = fq.undecided_bins()
    for k, (cex, limit) in got.items():
        assert sum(cex) + sum(limit) == r["undecided"]
        assert all(x >= 0 for x in cex + limit)
    where = fq.undecided_where()
    assert where["undecided"] == pytest.approx(float(r["undecided"]))
    json.dumps(where)
