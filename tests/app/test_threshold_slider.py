"""The Audit page's decision-threshold slider (``fairaudit.ui.threshold``): present for a model with scores, absent
(with its reason) for decisions from an expression; a move re-audits from the cached scores — never predicting
again — and agrees with ``fairaudit.audit(engine="dataset", pred="score > t")`` on the same rows; "Compare with the
original threshold" shows both thresholds side by side."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import fairaudit
from fairaudit import data, models
from fairaudit.ui import threshold

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table(at: AppTest):
    return next(d.value for d in at.dataframe if "measure" in d.value.columns)


def _cell(table, measure: str, column: str) -> float:
    """The value of ``measure`` in ``column`` ("0.193  (1,571/8,141)" -> the exact fraction 1571/8141)."""
    text = table.loc[table["measure"] == measure, column].item()
    k, n = text.split("(")[1].rstrip(")").replace(",", "").split("/")
    return int(k) / int(n)


def _verdict_line(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("At ") and "threshold **" in m.value)


@pytest.fixture(scope="module")
def demo_audit():
    """The demo (Adult, logreg, the sex/race parity spec) on the Audit page, the slider at the model's own threshold."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    return _ok(at.switch_page("pages/4_Audit.py").run())


def _scored_rows(at: AppTest, tmp_path):
    """The audited (held-out) rows with the model's score as a column, as a CSV dataset of their own."""
    dataset, model = at.session_state["current_dataset"], at.session_state["model"]
    held = models.held_out_positions(model, dataset)
    scores = model.score(dataset.frame)
    path = tmp_path / "scored.csv"
    dataset.frame.iloc[held].assign(model_score=scores[held]).to_csv(path, index=False)
    return data.resolve(str(path), label="income", protected=["sex", "race"], favourable=">50K")


def test_a_move_reaudits_from_the_cached_scores_as_the_decision_expression_would(demo_audit, tmp_path):
    at = demo_audit
    slider = at.slider(key=threshold.SLIDER_KEY)
    assert slider.value == threshold.OWN_THRESHOLD
    assert "model's own threshold **0.50**" in _verdict_line(at)
    model = at.session_state["model"]
    calls = []
    for name in ("score", "predict", "score_and_predict"):  # from now on, any prediction is counted
        original = getattr(model, name)
        setattr(model, name, lambda *a, _n=name, _f=original, **k: (calls.append(_n), _f(*a, **k))[1])
    try:
        for moved_to in (0.3, 0.7):
            _ok(at.slider(key=threshold.SLIDER_KEY).set_value(moved_to).run())
            spec = at.session_state["spec_text"]
            table = _table(at)
            column = f"slider threshold {moved_to:.2f}"
            assert list(table.columns) == ["measure", column]  # no comparison until asked
            line = _verdict_line(at)
            assert f"threshold **{moved_to:.2f}**" in line and "exploratory" in line
            assert any(threshold.EXPLORATORY_NOTE == c.value for c in at.caption)
            assert calls == [], calls  # nothing predicted again: the scores were cached
            # the same rows, decided by the expression "score > t", audited exactly: the same verdict and rates
            for name in ("score", "predict", "score_and_predict"):
                delattr(model, name)
            by_expression = fairaudit.audit(_scored_rows(at, tmp_path), spec, engine="dataset",
                                            pred=f"model_score > {moved_to!r}", rows="all")
            for name in ("score", "predict", "score_and_predict"):
                original = getattr(model, name)
                setattr(model, name, lambda *a, _n=name, _f=original, **k: (calls.append(_n), _f(*a, **k))[1])
            word = threshold.PLAIN_VERDICTS[by_expression.claim.key]
            assert table.loc[0, column] == f"{word} (exploratory)"
            values = {n["text"]: n["final"]["estimate"] for n in by_expression.nodes}
            for group in ("Male", "Female"):
                assert _cell(table, f"selection rate · sex = {group}", column) == pytest.approx(
                    values[f'E[pred | sex == "{group}"]'], abs=1e-12)
        assert _verdict_line(at).count("holds") + _verdict_line(at).count("violated") == 1
    finally:
        for name in ("score", "predict", "score_and_predict"):
            model.__dict__.pop(name, None)


def test_compare_with_the_original_shows_both_thresholds(demo_audit):
    at = demo_audit
    _ok(at.slider(key=threshold.SLIDER_KEY).set_value(0.7).run())
    _ok(at.toggle(key=threshold.COMPARE_KEY).set_value(True).run())
    table = _table(at)
    assert list(table.columns) == ["measure", "original threshold 0.50", "slider threshold 0.70"]
    dataset, model = at.session_state["current_dataset"], at.session_state["model"]
    spec = at.session_state["spec_text"]
    own = fairaudit.audit(dataset, spec, engine="dataset", model=model)  # the model itself, its own decisions
    assert table.loc[0, "original threshold 0.50"] == threshold.PLAIN_VERDICTS[own.claim.key]
    held = models.held_out_positions(model, dataset)
    decisions = model.predict(dataset.frame)[held]
    assert _cell(table, "favourable decisions (share)", "original threshold 0.50") == decisions.mean()
    labels = dataset.labels[held]
    assert _cell(table, "accuracy", "original threshold 0.50") == np.mean(decisions == labels)
    # the higher threshold decides favourably for fewer people
    assert (_cell(table, "favourable decisions (share)", "slider threshold 0.70")
            < _cell(table, "favourable decisions (share)", "original threshold 0.50"))
    # back at the model's own threshold there is nothing to compare: one column, and a line saying why
    _ok(at.slider(key=threshold.SLIDER_KEY).set_value(threshold.OWN_THRESHOLD).run())
    assert list(_table(at).columns) == ["measure", "slider threshold 0.50 (the model's own)"]
    assert any("move it to compare" in c.value for c in at.caption)


def test_decisions_from_an_expression_have_no_slider():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/2_Model.py").run())
    at.radio(key="model_mode").set_value("Decisions from a column or expression")
    _ok(at.run())
    at.text_input(key="model_expr").input("hours_per_week < 40")
    _ok(at.run())
    at.button(key="model_use_expr").click()
    _ok(at.run())
    assert at.session_state["model"].kind == "expression"
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.button(key="audit_run").click()
    _ok(at.run())
    assert at.session_state["result"] is not None
    assert not [s for s in at.slider if s.key == threshold.SLIDER_KEY]
    assert any(threshold.NO_SCORES_NOTE == c.value for c in at.caption)
