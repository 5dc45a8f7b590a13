"""The fairquant refinement (``fairaudit.engines.fairquant.analysis.FairQuant``): the notes' worked examples (§B6.1–§B6.3,
§B6.5) with their exact answers, and soundness against an exhaustive enumeration of tiny integer grids."""
import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from fairaudit.engines.fairquant.analysis import Domain, Feature, FairQuant, concrete_outputs, nnet_domain  # noqa: E402
from fairaudit.models.nnet import read_nnet  # noqa: E402

MODELS = Path("/work/shared/benchmarks/fairquant/models")
REPO_EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "example.nnet"


def example_path() -> Path:
    for p in (REPO_EXAMPLE, MODELS / "example.nnet"):
        if p.exists():
            return p
    pytest.skip("example.nnet is not available")


def arr(*rows):
    return np.array(rows, dtype=float)


# ------------------------------------------------------------------------------------------ §B6.1
EXAMPLE_LAYERS = [(arr([2.0, 0.5, 1.2], [-0.2, 0.7, 0.4]), np.zeros(2)), (arr([0.2, -1.0]), np.zeros(1))]
EXAMPLE_DOMAIN = nnet_domain(["x0", "x1", "x2"], [1, 0, 0], [5, 1, 5])

# pop order of the notes' trace table (x1 range, x3 range, result): the artifact's DFS, upper half first
TRACE = [((1, 5), (0, 5), "undecided"), ((4, 5), (0, 5), "fair"), ((1, 3), (0, 5), "undecided"),
         ((3, 3), (0, 5), "fair"), ((1, 2), (0, 5), "undecided"), ((1, 2), (3, 5), "undecided"),
         ((2, 2), (3, 5), "undecided"), ((2, 2), (5, 5), "unfair"), ((2, 2), (3, 4), "undecided"),
         ((2, 2), (4, 4), "unfair"), ((2, 2), (3, 3), "fair"), ((1, 1), (3, 5), "undecided"),
         ((1, 1), (5, 5), "fair"), ((1, 1), (3, 4), "undecided"), ((1, 1), (4, 4), "fair"),
         ((1, 1), (3, 3), "unfair"), ((1, 2), (0, 2), "undecided"), ((2, 2), (0, 2), "fair"),
         ((1, 1), (0, 2), "undecided"), ((1, 1), (2, 2), "unfair"), ((1, 1), (0, 1), "undecided"),
         ((1, 1), (1, 1), "unfair"), ((1, 1), (0, 0), "unfair")]


def test_running_example_trace_one_partition_at_a_time():
    """§B6.1 popped one at a time: the same 23 partitions in the same order, with the same results — except the
    pair (x1, x3) = (1, 0), whose output o(x') = 0.2·2.5 − 0.5 is 0 with decimal weights (unfair) but, on the
    float64 weights the network has (0.2 and 0.7 are not binary fractions), exactly 3/2⁵⁵ > 0: fair, as the
    model's float prediction and the artifact say (83.33% / 16.66%). Its float output lies within the proven
    rounding margin of 0, so it is decided in exact rational arithmetic: 25/30 certified, 5/30 unfair, none
    undecided."""
    log = []
    fq = FairQuant(EXAMPLE_LAYERS, EXAMPLE_DOMAIN, 1, batch=1, log=log)
    rates = fq.run()
    got = [((int(lb[0]), int(ub[0])), (int(lb[2]), int(ub[2])), status) for lb, ub, _, status, _ in log]
    expected = TRACE[:-1] + [((1, 1), (0, 0), "fair")]
    assert got == expected
    assert fq.pops == 23 and fq.counts.total == 30
    assert rates["certified"] == Fraction(25, 30) and rates["unfair"] == Fraction(5, 30)
    assert rates["undecided"] == 0 and fq.counts.exact == 1 and fq.stopped == "complete"
    assert sorted((c.point[0], c.point[2]) for c in fq.counterexamples) == [(1, 1), (1, 2), (1, 3), (2, 4), (2, 5)]
    assert [s for *_, s in log[:3]] == [0, None, 0]  # the root and [1,3] split on x1 (index 0)


def test_running_example_from_the_file_in_batches():
    net = read_nnet(example_path())
    dom = nnet_domain(["x0", "x1", "x2"], net.mins, net.maxs)
    for batch in (1, 3, 1024):
        fq = FairQuant(net.layers, dom, "x1", batch=batch)
        r = fq.run()
        assert (r["certified"], r["unfair"], r["undecided"]) == (Fraction(5, 6), Fraction(1, 6), 0)
        assert fq.pops == 23 and fq.counts.exact == 1


# ------------------------------------------------------------------------------------------ §B6.2
LINEAR = [(arr([1.0, -40.0, 0.0]), np.array([100.0])), (arr([1.0]), np.array([-130.5]))]
LINEAR_DOMAIN = nnet_domain(["x0", "x1", "x2"], [0, 0, 0], [99, 1, 9])


@pytest.mark.parametrize("max_depth, rates, pops", [
    (20, (Fraction(60, 100), Fraction(40, 100), 0), 23),
    (3, (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)), 11),
    (0, (0, 0, 1), 1),
])
def test_linear_network_exact_rates(max_depth, rates, pops):
    log = []
    fq = FairQuant(LINEAR, LINEAR_DOMAIN, 1, max_depth=max_depth, batch=1, log=log)
    r = fq.run()
    assert (r["certified"], r["unfair"], r["undecided"]) == rates
    assert fq.pops == pops
    assert all(split in (None, 0) for *_, split in log)  # x3 (smear 0) is never split
    assert r["undecided_open"] == r["undecided"] and r["undecided_cex"] == 0


def test_linear_network_first_pops_match_the_trace():
    log = []
    FairQuant(LINEAR, LINEAR_DOMAIN, 1, batch=1, log=log).run()
    got = [((int(lb[0]), int(ub[0])), status) for lb, ub, _, status, _ in log]
    assert got[:12] == [((0, 99), "undecided"), ((50, 99), "undecided"), ((75, 99), "fair"),
                        ((50, 74), "undecided"), ((63, 74), "undecided"), ((69, 74), "undecided"),
                        ((72, 74), "fair"), ((69, 71), "undecided"), ((71, 71), "fair"), ((69, 70), "unfair"),
                        ((63, 68), "unfair"), ((50, 62), "unfair")]
    assert got[-1] == ((0, 24), "fair")


def test_linear_network_counterexample_sampling():
    """sample_depth 1 with random sampling inside each partition: a partition with a counterexample is not split;
    every counterexample lies in the domain and really flips; its witness (one individual) counts as unfair."""
    fq = FairQuant(LINEAR, LINEAR_DOMAIN, 1, sample_depth=1, seed=3)
    r = fq.run()
    # kept: each sampled witness, and the lowest corner of each partition proven unfair
    assert fq.counts.cex_partitions >= 1 and len(fq.counterexamples) >= fq.counts.cex_partitions
    for cex in fq.counterexamples:
        x = np.array(cex.point)
        assert 31 <= x[0] <= 70 and 0 <= x[2] <= 9 and x[0] == int(x[0])  # truly unfair individuals
        assert cex.decisions[0] != cex.decisions[1]
        outs = [concrete_outputs(LINEAR, np.array([[x[0], v, x[2]]]))[0] for v in (0, 1)]
        assert outs == pytest.approx(list(cex.outputs))
    assert fq.counts.cex_witnesses == fq.counts.cex_partitions  # random samples lie inside their partition
    assert r["unfair"] == Fraction(fq.counts.cex_partitions + fq.counts.falsified, 1000)
    assert r["certified"] <= Fraction(600, 1000) and r["unfair"] <= Fraction(400, 1000)
    assert r["undecided_cex"] > 0


def test_artifact_probes_stop_refinement_but_count_only_witnesses_inside():
    """§B6.2 with min_check_depth 1 and the artifact's probes ⌊s·(lb+ub)/10⌋: both depth-1 halves hit, 3 pops
    (the first hit of [50,99] is x1 = 44, outside it, but x1 = 59 is inside). With 4 probes only (s = 0..3:
    x1 = 0, 14, 29, 44, all outside [50,99]) the partition still stops, but no witness counts as unfair."""
    fq = FairQuant(LINEAR, LINEAR_DOMAIN, 1, sample_depth=1, probes="artifact", batch=1)
    r = fq.run()
    assert fq.pops == 3 and fq.counts.cex_partitions == 2 and fq.counts.cex_witnesses == 2
    assert r["unfair"] == Fraction(2, 1000) and r["certified"] == 0
    assert sorted(c.point[0] for c in fq.counterexamples) == [34, 59]  # the witnesses inside are kept
    fq = FairQuant(LINEAR, LINEAR_DOMAIN, 1, sample_depth=1, max_depth=1, samples=4, probes="artifact", batch=1)
    r = fq.run()
    assert fq.pops == 3 and fq.counts.cex_partitions == 1 and fq.counts.cex_witnesses == 0
    assert r["unfair"] == 0 and r["undecided"] == 1 and [c.point[0] for c in fq.counterexamples] == [44]


def test_linear_network_on_a_real_domain():
    """§B6.2 continuous variant: x1 ∈ [0, 100] real (midpoint bisection, widths as volume), x3 ∈ [0, 9] real.
    Depth 10: 307/512, 51/128, 1/512 in 39 pops; depth 3: 1/2, 1/4, 1/4 in 11 pops."""
    dom = Domain((Feature("x0", "real", 0.0, 100.0, 0), Feature("x1", "int", 0.0, 1.0, 1),
                  Feature("x2", "real", 0.0, 9.0, 2)), 3)
    for depth, rates, pops in ((10, (Fraction(307, 512), Fraction(51, 128), Fraction(1, 512)), 39),
                               (3, (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)), 11)):
        fq = FairQuant(LINEAR, dom, 1, max_depth=depth, batch=1)
        r = fq.run()
        assert (r["certified"], r["unfair"], r["undecided"]) == rates and fq.pops == pops


# ------------------------------------------------------------------------------------------ §B6.3
def test_trivial_certificates():
    unfair = [(arr([1.0, 10.0]), np.zeros(1)), (arr([1.0]), np.array([-5.0]))]
    fq = FairQuant(unfair, nnet_domain(["x0", "x1"], [0, 0], [4, 1]), 1)
    assert fq.run()["unfair"] == 1 and fq.pops == 1
    fair = [(arr([1.0, 0.0]), np.array([-100.0]))]  # an affine network: o = x1 − 100 + 0·x2
    fq = FairQuant(fair, nnet_domain(["x0", "x1"], [0, 0], [99, 1]), 1)
    assert fq.run()["certified"] == 1 and fq.pops == 1


# ------------------------------------------------------------------------------------------ oracle
def enumerate_truth(layers, domain: Domain, j: int, values) -> tuple[int, int]:
    """(fair, unfair) individuals of the grid by exhaustive enumeration (the attribute's dimension excluded)."""
    ranges = [range(int(f.lo), int(f.hi) + 1) if i != j else [values[0]] for i, f in enumerate(domain.features)]
    pts = np.array(list(itertools.product(*ranges)), dtype=float)
    outs = []
    for v in values:
        p = pts.copy()
        p[:, j] = v
        outs.append(concrete_outputs(layers, domain.encode(p)) > 0)
    outs = np.array(outs)
    same = (outs == outs[:1]).all(axis=0)
    return int(same.sum()), int((~same).sum())


def random_net(rng, n_inputs, hidden):
    sizes = [n_inputs] + hidden + [1]
    return [(rng.normal(size=(b, a)), rng.normal(size=b) * 0.5) for a, b in zip(sizes, sizes[1:])]


@pytest.mark.parametrize("seed", range(8))
def test_rates_bracket_the_truth_on_tiny_grids(seed):
    """certified ≤ true fair fraction ≤ 1 − unfair, with the depth limit and sampling on (so all three parts
    occur), and exactly the truth with enough depth; points of certified partitions pass the flip test and
    partitions called unfair are unfair at every point."""
    rng = np.random.default_rng(seed)
    hi = [int(v) for v in rng.integers(2, 7, 4)]
    k = 2 + seed % 2  # a binary and a three-valued protected attribute
    hi[1] = k - 1
    dom = nnet_domain([f"x{i}" for i in range(4)], [0, 0, 0, 0], hi)
    layers = random_net(rng, 4, [6, 4])
    fair, unfair = enumerate_truth(layers, dom, 1, dom.values_of(1))
    total = fair + unfair
    log = []
    fq = FairQuant(layers, dom, 1, max_depth=4, sample_depth=2, samples=3, seed=seed, log=log, batch=5,
                   corners=seed % 3 == 0, order=("depth-first", "breadth-first")[seed % 2])
    r = fq.run()
    assert fq.counts.total == total
    assert r["certified"] <= Fraction(fair, total) <= 1 - r["unfair"]
    assert r["certified"] + r["unfair"] + r["undecided"] == 1
    for lb, ub, _, status, _ in log:
        if status in ("fair", "unfair"):
            ranges = [range(int(a), int(b) + 1) for a, b in zip(lb, ub)]
            pts = np.array(list(itertools.product(*ranges)), dtype=float)
            outs = fq._outputs(pts) > 0
            same = (outs == outs[:, :1]).all(axis=1)
            assert same.all() if status == "fair" else (~same).all()
    for cex in fq.counterexamples:
        out = fq._outputs(np.array([cex.point])) > 0
        assert not (out == out[:, :1]).all()
    exact = FairQuant(layers, dom, 1, batch=7).run()
    assert (exact["certified"], exact["unfair"]) == (Fraction(fair, total), Fraction(unfair, total))


def test_one_hot_group_domain_against_enumeration():
    """A categorical feature as a one-hot group (codes split as integers; the group's bound is exact), and a
    categorical protected attribute with three values."""
    rng = np.random.default_rng(11)
    dom = Domain((Feature("age", "int", 0.0, 5.0, 0), Feature("job", "cat", 0.0, 3.0, 1, ("a", "b", "c", "d")),
                  Feature("race", "cat", 0.0, 2.0, 5, ("r0", "r1", "r2"))), 8)
    for trial in range(4):
        layers = random_net(rng, 8, [5])
        fair, unfair = enumerate_truth(layers, dom, 2, [0.0, 1.0, 2.0])
        fq = FairQuant(layers, dom, "race", batch=4)
        r = fq.run()
        assert (r["certified"], r["unfair"]) == (Fraction(fair, 24), Fraction(unfair, 24)), trial
        assert dom.decode((3.0, 1.0, 2.0)) == {"age": 3, "job": "b", "race": "r2"}


def test_extremes_compares_only_the_lowest_and_highest_value():
    dom = nnet_domain(["x0", "x1"], [0, 0], [3, 4])
    assert dom.values_of(1) == [0, 1, 2, 3, 4] and dom.values_of(1, "extremes") == [0, 4]
    fq = FairQuant([(arr([1.0, 0.0]), np.array([-1.5]))], dom, 1, values="extremes")
    assert fq.k == 2 and fq.run()["certified"] == 1


def test_refuses_what_it_cannot_analyse():
    with pytest.raises(ValueError, match="single output"):
        FairQuant([(arr([1.0, 0.0], [0.0, 1.0]), np.zeros(2))], nnet_domain(["a", "b"], [0, 0], [1, 1]), 1)
    with pytest.raises(ValueError, match="single value"):
        FairQuant([(arr([1.0, 0.0]), np.zeros(1))], nnet_domain(["a", "b"], [0, 0], [1, 0]), 1)


# ------------------------------------------------------------------------------------------ §B6.5
@pytest.mark.skipif(not (MODELS / "compas" / "compas-1.nnet").exists(), reason="benchmark models not available")
def test_compas_1_regression():
    net = read_nnet(MODELS / "compas" / "compas-1.nnet")
    fq = FairQuant(net.layers, nnet_domain([f"x{i}" for i in range(6)], net.mins, net.maxs), 3)
    fq.run()
    assert (fq.counts.certified, fq.counts.unfair, fq.counts.total, fq.pops) == (607, 17, 624, 93)


@pytest.mark.skipif(not (MODELS / "german" / "GC-4.nnet").exists(), reason="benchmark models not available")
def test_certified_and_unfair_partitions_of_a_real_network_hold_at_random_points():
    """GC-4 (20 inputs, 4.35e14 individuals): random individuals of certified partitions keep their decision when
    the age bit flips, of unfair partitions change it (the model's own prediction), and every counterexample flips."""
    from fairaudit.models.nnet import NNetModel

    net = read_nnet(MODELS / "german" / "GC-4.nnet")
    model = NNetModel(net)
    dom = nnet_domain(model.feature_names, net.mins, net.maxs)
    log = []
    fq = FairQuant(net.layers, dom, 11, max_depth=12, sample_depth=8, log=log, seed=1)
    fq.run()
    rng = np.random.default_rng(0)
    checked = 0
    for lb, ub, _, status, _ in log:
        if status not in ("fair", "unfair"):
            continue
        pts = rng.integers(lb.astype(np.int64), ub.astype(np.int64) + 1, size=(20, len(lb))).astype(float)
        frames = [pd.DataFrame(np.where(np.arange(len(lb)) == 11, v, pts), columns=model.feature_names)
                  for v in (0.0, 1.0)]
        same = model.predict(frames[0]) == model.predict(frames[1])
        assert same.all() if status == "fair" else (~same).all()
        checked += 1
    assert checked > 10 and fq.counts.certified > 0.9 * fq.counts.total
    for cex in fq.counterexamples:
        pair = pd.DataFrame([cex.point, cex.point], columns=model.feature_names).assign(x11=[0.0, 1.0])
        assert len(set(model.predict(pair).tolist())) == 2


@pytest.mark.parametrize("seed", range(3))
def test_the_result_does_not_depend_on_order_or_batch(seed):
    """Run to the end with deterministic probes, the counts are the same whichever order and batch size."""
    rng = np.random.default_rng(100 + seed)
    dom = nnet_domain([f"x{i}" for i in range(5)], [0] * 5, [9, 1, 12, 7, 15])
    layers = random_net(rng, 5, [8, 6])
    results = set()
    for order, batch in (("depth-first", 1), ("depth-first", 64), ("breadth-first", 7), ("breadth-first", 4096)):
        fq = FairQuant(layers, dom, 1, max_depth=9, sample_depth=4, probes="artifact", order=order, batch=batch,
                       tolerance=0)
        fq.run()
        c = fq.counts
        results.add((c.certified, c.falsified, c.cex_partitions, c.cex_witnesses, c.cex_mass, fq.pops))
    assert len(results) == 1


def test_fractional_bounds_make_a_real_input():
    dom = nnet_domain(["a", "b", "c"], [0, 0, -0.5], [10, 1, 0.5])
    assert [f.kind for f in dom.features] == ["int", "int", "real"]
    fq = FairQuant([(arr([1.0, 0.0, 1.0]), np.array([-20.0]))], dom, 1)
    assert fq.run()["certified"] == 1 and fq.counts.unit == 0


# ------------------------------------------------------------------------------------------ float64 rounding
def _exact_output(layers, x) -> Fraction:
    """The network's output at ``x`` in exact rational arithmetic (the weights as the floats they are)."""
    h = [Fraction(float(v)) for v in x]
    for k, (W, b) in enumerate(layers):
        h = [sum((Fraction(float(w)) * v for w, v in zip(row, h)), Fraction(float(c))) for row, c in zip(W, b)]
        if k < len(layers) - 1:
            h = [max(v, Fraction(0)) for v in h]
    return h[0]


# exact output 0 (protected value 0: unfavourable) and 1e-9 (value 1: favourable) for every x near 1e8: every
# individual is unfair; float64 computes both outputs near −6e-9 (fl(x + 0.1) − x ≠ 0.1)
CANCEL_LAYERS = [(arr([1.0, 0.0], [1.0, 0.0], [0.0, 1.0]), np.array([0.1, 0.0, 0.0])),
                 (arr([1.0, -1.0, 1e-9]), np.array([-0.1]))]
CANCEL_DOMAIN = nnet_domain(["x0", "x1"], [10 ** 8, 0], [10 ** 8 + 7, 1])


def test_cancellation_is_never_certified():
    """The relative margin alone certified this network 100 % fair (both float outputs negative); exactly none
    of it is fair. The float outputs lie within the proven rounding margin of 0, so every individual is decided in
    exact arithmetic: an output of exactly 0 (protected value 0) is unfavourable, 1e-9 favourable — all unfair."""
    outs = [_exact_output(CANCEL_LAYERS, [10 ** 8 + i, p]) for i in range(8) for p in (0, 1)]
    assert all(o == 0 for o in outs[0::2]) and all(o > 0 for o in outs[1::2])  # the oracle: all unfair
    fq = FairQuant(CANCEL_LAYERS, CANCEL_DOMAIN, "x1")
    r = fq.run()
    assert r["certified"] == 0 and r["unfair"] == 1 and r["undecided"] == 0 and fq.counts.exact == 8
    assert [c.decisions for c in fq.counterexamples] == [(0, 1)] * 8


def test_rounding_margins_bound_the_float_error_and_the_bounds_hold():
    """On random networks with inputs up to 1e6: every concrete float64 output is within the concrete margin of
    the exact rational output, and the exact outputs at random points of random boxes lie inside the computed
    bounds widened by the symbolic margin."""
    from fairaudit.engines.fairquant.analysis import Box, concrete_outputs, forward_bounds, input_magnitudes, rounding_margins

    rng = np.random.default_rng(11)
    for trial in range(6):
        sizes = [3, 7, 5, 1] if trial % 2 else [3, 6, 1]
        layers = [(rng.normal(size=(b, a)) * 3, rng.normal(size=b) * 100) for a, b in zip(sizes, sizes[1:])]
        dom = nnet_domain(["x0", "x1", "x2"], [-10 ** 6, 0, -5], [10 ** 6, 1, 5])
        sym_margin, point_margin = rounding_margins(layers, input_magnitudes(dom))
        pts = np.column_stack([rng.integers(-10 ** 6, 10 ** 6, 20), rng.integers(0, 2, 20), rng.integers(-5, 6, 20)])
        pts = pts.astype(float)
        got = concrete_outputs(layers, pts)
        for x, g in zip(pts, got):
            assert abs(Fraction(float(g)) - _exact_output(layers, x)) <= Fraction(point_margin)
        lo = np.sort(pts[:4], axis=0)[[0]]
        hi = np.sort(pts[:4], axis=0)[[-1]]
        box = Box(torch.from_numpy(lo), torch.from_numpy(hi))
        low, high, _ = forward_bounds([(torch.from_numpy(W), torch.from_numpy(b)) for W, b in layers], box)
        inside = lo + rng.random((10, 3)) * (hi - lo)
        for x in inside:
            e = _exact_output(layers, x)
            assert Fraction(float(low[0, 0])) - Fraction(sym_margin) <= e <= Fraction(float(high[0, 0])) + Fraction(sym_margin)


# ------------------------------------------------------------------------------------------ exact ties
def _enumerate_exactly(layers, domain: Domain, protected: int) -> tuple[int, int]:
    """(fair, unfair) individuals of an integer grid, each output in exact rational arithmetic on the float
    weights, decided as the models decide (favourable iff output > 0)."""
    ranges = [range(int(f.lo), int(f.hi) + 1) for f in domain.features]
    values = list(ranges[protected])
    ranges[protected] = [values[0]]
    fair = unfair = 0
    for point in itertools.product(*ranges):
        decisions = set()
        for v in values:
            x = list(point)
            x[protected] = v
            decisions.add(_exact_output(layers, x) > 0)
        fair, unfair = (fair + 1, unfair) if len(decisions) == 1 else (fair, unfair + 1)
    return fair, unfair


def test_the_papers_example_network_is_decided_exactly():
    """The paper's running example as shipped (``example.nnet``) was 1/30 undecided: one individual's float output
    is within rounding of 0. Decided in exact arithmetic on its float64 weights, nothing is left undecided and the
    rates are the exact enumeration's: 25/30 fair, 5/30 unfair (the notes' float64 answer, 83.33 % / 16.66 %; with
    the file's decimal weights read as decimals that output would be exactly 0 and the answer 80 % / 20 %)."""
    path = MODELS / "example.nnet" if (MODELS / "example.nnet").exists() else example_path()
    net = read_nnet(path)
    dom = nnet_domain(["x0", "x1", "x2"], net.mins, net.maxs)
    fq = FairQuant(net.layers, dom, "x1")
    r = fq.run()
    assert r["undecided"] == 0 and fq.stopped == "complete"
    fair, unfair = _enumerate_exactly(net.layers, dom, 1)
    assert (fair, unfair) == (25, 5)
    assert (r["certified"], r["unfair"]) == (Fraction(fair, 30), Fraction(unfair, 30))
    tie = [1.0, 1.0, 0.0]  # (x1, x3) = (1, 0) with the protected attribute at 1: 0.2·2.5 − (0.7 − 0.2)
    assert _exact_output(net.layers, tie) == Fraction(3, 2 ** 55)


# o = ReLU(x0 + x1) − 2 over x0 ∈ {0..4}, protected x1 ∈ {0, 1}: the output is exactly 0 at (2, 0) and (1, 1)
TIE_LAYERS = [(arr([1.0, 1.0]), np.zeros(1)), (arr([1.0]), np.array([-2.0]))]
TIE_DOMAIN = nnet_domain(["x0", "x1"], [0, 0], [4, 1])


@pytest.mark.parametrize("batch", [1, 1024])
def test_an_output_exactly_zero_at_a_grid_point_is_decided(batch):
    """Outputs (x1 = 0 / 1) per x0: −2/−1, −1/0, 0/1, 1/2, 2/3. An output of exactly 0 is unfavourable (the
    models' rule: favourable iff > 0), so x0 = 1 is fair (both unfavourable) and x0 = 2 unfair: 4/5 fair, 1/5
    unfair, nothing undecided — before, both ties were left undecided."""
    assert _enumerate_exactly(TIE_LAYERS, TIE_DOMAIN, 1) == (4, 1)
    fq = FairQuant(TIE_LAYERS, TIE_DOMAIN, "x1", batch=batch)
    r = fq.run()
    assert (r["certified"], r["unfair"], r["undecided"]) == (Fraction(4, 5), Fraction(1, 5), 0)
    assert fq.counts.exact == 2
    (cex,) = fq.counterexamples
    assert cex.point == (2.0, 0.0) and cex.outputs == (0.0, 1.0) and cex.decisions == (0, 1)


def test_exact_outputs_agree_with_the_float_pass_and_the_oracle():
    from fairaudit.engines.fairquant.analysis import exact_outputs, favourable

    rng = np.random.default_rng(3)
    layers = [(rng.normal(size=(5, 3)), rng.normal(size=5)), (rng.normal(size=(1, 5)), rng.normal(size=1))]
    X = rng.integers(-5, 6, size=(20, 3)).astype(float)
    exact = exact_outputs(layers, X)
    assert exact == [_exact_output(layers, x) for x in X]
    assert np.allclose([float(e) for e in exact], concrete_outputs(layers, X), atol=1e-12)
    assert favourable(Fraction(1, 10 ** 30)) and not favourable(Fraction(0))
