"""FVGM core (issue 15): exact stochastic subset sum over a Bayesian network (fairaudit.engines.fvgm.subset_sum) and
network learning (fairaudit.engines.fvgm.network). Oracles: the notes' worked examples A12 (exact fractions, including the
0.55 vs 0.56 greedy trap), brute-force enumeration of the joint on random networks/classifiers, Monte Carlo sampling
from the network, and per-group independent marginals."""
from __future__ import annotations

import math
import random
from fractions import Fraction as F
from itertools import product

import numpy as np
import pandas as pd
import pytest

from fairaudit.engines.fvgm.subset_sum import (equalized_odds, fairness_influence, group_metrics, group_rates,
                                         positive_rate, weights_from_columns)
from fairaudit.engines.fvgm.network import DiscreteBN, fit_mle, learn_bn, learn_structure


def B(p1):
    """A Boolean CPT row (states 0, 1)."""
    p1 = F(p1)
    return (1 - p1, p1)


def bool_bn(spec: dict) -> DiscreteBN:
    """spec[v] = (parents, {parent values: Pr[v=1]}) for Boolean variables; a non-Boolean var gives (states, parents,
    {u: row})."""
    states, parents, cpts = {}, {}, {}
    for v, s in spec.items():
        if len(s) == 3:
            states[v], parents[v], cpts[v] = tuple(s[0]), tuple(s[1]), {k: tuple(F(x) for x in r) for k, r in s[2].items()}
        else:
            states[v], parents[v] = (0, 1), tuple(s[0])
            cpts[v] = {k: B(p) for k, p in s[1].items()}
    return DiscreteBN(states, parents, cpts)


# ---------------------------------------------------------------- oracle: enumeration of the joint
def brute_rates(bn, weights, tau, protected, evidence=None, strict=False):
    acc, tot = {}, {}
    vs = bn.variables
    for vals in product(*(bn.states[v] for v in vs)):
        a = dict(zip(vs, vals))
        if evidence and any(a[k] not in (x if isinstance(x, (set, frozenset)) else {x}) for k, x in evidence.items()):
            continue
        p = bn.joint(a)
        if not p:
            continue
        g = tuple(a[x] for x in protected)
        score = sum(weights.get(v, {}).get(a[v], 0) for v in vs)
        hit = score > tau if strict else score >= tau
        tot[g] = tot.get(g, 0) + p
        acc[g] = acc.get(g, 0) + (p if hit else 0)
    return {g: acc[g] / tot[g] for g in tot}


W_EX2 = {"P": {1: 1}, "Q": {1: 1}, "R": {1: 1}, "S": {1: -1}}


# ---------------------------------------------------------------- A12 worked examples
def test_a12_1_independent_s3p():
    bn = bool_bn({"P": ((), {(): F(1, 2)}), "Q": ((), {(): F(2, 5)}), "R": ((), {(): F(1, 2)}),
                  "S": ((), {(): F(3, 10)})})
    m = group_metrics(group_rates(bn, W_EX2, 2, ["P"]))
    assert m.rates == {(0,): F(7, 50), (1,): F(11, 20)}
    assert (m.a_max, m.a_min) == ((1,), (0,))
    assert m.sp == F(41, 100) and m.di == F(14, 55)


def test_a12_2_bn_p_to_q():
    bn = bool_bn({"P": ((), {(): F(1, 2)}), "Q": (("P",), {(1,): F(3, 5), (0,): F(3, 10)}),
                  "R": ((), {(): F(1, 2)}), "S": ((), {(): F(3, 10)})})
    m = group_metrics(group_rates(bn, W_EX2, 2, ["P"]))
    assert m.rates == {(1,): F(13, 20), (0,): F(21, 200)}   # 0.105, not the seed's rounded 0.11
    assert m.sp == F(545, 1000) and m.di == F(21, 130)


def a12_3_bn(x1=(F(1, 5), F(1, 2), F(4, 5)), x2=(F(1, 10), F(7, 10)), x3=F(2, 5), label=None):
    return bool_bn({"A": ((0, 1, 2), (), {(): (F(1, 2), F(3, 10), F(1, 5))}),
                    "X1": (("A",), {(0,): x1[0], (1,): x1[1], (2,): x1[2]}),
                    "X2": (("X1",), {(0,): x2[0], (1,): x2[1]}),
                    "X3": ((), {(): x3})})


W_A12_3 = {"A": {0: 0, 1: 2, 2: -1}, "X1": {1: 3}, "X2": {1: 2}, "X3": {1: -1}}


def test_a12_3_greedy_trap():
    bn = a12_3_bn()
    m = group_metrics(group_rates(bn, W_A12_3, 3, ["A"]))
    assert m.rates == {(0,): F(22, 125), (1,): F(11, 20), (2,): F(14, 25)}
    assert m.max == F(14, 25) and m.a_max == (2,)          # 0.56, not the greedy 0.55 (largest weight A=1)
    assert m.min == F(22, 125) and m.a_min == (0,)         # 0.176, not the greedy "minimum" 0.56 (A=2)
    assert m.sp == F(48, 125) and m.di == F(11, 35)
    greedy_max = max(W_A12_3["A"], key=lambda s: W_A12_3["A"][s])
    assert m.rates[(greedy_max,)] == F(11, 20) != m.max
    # independence contrast: X1, X2 replaced by their marginals (0.41, 0.346), independent of A
    ind = bool_bn({"A": ((0, 1, 2), (), {(): (F(1, 2), F(3, 10), F(1, 5))}), "X1": ((), {(): F(41, 100)}),
                   "X2": ((), {(): F(346, 1000)}), "X3": ((), {(): F(2, 5)})})
    assert ind.marginal("A") == (F(1, 2), F(3, 10), F(1, 5))
    assert bn.marginal("X1") == (F(59, 100), F(41, 100)) and bn.marginal("X2")[1] == F(346, 1000)
    mi = group_metrics(group_rates(ind, W_A12_3, 3, ["A"]))
    assert [float(mi.rates[(a,)]) for a in range(3)] == pytest.approx([0.302744, 0.61414, 0.14186], abs=1e-12)
    assert (mi.a_max, mi.a_min) == ((1,), (2,))
    assert float(mi.sp) == pytest.approx(0.47228, abs=1e-12)


def test_a12_3_dp_is_exact_with_floats_too():
    bn = a12_3_bn()
    fl = DiscreteBN(bn.states, bn.parents, {v: {u: tuple(float(x) for x in r) for u, r in t.items()}
                                            for v, t in bn.cpts.items()})
    r = group_rates(fl, W_A12_3, 3, ["A"])
    assert r[(2,)] == pytest.approx(0.56, abs=1e-12) and r[(0,)] == pytest.approx(0.176, abs=1e-12)


def test_a12_4_negative_weights():
    bn = bool_bn({"A": ((), {(): F(1, 2)}), "X1": ((), {(): F(1, 2)}), "X2": ((), {(): F(1, 4)}),
                  "X3": ((), {(): F(4, 5)})})
    w = {"A": {1: -2}, "X1": {1: 3}, "X2": {1: -1}, "X3": {1: 2}}
    m = group_metrics(group_rates(bn, w, 2, ["A"]))
    assert m.rates == {(0,): F(4, 5), (1,): F(2, 5)} and m.sp == F(2, 5) and m.di == F(1, 2)


def test_a12_5_equalized_odds_with_label_in_network():
    spec = {"Y": ((), {(): F(1, 2)}), "A": ((0, 1, 2), (), {(): (F(1, 2), F(3, 10), F(1, 5))}),
            "X1": (("A", "Y"), {(0, 1): F(2, 5), (1, 1): F(7, 10), (2, 1): F(9, 10),
                                (0, 0): F(1, 10), (1, 0): F(3, 10), (2, 0): F(3, 5)}),
            "X2": (("X1", "Y"), {(1, 1): F(4, 5), (0, 1): F(1, 5), (1, 0): F(3, 5), (0, 0): F(1, 20)}),
            "X3": (("Y",), {(1,): F(3, 10), (0,): F(1, 2)})}
    bn = bool_bn(spec)
    eo, gaps = equalized_odds(bn, W_A12_3, 3, ["A"], "Y")
    assert gaps[1].rates == {(0,): F(376, 1000), (1,): F(76, 100), (2,): F(72, 100)}
    assert gaps[0].rates == {(0,): F(8, 100), (1,): F(335, 1000), (2,): F(36, 100)}
    assert gaps[1].sp == F(48, 125) and gaps[0].sp == F(28, 100) and eo == F(48, 125)
    for y in (0, 1):
        assert gaps[y].rates == brute_rates(bn, W_A12_3, 3, ["A"], evidence={"Y": y})


def test_a12_6_pcf_by_replacing_the_mediator_cpt():
    bn = a12_3_bn().with_cpt("X1", B(F(4, 5)))
    m = group_metrics(group_rates(bn, W_A12_3, 3, ["A"]))
    assert m.rates == {(0,): F(704, 1000), (1,): F(82, 100), (2,): F(56, 100)} and m.sp == F(26, 100)


def test_a12_7_fif_uniform_replacement():
    bn = a12_3_bn()
    f3 = fairness_influence(bn, W_A12_3, 3, ["A"], "X3")
    assert f3["groups"] == {(0,): F(6, 1000), (1,): 0, (2,): 0}
    f1 = fairness_influence(bn, W_A12_3, 3, ["A"], "X1")
    assert f1["groups"] == {(0,): F(-264, 1000), (1,): 0, (2,): F(21, 100)}
    assert f1["sp"] == f1["before"].sp - f1["after"].sp
    # "marginal" replacement: X1 ~ its overall marginal (0.41) for every group, X2 | X1 kept; checked by enumeration
    fm = fairness_influence(bn, W_A12_3, 3, ["A"], "X1", replacement="marginal")
    after = brute_rates(bn.with_cpt("X1", bn.marginal("X1")), W_A12_3, 3, ["A"])
    before = brute_rates(bn, W_A12_3, 3, ["A"])
    assert fm["groups"] == {g: before[g] - after[g] for g in before}
    with pytest.raises(ValueError):
        fairness_influence(bn, W_A12_3, 3, ["A"], "A")


def test_a12_8_bins_are_one_categorical_variable():
    # Xc in 2 equal-width bins (one variable, states = bins); integer classifier 3·B1 + 10·B2 + 5·A ≥ 8
    bn = bool_bn({"A": ((), {(): F(1, 2)}), "Xc": (("b1", "b2"), (), {(): (F(1, 2), F(1, 2))})})
    w = {"Xc": {"b1": 3, "b2": 10}, "A": {1: 5}}
    assert group_rates(bn, w, 8, ["A"]) == {(1,): 1, (0,): F(1, 2)}   # exclusive bins; independent bins gave 0.75


def test_tie_convention():
    bn = bool_bn({"A": ((), {(): F(1, 2)}), "X": ((), {(): F(1, 2)})})
    w = {"A": {1: 1}, "X": {1: 1}}
    assert group_rates(bn, w, 1, ["A"]) == {(0,): F(1, 2), (1,): 1}
    assert group_rates(bn, w, 1, ["A"], strict=True) == {(0,): 0, (1,): F(1, 2)}


def test_errors_and_zero_probability_groups():
    bn = bool_bn({"A": ((), {(): F(1)}), "X": ((), {(): F(1, 2)})})
    assert group_rates(bn, {"X": {1: 1}}, 1, ["A"]) == {(1,): F(1, 2)}     # A=0 has probability 0: left out
    with pytest.raises(ValueError):
        positive_rate(bn, {"Z": {1: 1}}, 1)
    with pytest.raises(ValueError):
        positive_rate(bn, {"X": {1: 1}}, 1, {"A": 7})
    with pytest.raises(ValueError):
        bool_bn({"A": (("X",), {(0,): F(1, 2), (1,): F(1, 2)}), "X": (("A",), {(0,): F(1, 2), (1,): F(1, 2)})})


# ---------------------------------------------------------------- random networks vs enumeration
def random_bn(rng: random.Random, n_prot: int, n_feat: int, exact=True):
    names = [f"A{i}" for i in range(n_prot)] + [f"X{i}" for i in range(n_feat)]
    states, parents, cpts = {}, {}, {}
    for i, v in enumerate(names):
        k = rng.choice([2, 3]) if (v.startswith("A") or rng.random() < 0.5) else 2
        states[v] = tuple(range(k))
        pa = () if v.startswith("A") else tuple(sorted(rng.sample(names[:i], min(i, rng.choice([0, 1, 2, 3])))))
        parents[v] = pa
        table = {}
        for u in product(*(states[p] for p in pa)):
            raw = [rng.randint(0, 6) for _ in range(k)]
            if not sum(raw):
                raw[0] = 1
            table[tuple(u)] = tuple(F(x, sum(raw)) if exact else x / sum(raw) for x in raw)
        cpts[v] = table
    return DiscreteBN(states, parents, cpts)


def random_weights(rng, bn, ints=True):
    return {v: {s: (rng.randint(-4, 4) if ints else rng.uniform(-3, 3)) for s in bn.states[v]
                if rng.random() < 0.85} for v in bn.variables if rng.random() < 0.9}


@pytest.mark.parametrize("seed", range(60))
def test_random_networks_exact_vs_enumeration(seed):
    rng = random.Random(seed)
    bn = random_bn(rng, rng.choice([1, 2]), rng.randint(2, 5))
    w = random_weights(rng, bn)
    prot = [v for v in bn.variables if v.startswith("A")]
    tau = rng.randint(-3, 6)
    for strict in (False, True):
        assert group_rates(bn, w, tau, prot, strict=strict) == brute_rates(bn, w, tau, prot, strict=strict)
    # with extra evidence on a feature that has parents (a general conditional, as for the EO label)
    x = bn.variables[-1]
    ev = {x: bn.states[x][0]}
    assert group_rates(bn, w, tau, prot, evidence=ev) == brute_rates(bn, w, tau, prot, evidence=ev)


@pytest.mark.parametrize("seed", range(20))
def test_random_networks_float_weights(seed):
    rng = random.Random(1000 + seed)
    bn = random_bn(rng, 2, rng.randint(2, 5), exact=False)
    w = random_weights(rng, bn, ints=False)
    prot = ["A0", "A1"]
    tau = rng.uniform(-2, 3)
    got, ref = group_rates(bn, w, tau, prot), brute_rates(bn, w, tau, prot)
    assert got.keys() == ref.keys()
    for g in ref:
        assert got[g] == pytest.approx(ref[g], abs=1e-12)


def test_monte_carlo_agrees():
    rng = random.Random(7)
    bn = random_bn(rng, 2, 5)
    w = random_weights(rng, bn)
    prot = ["A0", "A1"]
    exact = group_rates(bn, w, 1, prot)
    sample = bn.sample(20000, random.Random(8))
    for g, p in exact.items():
        rows = [r for r in sample if (r["A0"], r["A1"]) == g]
        if len(rows) < 200:
            continue
        hit = sum(sum(w.get(v, {}).get(r[v], 0) for v in bn.variables) >= 1 for r in rows) / len(rows)
        sd = math.sqrt(max(float(p) * (1 - float(p)), 1e-4) / len(rows))
        assert abs(hit - float(p)) < 5 * sd, (g, hit, float(p))


@pytest.mark.parametrize("seed", range(10))
def test_no_edges_between_features_equals_independent_group_marginals(seed):
    rng = random.Random(500 + seed)
    base = random_bn(rng, 1, 4)
    # every feature's only parent is the protected attribute: no feature-feature edges
    states = dict(base.states)
    parents = {"A0": ()}
    cpts = {"A0": base.cpts["A0"]}
    for v in base.variables[1:]:
        parents[v] = ("A0",)
        cpts[v] = {(a,): tuple(F(rng.randint(1, 5)) for _ in states[v]) for a in states["A0"]}
        cpts[v] = {u: tuple(x / sum(r) for x in r) for u, r in cpts[v].items()}
    bn = DiscreteBN(states, parents, cpts)
    w = random_weights(rng, bn)
    rates = group_rates(bn, w, 1, ["A0"])
    for (a,) in rates:
        ind = DiscreteBN(states, {v: () for v in states},
                         {v: ({(): cpts[v][(a,)]} if v != "A0" else {(): tuple(F(int(s == a)) for s in states[v])})
                          for v in states})
        assert positive_rate(ind, w, 1, {"A0": a}) == rates[(a,)]
        # the same rate with no evidence at all on the independent network (A0 is a point mass)
        assert positive_rate(ind, w, 1) == rates[(a,)]


# ---------------------------------------------------------------- learning
def synthetic_frame(n=3000, seed=0):
    r = np.random.default_rng(seed)
    sex = r.choice(["F", "M"], n)
    race = r.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    age_bin = np.where(r.random(n) < np.where(sex == "M", 0.8, 0.3), "hi", np.where(r.random(n) < 0.5, "lo", "mid"))
    edu = np.where(r.random(n) < np.where(age_bin == "hi", 0.9, 0.2), "deg", "none")
    noise = r.choice(["x", "y"], n)
    return pd.DataFrame({"sex": sex, "race": race, "age": age_bin, "edu": edu, "noise": noise})


@pytest.mark.parametrize("score", ["bic", "k2"])
def test_learned_structure_never_points_into_protected(score):
    df = synthetic_frame()
    parents = learn_structure(df, ["sex", "race"], score=score)
    assert parents["sex"] == () and parents["race"] == ()
    # the strong dependences are found (in some direction); age is a single 3-state variable, not 3 bins
    assert "sex" in parents["age"] or "age" in parents["sex"]
    assert "age" in parents["edu"] or "edu" in parents["age"]
    bn = learn_bn(df, ["sex", "race"], score=score)
    assert bn.states["age"] == ("hi", "lo", "mid") and bn.parents["sex"] == ()


def test_mle_parameters_are_count_ratios():
    df = synthetic_frame(500, seed=3)
    bn = fit_mle(df, {"age": ("sex",), "edu": ("age",)})
    sub = df[df.sex == "M"]
    assert bn.cpts["age"][("M",)] == tuple(F(int((sub.age == s).sum()), len(sub)) for s in ("hi", "lo", "mid"))
    assert bn.cpts["sex"][()] == (F(int((df.sex == "F").sum()), 500), F(int((df.sex == "M").sum()), 500))
    # an unseen parent configuration gets the uniform row
    bn2 = fit_mle(df[df.sex == "M"], {"age": ("sex",)}, states={"sex": ("F", "M")})
    assert bn2.cpts["age"][("F",)] == (F(1, 3),) * 3
    with pytest.raises(ValueError):
        learn_structure(df, ["sex"], fixed_parents={"sex": ("age",)})


def test_learned_network_end_to_end_vs_empirical():
    """Fixed structure = the data's own full joint over (sex, age, edu): the exact rates equal the empirical rates."""
    df = synthetic_frame(2000, seed=5)[["sex", "age", "edu"]]
    bn = fit_mle(df, {"age": ("sex",), "edu": ("sex", "age")})
    coef = {"sex=M": F(1), "age=hi": F(2), "age=mid": F(1), "edu=deg": F(3, 2)}
    cols = {"sex=M": ("sex", "M"), "age=hi": ("age", "hi"), "age=mid": ("age", "mid"), "edu=deg": ("edu", "deg")}
    w = weights_from_columns(coef, cols)
    rates = group_rates(bn, w, F(5, 2), ["sex"])
    score = (df.sex == "M") * 1.0 + (df.age == "hi") * 2.0 + (df.age == "mid") * 1.0 + (df.edu == "deg") * 1.5
    for s in ("F", "M"):
        sel = df.sex == s
        assert rates[(s,)] == F(int((score[sel] >= 2.5).sum()), int(sel.sum()))


# ---------------------------------------------------------------- bridge: a LinearForm over the raw encoding
def _form_and_frame(seed=11, n=1500):
    from fairaudit.models.encoding import EncodedColumn, Encoding
    from fairaudit.models.forms import LinearForm
    r = np.random.default_rng(seed)
    sex = r.choice(["F", "M"], n)
    hours = r.choice([10.0, 20.0, 40.0, 60.0], n)
    income = r.normal(30 + 10 * (sex == "M"), 8, n)
    edu = np.where(r.random(n) < 0.4 + 0.3 * (hours > 30), "deg", "none")
    frame = pd.DataFrame({"sex": sex, "hours": hours, "income": income, "edu": edu})
    enc = Encoding((EncodedColumn("sex", "categorical", ("F", "M")), EncodedColumn("hours", "numeric", fill=30.0),
                    EncodedColumn("income", "numeric", fill=30.0), EncodedColumn("edu", "categorical", ("deg", "none"))))
    form = LinearForm(np.array([-0.3, 0.4, 0.05, 0.08, 0.9, -0.2]), -4.5, enc)
    return form, frame


def test_bridge_exact_numeric_states_and_full_joint_equals_empirical_predictions():
    from fairaudit.engines.fvgm.network import discretise, linear_weights
    form, frame = _form_and_frame()
    frame = frame.drop(columns="income").assign(income=30.0)      # a constant numeric column: one exact state
    cat, binnings = discretise(frame[["sex", "hours", "income", "edu"]], form.encoding, bins=5)
    assert binnings["hours"].exact and binnings["hours"].states == ("=10", "=20", "=40", "=60")
    w, tau, strict = linear_weights(form, binnings)
    order = ["sex", "hours", "income", "edu"]
    bn = fit_mle(cat[order], {v: tuple(order[:i]) for i, v in enumerate(order)})   # the empirical joint, exactly
    rates = group_rates(bn, w, tau, ["sex"], strict=strict)
    pred = form.predict(frame)
    for s in ("F", "M"):
        assert float(rates[(s,)]) == pytest.approx(pred[frame.sex.to_numpy() == s].mean(), abs=1e-12)


def test_bridge_binned_numeric_is_one_variable():
    from fairaudit.engines.fvgm.network import discretise, linear_weights
    form, frame = _form_and_frame()
    cat, binnings = discretise(frame, form.encoding, bins=4)
    b = binnings["income"]
    assert not b.exact and len(b.states) == 4 and set(cat["income"]) <= set(b.states)
    x = frame.income.to_numpy()
    for i, s in enumerate(b.states):  # the representative value is the mean of the bin's values, inside the bin
        sel = (cat["income"] == s).to_numpy()
        if sel.any():
            assert b.values[i] == pytest.approx(x[sel].mean()) and b.edges[i] <= b.values[i] <= b.edges[i + 1]
    w, tau, strict = linear_weights(form, binnings)
    assert w["income"] == {s: 0.08 * v for s, v in zip(b.states, b.values)} and tau == 4.5 and strict
    bn = learn_bn(cat, ["sex"])
    assert bn.parents["sex"] == ()
    got = group_rates(bn, w, tau, ["sex"], strict=strict)
    assert got.keys() == {("F",), ("M",)}
    ref = brute_rates(bn, w, tau, ["sex"], strict=strict)
    assert all(float(got[g]) == pytest.approx(float(ref[g]), abs=1e-12) for g in ref)


@pytest.mark.parametrize("seed", range(15))
def test_rate_bounds_enclose_the_exact_rate_and_tighten(seed):
    from fairaudit.engines.fvgm.subset_sum import rate_bounds
    rng = random.Random(2000 + seed)
    bn = random_bn(rng, 1, rng.randint(2, 5))
    w = random_weights(rng, bn, ints=False)
    tau = rng.uniform(-2, 3)
    for a in bn.states["A0"]:
        exact = brute_rates(bn, w, tau, ["A0"], evidence={"A0": a})
        if not exact:
            continue
        p = exact[(a,)]
        widths = []
        for step in (F(1, 2), F(1, 10), F(1, 1000)):
            for strict in (False, True):
                q = brute_rates(bn, w, tau, ["A0"], evidence={"A0": a}, strict=strict)[(a,)]
                lo, hi = rate_bounds(bn, w, tau, {"A0": a}, strict=strict, step=step)
                assert lo <= q <= hi  # exact: the floating-point margin is outward
            widths.append(hi - lo)
        assert widths[-1] <= widths[0] + 1e-12  # (+ the floating-point margin, ~1e-15)
    # integer weights on a grid of 1: the bounds enclose the exact rate within the floating-point margin only
    wi = random_weights(rng, bn)
    a = next(s for s, q in zip(bn.states["A0"], bn.cpts["A0"][()]) if q)
    lo, hi = rate_bounds(bn, wi, 1, {"A0": a}, step=1)
    p = positive_rate(bn, wi, 1, {"A0": a})
    assert lo <= p <= hi and hi - lo < 1e-12 and lo < hi


@pytest.mark.parametrize("seed", range(20))
def test_set_valued_evidence(seed):
    rng = random.Random(3000 + seed)
    bn = random_bn(rng, 1, rng.randint(2, 5))
    w = random_weights(rng, bn)
    v = rng.choice(bn.variables[1:])
    ev = {v: frozenset(rng.sample(bn.states[v], rng.randint(1, len(bn.states[v]))))}
    tau = rng.randint(-2, 4)
    assert group_rates(bn, w, tau, ["A0"], evidence=ev) == brute_rates(bn, w, tau, ["A0"], evidence=ev)
    with pytest.raises(ValueError):
        positive_rate(bn, w, tau, {v: frozenset()})


# ---------------------------------------------------------------- the draft engine (not registered yet)
def test_draft_engine_bounds_enclose_the_exact_rates():
    from types import SimpleNamespace

    from fairaudit.core.engine import Context
    from fairaudit.engines.fvgm.engine import FVGM
    from fairaudit.engines.fvgm.network import discretise, learn_bn, linear_weights
    from fairaudit.spec.parser import parse

    form, frame = _form_and_frame(n=800)
    frame = frame.assign(hours=frame.hours)  # hours has 4 values: exact states
    inputs = SimpleNamespace(model=SimpleNamespace(as_linear=lambda: form),
                             dataset=SimpleNamespace(frame=frame, schema=SimpleNamespace(protected=("sex",))))
    spec = parse('E[pred | sex == "F"] > 0.5 * E[pred | sex == "M" and edu in {"deg"}] and E[not pred] > 0')
    eng = FVGM()
    assert eng.check(spec, None) == []
    assert eng.check(parse("E[edu == \"deg\"] > 0.1"), None)
    opts = eng.resolve_options({"bins": 3, "precision": 1e-3})
    batches = list(eng.run(spec, inputs, opts, Context()))
    # the same network and weights, exactly (float weights: brute-force enumeration)
    cat, binnings = discretise(frame, form.encoding, bins=3)
    bn = learn_bn(cat, ["sex"], max_indegree=3)
    w, tau, strict = linear_weights(form, binnings)
    exact = {'E[pred | sex == "F"]': brute_rates(bn, w, tau, ["sex"], strict=strict)[("F",)],
             'E[pred | sex == "M" and edu in {"deg"}]':
                 brute_rates(bn, w, tau, ["sex"], evidence={"edu": "deg"}, strict=strict)[("M",)]}
    prev = None
    for b in batches:
        for key, p in exact.items():
            lv = b.leaves[key]
            assert lv.lo[0] <= float(p) + 1e-12 and float(p) <= lv.hi[0] + 1e-12
            if prev is not None:  # nested
                assert prev.leaves[key].lo[0] <= lv.lo[0] + 1e-12 and lv.hi[0] <= prev.leaves[key].hi[0] + 1e-12
        prev = b
    last = batches[-1]
    assert all(lv.hi[0] - lv.lo[0] <= 1e-3 for lv in last.leaves.values())


def test_should_stop_aborts():
    from fairaudit.engines.fvgm.subset_sum import Stopped
    bn = a12_3_bn()
    with pytest.raises(Stopped):
        positive_rate(bn, W_A12_3, 3, {"A": 2}, should_stop=lambda: True)
    assert positive_rate(bn, W_A12_3, 3, {"A": 2}, should_stop=lambda: False) == F(14, 25)
