"""Issue 32: the repair's fairness–accuracy curve marks the original point and the chosen one, in the colours a
comparison of the two gives them, with the 0 line of the specification's margin. Issue 44: the marked points are named
in the legend (labels beside them overlapped), and a refused repair's candidate is "best candidate tried", never
"repaired" or "chosen"."""
from __future__ import annotations

import json

import pytest

import fairaudit.repairs as fa_repair
from fairaudit import data, models
from fairaudit.viz.palette import model_colours
from fairaudit.viz.repair import ORIGINAL, REPAIRED, curve_frame, repair_curve

SPEC = ('E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1 and '
        'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1')


@pytest.fixture(scope="module")
def result():
    ds = data.load("adult")
    return fa_repair.repair(ds, SPEC, models.train(ds, "logreg", seed=0))


def test_curve_marks_the_original_and_the_chosen_point(result):
    frame = curve_frame(result)
    assert result.is_adopted and result.shown_name == REPAIRED
    assert (frame["role"] == "original").sum() == 1 and (frame["role"] == REPAIRED).sum() == 1
    chosen = frame[frame["role"] == REPAIRED].iloc[0]
    assert chosen["margin"] == pytest.approx(result.chosen.margin)
    assert chosen["objective"] == pytest.approx(result.chosen.accuracy)
    original = frame[frame["role"] == "original"].iloc[0]
    assert original["objective"] == pytest.approx(result.original.accuracy)


def test_chart_uses_the_comparison_colours(result):
    text = json.dumps(json.loads(repair_curve(result).to_json()))
    colours = model_colours([ORIGINAL, REPAIRED])
    assert colours[ORIGINAL] in text and colours[REPAIRED] in text
    assert f"{REPAIRED} (chosen)" not in text and '"zero"' in text


def _refused():
    """Issue 44's walkthrough: the analyst's hiring CSV, where no repair is adopted."""
    from tests.test_repair_adopt import ANALYST_SPEC, analyst_data, analyst_model

    ds = analyst_data()
    return fa_repair.repair(ds, ANALYST_SPEC, analyst_model(ds))


def _layers(spec: dict):
    for layer in spec.get("layer", []):
        yield layer
        yield from _layers(layer)


def test_the_marked_points_are_named_in_the_legend_never_in_overlapping_labels(result):
    spec = json.loads(repair_curve(result).to_json())
    marks = [(layer.get("mark") or {}) for layer in _layers(spec)]
    assert not any((m if isinstance(m, str) else m.get("type")) == "text" for m in marks)  # no labels to overlap
    legend_domains = [layer["encoding"]["color"]["scale"]["domain"] for layer in _layers(spec)
                      if "scale" in (layer.get("encoding", {}).get("color") or {})]
    assert [ORIGINAL, REPAIRED] in legend_domains


def test_a_refused_repair_is_never_called_repaired_or_chosen_on_the_chart():
    r = _refused()
    assert not r.is_adopted
    frame = curve_frame(r)
    assert set(frame["role"]) <= {"original", "tried", "best candidate tried"}
    assert (frame["role"] == "best candidate tried").sum() == 1
    text = json.dumps(json.loads(repair_curve(r).to_json()))
    assert "repaired" not in text and "chosen" not in text and "best candidate tried" in text
