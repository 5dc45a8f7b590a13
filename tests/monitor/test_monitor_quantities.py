"""The monitor and the dataset engine on quantities (issue 46): one count on every route, exact means, sound
intervals in the quantity's own units, and the engines that cannot average refusing in one line."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit import data
from fairaudit.base.errors import FairauditError
from fairaudit.core.counting import QUANTUM, Counts, count, encode, shift
from fairaudit.core.observations import Observations
from tests.monitor.same_result import assert_same

SPEC = ('E[amount | sex == "F"] - E[amount | sex == "M"] > -5000 and '
        'E[abs(amount - limit) | race == "A"] < 9000')
RANGES = {"amount": (0, 50000), "limit": (0, 40000)}


def offers(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    amount = np.round(np.clip(rng.gamma(4.0, 5000.0, n) + (sex == "M") * 3000, 0, 50000), 2)
    limit = np.round(rng.uniform(0, 40000, n), 2)
    return pd.DataFrame({"sex": sex, "race": race, "amount": amount, "limit": limit,
                         "approved": (amount > 15000).astype(int)})


def dataset(frame):
    protected = [c for c in ("sex", "race") if c in frame.columns]
    return data.from_csv(frame.to_csv(index=False).encode(), label="approved", protected=protected)


# ---- the kernel: a quantity's sums do not depend on how the stream is split
def _observations(values, masks, bounds=(0.0, 1.0)):
    return Observations({"q": np.asarray(values, float), "e": np.asarray(values, float) > 0.5},
                        {"q": np.asarray(masks, bool), "e": np.asarray(masks, bool)}, len(values),
                        ranges={"q": bounds})


@pytest.mark.parametrize("case", ["random", "constant", "all-masked", "one-row", "boundary-values"])
def test_quantity_counts_do_not_depend_on_the_split(case):
    rng = np.random.default_rng(7)
    n = 257
    values = rng.uniform(0, 1, n)
    masks = rng.random(n) < 0.6
    if case == "constant":  # every row of a piece satisfies the condition and has the same value
        values, masks = np.full(n, 0.25), np.ones(n, bool)
    elif case == "all-masked":
        masks = np.zeros(n, bool)
    elif case == "one-row":
        n, values, masks = 1, values[:1], np.ones(1, bool)
    elif case == "boundary-values":
        values = rng.choice([0.0, 1.0, 0.5 * QUANTUM, 1 - 0.5 * QUANTUM], n)
    obs = _observations(values, masks)
    codes = encode(obs, ["q", "e"])
    points = np.arange(n)
    whole_at, whole = count(codes, ["q", "e"], points)
    for cuts in ([], [n // 2], sorted(set(rng.integers(0, n, 6).tolist())), list(range(1, n))):
        bounds = [0, *cuts, n]
        total, at = Counts.zero(["q", "e"]), {"q": ([], []), "e": ([], [])}
        for a, b in zip(bounds[:-1], bounds[1:]):
            part_at, part = count(codes[a:b], ["q", "e"], np.arange(b - a))
            for key, (s, m) in shift(part_at, total).items():
                at[key][0].extend(s)
                at[key][1].extend(m)
            total = total + part
        assert total == whole
        for key in ("q", "e"):
            assert np.array_equal(np.asarray(at[key][0]), whole_at[key][0])
            assert np.array_equal(np.asarray(at[key][1]), whole_at[key][1])
    # the sum is the fixed-point sum of the values: within QUANTUM / 2 a row of the exact one
    s, m = whole.of("q")
    assert m == int(masks.sum())
    assert abs(s - values[masks].sum()) <= m * QUANTUM / 2 + 1e-9


# ---- every route gives the same answer


def test_every_route_gives_the_same_verdict_and_bounds(tmp_path):
    from fairaudit.engines.monitor.outofcore import audit_file

    frame = offers()
    parquet, csv = tmp_path / "offers.parquet", tmp_path / "offers.csv"
    frame.to_parquet(parquet)
    frame.to_csv(csv, index=False)
    memory = fairaudit.audit(dataset(frame), SPEC, pred="approved == 1", ranges=RANGES, engine="monitor")
    assert memory.verdict in ("true", "false")
    for path in (parquet, csv):
        for read_rows in (100_000, 997, 1):
            if read_rows == 1 and path == csv:
                continue  # one row a chunk: the Parquet file covers it, the CSV reader is slow at it
            out = audit_file(str(path), SPEC, pred="approved == 1", label="approved", protected=["sex", "race"],
                             ranges=RANGES, read_rows=read_rows)
            assert_same(memory, out)


def test_a_value_outside_its_range_names_the_row_on_every_route(tmp_path):
    from fairaudit.engines.monitor.outofcore import audit_file

    frame = offers(500)
    frame.loc[321, "amount"] = 60000.0
    path = tmp_path / "offers.parquet"
    frame.to_parquet(path)
    with pytest.raises(FairauditError, match=r"row 322, 60000"):
        fairaudit.audit(dataset(frame), SPEC, pred="approved == 1", ranges=RANGES)
    frame.loc[450, "amount"] = 70000.0  # a second one, in another chunk: the stream names the first it finds
    frame.to_parquet(path)
    with pytest.raises(FairauditError, match=r"2 rows hold values outside it \(first: row 322, 60000\)"):
        fairaudit.audit(dataset(frame), SPEC, pred="approved == 1", ranges=RANGES)
    for read_rows in (100, 1000):
        with pytest.raises(FairauditError, match=r"row 322 holds 60000 \(the first found\)"):
            audit_file(str(path), SPEC, pred="approved == 1", label="approved", ranges=RANGES, read_rows=read_rows)


# ---- exact means and sound intervals, in the quantity's own units
def test_dataset_engine_means_equal_metricframe_on_real_data():
    from fairlearn.metrics import MetricFrame, mean_prediction
    from sklearn.metrics import mean_absolute_error

    adult = data.load("adult")
    frame = adult.frame
    spec = ('E[hours_per_week | sex == "Female"] >= 0 and E[hours_per_week | sex == "Male"] >= 0 and '
            'E[abs(hours_per_week - age) | sex == "Female"] >= 0 and E[abs(hours_per_week - age) | sex == "Male"] >= 0')
    result = fairaudit.audit(adult, spec, engine="dataset", pred='income == ">50K"',
                             ranges={"hours_per_week": (1, 99), "age": (17, 90)})
    means = MetricFrame(metrics=mean_prediction, y_true=frame["age"], y_pred=frame["hours_per_week"],
                        sensitive_features=frame["sex"]).by_group
    errors = MetricFrame(metrics=mean_absolute_error, y_true=frame["age"], y_pred=frame["hours_per_week"],
                         sensitive_features=frame["sex"]).by_group
    leaves = {tn.text: result.final_values(tn.id) for tn in result.tree.nodes if tn.kind == "expect"}
    for sex in ("Female", "Male"):
        assert leaves[f'E[hours_per_week | sex == "{sex}"]']["estimate"] == pytest.approx(means[sex], abs=1e-12)
        assert leaves[f'E[abs(hours_per_week - age) | sex == "{sex}"]']["estimate"] == pytest.approx(errors[sex],
                                                                                                    abs=1e-12)


def test_a_tie_is_decided_exactly_by_the_dataset_engine():
    frame = pd.DataFrame({"sex": ["F", "F", "M", "M"], "amount": [0.375, 0.125, 0.5, 0.0], "approved": [1, 0, 1, 0]})
    spec = 'E[amount | sex == "F"] == E[amount | sex == "M"]'
    result = fairaudit.audit(dataset(frame), spec, engine="dataset", pred="approved == 1", ranges={"amount": (0, 1)})
    assert result.verdict == "true"
    # decimals as written: 0.1 and 0.2 average exactly 0.15, as 0.3 and 0 do (their floats' sums differ)
    frame["amount"] = [0.1, 0.2, 0.3, 0.0]
    result = fairaudit.audit(dataset(frame), spec, engine="dataset", pred="approved == 1", ranges={"amount": (0, 1)})
    assert result.verdict == "true"
    at = fairaudit.audit(dataset(frame), 'E[amount | sex == "F"] <= 0.15', engine="dataset", pred="approved == 1",
                         ranges={"amount": (0, 1)})
    assert at.verdict == "true"
    # values computed in binary (0.1 + 0.2 is not 0.3) are read exactly as stored, every group alike
    frame["amount"] = [0.1 + 0.2, 0.0, 0.3, 0.0]
    result = fairaudit.audit(dataset(frame), spec, engine="dataset", pred="approved == 1", ranges={"amount": (0, 1)})
    assert result.verdict == "false"
    # a group with no row: the amount's whole range, so a comparison that needs it stays undecided
    empty = fairaudit.audit(dataset(frame), 'E[amount | amount > 0.9] >= 0.5', engine="dataset", pred="approved == 1",
                            ranges={"amount": (0, 1)})
    assert empty.verdict == "unknown"


@pytest.mark.parametrize("seed", range(4))
def test_monitor_intervals_hold_the_population_mean_in_its_units(seed):
    rng = np.random.default_rng(100 + seed)
    n = 3000
    # heavy at the edges of the range: half the values at 0 or 1000
    amount = np.where(rng.random(n) < 0.5, rng.choice([0.0, 1000.0], n), rng.uniform(0, 1000, n))
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "amount": amount, "approved": rng.integers(0, 2, n)})
    result = fairaudit.audit(dataset(frame), 'E[amount | sex == "F"] > 0', pred="approved == 1",
                             ranges={"amount": (0, 1000)}, stop=False)
    leaf = result.final_values("n1")
    assert 0 <= leaf["lo"] <= leaf["hi"] <= 1000
    assert leaf["lo"] <= 500 <= leaf["hi"]  # the population mean: 0.5·500 + 0.5·500
    assert leaf["estimate"] == pytest.approx(frame.amount[frame.sex == "F"].mean(), abs=1000 * QUANTUM)


def test_joint_test_reads_a_quantity_in_its_units():
    frame = offers(20000, seed=3)
    gap = frame.amount[frame.sex == "F"].mean() - frame.amount[frame.sex == "M"].mean()
    assert -4000 < gap < -2000
    ds = dataset(frame)
    above = fairaudit.audit(ds, 'E[amount | sex == "F"] - E[amount | sex == "M"] > -6000', pred="approved == 1",
                            ranges=RANGES)
    below = fairaudit.audit(ds, 'E[amount | sex == "F"] - E[amount | sex == "M"] > 0', pred="approved == 1",
                            ranges=RANGES)
    assert (above.verdict, below.verdict) == ("true", "false")


@pytest.mark.parametrize("engine", ["fairsquare", "justicia", "fvgm"])
def test_engines_that_cannot_average_refuse_in_one_line(engine):
    from fairaudit.core import registry
    from fairaudit.spec.files import parsed_with_ranges

    spec = parsed_with_ranges('E[amount | sex == "F"] > 10', {"amount": (0, 100)})
    (reason,) = [r for r in registry.get(engine).check(spec, None) if "averages" in r]
    assert reason == 'it bounds probabilities, not averages (E[amount | sex == "F"] averages an amount)'
    assert not [r for r in registry.get("fairquant").check(spec, None) if "averages" in r]  # no E[...] at all


# ---- what the reader sees: the quantity's own words and units
def test_headline_and_words_speak_of_averages_in_their_units():
    from fairaudit.core.explain import term_kind, term_words
    from fairaudit.core.trace import AuditResult
    from fairaudit.viz.convergence import natural_range

    frame = offers(20000, seed=3)
    result = fairaudit.audit(dataset(frame), 'E[amount | sex == "F"] - E[amount | sex == "M"] > -6000',
                             pred="approved == 1", ranges=RANGES)
    assert result.summary.startswith("The average amount of those with sex = F is lower than that of those with "
                                     "sex = M: the gap is between -")
    assert "e+0" not in result.summary  # amounts in their digits, not 1.898e+04
    assert "amount in [0, 50000]" in result.guarantee.assumes
    for again in (result, AuditResult.from_json(result.to_json())):  # a result read back keeps the ranges
        nodes = again.nodes
        leaf = next(n for n in nodes if n["kind"] == "expect")
        assert leaf["range"] == [0.0, 50000.0]
        assert natural_range(leaf["id"], nodes) == (0.0, 50000.0)
        assert term_words(leaf, nodes) == "average amount among those with sex = F"
        assert term_kind(leaf) == "average"
    single = fairaudit.audit(dataset(frame), 'E[abs(amount - limit) | race == "A"] < 30000', pred="approved == 1",
                             ranges=RANGES)
    assert single.summary.startswith("The average abs(amount - limit) of those with race = A is between ")


def test_amounts_are_shown_in_digits():
    from fairaudit.core.guarantee import format_interval

    assert format_interval(18983.2, 20910.7) == "[18980, 20910]"
    assert format_interval(9999.5, 10000.4) == "[9999.5, 10000.4]"  # alike at 4 digits, apart: more digits
    assert format_interval(18975, 18984) == "[18975, 18984]"
    assert format_interval(0.1, 0.1 + 1e-17) == "0.1"  # an exact value's outward-rounded ends read as one number
    assert format_interval(0.123456, 0.5) == "[0.1235, 0.5]"
    assert format_interval(1e20, 2e20) == "[1e+20, 2e+20]"


def test_repair_refuses_an_amount_and_confirm_keeps_the_ranges():
    frame = offers(6000, seed=4)
    ds = dataset(frame)
    spec = 'E[amount | sex == "M"] - E[amount | sex == "F"] < 4000'
    from fairaudit.spec.files import parsed_with_ranges

    ranged = parsed_with_ranges(spec, RANGES)
    with pytest.raises(FairauditError, match="repair works with rates of yes/no outcomes"):
        fairaudit.repair(ds, ranged, "logreg", group_by="sex")
    result = fairaudit.confirm(ds, spec, "n0", pred="approved == 1", ranges=RANGES)
    assert result.info["confirmation"]["threshold"] > 1000  # a threshold in the amount's units, not a rate's
    assert "amount in [0, 50000]" in result.guarantee.assumes


def test_the_halves_warning_says_an_amount_in_its_units():
    frame = offers(6000, seed=5).sort_values("amount").reset_index(drop=True)  # drifting: sorted by the amount
    result = fairaudit.audit(dataset(frame), 'E[amount | sex == "F"] > 1000', pred="approved == 1", ranges=RANGES,
                             order="given", stop=False)
    (halves,) = [w for w in result.warnings if "first half of the stream" in w]
    first, second = (float(x) for x in halves.split(" is ")[1].split(" on the first half")[0:1] +
                     halves.split(" rows and ")[1].split(" on the second")[0:1])
    assert 1000 < first < second <= 50000  # in the amount's units, not on [0, 1]


def test_the_one_look_interval_of_a_mean_covers_at_its_level():
    from fairaudit.engines.dataset.engine import _one_look_mean

    rng = np.random.default_rng(11)
    delta, misses = 0.1, 0
    for _ in range(2000):  # heavy at both edges of [-5, 5]: the hardest shape for a bounded mean
        values = -5 + 10 * rng.beta(0.2, 0.2, 60)
        leaf = _one_look_mean(values, (-5.0, 5.0), delta)
        assert -5 <= leaf.lo[0] <= leaf.estimate[0] <= leaf.hi[0] <= 5
        misses += not leaf.lo[0] <= 0.0 <= leaf.hi[0]
    assert misses / 2000 <= delta
    assert _one_look_mean(np.array([]), (0.0, 1.0), delta).hi[0] == 1.0  # no rows: the whole range


def test_the_comparison_closest_to_failing_compares_amounts_in_units_of_their_range():
    frame = offers(20000, seed=3)
    f, m = frame[frame.sex == "F"], frame[frame.sex == "M"]
    gap, rate = f.amount.mean() - m.amount.mean(), f.approved.mean()
    # both hold: the amount clause by 200 dollars (0.4 % of its [0, 50000] range), the rate clause by 0.05 (5 %);
    # read in dollars the rate clause would look closer to failing, in units of each range the amount clause is
    spec = (f'E[amount | sex == "F"] - E[amount | sex == "M"] > {gap - 200:.2f} and '
            f'E[pred | sex == "F"] < {rate + 0.05:.4f}')
    result = fairaudit.audit(dataset(frame), spec, pred="approved == 1", ranges=RANGES, engine="dataset")
    assert result.verdict == "true"
    assert result.summary.startswith("The comparison closest to failing: The average amount of those with sex = F")


# ---- compare: paired differences of bounded means
def test_compare_pairs_the_means_of_two_models_scores_and_covers_the_exact_difference():
    """Two models' mean scores per group (the same rows through both): each difference interval of the monitor holds
    the exact difference on the rows it saw (all of them: stop=all) — the dataset engine's — and an amount that does
    not read the decision has difference 0."""
    frame = offers(3000, seed=6)
    ds = dataset(frame)
    spec = ('E[score | sex == "F"] - E[score | sex == "M"] < 0.5 and E[amount | race == "A"] > 100')
    kw = dict(models=["logreg", "tree"], ranges=RANGES, rows="all")
    monitor = fairaudit.compare(ds, spec, stop="all", **kw)
    exact = fairaudit.compare(ds, spec, engine="dataset", **kw)
    score_f, score_m, amount = (next(tn.id for tn in monitor.tree.nodes if tn.text == text) for text in
                                ('E[score | sex == "F"]', 'E[score | sex == "M"]', 'E[amount | race == "A"]'))
    for nid in (score_f, score_m):
        d, truth = monitor.difference(nid), exact.difference(nid)
        assert d.pairing == "paired" and truth.hi - truth.lo < 1e-12
        assert d.lo <= truth.estimate <= d.hi and d.hi - d.lo < 0.5
    same = monitor.difference(amount)
    assert same.pairing == "same" and same.lo == same.hi == 0
    from fairaudit.comparison.wording import node_words

    assert node_words(monitor.tree, score_f) == "the average score of those with sex = F"


def test_the_paired_difference_of_means_covers_at_its_level():
    """Coverage of ``_paired_mean`` at every look together: 300 streams of paired values in [0, 10] whose true mean
    difference is known (0.6), the interval at Δ = 0.1 must miss it (at any look) in at most ~Δ of them."""
    from fairaudit.comparison.run import _paired_mean
    from fairaudit.spec.files import parsed_with_ranges

    cs = __import__("fairaudit.core.evaluate", fromlist=["compile_spec"]).compile_spec(
        parsed_with_ranges("E[x | g == 1] > 0", {"x": (0, 10)}))
    key = cs.leaf_keys[0]
    rng = np.random.default_rng(11)
    n, misses = 600, 0
    ends = np.arange(19, n, 20)
    big = rng.beta(2, 5, 2_000_000) * 10  # the true E[a − b] (b is clipped into the range: estimated to ~1e-3)
    truth = float(np.mean(big - np.clip(big - 0.6 + rng.normal(0, 1.0, len(big)), 0, 10)))
    for _ in range(300):
        a = rng.beta(2, 5, n) * 10
        b = np.clip(a - 0.6 + rng.normal(0, 1.0, n), 0, 10)
        iv = _paired_mean(cs, key, a, b, np.ones(n, bool), ends, 0.1)
        misses += bool(np.any((iv.lo > truth) | (iv.hi < truth)))
    assert misses / 300 <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / 300)
