"""The exact core of the justicia engine (fairaudit.engines.justicia.rates): notes §B10 worked examples, a brute-force and a
Monte-Carlo oracle on random small problems, independent populations, and what the enumeration mode captures."""
from __future__ import annotations

import itertools
import random
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from fairaudit.engines.justicia import rates as J
from fairaudit.models.encoding import EncodedColumn, Encoding
from fairaudit.models.forms import DecisionNode, LinearForm, TreeForm

B = (0, 1)


def dist_of(variables, protected, groups, weight=None):
    return J.ProductDistribution(tuple(variables), tuple(protected), groups, weight or {})


def bern(p):
    p = F(p)
    return (1 - p, p)


# ---- §B10 worked examples ------------------------------------------------------------------------------------

def example2_paths():
    """Fig. 1 tree: F ? I : J (F, I, J Booleans treated as independent, as in the paper's Example 2)."""
    T, Fv = frozenset({1}), frozenset({0})
    return J.Paths((({"F": T, "I": T}, True), ({"F": T, "I": Fv}, False),
                    ({"F": Fv, "J": T}, True), ({"F": Fv, "J": Fv}, False)))


def example2_dist(conditional: bool):
    vs = [J.Variable("age40", B, True), J.Variable("F", B), J.Variable("I", B), J.Variable("J", B)]
    if conditional:
        g = {(1,): {"F": bern("0.01"), "I": bern("0.99"), "J": bern("0.18")},
             (0,): {"F": bern("0.82"), "I": bern("0.88"), "J": bern("0.0")}}
    else:
        m = {"F": bern("0.41"), "I": bern("0.93"), "J": bern("0.09")}
        g = {(1,): dict(m), (0,): dict(m)}
    return dist_of(vs, ["age40"], g)


def test_b10_2_example2_marginal():
    rates = J.group_rates(example2_paths(), example2_dist(False))
    assert rates == {(0,): F("0.4344"), (1,): F("0.4344")}
    m = J.metrics(rates)
    assert m.di == 1 and m.sp == 0


def test_b10_3_example2_conditional():
    rates = J.group_rates(example2_paths(), example2_dist(True))
    assert rates == {(1,): F("0.1881"), (0,): F("0.7216")}
    m = J.metrics(rates)
    assert m.di == F("0.1881") / F("0.7216") and round(float(m.di), 6) == 0.260671
    assert m.sp == F("0.5335") and m.least == (1,) and m.most == (0,)


def test_same_feature_trap_one_categorical_variable():
    """I ≡ income ≥ 0.29 and J ≡ income ≥ 0.69 test ONE feature: as a categorical variable (three bins) the path
    F=0 ∧ J=1 needs the top bin, and F=1 ∧ I=1 the two upper bins; the rate is exact, not the product of two
    independent Booleans (notes §B4 caution)."""
    vs = [J.Variable("a", B, True), J.Variable("F", B), J.Variable("income", ("low", "mid", "high"))]
    up, top = frozenset({1, 2}), frozenset({2})
    paths = J.Paths((({"F": frozenset({1}), "income": up}, True), ({"F": frozenset({1}), "income": frozenset({0})}, False),
                     ({"F": frozenset({0}), "income": top}, True), ({"F": frozenset({0}), "income": frozenset({0, 1})}, False)))
    # Pr[I] = 0.93, Pr[J] = 0.09 as bins: low 0.07, mid 0.84, high 0.09
    d = dist_of(vs, ["a"], {(0,): {"F": bern("0.41"), "income": (F("0.07"), F("0.84"), F("0.09"))}})
    assert J.group_rates(paths, d)[(0,)] == F("0.41") * F("0.93") + F("0.59") * F("0.09")  # 0.4344: consistent
    # and the independent-Boolean encoding with the constraint (¬J ∨ I) and unchanged marginals is NOT this number
    assert float(F("0.4344")) != pytest.approx(0.430683, abs=1e-6)


def test_b10_1_quantifier_semantics():
    """φ = (x ↔ e), x ~ R^0.3: ER (∃e, R x) = 0.7, UR (∀e, R x) = 0.3 = 1 − ER(¬φ)."""
    vs = [J.Variable("e", B, True), J.Variable("x", B)]
    one, zero = frozenset({1}), frozenset({0})
    phi = J.Paths((({"x": one, "e": one}, True), ({"x": zero, "e": zero}, True),
                   ({"x": one, "e": zero}, False), ({"x": zero, "e": one}, False)))
    d = dist_of(vs, ["e"], {(0,): {"x": bern("0.3")}, (1,): {"x": bern("0.3")}})
    hi = J.most_favoured(phi, d, shared=True)
    lo = J.most_favoured(phi, d, least=True, shared=True)
    assert (hi.value, hi.group) == (F("0.7"), (0,))
    assert (lo.value, lo.group) == (F("0.3"), (1,))


def example3():
    """φ = (¬F ∨ I ∨ S) ∧ (F ∨ J), protected A (unused) and S, marginals 0.41 / 0.93 / 0.09 (disjoint paths)."""
    one, zero = frozenset({1}), frozenset({0})
    paths = J.Paths((({"F": one, "I": one}, True), ({"F": one, "I": zero, "S": one}, True),
                     ({"F": one, "I": zero, "S": zero}, False), ({"F": zero, "J": one}, True),
                     ({"F": zero, "J": zero}, False)))
    vs = [J.Variable("A", B, True), J.Variable("S", B, True), J.Variable("F", B), J.Variable("I", B),
          J.Variable("J", B)]
    m = {"F": bern("0.41"), "I": bern("0.93"), "J": bern("0.09")}
    d = dist_of(vs, ["A", "S"], {a: dict(m) for a in itertools.product(B, B)})
    return paths, d


def test_b10_4_example3_learning():
    paths, d = example3()
    hi = J.most_favoured(paths, d, shared=True)
    lo = J.most_favoured(paths, d, least=True, shared=True)
    assert hi.value == 1 - F("0.59") * F("0.91") == F("0.4631") and hi.group[1] == 1
    assert lo.value == F("0.4344") and lo.group[1] == 0  # = 1 − 0.5656; A is a tie-break, not asserted
    rates = J.group_rates(paths, d)
    assert max(rates.values()) == hi.value and min(rates.values()) == lo.value


def test_b10_7_pb_example_and_float_trap():
    assert J.quantise([1.5, -0.6, 0.9], -1.0) == ([30, -12, 18], -20)
    assert int(float(-0.6 / 1.5) * 30) == -11  # the authors' truncation
    vs = [J.Variable("g", B, True)] + [J.Variable(f"x{i}", B) for i in (1, 2, 3)]
    score = J.LinearScore({"x1": (F(0), F(30)), "x2": (F(0), F(-12)), "x3": (F(0), F(18))}, F(-20), strict=False)
    d = dist_of(vs, ["g"], {(0,): {"x1": bern("0.5"), "x2": bern("0.4"), "x3": bern("0.7")}})
    assert J.group_rates(score, d)[(0,)] == F("0.44")
    # truncated weights give the same satisfying set here
    score11 = J.LinearScore({"x1": (F(0), F(30)), "x2": (F(0), F(-11)), "x3": (F(0), F(18))}, F(-20), strict=False)
    assert J.group_rates(score11, d)[(0,)] == F("0.44")


def b10_9():
    vs = [J.Variable("R", B, True), J.Variable("S", B, True), J.Variable("x1", B), J.Variable("x2", B)]
    one, zero = frozenset({1}), frozenset({0})
    paths = J.Paths((({"x1": one}, True), ({"x1": zero, "x2": one}, True), ({"x1": zero, "x2": zero}, False)))
    g = {(1, 1): {"x1": bern("0.6"), "x2": bern("0.5")}, (1, 0): {"x1": bern("0.4"), "x2": bern("0.5")},
         (0, 1): {"x1": bern("0.5"), "x2": bern("0.2")}, (0, 0): {"x1": bern("0.2"), "x2": bern("0.25")}}
    return paths, dist_of(vs, ["R", "S"], g, {a: F(1, 4) for a in g})


def test_b10_9_compound_groups_enum_and_learn():
    paths, d = b10_9()
    rates = J.group_rates(paths, d)
    assert rates == {(1, 1): F("0.8"), (1, 0): F("0.7"), (0, 1): F("0.6"), (0, 0): F("0.4")}
    m = J.metrics(rates)
    assert (m.di, m.sp, m.most, m.least) == (F("0.5"), F("0.4"), (1, 1), (0, 0))
    # learning with group-conditional distributions agrees with enumeration (Lemma 2) ...
    assert J.most_favoured(paths, d).value == F("0.8") and J.most_favoured(paths, d).group == (1, 1)
    assert J.most_favoured(paths, d, least=True).value == F("0.4")
    # ... the ER semantics (pooled marginals p1 = 0.425, p2 = 0.3625) sees no bias: A is not in φ
    pooled = d.pooled()
    assert pooled.groups[(0, 0)]["x1"][1] == F("0.425") and pooled.groups[(0, 0)]["x2"][1] == F("0.3625")
    hi = J.most_favoured(paths, d, shared=True)
    lo = J.most_favoured(paths, d, least=True, shared=True)
    assert hi.value == lo.value  # DI = 1, SP = 0
    assert J.metrics(J.group_rates(paths, pooled)).di == 1


def test_b10_8_equalized_odds():
    """Ŷ = x; Pr[x | a, y] known: TPR(0)=0.9, TPR(1)=0.6, FPR(0)=0.2, FPR(1)=0.1."""
    vs = [J.Variable("a", B, True), J.Variable("x", B)]
    paths = J.Paths((({"x": frozenset({1})}, True), ({"x": frozenset({0})}, False)))
    pos = dist_of(vs, ["a"], {(0,): {"x": bern("0.9")}, (1,): {"x": bern("0.6")}})
    neg = dist_of(vs, ["a"], {(0,): {"x": bern("0.2")}, (1,): {"x": bern("0.1")}})
    eo = J.equalized_odds(paths, pos, neg)
    assert eo["tpr_gap"] == F("0.3") and eo["fpr_gap"] == F("0.1") and eo["eo"] == F("0.3")


# ---- random small problems: brute force over the whole feature space, and Monte Carlo ------------------------

def random_problem(rng: random.Random, n_num=2, n_cat=2, n_prot=2):
    variables, cols = [], []
    for i in range(n_prot):
        vals = tuple(f"p{i}{k}" for k in range(rng.randint(2, 3)))
        variables.append(J.Variable(f"A{i}", vals, True))
        cols.append(EncodedColumn(f"A{i}", "categorical", vals))
    for i in range(n_num):
        vals = tuple(sorted(rng.sample(range(-5, 10), rng.randint(2, 4))))
        variables.append(J.Variable(f"n{i}", vals))
        cols.append(EncodedColumn(f"n{i}", "numeric"))
    for i in range(n_cat):
        vals = tuple(f"c{i}{k}" for k in range(rng.randint(2, 3)))
        variables.append(J.Variable(f"c{i}", vals))
        cols.append(EncodedColumn(f"c{i}", "categorical", vals))
    encoding = Encoding(tuple(cols))
    prot = tuple(v.name for v in variables if v.protected)
    groups = {}
    for a in itertools.product(*(v.values for v in variables if v.protected)):
        if rng.random() < 0.15:
            continue  # some compound groups absent
        per = {}
        for v in variables:
            if not v.protected:
                w = [rng.randint(0, 4) for _ in v.values]
                if not sum(w):
                    w[0] = 1
                per[v.name] = tuple(F(x, sum(w)) for x in w)
        groups[a] = per
    return variables, encoding, J.ProductDistribution(tuple(variables), prot, groups)


def random_tree(rng, encoding, depth=4):
    d = len(encoding)
    nodes = []

    def make(level):
        i = len(nodes)
        nodes.append(None)
        if level == depth or rng.random() < 0.2:
            nodes[i] = DecisionNode(i, rng.choice([0.1, 0.4, 0.6, 0.9]), 1)
            return i
        j = rng.randrange(d)
        thr = rng.choice([-2.5, 0.5, 1.5, 3.5, 6.5]) if encoding.names[j].find("=") < 0 else 0.5
        left = make(level + 1)
        right = make(level + 1)
        nodes[i] = DecisionNode(i, 0.5, 1, j, thr, left, right)
        return i

    make(0)
    return TreeForm(tuple(nodes), encoding)


def brute_force(form, variables, dist, group):
    """Σ over the whole product space of Pr × form.predict (the model's own predict on encoded rows)."""
    names = [v.name for v in variables]
    combos = list(itertools.product(*(range(len(v.values)) for v in variables)))
    frame = pd.DataFrame([[v.values[k] for v, k in zip(variables, c)] for c in combos], columns=names)
    pred = form.predict(frame)
    total = F(0)
    for c, y in zip(combos, pred):
        if y:
            p = F(1)
            for v, k in zip(variables, c):
                p *= dist.probs(group, v.name)[k]
            total += p
    return total


@pytest.mark.parametrize("seed", range(12))
def test_tree_matches_brute_force_and_learning(seed):
    rng = random.Random(seed)
    variables, encoding, dist = random_problem(rng)
    form = random_tree(rng, encoding)
    paths = J.tree_paths(form, variables)
    rates = J.group_rates(paths, dist)
    for a, r in rates.items():
        assert r == brute_force(form, variables, dist, a)
    for least in (False, True):
        ext = J.most_favoured(paths, dist, least=least)
        target = min(rates.values()) if least else max(rates.values())
        assert ext.value == target and rates[ext.group] == target
        pooled = J.group_rates(paths, dist.pooled())
        ext = J.most_favoured(paths, dist, least=least, shared=True)
        assert ext.value == (min(pooled.values()) if least else max(pooled.values()))


@pytest.mark.parametrize("seed", range(12))
def test_linear_matches_brute_force(seed):
    rng = random.Random(100 + seed)
    variables, encoding, dist = random_problem(rng)
    weights = np.array([rng.choice([-2.0, -1.5, -0.5, 0.25, 0.5, 1.0, 3.0]) for _ in range(len(encoding))])
    form = LinearForm(weights, rng.choice([-1.0, 0.0, 0.5, 1.25]), encoding)
    score = J.linear_score(form, variables)
    rates = J.group_rates(score, dist)
    for a, r in rates.items():
        assert r == brute_force(form, variables, dist, a)
    for least in (False, True):
        ext = J.most_favoured(score, dist, least=least)
        assert ext.value == (min(rates.values()) if least else max(rates.values()))
        pooled = J.group_rates(score, dist.pooled())
        ext = J.most_favoured(score, dist, least=least, shared=True)
        assert ext.value == (min(pooled.values()) if least else max(pooled.values()))


def test_sklearn_tree_and_monte_carlo():
    """A real sklearn tree on an encoded sample: exact rates agree with the paths of the raw estimator and of the
    TreeForm, and with Monte Carlo from the product distribution within 5 standard errors."""
    from sklearn.tree import DecisionTreeClassifier

    rng = random.Random(7)
    variables, encoding, dist = random_problem(rng, n_num=2, n_cat=1, n_prot=2)
    nprng = np.random.default_rng(7)
    n = 4000
    a_list = list(dist.groups)
    rows = []
    for _ in range(n):
        a = a_list[nprng.integers(len(a_list))]
        row = dict(zip(dist.protected, a))
        for v in dist.features():
            p = np.array([float(x) for x in dist.groups[a][v.name]])
            row[v.name] = v.values[nprng.choice(len(v.values), p=p)]
        rows.append(row)
    frame = pd.DataFrame(rows)
    X = encoding.transform(frame)
    y = ((X[:, -1] + X[:, len(encoding) - 2] * 0.3 + nprng.normal(0, 0.5, n)) > 0.5).astype(int)
    clf = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    p_raw = J.tree_paths((clf, encoding), variables)
    rates = J.group_rates(p_raw, dist)
    # Monte Carlo: the classifier's own predictions on the sampled rows, per group
    pred = clf.predict(X)
    for a, r in rates.items():
        mask = np.all([frame[c].to_numpy() == v for c, v in zip(dist.protected, a)], axis=0)
        m = mask.sum()
        if m < 50:
            continue
        mc = pred[mask].mean()
        se = max(np.sqrt(float(r) * (1 - float(r)) / m), 1e-3)
        assert abs(mc - float(r)) <= 5 * se


# ---- populations: independence within groups, and correlation ----------------------------------------------

def population(rows_per_group, variables, dist):
    """A finite population in which, inside each group, the features are exactly independent: the full product of
    the group's value counts (every combination, each repeated count_1·count_2·… times)."""
    out = []
    for a, per in dist.groups.items():
        feats = dist.features()
        denom = [max(x.denominator for x in per[v.name]) for v in feats]
        lists = []
        for v, dnm in zip(feats, denom):
            lists.append([(v.values[k], int(per[v.name][k] * dnm)) for k in range(len(v.values))])
        for combo in itertools.product(*lists):
            mult = 1
            for _, c in combo:
                mult *= c
            if mult:
                out.append({**dict(zip(dist.protected, a)), **{v.name: u for v, (u, _) in zip(feats, combo)},
                            "_w": mult})
    frame = pd.DataFrame(out)
    return frame.loc[frame.index.repeat(frame["_w"])].drop(columns="_w").reset_index(drop=True)


def test_independent_population_gives_exact_group_rates():
    rng = random.Random(3)
    variables, encoding, dist = random_problem(rng, n_num=1, n_cat=2, n_prot=1)
    frame = population(None, variables, dist)
    est = J.estimate(frame, variables, dist.protected)
    assert est.groups == dist.groups  # the estimated group-conditional marginals are the generating ones
    form = random_tree(rng, encoding)
    rates = J.group_rates(J.tree_paths(form, variables), est)
    pred = form.predict(frame)
    for a, r in rates.items():
        mask = (frame[dist.protected[0]] == a[0]).to_numpy()
        assert r == F(int(pred[mask].sum()), int(mask.sum()))  # the model's empirical group rate, exactly


def test_correlation_captured_and_ignored():
    """Enumeration mode captures the A–X dependence (group-conditional marginals) but not X–X dependence within a
    group: with x1 = x2 inside every group, the empirical rate of Ŷ = x1 ∧ x2 is Pr[x1], the modelled one Pr[x1]²."""
    vs = [J.Variable("a", ("f", "m"), True), J.Variable("x1", B), J.Variable("x2", B)]
    frame = pd.DataFrame({"a": ["f"] * 4 + ["m"] * 4, "x1": [1, 0, 0, 0, 1, 1, 1, 0]})
    frame["x2"] = frame["x1"]
    est = J.estimate(frame, vs, ["a"])
    assert est.groups[("f",)]["x1"] == bern(F(1, 4)) and est.groups[("m",)]["x1"] == bern(F(3, 4))
    one = frozenset({1})
    conj = J.Paths((({"x1": one, "x2": one}, True), ({"x1": one, "x2": frozenset({0})}, False),
                    ({"x1": frozenset({0})}, False)))
    rates = J.group_rates(conj, est)
    assert rates == {("f",): F(1, 16), ("m",): F(9, 16)}  # modelled: x1, x2 independent within the group
    # empirical: 1/4 and 3/4 — the within-group correlation is not modelled; the group difference (A–X) is
    assert J.metrics(rates).sp == F(1, 2) and J.metrics(J.group_rates(conj, est.pooled())).sp == 0
    # a classifier reading one feature only gets the empirical group rates exactly
    single = J.Paths((({"x1": one}, True), ({"x1": frozenset({0})}, False)))
    assert J.group_rates(single, est) == {("f",): F(1, 4), ("m",): F(3, 4)}


def test_estimate_with_label_and_unknown_values():
    vs = [J.Variable("a", B, True), J.Variable("x", B)]
    frame = pd.DataFrame({"a": [0, 0, 1, 1, 1], "x": [1, 0, 1, 1, 0], "y": [1, 0, 1, 0, 1]})
    pos = J.estimate(frame, vs, ["a"], label="y", label_value=1)
    assert pos.groups[(0,)]["x"] == (F(0), F(1)) and pos.groups[(1,)]["x"] == (F(1, 2), F(1, 2))
    with pytest.raises(ValueError):
        J.estimate(frame.assign(x=[1, 0, 2, 1, 0]), vs, ["a"])


# ---- the engine ------------------------------------------------------------------------------------------------

def engine_leaves(spec_text, inputs, **options):
    from fairaudit.engines import get
    from fairaudit.core.engine import Context
    from fairaudit.spec import parse

    engine = get("justicia")
    spec = parse(spec_text)
    assert engine.check(spec, inputs) == []
    batch = next(iter(engine.run(spec, inputs, engine.resolve_options(options), Context())))
    return {k: v.exact[0] for k, v in batch.leaves.items()}, batch


def test_engine_on_independent_population_equals_the_rows():
    """A dataset in which age and grp are exactly independent within each sex: the engine's exact leaves are the
    model's empirical rates on the rows (what the dataset engine reports)."""
    from fairaudit import data
    from fairaudit.core.inputs import Inputs

    ages, grps = [(20, 3), (35, 1), (50, 2), (70, 2)], [("a", 2), ("b", 1)]
    rows = []
    for sex, age_w in (("F", 1), ("M", 2)):
        for (age, wa), (grp, wg) in itertools.product(ages, grps):
            n = wa * wg * age_w
            rows += [{"sex": sex, "age": age if sex == "F" else age + 5, "grp": grp,
                      "y": "yes" if (age + (sex == "M") * 20 + (grp == "a") * 15 + k * 7) % 50 > 22 else "no"}
                     for k in range(n)]
    frame = pd.DataFrame(rows)
    ds = data.from_csv(frame.to_csv(index=False).encode(), label="y", protected=["sex"], favourable="yes",
                       name="indep.csv")
    for kind in ("tree", "logreg"):
        inputs = Inputs.build(ds, model=kind, rows="all")  # the independence holds on all rows, not a split
        leaves, _ = engine_leaves('E[pred | sex == "F"] >= 0 and E[pred | sex == "M"] >= 0', inputs)
        pred = inputs.model.predict(ds.frame)
        for sex in ("F", "M"):
            mask = (ds.frame["sex"] == sex).to_numpy()
            assert leaves[f'E[pred | sex == "{sex}"]'] == F(int(pred[mask].sum()), int(mask.sum()))


def test_engine_leaves_match_product_oracle_eo_and_pooled():
    from fairaudit.engines.justicia.engine import _model_inputs, cell_oracle, product_oracle

    inputs = _model_inputs("tree")
    # equalized odds leaves: cells are (sex, grp, label) — the protected attributes sex and grp, and the label
    leaves, batch = engine_leaves('E[pred | label == 1 and sex == "F"] - E[pred | label == 1 and sex == "M"] < 1 '
                                  'and E[pred | label == 0 and sex == "F"] < 1', inputs)
    frame = inputs.dataset.frame
    lab = np.asarray(inputs.labels)
    import copy

    for y, sex in ((1, "F"), (1, "M"), (0, "F")):
        sub = copy.copy(inputs)
        keep = np.zeros(len(frame), dtype=bool)
        keep[inputs.positions] = True  # the audited (held-out) rows
        sub.positions = np.flatnonzero(keep & (lab == y) & (frame["sex"] == sex).to_numpy())
        held = frame.iloc[sub.positions]
        want = sum(n / len(held) * product_oracle(sub, "grp", g) for g, n in held["grp"].value_counts().items())
        assert float(leaves[f'E[pred | label == {y} and sex == "{sex}"]']) == pytest.approx(want, abs=1e-12)
    # correlation off: every group uses the pooled feature distribution
    leaves, _ = engine_leaves('E[pred | grp == "a"] <= 1', inputs, correlation=False)
    assert float(leaves['E[pred | grp == "a"]']) == pytest.approx(cell_oracle(inputs, {"grp": "a"}, correlation=False),
                                                                   abs=1e-12)


def test_b10_10_sample_size_and_radius():
    k = J.sample_size(10, 0.05, 0.05)
    assert k == 119_830  # 20000 · ln 400 = 119 829.3 (notes: ≈ 119 829)
    assert J.estimation_radius([2] * 10, k, 0.05) <= 0.05 < J.estimation_radius([2] * 10, k - 100, 0.05)
    # categorical features: the smaller of K/2 per feature with K events each (Hoeffding) and Weissman's
    # sqrt(ln((2^K − 2)·m/δ) / (2k)), chosen from K alone
    assert J.estimation_radius([3], 1000, 0.1) == pytest.approx(min(1.5 * np.sqrt(np.log(60) / 2000),
                                                                    np.sqrt(np.log(60) / 2000)))
    assert J.estimation_radius([40], 1000, 0.1) == pytest.approx(np.sqrt(np.log((2.0 ** 40 - 2) * 10) / 2000))
    assert J.estimation_radius([40], 1000, 0.1) < 0.15 < 20 * np.sqrt(np.log(800) / 2000)  # Hoeffding: > 1
    # two features: δ/2 each
    assert J.estimation_radius([2, 2], 1000, 0.1) == pytest.approx(2 * np.sqrt(np.log(40) / 2000))
    iv = J.metric_intervals({(0,): 0.4, (1,): 0.8}, {(0,): 0.05, (1,): 0.05})
    assert iv["sp"] == pytest.approx((0.3, 0.5)) and iv["di"] == pytest.approx((0.35 / 0.85, 0.45 / 0.75))


def test_radius_covers_estimated_rates():
    """Estimated from k rows, the rate is within the radius of the true rate (seeded; δ = 0.05 per draw, 20 draws,
    and the bound is loose, so a failure would mean a wrong radius)."""
    rng = np.random.default_rng(0)
    vs = [J.Variable("a", (0,), True), J.Variable("x1", (0, 1, 2)), J.Variable("x2", B)]
    one = frozenset({1})
    paths = J.Paths((({"x1": frozenset({2})}, True), ({"x1": frozenset({0, 1}), "x2": one}, True),
                     ({"x1": frozenset({0, 1}), "x2": frozenset({0})}, False)))
    p1, p2 = np.array([0.5, 0.3, 0.2]), 0.35
    truth = float(J.group_rates(paths, dist_of(vs, ["a"], {(0,): {"x1": (F("0.5"), F("0.3"), F("0.2")),
                                                                  "x2": bern("0.35")}}))[(0,)])
    k = 400
    eps = J.estimation_radius([3, 2], k, 0.05)
    for _ in range(20):
        frame = pd.DataFrame({"a": 0, "x1": rng.choice(3, k, p=p1), "x2": (rng.random(k) < p2).astype(int)})
        est = J.group_rates(paths, J.estimate(frame, vs, ["a"]))[(0,)]
        assert abs(float(est) - truth) <= eps


def test_learning_prunes_groups():
    """40 compound groups (5 × 2 × 4), a classifier that reads no protected attribute: under the ER semantics every
    group ties, and branch and bound expands one branch (root + 3 levels) instead of the 56 partial assignments."""
    vs = [J.Variable("race", tuple(range(5)), True), J.Variable("sex", B, True), J.Variable("age", tuple(range(4)), True),
          J.Variable("x1", B), J.Variable("x2", B)]
    paths, d9 = b10_9()
    groups = {a: {"x1": bern(F(1 + a[0], 7)), "x2": bern(F(1 + a[2], 6))}
              for a in itertools.product(range(5), B, range(4))}
    d = dist_of(vs, ["race", "sex", "age"], groups, {a: F(1, 40) for a in groups})
    hi = J.most_favoured(paths, d, shared=True)
    assert hi.explored == 4 and hi.value == max(J.group_rates(paths, d.pooled()).values())
    exact_hi = J.most_favoured(paths, d)  # group-conditional: agrees with enumeration
    rates = J.group_rates(paths, d)
    assert exact_hi.value == max(rates.values()) and exact_hi.group == (4, 0, 3)
    assert J.most_favoured(paths, d, least=True).value == min(rates.values())


def test_quantised_linear_and_state_cap():
    score = J.LinearScore({"x1": (F(0), F(3, 2)), "x2": (F(0), F(-3, 5)), "x3": (F(0), F(9, 10))}, F(-1), strict=False)
    q = score.quantised(30)
    assert q.weights == {"x1": (0, 30), "x2": (0, -12), "x3": (0, 18)} and q.bias == -20
    vs = [J.Variable("g", B, True)] + [J.Variable(f"x{i}", B) for i in (1, 2, 3)]
    d = dist_of(vs, ["g"], {(0,): {"x1": bern("0.5"), "x2": bern("0.4"), "x3": bern("0.7")}})
    assert J.group_rates(q, d)[(0,)] == J.group_rates(score, d)[(0,)] == F("0.44")
    # many incommensurable weights: the exact distribution is refused, not computed forever
    names = [f"y{i}" for i in range(12)]
    wide = J.LinearScore({n: tuple(F((-1) ** k * (i + 1), p) for k, p in enumerate((2, 3, 5, 7, 11, 13)))
                          for i, n in enumerate(names)}, F(0))
    vs = [J.Variable("g", B, True)] + [J.Variable(n, tuple(range(6))) for n in names]
    d = dist_of(vs, ["g"], {(0,): {n: tuple(F(1, 6) for _ in range(6)) for n in names}})
    with pytest.raises(J.TooManyStates):
        J.linear_rate(wide, lambda n: d.probs((0,), n), names, max_states=1000)


def test_engine_bins_and_multiplier_options():
    from fairaudit.engines.justicia.engine import _binned, _model_inputs

    x = pd.Series([1.0, 2.0, 3.0, 4.0, 10.0, 10.0, 20.0, 30.0])
    b = _binned(x, 2)
    assert b.nunique() == 2 and b.iloc[0] == pytest.approx(2.5)
    inputs = _model_inputs("logreg")
    exact, _ = engine_leaves('E[pred | sex == "F"] >= 0', inputs)
    rounded, _ = engine_leaves('E[pred | sex == "F"] >= 0', inputs, multiplier=30, bins=4)
    assert exact.keys() == rounded.keys() and all(0 <= v <= 1 for v in rounded.values())


def test_radius_covers_the_total_variation_of_a_many_valued_feature():
    """One 12-valued feature estimated from k rows: the radius (Weissman's bound at this K) covers TV(p̂, p) in
    every one of 300 seeded draws (it must fail in at most 5 % of them; it is loose, so none is expected)."""
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(12))
    k = 300
    eps = J.estimation_radius([12], k, 0.05)
    assert eps < 12 / 2 * np.sqrt(np.log(2 * 12 / 0.05) / (2 * k))  # the sharper of the two bounds is used
    misses = sum(0.5 * np.abs(rng.multinomial(k, p) / k - p).sum() > eps for _ in range(300))
    assert misses <= 15


def test_float32_thresholds_decide_as_scikit_learn():
    """scikit-learn's trees compare the input cast to float32: trained on 1.3 / 1.5, its threshold is float32(1.4)
    = 1.3999999762 and 1.4 goes LEFT. The tree's form (``as_tree``), and so justicia's exact rate, must agree with
    ``predict`` on values between the float32 and the float64 reading (here every row is 1.4 or 1.45)."""
    import pandas as pd

    from fairaudit import api, data
    from fairaudit.models.training import train
    from fairaudit.models.sklearn_models import float32_cut

    rng = np.random.default_rng(0)
    n = 400
    train_frame = pd.DataFrame({"s": rng.choice(["F", "M"], n), "x": rng.choice([1.3, 1.5], n)})
    train_frame["y"] = np.where(train_frame["x"] > 1.4, "yes", "no")
    ds = data.from_csv(train_frame.to_csv(index=False).encode(), label="y", protected=["s"], favourable="yes",
                       name="train32.csv")
    model = train(ds, "tree", seed=0)
    audit_frame = pd.DataFrame({"s": rng.choice(["F", "M"], n), "x": rng.choice([1.4, 1.45], n, p=[0.7, 0.3])})
    audit_frame["y"] = rng.choice(["no", "yes"], n)
    audited = data.from_csv(audit_frame.to_csv(index=False).encode(), label="y", protected=["s"],
                            favourable="yes", name="audit32.csv")
    pred = np.asarray(model.predict(audited.frame))
    assert pred[audited.frame["x"].to_numpy() == 1.4].max() == 0  # scikit-learn sends 1.4 left
    form = model.as_tree()
    assert ((form.score_encoded(form.encoding.transform(audited.frame)) > 0.5) == pred).all()
    r = api.audit(audited, 'E[pred | s == "F"] <= 1', engine="justicia", model=model, rows="all")
    in_f = (audited.frame["s"] == "F").to_numpy()
    leaf = next(i.id for i in r.node_info if i.kind == "expect")
    assert r.final_values(leaf)["estimate"] == pytest.approx(pred[in_f].mean(), abs=1e-12)  # one feature: exact
    t = 1.3999999761581421
    assert 1.4 <= float32_cut(t) and not 1.4 <= t
