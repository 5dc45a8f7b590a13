"""Justicia's group rates against FVGM's stochastic subset sum (fairaudit.engines.fvgm.subset_sum) where the two models
coincide — a Bayesian network in which the compound-group variable is the only parent of every feature — and both
against brute-force enumeration; the sound grid bounds of the justicia engine; its cells, findings and learning
mode."""
from __future__ import annotations

import itertools
import random
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from fairaudit.engines.justicia import rates as J
from fairaudit.engines.fvgm import subset_sum as S
from fairaudit.engines.fvgm.network import DiscreteBN


def random_problem(rng: random.Random, rational: bool = True):
    """A group variable A and 2–4 categorical features with group-conditional distributions, a linear score with
    random weights (also on A) and bias; returns (ProductDistribution, LinearScore, DiscreteBN, weights)."""
    na = rng.choice((2, 3))
    k = rng.randint(2, 4)
    sizes = [rng.randint(2, 4) for _ in range(k)]
    vs = [J.Variable("A", tuple(range(na)), True)] + [J.Variable(f"x{i}", tuple(range(s))) for i, s in enumerate(sizes)]
    groups = {}
    for a in range(na):
        per = {}
        for i, s in enumerate(sizes):
            raw = [rng.randint(0, 5) for _ in range(s)]
            raw[rng.randrange(s)] += 1
            per[f"x{i}"] = tuple(F(r, sum(raw)) for r in raw)
        groups[(a,)] = per
    share = [rng.randint(1, 4) for _ in range(na)]
    weight = {(a,): F(share[a], sum(share)) for a in range(na)}
    dist = J.ProductDistribution(tuple(vs), ("A",), groups, weight)

    def w():
        return F(rng.randint(-20, 20), rng.choice((1, 2, 4, 10))) if rational else F(rng.uniform(-3, 3))

    weights = {v.name: tuple(w() for _ in v.values) for v in vs}
    bias = w()
    score = J.LinearScore(weights, bias, strict=True)
    bn = DiscreteBN(states={v.name: v.values for v in vs},
                    parents={"A": (), **{f"x{i}": ("A",) for i in range(k)}},
                    cpts={"A": {(): tuple(weight[(a,)] for a in range(na))},
                          **{f"x{i}": {(a,): groups[(a,)][f"x{i}"] for a in range(na)} for i in range(k)}})
    sw = {v.name: {u: weights[v.name][j] for j, u in enumerate(v.values)} for v in vs}
    return dist, score, bn, sw


def brute(dist, score, a):
    """Σ over every feature assignment of Π probabilities · 1{score > 0}, the group's A fixed."""
    feats = dist.features()
    total = F(0)
    for combo in itertools.product(*(range(len(v.values)) for v in feats)):
        p = F(1)
        s = score.bias + score.weights["A"][dist.variable("A").values.index(a[0])]
        for v, j in zip(feats, combo):
            p *= dist.groups[a][v.name][j]
            s += score.weights[v.name][j]
        if s > 0:
            total += p
    return total


@pytest.mark.parametrize("seed", range(25))
def test_justicia_equals_subset_sum_and_brute_force(seed):
    rng = random.Random(seed)
    dist, score, bn, sw = random_problem(rng)
    ours = J.group_rates(score, dist)
    theirs = S.group_rates(bn, sw, -score.bias, ["A"], strict=True)
    assert set(ours) == set(theirs)
    for a in ours:
        assert abs(float(ours[a]) - float(theirs[a])) <= 1e-9
        assert ours[a] == theirs[a] == brute(dist, score, a)  # all three exact


@pytest.mark.parametrize("seed", range(15))
def test_grid_bounds_contain_the_exact_rate_and_nest(seed):
    """Real (float) weights: the rounded-down / rounded-up grid bounds contain the exact rate at every step, nest
    as the step halves, and close in; subset_sum.rate_bounds (FVGM's grid) contains it too."""
    rng = random.Random(100 + seed)
    dist, score, bn, sw = random_problem(rng, rational=False)
    for a in dist.groups:
        exact = J.rate(score, dist, a)

        def probs_of(name):
            return dist.probs(a, name)

        names = [v.name for v in dist.variables]
        step = J.first_step(score, points=4)
        prev = (0.0, 1.0)
        for _ in range(8):
            lo, hi = J.linear_bounds(score, probs_of, names, step)
            assert F(lo) <= exact <= F(hi)
            assert prev[0] - 1e-12 <= lo and hi <= prev[1] + 1e-12  # nested (up to the float error bound)
            prev = (lo, hi)
            step /= 2
        assert hi - lo < 0.5
        fv = S.rate_bounds(bn, sw, -score.bias, {"A": a[0]}, strict=True, step=F(1, 8))
        assert fv[0] <= exact <= fv[1]


@pytest.mark.parametrize("seed", range(10))
def test_float_grid_dp_within_its_error_bound(seed):
    """grid_rate's float result is within its stated error of the exact rate of the same rounded score."""
    rng = random.Random(200 + seed)
    dist, score, _, _ = random_problem(rng, rational=False)
    names = [v.name for v in dist.variables]
    step = F(1, 16)
    for a in dist.groups:
        def probs_of(name):
            return dist.probs(a, name)

        arrays = J.score_arrays(score, probs_of, names)
        for up in (False, True):
            p, err = J.grid_rate(arrays, score.bias, score.strict, step, up)
            exact = J.linear_rate(J.gridded(score, step, up), probs_of, names)
            assert abs(F(p) - exact) <= F(err)


def test_grid_rate_threshold_convention():
    """strict (score > 0) vs non-strict (score ≥ 0) at a tie: one feature, weights −1 / +1, bias 1."""
    score = J.LinearScore({"x": (F(-1), F(1))}, F(1), strict=True)
    arrays = J.score_arrays(score, lambda n: (F(1, 2), F(1, 2)), ["x"])
    assert J.grid_rate(arrays, score.bias, True, F(1), False)[0] == pytest.approx(0.5)
    assert J.grid_rate(arrays, score.bias, False, F(1), False)[0] == pytest.approx(1.0)
    assert J.linear_rate(score, lambda n: (F(1, 2), F(1, 2)), ["x"]) == F(1, 2)


# ---- the engine: cells, sound mode, findings, learning mode ---------------------------------------------------------

def run(spec_text, inputs, **options):
    from fairaudit.core.engine import Context
    from fairaudit.engines.justicia.engine import Justicia
    from fairaudit.spec import parse

    engine = Justicia()
    batches = list(engine.run(parse(spec_text), inputs, engine.resolve_options(options), Context()))
    return batches


def test_cells_include_every_protected_attribute():
    """The spec conditions on grp only; the toy dataset's protected attributes are sex and grp: the cells are their
    6 combinations (the modelled distribution does not change with the spec's wording)."""
    from fairaudit.engines.justicia.engine import Justicia, _model_inputs, cell_oracle

    inputs = _model_inputs("tree")
    last = run('E[pred | grp == "a"] <= 1', inputs)[-1]
    assert last.info["cells"] == 6
    assert set(last.info["groups"]) == {f"{s} & {g}" for s in "FM" for g in "abc"}
    leaf = last.leaves['E[pred | grp == "a"]']
    assert leaf.exact[0] is not None and float(leaf.exact[0]) == pytest.approx(cell_oracle(inputs, {"grp": "a"}),
                                                                                abs=1e-12)
    g = Justicia().guarantee(Justicia().resolve_options({}), inputs)
    assert "sex, grp" in g.assumes and g.kind == "exact"


def test_sound_mode_contains_the_exact_rates(monkeypatch):
    """With the exact DP forbidden, a logistic regression gets sound bounds that contain the exact leaves, within
    the precision, and a sound guarantee."""
    import fairaudit.engines.justicia.engine as E

    inputs = E._model_inputs("logreg")
    spec = 'E[pred | sex == "F"] - E[pred | sex == "M"] < 0.05 and E[pred | label == 1 and grp == "b"] <= 1'
    exact = run(spec, inputs)[-1]
    assert exact.info["computation"] == "exact"
    monkeypatch.setattr(E, "EXACT_WORK", 0)
    batches = run(spec, inputs, precision=0.002)
    last = batches[-1]
    assert last.info["computation"] == "sound bounds" and len(batches) > 1
    assert any(b.guarantee is not None and b.guarantee.kind == "sound" for b in batches)
    for key, leaf in exact.leaves.items():
        v = leaf.exact[0]
        prev = (0.0, 1.0)
        for b in batches:
            lo, hi = b.leaves[key].lo[0], b.leaves[key].hi[0]
            assert F(lo) <= v <= F(hi)
            assert prev[0] <= lo and hi <= prev[1]  # nested round after round
            prev = (lo, hi)
        assert prev[1] - prev[0] <= 0.002 + 1e-12
    # the findings' group intervals contain the exact group rates too
    ex = {g.label: g for g in exact.findings.groups}
    for g in last.findings.groups:
        assert g.lo <= ex[g.label].lo and ex[g.label].hi <= g.hi


def test_findings_groups_metrics_and_equalized_odds():
    from fairaudit.engines.justicia.engine import _model_inputs, cell_oracle
    from fairaudit.core.findings import disparities

    inputs = _model_inputs("logreg")
    last = run('E[pred | sex == "F"] <= 1', inputs)[-1]
    f = last.findings
    assert f.complete_groups and len(f.groups) == 6
    assert {g.label for g in f.groups} == {f"sex = {s}, grp = {c}" for s in "FM" for c in "abc"}
    for g in f.groups:
        s, c = g.group[0][1], g.group[1][1]
        assert g.lo == pytest.approx(cell_oracle(inputs, {"sex": s, "grp": c}), abs=1e-9) and g.lo == g.hi
        assert g.ci_lo <= g.lo <= g.hi <= g.ci_hi and 0 < g.share < 1
    assert sum(g.share for g in f.groups) == pytest.approx(1)
    names = [m.name for m in f.metrics]
    assert names[:2] == ["disparate impact", "statistical parity"]
    di, sp = disparities(f.groups)
    assert f.metrics[0].lo == di.lo and f.metrics[1].hi == sp.hi
    rates = [g.lo for g in f.groups]
    assert sp.lo == pytest.approx(max(rates) - min(rates)) and di.lo == pytest.approx(min(rates) / max(rates))
    # equalized odds: the TPR gap is max − min over the groups of E[pred | label == 1 and group]
    leaves = run(" and ".join(f'E[pred | label == 1 and sex == "{s}" and grp == "{c}"] <= 1'
                              for s in "FM" for c in "abc"), inputs)[-1].leaves
    tpr = [float(v.exact[0]) for v in leaves.values()]
    gap = next(m for m in f.metrics if m.name.startswith("equalized odds: true positive"))
    assert gap.lo == pytest.approx(max(tpr) - min(tpr), abs=1e-9)
    assert any(m.name.startswith("equalized odds: false positive") for m in f.metrics)
    assert "Pr[pred = 1 | compound group]" in f.groups_about and "Weissman" in f.ci_method and "Weissman" not in f.ci_about and "Σ" not in f.ci_about


@pytest.mark.parametrize("kind", ["tree", "logreg"])
@pytest.mark.parametrize("correlation", [True, False])
def test_learning_mode_finds_the_extremes(kind, correlation):
    from fairaudit.engines.justicia.engine import _model_inputs

    inputs = _model_inputs(kind)
    spec = 'E[pred | sex == "F"] <= 1'
    full = run(spec, inputs, correlation=correlation)[-1].findings
    learnt = run(spec, inputs, correlation=correlation, search="learn")[-1]
    f = learnt.findings
    assert not f.complete_groups and 1 <= len(f.groups) <= 2
    top = max(g.lo for g in full.groups)
    bottom = min(g.lo for g in full.groups)
    assert max(g.hi for g in f.groups) == pytest.approx(top, abs=1e-9)
    assert min(g.lo for g in f.groups) == pytest.approx(bottom, abs=1e-9)
    assert "nodes expanded" in learnt.info and "expanded" in f.notes[0]
    # the spec's leaves are still exact
    assert learnt.leaves['E[pred | sex == "F"]'].exact[0] is not None


def test_numeric_protected_attribute_is_not_a_cell():
    """German-like: a numeric protected attribute is a feature, not a compound-group column."""
    from fairaudit import data
    from fairaudit.engines.justicia.engine import _protected
    from fairaudit.core.inputs import Inputs
    import pandas as pd

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], 300), "age": rng.integers(18, 70, 300),
                          "x": rng.choice(["p", "q", "r"], 300), "y": rng.choice(["yes", "no"], 300)})
    ds = data.from_csv(frame.to_csv(index=False).encode(), label="y", protected=["sex", "age"], favourable="yes",
                       name="num.csv")
    inputs = Inputs.build(ds, model="tree", rows="all")
    assert _protected(inputs) == ["sex"]
    last = run('E[pred | sex == "F"] <= 1', inputs)[-1]
    assert last.info["cells"] == 2 and len(last.findings.groups) == 2


def test_tiny_dataset_engine_equals_subset_sum_on_the_coinciding_network():
    """A tiny categorical dataset through the justicia engine (logistic regression, exact): its group leaves equal
    fvgm's exact subset sum (``subset_sum.positive_rate``) on the network whose only edges go from the protected
    attribute to every feature, with the engine's own estimated conditional probabilities."""
    import pandas as pd

    from fairaudit import data
    from fairaudit.engines.justicia.engine import Justicia
    from fairaudit.core.inputs import Inputs

    rng = np.random.default_rng(3)
    n = 400
    sex = rng.choice(["F", "M"], n)
    x1 = np.where(sex == "F", rng.choice(["a", "b", "c"], n, p=[.6, .3, .1]), rng.choice(["a", "b", "c"], n))
    x2 = rng.choice(["u", "v"], n)
    y = np.where((x1 == "a") ^ (rng.random(n) < 0.3) ^ (sex == "M"), "yes", "no")
    frame = pd.DataFrame({"sex": sex, "x1": x1, "x2": x2, "y": y})
    ds = data.from_csv(frame.to_csv(index=False).encode(), label="y", protected=["sex"], favourable="yes",
                       name="tiny.csv")
    inputs = Inputs.build(ds, model="logreg", rows="all")
    last = run('E[pred | sex == "F"] >= 0 and E[pred | sex == "M"] >= 0', inputs)[-1]
    assert last.info["computation"] == "exact"
    job = Justicia()._job(inputs, ["sex"], True, 0, 0)
    dist, score = job.dist, job.form
    feats = [v for v in dist.variables if v.name != "sex"]
    groups = sorted(dist.groups)
    bn = DiscreteBN(states={"sex": tuple(g[0] for g in groups), **{v.name: v.values for v in feats}},
                    parents={"sex": (), **{v.name: ("sex",) for v in feats}},
                    cpts={"sex": {(): tuple(dist.weight[g] for g in groups)},
                          **{v.name: {g: dist.groups[g][v.name] for g in groups} for v in feats}})
    sw = {name: {u: ws[j] for j, u in enumerate(dist.variable(name).values)} for name, ws in score.weights.items()}
    for g in groups:
        theirs = S.positive_rate(bn, sw, -score.bias, {"sex": g[0]}, strict=True)
        ours = last.leaves[f'E[pred | sex == "{g[0]}"]'].exact[0]
        assert ours == theirs


def _small_with_feature(seed=4, n=600):
    import pandas as pd

    from fairaudit import data

    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    x = np.where(sex == "M", rng.choice(["lo", "mid", "hi"], n, p=[.2, .3, .5]),
                 rng.choice(["lo", "mid", "hi"], n, p=[.5, .3, .2]))
    z = rng.choice(["u", "v"], n)
    y = np.where(rng.random(n) < np.select([x == "lo", x == "mid"], [.2, .5], .8) - 0.1 * (z == "u"), "yes", "no")
    frame = pd.DataFrame({"sex": sex, "x": x, "z": z, "outcome": y})
    return data.from_csv(frame.to_csv(index=False).encode(), label="outcome", protected=["sex"], favourable="yes",
                         name="feat.csv")


@pytest.mark.parametrize("kind", ["tree", "logreg"])
def test_a_leafs_value_does_not_depend_on_the_rest_of_the_spec(kind):
    """The cells are the protected attributes' combinations; a condition on another column reads the parts of the
    cells where it holds (at its probability within the cell) — the spec's other leaves, or a condition that is
    always true, change nothing (they used to make the column a cell of its own)."""
    from fairaudit.api import audit
    from fairaudit.models.training import train

    ds = _small_with_feature()
    model = train(ds, kind, seed=0)

    def leaf(spec, text):
        r = audit(ds, spec, engine="justicia", model=model, rows="all")
        return next(r.final_values(i.id)["estimate"] for i in r.node_info if i.text == text)

    alone = leaf('E[pred | sex == "F"] > 0', 'E[pred | sex == "F"]')
    assert leaf('E[pred | sex == "F"] > 0 and E[pred | x == "hi"] >= 0', 'E[pred | sex == "F"]') == alone
    assert leaf('E[pred | sex == "F"] > 0 and E[pred | label] >= 0', 'E[pred | sex == "F"]') == alone
    assert leaf('E[pred | sex == "F" and x in {"lo", "mid", "hi"}] > 0',
                'E[pred | sex == "F" and x in {"lo", "mid", "hi"}]') == pytest.approx(alone, abs=1e-12)
    # E[pred | x == "hi"] = Σ_a w_a p_a(hi) Pr[pred | a, x = hi] / Σ_a w_a p_a(hi), the other features independent
    frame = ds.frame
    num = den = 0.0
    for s in ("F", "M"):
        sub = frame[frame["sex"] == s]
        w, p = len(sub) / len(frame), (sub["x"] == "hi").mean()
        grid = pd.DataFrame([(s, "hi", zv) for zv in ("u", "v")], columns=["sex", "x", "z"])
        pz = sub["z"].value_counts(normalize=True)
        rate = sum(pz.get(zv, 0) * float(model.predict(grid.iloc[[i]])[0]) for i, zv in enumerate(("u", "v")))
        num += w * p * rate
        den += w * p
    assert leaf('E[pred | x == "hi"] >= 0', 'E[pred | x == "hi"]') == pytest.approx(num / den, abs=1e-12)


def test_the_label_read_by_its_name_is_the_label():
    """``outcome == "yes"`` and ``label`` are one quantity (cells with the label), and a spec reading the label
    still gets the equalized-odds metrics."""
    from fairaudit.api import audit
    from fairaudit.models.training import train

    ds = _small_with_feature()
    model = train(ds, "tree", seed=0)
    r = audit(ds, 'E[pred | label] >= 0 and E[pred | outcome == "yes"] >= 0 and E[label | sex == "F"] >= 0',
              engine="justicia", model=model, rows="all")
    got = {i.text: r.final_values(i.id)["estimate"] for i in r.node_info if i.kind == "expect"}
    assert got['E[pred | label]'] == got['E[pred | outcome == "yes"]']
    frame = ds.frame
    assert got['E[label | sex == "F"]'] == pytest.approx((frame.loc[frame["sex"] == "F", "outcome"] == "yes").mean())
    assert any(m.name.startswith("equalized odds") for m in r.findings.metrics)
