"""A scored model's decisions at another threshold from its cached scores (``fairaudit.models.threshold``): the
decisions are ``score > threshold``, the model's own at its own threshold, an audit at a threshold reads the cache
(never predicts the cached rows again) and agrees with an audit of the decision expression ``score > t``."""
from __future__ import annotations

import numpy as np
import pytest

import fairaudit
from fairaudit import data, models
from fairaudit.base.errors import ModelError
from fairaudit.models.features import default_features
from fairaudit.models.threshold import (OWN_THRESHOLD, CachedScores, ThresholdedScores, check_threshold, has_scores,
                                        threshold_decisions)

PARITY = 'E[pred | sex == "Female"] - E[pred | sex == "Male"] > -0.1'  # false at 0.5, true at 0.8 on adult
SPEC = 'E[pred | sex == "Female"] - E[pred | sex == "Male"] > -0.1 and E[pred | label == 1] > 0.5'


@pytest.fixture(scope="module")
def adult():
    return data.load("adult")


@pytest.fixture(scope="module")
def logreg(adult):
    return models.train(adult, "logreg", seed=0, features=default_features(adult))


def estimates(result) -> list:
    """Every node's text, exact value (None for a logical node, which has none) and verdict."""
    def value(x):
        return None if x is None or np.isnan(x) else x
    return [(n["text"], value(n["final"]["estimate"]), n["final"]["verdict"]) for n in result.nodes]


def test_decisions_are_the_scores_above_the_threshold():
    scores = np.array([0.0, 0.2, 0.5, 0.50001, 1.0])
    assert threshold_decisions(scores, 0.5).tolist() == [0, 0, 0, 1, 1]
    assert threshold_decisions(scores, 0.0).tolist() == [0, 1, 1, 1, 1]
    assert threshold_decisions(scores, 1.0).tolist() == [0, 0, 0, 0, 0]
    assert threshold_decisions(scores, 0.2).dtype == np.int8


@pytest.mark.parametrize("bad", [-0.01, 1.5, float("nan"), "high", None])
def test_a_threshold_outside_zero_one_is_one_sentence(bad):
    with pytest.raises(ModelError, match="decision threshold must be"):
        check_threshold(bad)


def test_an_expression_has_no_scores_to_threshold(adult):
    expression = models.from_expression("education_num >= 13", adult)
    assert not has_scores(expression) and not has_scores(None)
    with pytest.raises(ModelError, match="no scores"):
        CachedScores(expression, adult.frame)


def test_scores_given_must_match_the_rows(adult, logreg):
    with pytest.raises(ModelError, match="one of each per row"):
        CachedScores(logreg, adult.frame, scores=np.zeros(3), decisions=np.zeros(3))


def test_the_own_threshold_gives_the_models_own_audit(adult, logreg):
    cache = CachedScores(logreg, adult.frame)
    own = cache.at(OWN_THRESHOLD)
    assert np.array_equal(own.predict(adult.frame), logreg.predict(adult.frame))
    assert own.describe() == logreg.describe() and own.metrics == logreg.metrics
    by_model = fairaudit.audit(adult, SPEC, engine="dataset", model=logreg)
    by_cache = fairaudit.audit(adult, SPEC, engine="dataset", model=own)
    assert estimates(by_cache) == estimates(by_model)
    assert by_cache.rows_text == by_model.rows_text  # the same held-out rows: the model's training record is kept


def test_another_threshold_says_so_and_claims_no_held_out_metric(adult, logreg):
    moved = CachedScores(logreg, adult.frame).at(0.3)
    assert isinstance(moved, ThresholdedScores)
    assert moved.metrics == {} and "above 0.3" in moved.describe()
    assert moved.params["decision_threshold"] == 0.3
    assert moved.content_hash != CachedScores(logreg, adult.frame).at(0.31).content_hash


def test_an_audit_at_a_threshold_never_predicts_the_cached_rows_again(adult, logreg, monkeypatch):
    cache = CachedScores(logreg, adult.frame)
    calls = []
    for name in ("score", "predict", "score_and_predict"):
        original = getattr(logreg, name)
        monkeypatch.setattr(logreg, name, lambda *a, _n=name, _f=original, **k: (calls.append(_n), _f(*a, **k))[1])
    verdicts = {t: fairaudit.audit(adult, PARITY, engine="dataset", model=cache.at(t)).verdict
                for t in (0.2, 0.5, 0.8)}
    assert calls == []
    assert len(set(verdicts.values())) > 1  # the threshold matters to this spec on these rows


@pytest.mark.parametrize("threshold", [0.25, 0.6])
def test_an_audit_at_a_threshold_is_the_audit_of_the_decision_score_above_it(adult, logreg, tmp_path, threshold):
    """The same held-out rows written out with the model's score as a column, audited with the decision expression
    ``model_score > t``: every node has the same exact value and verdict."""
    cache = CachedScores(logreg, adult.frame)
    held = models.held_out_positions(logreg, adult)
    rows = adult.frame.iloc[held].assign(model_score=cache.scores[held])
    path = tmp_path / "held_out_scored.csv"
    rows.to_csv(path, index=False)
    scored = data.resolve(str(path), label="income", protected=["sex", "race"], favourable=">50K")
    by_cache = fairaudit.audit(adult, SPEC, engine="dataset", model=cache.at(threshold))
    by_expression = fairaudit.audit(scored, SPEC, engine="dataset", pred=f"model_score > {threshold!r}", rows="all")
    assert estimates(by_cache) == estimates(by_expression)


def test_decision_summary_counts_each_measure_exactly():
    import pandas as pd

    from fairaudit.core.group_metrics import SUMMARY_COLUMNS, decision_summary

    frame = pd.DataFrame({"sex": ["F", "F", "F", "M", "M"]})
    pred = [1, 0, 0, 1, 1]
    label = [1, 1, 0, 0, 1]
    table = decision_summary(frame, ["sex"], pred, label)
    assert list(table.columns) == SUMMARY_COLUMNS
    got = {m: (k, n) for m, k, n in zip(table["measure"], table["k"], table["n"])}
    assert got == {"favourable decisions (share)": (3, 5), "accuracy": (3, 5),
                   "selection rate · sex = F": (1, 3), "selection rate · sex = M": (2, 2),
                   "TPR · sex = F": (1, 2), "TPR · sex = M": (1, 1)}
    assert table.loc[table["measure"] == "accuracy", "value"].item() == 0.6
    unlabelled = decision_summary(frame, ["sex"], pred)
    assert list(unlabelled["measure"]) == ["favourable decisions (share)", "selection rate · sex = F",
                                           "selection rate · sex = M"]


def test_fair_flips_the_attribute_and_decides_the_new_rows_at_the_same_threshold(adult):
    """``Fair[sex]`` re-predicts rows that are not the cached ones (sex flipped): the wrapped model scores them and
    the threshold decides them, as it decides the cached rows."""
    model = models.train(adult, "logreg", seed=0, features=default_features(adult, include_protected=True))
    threshold = 0.3
    result = fairaudit.audit(adult, "Fair[sex] > 0.5", engine="dataset",
                             model=CachedScores(model, adult.frame).at(threshold))
    rows = adult.frame.iloc[models.held_out_positions(model, adult)]
    flipped = rows.assign(sex=rows["sex"].map({"Male": "Female", "Female": "Male"}))
    kept = (model.score(rows) > threshold) == (model.score(flipped) > threshold)
    fair = next(n for n in result.nodes if n["kind"] == "fair")
    assert fair["final"]["estimate"] == pytest.approx(kept.mean(), abs=1e-12)
    assert kept.mean() < 1  # sex is a feature: flipping it changes some decisions at this threshold
