"""FVGM, second half (issue 15): the fast grid bounds (every group in one pass, float masses with an outward margin,
joint steps, the last isolated variable read off by look-ups), fairness influences, the engine's findings, the
modelling-gap warning and the methods appendix. Exact references: brute-force enumeration in Fractions."""
from __future__ import annotations

import random
from fractions import Fraction as F
from itertools import product

import numpy as np
import pandas as pd
import pytest

from fairaudit.engines.fvgm.subset_sum import (_Masses, _elimination_order, fairness_influence, group_rate_bounds,
                                         influence_bounds, network_marginal, rate_bounds)
from fairaudit.engines.fvgm.network import DiscreteBN, fit_mle, learn_structure
from tests.engines.test_fvgm_core import brute_rates, random_bn, random_weights


@pytest.mark.parametrize("seed", range(40))
def test_one_pass_group_bounds_enclose_exact_rates(seed):
    rng = random.Random(7000 + seed)
    bn = random_bn(rng, rng.choice([1, 2]), rng.randint(2, 6))
    w = random_weights(rng, bn, ints=False)
    prot = [v for v in bn.variables if v.startswith("A")]
    tau = rng.uniform(-2, 3)
    for strict in (False, True):
        exact = brute_rates(bn, w, tau, prot, strict=strict)
        for step in (F(1, 4), F(1, 64)):
            got = group_rate_bounds(bn, w, tau, prot, strict=strict, step=step)
            assert got.keys() == exact.keys()
            for g, p in exact.items():
                assert got[g].lo <= p <= got[g].hi  # exact Fractions: no tolerance
        # shares are the groups' probabilities
        total = sum(bn.joint(dict(zip(bn.variables, vals))) for vals in product(*(bn.states[v] for v in bn.variables)))
        for g, b in got.items():
            share = sum(bn.joint(dict(zip(bn.variables, vals))) for vals in product(*(bn.states[v] for v in bn.variables))
                        if tuple(dict(zip(bn.variables, vals))[x] for x in prot) == g) / total
            assert b.share == pytest.approx(float(share), abs=1e-12)


@pytest.mark.parametrize("seed", range(15))
def test_queries_from_the_groups_pass_match_separate_passes(seed):
    rng = random.Random(7100 + seed)
    bn = random_bn(rng, 2, rng.randint(2, 4))
    w = random_weights(rng, bn, ints=False)
    tau = rng.uniform(-1, 2)
    qs = {"a0": {"A0": bn.states["A0"][0]}, "set": {"A1": frozenset(bn.states["A1"][:2])}, "all": {}}
    _, ans = group_rate_bounds(bn, w, tau, ["A0", "A1"], step=F(1, 32), queries=qs)
    for key, ev in qs.items():
        exact = brute_rates(bn, w, tau, [], evidence=ev).get(())
        if exact is None:  # the condition has probability 0
            assert ans[key] is None and rate_bounds(bn, w, tau, ev, step=F(1, 32)) is None
            continue
        assert ans[key][0] <= exact <= ans[key][1]
        sep = rate_bounds(bn, w, tau, ev, step=F(1, 32))
        assert float(sep[0]) == pytest.approx(float(ans[key][0]), abs=1e-12)


def test_grid_gap_shrinks_to_the_precision():
    rng = random.Random(5)
    bn = random_bn(rng, 1, 6)
    w = random_weights(rng, bn, ints=False)
    widths = [max(float(b.hi - b.lo) for b in group_rate_bounds(bn, w, 0.3, ["A0"], step=F(1, d)).values())
              for d in (4, 4096)]
    assert widths[1] < widths[0] and widths[1] < 2e-3


def test_a_wide_charge_description_joins_its_child_and_an_isolated_variable_goes_last():
    """compas-like: a 30-state variable whose only child has 2 states is eliminated with it (it never enters the
    frontier); an isolated wide variable is the last step (read off by look-ups) — and the bounds stay exact."""
    rng = random.Random(11)
    states = {"A": (0, 1), "desc": tuple(range(30)), "deg": (0, 1), "gain": (0, 1, 2), "age": (0, 1, 2)}
    parents = {"A": (), "desc": (), "deg": ("desc",), "gain": (), "age": ("A", "deg")}

    def dist(k):
        raw = [rng.randint(1, 5) for _ in range(k)]
        return tuple(F(x, sum(raw)) for x in raw)
    cpts = {v: {u: dist(len(states[v])) for u in product(*(states[p] for p in pa))} for v, pa in parents.items()}
    bn = DiscreteBN(states, parents, cpts)
    w = {"desc": {s: rng.uniform(-1, 1) for s in states["desc"]}, "deg": {1: 0.4}, "gain": {1: 2.5, 2: 9.0},
         "age": {0: -0.3, 2: 0.7}, "A": {1: 0.2}}
    spread = {v: 1 for v in states}
    spread["gain"] = 900
    steps = _elimination_order(bn, ["A"], spread)
    assert ("desc", "deg") in steps and steps[-1] == ("gain",)
    exact = brute_rates(bn, w, 1.1, ["A"])
    got = group_rate_bounds(bn, w, 1.1, ["A"], step=F(1, 256))
    for g, p in exact.items():
        assert got[g].lo <= p <= got[g].hi and got[g].hi - got[g].lo < 0.05


def test_float_margin_is_outward_and_tiny():
    m = _Masses((), [()], np.array([[0.25, 0.75]]), 0, 10, 100)
    lo, hi = m.interval(0.5)
    assert lo < F(1, 2) < hi and hi - lo < 1e-12
    assert m.interval(0.0)[0] == 0


@pytest.mark.parametrize("seed", range(10))
def test_influence_bounds_contain_the_exact_marginal_replacement(seed):
    rng = random.Random(7300 + seed)
    bn = random_bn(rng, 1, rng.randint(3, 5))
    w = random_weights(rng, bn, ints=False)
    tau = rng.uniform(-1, 2)
    feats = [v for v in bn.variables if v.startswith("X") and bn.parents[v]]
    if not feats:
        pytest.skip("no feature with parents")
    f = feats[0]
    exact = fairness_influence(bn, w, tau, ["A0"], f, replacement="marginal")["sp"]
    lo, hi = influence_bounds(bn, w, tau, ["A0"], f, step=F(1, 256))
    # the float marginal differs from the exact one by rounding only
    assert lo - 1e-9 <= float(exact) <= hi + 1e-9
    assert network_marginal(bn, f) == pytest.approx([float(x) for x in bn.marginal(f)], abs=1e-12)
    with pytest.raises(ValueError):
        influence_bounds(bn, w, tau, ["A0"], "A0")


@pytest.mark.parametrize("score", ["bic", "k2"])
def test_own_hill_climbing_finds_a_planted_chain(score):
    r = np.random.default_rng(0)
    n = 4000
    a = r.choice(["p", "q"], n)
    b = np.where(r.random(n) < np.where(a == "p", 0.9, 0.1), "x", "y")
    c = np.where(r.random(n) < np.where(b == "x", 0.85, 0.2), "u", "v")
    d = r.choice(["m", "n", "o"], n)
    df = pd.DataFrame({"a": a, "b": b, "c": c, "d": d})
    pa = learn_structure(df, ["a"], score=score, max_indegree=2)
    assert pa["a"] == ()
    assert "a" in pa["b"] and ("b" in pa["c"] or "c" in pa["b"])
    assert pa["d"] == () and all("d" not in p for p in pa.values())
    assert learn_structure(df, ["a"], score=score, max_indegree=0) == {c: () for c in df.columns}
    with pytest.raises(ValueError):
        learn_structure(df, ["a"], score="aic")


# ---------------------------------------------------------------- the engine's findings
def _data(n=3000, seed=1):
    from fairaudit import data
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["a", "b"], n, p=[0.7, 0.3])
    x = np.where(sex == "M", rng.choice(["lo", "mid", "hi"], n, p=[.2, .3, .5]),
                 rng.choice(["lo", "mid", "hi"], n, p=[.6, .3, .1]))
    z = rng.choice(["u", "v"], n)
    y = np.where(rng.random(n) < np.select([x == "lo", x == "mid"], [.1, .5], .9), "yes", "no")
    frame = pd.DataFrame({"sex": sex, "race": race, "x": x, "z": z, "outcome": y})
    return data.from_csv(frame.to_csv(index=False).encode("utf-8"), label="outcome", protected=["sex", "race"],
                         favourable="yes", name="fvgmfind.csv")


@pytest.fixture(scope="module")
def audited():
    from fairaudit import audit
    from fairaudit.models.training import train
    ds = _data()
    model = train(ds, "logreg", seed=0)
    r = audit(ds, 'E[pred | sex == "F"] - E[pred | sex == "M"] < -0.1', engine="fvgm", model=model)
    return ds, model, r


def test_findings_every_compound_group_metrics_graph(audited):
    from fairaudit.core.findings import disparities
    ds, model, r = audited
    f = r.findings
    assert {g.group for g in f.groups} == {(("sex", s), ("race", c)) for s in ("F", "M") for c in ("a", "b")}
    assert sum(g.share for g in f.groups) == pytest.approx(1.0, abs=1e-9)
    assert all(0 <= g.lo <= g.hi <= 1 and g.hi - g.lo < 0.01 for g in f.groups)
    names = [m.name for m in f.metrics]
    assert names[:2] == [m.name for m in disparities(f.groups)]
    assert names[2:4] == ["equalized odds: true-positive-rate gap", "equalized odds: false-positive-rate gap"]
    assert "outcome" in f.nodes and all(i.feature != "outcome" for i in f.influence)
    assert f.nodes[:2] == ("sex", "race") and ("sex", "x") in f.edges or ("x", "sex") not in f.edges
    assert all(b not in ("sex", "race") for _, b in f.edges)  # no edge into a protected attribute
    infl = {i.feature: i for i in f.influence}
    assert set(infl) <= {"x", "z"} and f.influence_about.startswith("fairness influence")
    # x carries the sex gap: replacing its conditional distribution by its marginal removes most of it
    if "x" in infl and any(p == "sex" for p, c in f.edges if c == "x"):
        assert infl["x"].lo > 0.1
    assert any("audited rows" in n for n in f.notes)
    assert r.to_dict()["findings"]["groups"]


def test_the_network_reproduces_the_rows_when_well_specified(audited):
    """sex → x learnt from the rows: the network's group rate of sex is the model's rate on the rows (the
    conformance oracle); no modelling-gap warning."""
    ds, model, r = audited
    assert not any("differ from the model's rates" in w for w in r.warnings)


def test_modelling_gap_warning_when_the_network_ignores_a_dependence():
    from fairaudit import audit
    from fairaudit.models.training import train
    ds = _data(seed=2)
    model = train(ds, "logreg", seed=0)
    r = audit(ds, 'E[pred | sex == "F"] - E[pred | sex == "M"] < -0.1', engine="fvgm", model=model, max_parents=0)
    assert any("differ from the model's rates" in w and "max_parents" in w for w in r.warnings)
    assert not r.findings.edges


def test_methods_appendix():
    from fairaudit.engines.fvgm.engine import FVGM
    e = FVGM()
    m = e.methods(e.resolve_options({"bins": 7}))
    heads = [h for h, _ in m]
    assert heads[0] == "The network" and len(m) >= 3
    text = " ".join(" ".join(p) for _, p in m)
    assert "7 equal-width bins" in text and "γ_D" in text and "marginal" in text


def test_fifty_state_variable_with_zero_probability_states():
    """states of probability 0 and a group of probability 0 (left out) — no division by zero."""
    states = {"A": (0, 1, 2), "X": tuple(range(50))}
    cx = tuple([F(1, 2), F(1, 2)] + [F(0)] * 48)
    bn = DiscreteBN(states, {"A": (), "X": ("A",)},
                    {"A": {(): (F(1, 2), F(1, 2), F(0))}, "X": {(a,): cx for a in range(3)}})
    w = {"X": {0: 0.1, 1: 0.9}}
    got = group_rate_bounds(bn, w, 0.5, ["A"], step=F(1, 8))
    assert set(got) == {(0,), (1,)} and all(g.lo <= F(1, 2) <= g.hi for g in got.values())
    assert rate_bounds(bn, w, 0.5, {"A": 2}, step=F(1, 8)) is None


def test_fit_mle_unchanged_by_the_new_search():
    df = pd.DataFrame({"a": ["p", "q", "p", "p"], "b": ["x", "x", "y", "x"]})
    bn = fit_mle(df, {"b": ("a",)})
    assert bn.cpts["b"][("p",)] == (F(2, 3), F(1, 3))


def test_too_dense_a_table_is_refused_clearly(monkeypatch):
    import fairaudit.engines.fvgm.subset_sum as ss
    rng = random.Random(3)
    bn = random_bn(rng, 1, 4)
    w = random_weights(rng, bn, ints=False)
    monkeypatch.setattr(ss, "MAX_CELLS", 10)
    with pytest.raises(ss.TooLarge):
        group_rate_bounds(bn, w, 0.1, ["A0"], step=F(1, 1024))


def test_engine_refuses_a_too_dense_first_grid(monkeypatch):
    import fairaudit.engines.fvgm.subset_sum as ss
    from fairaudit import audit
    from fairaudit.base.errors import FairauditError
    from fairaudit.models.training import train
    ds = _data(800, seed=4)
    monkeypatch.setattr(ss, "MAX_CELLS", 10)
    with pytest.raises(FairauditError, match="max_parents"):
        audit(ds, 'E[pred | sex == "F"] > 0.1', engine="fvgm", model=train(ds, "logreg", seed=0))


@pytest.mark.parametrize("seed", range(8))
def test_equalized_odds_metrics_contain_the_exact_gaps(seed):
    from fairaudit.engines.fvgm.subset_sum import equalized_odds
    from fairaudit.core.engine import Context
    from fairaudit.engines.fvgm.engine import _equalized_odds
    rng = random.Random(7500 + seed)
    bn = random_bn(rng, 1, rng.randint(2, 4))
    y = bn.variables[-1]
    if len(bn.states[y]) != 2:
        pytest.skip("needs a binary label")
    w = random_weights(rng, bn, ints=False)
    w.pop(y, None)
    tau = rng.uniform(-1, 2)
    _, gaps = equalized_odds(bn, w, tau, ["A0"], y)
    got = _equalized_odds(bn, w, tau, False, ["A0"], (y, bn.states[y][1], bn.states[y][0]), F(1, 512), Context())
    for m, s in zip(got, (bn.states[y][1], bn.states[y][0])):
        assert m.lo <= float(gaps[s].sp) + 1e-12 and float(gaps[s].sp) <= m.hi + 1e-12


def test_label_is_a_sink_and_barren_when_not_conditioned_on():
    r = np.random.default_rng(1)
    n = 3000
    a = r.choice(["p", "q"], n)
    y = np.where(r.random(n) < np.where(a == "p", 0.8, 0.3), "good", "bad")
    b = np.where(r.random(n) < np.where(y == "good", 0.9, 0.2), "x", "y")  # generated FROM the label
    df = pd.DataFrame({"a": a, "y": y, "b": b})
    pa = learn_structure(df, ["a"], sinks=("y",))
    assert all("y" not in p for p in pa.values())  # no edge out of the label
    bn = fit_mle(df, pa)
    w = {"b": {"x": 0.7}, "a": {"q": 0.2}}
    without = fit_mle(df[["a", "b"]], {v: tuple(p for p in pa[v] if p != "y") for v in ("a", "b")})
    got = group_rate_bounds(bn, w, 0.5, ["a"], step=F(1, 8))
    ref = brute_rates(without, w, 0.5, ["a"])
    assert all(got[g].lo <= ref[g] <= got[g].hi for g in ref)  # the barren label changes nothing


def test_a_protected_column_the_model_does_not_read_is_still_a_group():
    from types import SimpleNamespace

    from fairaudit.core.engine import Context
    from fairaudit.engines.fvgm.engine import FVGM
    from fairaudit.models.training import train
    from fairaudit.spec.parser import parse
    ds = _data(1500, seed=6)
    model = train(ds, "logreg", seed=0)
    form = model.as_linear()
    # a stand-in model that reads x and z only (race is not one of its inputs)
    keep = [c for c in form.encoding.columns if c.name in ("x", "z")]
    assert keep
    enc = SimpleNamespace(columns=keep, mapping={c.name: form.encoding.mapping[c.name] for c in keep})
    lin = SimpleNamespace(encoding=enc, weights=form.weights, bias=form.bias)
    inputs = SimpleNamespace(model=SimpleNamespace(as_linear=lambda: lin, predict=model.predict), dataset=ds,
                             positions=None, where=None)
    eng = FVGM()
    batches = list(eng.run(parse('E[pred | race == "b"] > 0.1'), inputs, eng.resolve_options({}), Context()))
    f = batches[-1].findings
    assert {dict(g.group).get("race") for g in f.groups} == {"a", "b"}


def test_path_specific_effect_is_a12_6_and_contains_the_exact_value():
    from fairaudit.engines.fvgm.subset_sum import group_metrics, group_rates, path_effect_bounds
    from tests.engines.test_fvgm_core import W_A12_3, a12_3_bn
    bn = a12_3_bn()
    cut = bn.with_parent_fixed("X1", "A", 2)  # X1 reads A as 2 for everyone: notes A12.6
    m = group_metrics(group_rates(cut, W_A12_3, 3, ["A"]))
    assert m.rates == {(0,): F(704, 1000), (1,): F(82, 100), (2,): F(56, 100)} and m.sp == F(26, 100)
    exact = group_metrics(group_rates(bn, W_A12_3, 3, ["A"])).sp - m.sp
    lo, hi = path_effect_bounds(bn, W_A12_3, 3, ["A"], "A", "X1", 2, step=1)
    assert lo - 1e-12 <= float(exact) <= hi + 1e-12 and hi - lo < 1e-9
    with pytest.raises(ValueError):
        path_effect_bounds(bn, W_A12_3, 3, ["A"], "A", "A", 2)


def test_engine_reports_path_effects_for_edges_out_of_protected_attributes(audited):
    ds, model, r = audited
    f = r.findings
    names = [m.name for m in f.metrics if m.name.startswith("path-specific")]
    assert names == [f"path-specific effect: {a} → {b}" for a, b in f.edges if a in ("sex", "race")]
    if "path-specific effect: sex → x" in names:
        m = next(m for m in f.metrics if m.name == "path-specific effect: sex → x")
        assert m.lo > 0.1  # x carries most of the sex gap


def test_findings_do_not_depend_on_the_machines_speed(audited, monkeypatch):
    """The same inputs give the same influences and path effects on a slow machine: refinement is a fixed amount of
    work, not "while less than t seconds have gone by" (here every clock reading advances 5 s; the run's own
    deadline is not set)."""
    import time

    from fairaudit import audit
    ds, model, first = audited
    clock = {"t": 0.0}

    def slow():
        clock["t"] += 5.0
        return clock["t"]

    monkeypatch.setattr(time, "perf_counter", slow)
    again = audit(ds, 'E[pred | sex == "F"] - E[pred | sex == "M"] < -0.1', engine="fvgm", model=model)
    assert again.findings.influence == first.findings.influence
    assert again.findings.metrics == first.findings.metrics


def test_distinct_numeric_values_keep_distinct_states():
    """A state's name must not merge values: 1000001, 1000002, 1000003 are three states (not three "=1e+06"),
    and close bin edges stay apart."""
    from types import SimpleNamespace

    from fairaudit.engines.fvgm.network import discretise

    enc = SimpleNamespace(columns=[SimpleNamespace(name="inc", kind="numeric", fill=0.0)])
    frame = pd.DataFrame({"inc": [1000001.0, 1000002.0, 1000003.0, 1000001.0]})
    cat, binnings = discretise(frame, enc, bins=5)
    assert cat["inc"].nunique() == 3 and len(set(binnings["inc"].states)) == 3
    frame = pd.DataFrame({"inc": 1000000.0 + np.arange(12) / 7})
    cat, binnings = discretise(frame, enc, bins=5)
    assert len(set(binnings["inc"].states)) == 5
