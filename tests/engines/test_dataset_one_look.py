"""The ``dataset`` engine's one-look intervals (``interval="one-look"``): Clopper–Pearson at Δ split over the
distinct leaves. Coverage is checked against exact binomial enumeration (an independent oracle), the engine's
intervals against statsmodels' Clopper–Pearson on counts made with pandas, and the wording and the option."""
import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

import fairaudit
from fairaudit import data, engines
from fairaudit.core import suggest
from fairaudit.bounds.fixed_sample import clopper_pearson
from fairaudit.base.errors import FairauditError

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] <= 0.05'
PRED = "decile_score <= 4"


@pytest.fixture(scope="module")
def compas():
    return data.load("compas")


@pytest.mark.parametrize("n", [1, 2, 5, 13, 40, 101])
@pytest.mark.parametrize("delta", [0.05, 0.2])
def test_coverage_by_exact_enumeration(n, delta):
    """P(p ∈ CI) = Σ_s Binom(s; n, p)·[lo(s) ≤ p ≤ hi(s)] ≥ 1 − δ for every p on a fine grid (and at the
    grid's hardest points, just inside each lo(s) / hi(s), where the coverage of an exact interval dips)."""
    s = np.arange(n + 1)
    lo, hi = clopper_pearson(s, n, delta)
    ends = np.concatenate([lo[lo > 0], hi[hi < 1]])
    p = np.unique(np.concatenate([np.linspace(0, 1, 2001), np.clip(ends + 1e-9, 0, 1), np.clip(ends - 1e-9, 0, 1)]))
    covered = (lo[None, :] <= p[:, None]) & (p[:, None] <= hi[None, :])
    coverage = (binom.pmf(s[None, :], n, p[:, None]) * covered).sum(axis=1)
    assert coverage.min() >= 1 - delta - 1e-12
    # not trivially wide: somewhere the coverage comes within a few points of 1 − δ
    assert coverage.min() <= 1 - delta / 4 or n <= 2


def test_a_wrong_interval_fails_the_oracle():
    """The enumeration can fail: shrinking every interval by 10 % of its width drops coverage below 1 − δ."""
    n, delta = 40, 0.05
    s = np.arange(n + 1)
    lo, hi = clopper_pearson(s, n, delta)
    lo, hi = lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)
    p = np.linspace(0.01, 0.99, 999)
    covered = (lo[None, :] <= p[:, None]) & (p[:, None] <= hi[None, :])
    assert (binom.pmf(s[None, :], n, p[:, None]) * covered).sum(axis=1).min() < 1 - delta


def test_agrees_with_statsmodels():
    for s, n, d in [(0, 10, 0.05), (3, 10, 0.05), (10, 10, 0.1), (412, 1000, 0.0125), (1, 7, 0.5)]:
        lo, hi = clopper_pearson(s, n, d)
        want = proportion_confint(s, n, alpha=d, method="beta")
        assert lo == pytest.approx(want[0], abs=1e-9) and hi == pytest.approx(want[1], abs=1e-9)
        assert lo <= want[0] + 1e-15 and hi >= want[1] - 1e-15 or s in (0, n)  # outward
    assert clopper_pearson(0, 0, 0.05) == (0.0, 1.0)


def test_engine_leaf_intervals_are_clopper_pearson_at_the_split(compas):
    r = fairaudit.audit(compas, SPEC, engine="dataset", pred=PRED, interval="one-look", delta=0.1)
    frame = compas.frame
    pred = frame["decile_score"] <= 4
    for tn in r.tree.leaves:
        group = frame["race"] == ("African-American" if "African" in tn.text else "Caucasian")
        s, n = int((pred & group).sum()), int(group.sum())
        f = r.final_values(tn.id)
        want = proportion_confint(s, n, alpha=0.1 / 2, method="beta")  # Δ over the 2 distinct leaves
        assert f["n"] == n and f["estimate"] == pytest.approx(s / n)
        assert f["delta"] == pytest.approx(0.05)
        assert (f["lo"], f["hi"]) == pytest.approx(want, abs=1e-9)
    assert r.final_values(r.root)["delta"] == pytest.approx(0.1)


def test_guarantee_is_labelled_one_look(compas):
    r = fairaudit.audit(compas, SPEC, engine="dataset", pred=PRED, interval="one-look")
    g = r.guarantee
    assert g.kind == "probabilistic" and g.delta == 0.05
    assert "one look, not for monitoring" in r.sentence
    assert "one look, not for monitoring" in g.caption
    assert "not valid if re-checked" in g.interval_meaning and "anytime" not in g.interval_meaning
    assert "i.i.d. sample of the population" in g.assumes
    methods = " ".join(" ".join(p) for _, p in engines.get("dataset").methods(r.options))
    assert "Clopper" in methods and "one look, not for monitoring" in methods
    exact = fairaudit.audit(compas, SPEC, engine="dataset", pred=PRED)
    assert exact.guarantee.kind == "exact" and exact.final_values(exact.root)["delta"] == 0


def test_option_validation():
    engine = engines.get("dataset")
    assert engine.resolve_options({})["interval"] == "none"
    with pytest.raises(FairauditError):
        engine.resolve_options({"interval": "twice"})
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(FairauditError):
            engine.resolve_options({"interval": "one-look", "delta": bad})


def test_undecided_one_look_gets_a_projection_and_exact_none(compas):
    spec = 'E[pred | race == "Asian"] >= 0.7'  # 31 rows: a wide interval
    r = fairaudit.audit(compas, spec, engine="dataset", pred=PRED, interval="one-look")
    assert r.verdict == "unknown"
    (s,) = suggest.suggestions(r)
    assert s.more is not None and s.unit == "rows"
    assert engines.get("dataset").leaf_bound({"interval": "none"}) is None
