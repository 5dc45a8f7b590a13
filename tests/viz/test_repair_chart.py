"""Issue 32: the repair's fairness–accuracy curve marks the original point and the chosen one, in the colours a
comparison of the two gives them, with the 0 line of the specification's margin."""
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
    assert (frame["role"] == "original").sum() == 1 and (frame["role"] == "chosen").sum() == 1
    chosen = frame[frame["role"] == "chosen"].iloc[0]
    assert chosen["margin"] == pytest.approx(result.chosen.margin)
    assert chosen["objective"] == pytest.approx(result.chosen.accuracy)
    original = frame[frame["role"] == "original"].iloc[0]
    assert original["objective"] == pytest.approx(result.original.accuracy)


def test_chart_uses_the_comparison_colours(result):
    text = json.dumps(json.loads(repair_curve(result).to_json()))
    colours = model_colours([ORIGINAL, REPAIRED])
    assert colours[ORIGINAL] in text and colours[REPAIRED] in text
    assert f"{REPAIRED} (chosen)" in text and '"zero"' in text
