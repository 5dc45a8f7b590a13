"""The second, back-substituted pass of fairquant (``fairaudit.engines.fairquant.linear`` and ``bounds="linear"``),
counterexample partitions refined to single individuals, and the device option: soundness against exact
enumeration (exact rational outputs) on random small networks with ties, and never less certified than the
symbolic intervals alone on the same partition."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fairaudit.engines.fairquant.analysis import (Box, FairQuant, concretize, exact_outputs, favourable,  # noqa: E402
                                                  forward_bounds, grid_depth, linear_margin, nnet_domain,
                                                  resolve_device)
from fairaudit.engines.fairquant.linear import ALPHAS, back_substitute, difference_forms  # noqa: E402


def tie_net(rng, n_inputs, hidden):
    """Weights and biases on a grid of halves: outputs of integer inputs are often exactly 0 (ties)."""
    sizes = [n_inputs] + hidden + [1]
    return [(rng.integers(-4, 5, size=(b, a)) / 2.0, rng.integers(-4, 5, size=b) / 2.0)
            for a, b in zip(sizes, sizes[1:])]


def exact_truth(layers, dom, j, values):
    """Per grid individual (the protected attribute at its lowest value): fair or not, in exact arithmetic."""
    ranges = [range(int(f.lo), int(f.hi) + 1) for f in dom.features]
    ranges[j] = [int(values[0])]
    pts = np.array(list(itertools.product(*ranges)), dtype=float)
    outs = []
    for v in values:
        X = pts.copy()
        X[:, j] = v
        outs.append([favourable(o) for o in exact_outputs(layers, X)])
    outs = np.array(outs)
    return pts, (outs == outs[:1]).all(axis=0)


def grid_points(lb, ub):
    return np.array(list(itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(lb, ub)])), dtype=float)


@pytest.mark.parametrize("seed", range(32))
def test_linear_refinement_is_exact_on_random_networks_with_ties(seed):
    """Run to the end (single individuals decided exactly): the counts are the exact enumeration's; every
    partition called fair is fair at every grid point, every one called unfair is unfair at every point (exact
    arithmetic), and certified ≤ truth ≤ 1 − unfair after every batch."""
    rng = np.random.default_rng(100 + seed)
    n = 3 + seed % 2
    hi = [int(v) for v in rng.integers(1, 5, n)]
    k = 2 + seed % 3 // 2
    hi[1] = k - 1
    dom = nnet_domain([f"x{i}" for i in range(n)], [0] * n, hi)
    hidden = [[5], [4, 3], [6, 4, 3]][seed % 3]
    layers = tie_net(rng, n, hidden)
    values = dom.values_of(1)
    pts, fair_at = exact_truth(layers, dom, 1, values)
    truth = Fraction(int(fair_at.sum()), len(pts))
    log = []
    fq = FairQuant(layers, dom, 1, max_depth=None, sample_depth=1, samples=2, seed=seed, batch=1 + seed % 4,
                   log=log, bounds="linear", refine_counterexamples=True,
                   order=("depth-first", "breadth-first")[seed % 2], first_depth=(None, 2, 3)[seed % 3])

    def bracket(a):
        r = a.rates()
        assert r["certified"] <= truth <= 1 - r["unfair"]

    r = fq.run(on_step=bracket)
    assert fq.stopped == "complete"
    assert (r["certified"], r["unfair"], r["undecided"]) == (truth, 1 - truth, 0)
    lookup = {tuple(p[[i for i in range(n) if i != 1]]): f for p, f in zip(pts, fair_at)}
    for lb, ub, _, status, _ in log:
        if status not in ("fair", "unfair"):
            continue
        for p in grid_points(lb, ub):
            key = tuple(p[[i for i in range(n) if i != 1]])
            assert lookup[key] == (status == "fair"), (lb, ub, status)


@pytest.mark.parametrize("seed", range(12))
def test_linear_never_decides_less_than_the_intervals(seed):
    """On the same partitions (random boxes of random networks, a one-hot group among the inputs on odd seeds),
    every partition the intervals decide, the linear pass decides the same way."""
    rng = np.random.default_rng(seed)
    hidden = [[8], [8, 6], [10, 6, 4]][seed % 3]
    layers = [(rng.normal(size=(b, a)), rng.normal(size=b)) for a, b in zip([4] + hidden, hidden + [1])]
    dom = nnet_domain(["a", "b", "c", "d"], [0, 0, -3, 0], [9, 1, 5, 20])
    kw = dict(max_depth=10, batch=64)
    old, new = FairQuant(layers, dom, 1, **kw), FairQuant(layers, dom, 1, bounds="linear", **kw)
    lo = rng.integers(np.array(dom.lower, dtype=int), np.array(dom.upper, dtype=int) + 1, size=(300, 4))
    hi = rng.integers(np.array(dom.lower, dtype=int), np.array(dom.upper, dtype=int) + 1, size=(300, 4))
    lb, ub = np.minimum(lo, hi).astype(float), np.maximum(lo, hi).astype(float)
    lb[:, 1], ub[:, 1] = 0, 1
    keep = (ub - lb)[:, [0, 2, 3]].sum(axis=1) > 0
    lb, ub = lb[keep], ub[keep]
    f0, u0, _, _ = old.classify(lb, ub)
    f1, u1, split, _ = new.classify(lb, ub)
    assert (f1 >= f0).all() and (u1 >= u0).all()
    assert not (f1 & u1).any()
    assert ((split >= 0) == (~f1 & ~u1)).all()
    assert new.classify(lb, ub)[0].sum() >= f0.sum()


def _boxes(rng, n, B, group=None):
    lo = rng.uniform(-2, 1, size=(B, n))
    hi = lo + rng.uniform(0, 2, size=(B, n))
    groups = []
    if group is not None:
        start, size = group
        lo[:, start:start + size] = hi[:, start:start + size] = 0
        allowed = rng.random((B, size)) < 0.6
        allowed[np.arange(B), rng.integers(0, size, B)] = True
        groups.append((start, size, torch.from_numpy(allowed)))
    return Box(torch.from_numpy(lo), torch.from_numpy(hi), groups)


def _points(rng, box, count):
    lo, hi = box.lo.numpy(), box.hi.numpy()
    X = lo[:, None, :] + rng.random((lo.shape[0], count, lo.shape[1])) * (hi - lo)[:, None, :]
    for start, size, allowed in box.groups:
        X[:, :, start:start + size] = 0
        for b in range(lo.shape[0]):
            codes = np.flatnonzero(allowed[b].numpy())
            X[b, np.arange(count), start + rng.choice(codes, count)] = 1
    return X


def _out(layers, X):
    h = X
    for i, (W, b) in enumerate(layers):
        h = h @ W.T + b
        if i < len(layers) - 1:
            h = np.maximum(h, 0)
    return h[..., 0]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alpha", ALPHAS)
def test_back_substituted_bounds_hold_at_random_points(seed, alpha):
    rng = np.random.default_rng(seed)
    sizes = [6, 9, 7, 1] if seed % 2 else [6, 12, 1]
    layers = [(rng.normal(size=(b, a)), rng.normal(size=b)) for a, b in zip(sizes, sizes[1:])]
    tl = [(torch.from_numpy(W), torch.from_numpy(b)) for W, b in layers]
    box = _boxes(rng, 6, 40, group=(3, 3) if seed % 3 == 0 else None)
    pre: list = []
    low0, high0, _ = forward_bounds(tl, box, pre=pre)
    lc, ld = back_substitute(tl, pre, lower=True, alpha=alpha)
    uc, ud = back_substitute(tl, pre, lower=False, alpha=alpha)
    low, _ = concretize(lc[:, :, None], ld[:, None], box)
    _, high = concretize(uc[:, :, None], ud[:, None], box)
    X = _points(rng, box, 200)
    out = _out(layers, X)
    tol = 1e-9
    assert (out >= low.numpy() - tol).all() and (out <= high.numpy() + tol).all()
    # the linear functions themselves bound the output pointwise
    assert (out >= np.einsum("bsn,bn->bs", X, lc.numpy()) + ld.numpy()[:, None] - tol).all()
    assert (out <= np.einsum("bsn,bn->bs", X, uc.numpy()) + ud.numpy()[:, None] + tol).all()


def test_difference_forms_bound_the_difference_of_the_copies():
    rng = np.random.default_rng(4)
    layers = [(rng.normal(size=(8, 3)), rng.normal(size=8)), (rng.normal(size=(1, 8)), rng.normal(size=1))]
    tl = [(torch.from_numpy(W), torch.from_numpy(b)) for W, b in layers]
    lo = rng.uniform(-1, 0, size=(20, 3))
    hi = lo + rng.uniform(0, 1, size=(20, 3))
    lo = np.repeat(lo, 2, axis=0)
    hi = np.repeat(hi, 2, axis=0)
    lo[0::2, 1] = hi[0::2, 1] = 0.0  # copy 0: the attribute at 0, copy 1: at 1
    lo[1::2, 1] = hi[1::2, 1] = 1.0
    box = Box(torch.from_numpy(lo), torch.from_numpy(hi))
    pre: list = []
    forward_bounds(tl, box, pre=pre)
    (dlc, dld), (duc, dud) = difference_forms(back_substitute(tl, pre, True), back_substitute(tl, pre, False), 2,
                                              box.lo, box.hi)
    assert (dlc[:, 1] == 0).all() and (duc[:, 1] == 0).all()  # the pinned attribute is in the constants
    X = lo[0::2, None, :] + rng.random((20, 100, 3)) * (hi - lo)[0::2, None, :]
    X0, X1 = X.copy(), X.copy()
    X0[:, :, 1], X1[:, :, 1] = 0.0, 1.0
    d = _out(layers, X0) - _out(layers, X1)
    assert (d >= np.einsum("bsn,bn->bs", X, dlc.numpy()) + dld.numpy()[:, None] - 1e-9).all()
    assert (d <= np.einsum("bsn,bn->bs", X, duc.numpy()) + dud.numpy()[:, None] + 1e-9).all()


def test_an_attribute_that_cannot_reach_the_output_is_certified_across_the_decision_boundary():
    """The protected input feeds only a neuron that is inactive on the whole domain: every copy computes the same
    output, so every partition is fair, although the output changes sign inside it (no sign bound can say so)."""
    W1 = np.array([[1.0, 0.0, -1.0], [0.0, 1.0, -20.0]])  # neuron 2 reads x1 but x2 ≥ 1 keeps it inactive
    layers = [(W1, np.array([-5.0, 0.0])), (np.array([[1.0, 3.0]]), np.array([-0.5]))]
    dom = nnet_domain(["x0", "x1", "x2"], [0, 0, 1], [20, 1, 3])
    fq = FairQuant(layers, dom, 1, bounds="linear", max_depth=None)
    fq.step()
    assert fq.counts.certified == fq.counts.total and fq.pops == 1
    old = FairQuant(layers, dom, 1, max_depth=None)
    old.step()
    assert old.counts.certified == 0


def test_counterexample_partitions_are_refined_to_the_end():
    rng = np.random.default_rng(7)
    layers = tie_net(rng, 3, [6])
    dom = nnet_domain(["x0", "x1", "x2"], [0, 0, 0], [15, 1, 15])
    pts, fair_at = exact_truth(layers, dom, 1, dom.values_of(1))
    stop = FairQuant(layers, dom, 1, max_depth=None, sample_depth=0, samples=5, seed=1)
    stop.run()
    refine = FairQuant(layers, dom, 1, max_depth=None, sample_depth=0, samples=5, seed=1,
                       refine_counterexamples=True)
    r = refine.run()
    assert r["undecided"] == 0 and r["certified"] == Fraction(int(fair_at.sum()), len(pts))
    assert stop.rates()["certified"] <= r["certified"]
    assert grid_depth(dom, 1) == 8


def test_linear_margin_covers_the_first_pass_and_grows_with_the_weights():
    rng = np.random.default_rng(1)
    layers = [(rng.normal(size=(10, 4)), rng.normal(size=10)), (rng.normal(size=(1, 10)), rng.normal(size=1))]
    small = linear_margin(layers, np.ones(4))
    big = linear_margin([(W * 100, b * 100) for W, b in layers], np.ones(4))
    assert 0 < small < 1e-10 and big > small


def test_device_option():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA"):
            resolve_device("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
def test_the_same_rates_on_the_cpu_and_the_gpu():
    rng = np.random.default_rng(3)
    layers = [(rng.normal(size=(16, 6)), rng.normal(size=16)), (rng.normal(size=(8, 16)), rng.normal(size=8)),
              (rng.normal(size=(1, 8)), rng.normal(size=1))]
    dom = nnet_domain([f"x{i}" for i in range(6)], [0] * 6, [9, 1, 9, 5, 7, 3])
    runs = []
    for device in ("cpu", "cuda"):
        fq = FairQuant(layers, dom, 1, max_depth=None, bounds="linear", refine_counterexamples=True, batch=256,
                       device=device, seed=2)
        for _ in range(30):
            fq.step()
        runs.append((fq.pops, fq.counts.certified, fq.counts.unfair, fq.counts.cex_mass))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("seed", range(12))
def test_tightened_hidden_bounds_hold_and_are_never_looser(seed):
    """The hidden layers' bounds after ``_tighten`` contain every pre-activation at random points of the box and lie
    inside the first pass's bounds."""
    rng = np.random.default_rng(900 + seed)
    n = 4
    dom = nnet_domain([f"x{i}" for i in range(n)], [0] * n, [int(v) for v in rng.integers(3, 30, n)])
    hidden = [[6, 5], [5, 4, 3], [8, 6, 4, 3]][seed % 3]
    layers = tie_net(rng, n, hidden)
    fq = FairQuant(layers, dom, 1, bounds="linear", max_depth=None, tighten=True)
    lb = rng.integers(0, 3, (16, n)).astype(float)
    ub = np.minimum(lb + rng.integers(0, 20, (16, n)), dom.upper)
    box = fq._box(lb, ub)
    pre: list = []
    with torch.no_grad():
        forward_bounds(fq.layers, box, None, pre)
        tight = fq._tighten(box, pre)
    for (l0, u0), (l1, u1) in zip(pre, tight):
        assert (l1 >= l0).all() and (u1 <= u0).all()
    rows = fq._box(lb, ub)
    for r in range(rows.lo.shape[0]):
        lo, hi = rows.lo[r].numpy(), rows.hi[r].numpy()
        X = np.floor(lo + rng.random((200, len(lo))) * (hi - lo + 1))
        X = np.minimum(X, hi)
        h = X
        for i, (W, b) in enumerate(layers[:-1]):
            z = h @ W.T + b
            assert (z >= tight[i][0][r].numpy() - 1e-9).all() and (z <= tight[i][1][r].numpy() + 1e-9).all()
            h = np.maximum(z, 0)
