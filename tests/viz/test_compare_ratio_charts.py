"""Issue 44, item 7: a comparison of ratio specifications reads. A ratio compared with a constant is drawn as the
ratio on a log scale (0.8 and 1.25 equally far from 1), the y axis is limited to where the intervals are (never past
``[1/RATIO_LIMIT, RATIO_LIMIT]``), and a bound past the axis is drawn to its edge and marked "beyond" — on the page
and in the PDF (the same charts)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from fairaudit.comparison import compare
from fairaudit.viz.compare import (RATIO_LIMIT, axis_domain, difference_convergence, final_values_chart,
                                   models_convergence, ratio_view)

SPEC = ('E[pred | race == "African-American"] / E[pred | race == "Caucasian"] >= 0.8 and '
        'E[pred | race == "Caucasian"] / E[pred | race == "African-American"] >= 0.8')
SMALL = ('E[pred | race == "Asian" and sex == "Female"] / E[pred | race == "Caucasian"] >= 0.8 and '
         'E[pred | race == "Caucasian"] / E[pred | race == "Asian" and sex == "Female"] >= 0.8')
PREDS = ["decile_score <= 4", "decile_score <= 6"]


@pytest.fixture(scope="module")
def result():
    return compare("compas", SPEC, preds=PREDS, names=["strict", "lenient"])


@pytest.fixture(scope="module")
def small():
    return compare("compas", SMALL, preds=PREDS, names=["strict", "lenient"])


def _walk(x, found):
    if isinstance(x, dict):
        found.append(x)
        for v in x.values():
            _walk(v, found)
    elif isinstance(x, list):
        for v in x:
            _walk(v, found)
    return found


def _y_scales(chart) -> list[dict]:
    return [d["y"]["scale"] for d in _walk(chart.to_dict(), []) if isinstance(d.get("y"), dict)
            and isinstance(d["y"].get("scale"), dict) and "domain" in d["y"]["scale"]]


def test_ratio_comparison_is_its_ratio_on_a_log_scale(result):
    assert ratio_view(result, "n1") == ("n2", 0.8)
    assert ratio_view(result, "n2") == ("n2", None)
    assert ratio_view(result, "n3") is None and ratio_view(result, "n0") is None
    scales = _y_scales(models_convergence(result, "n1"))
    assert scales and all(s["type"] == "log" for s in scales)
    lo, hi = scales[0]["domain"]
    # 0.8 and 1.25 sit symmetric about 1 on the axis, and both are shown
    assert lo <= 0.8 and hi >= 1.25
    assert math.isclose(math.log(0.8), -math.log(1.25))
    text = models_convergence(result, "n1").to_json()
    assert "threshold 0.8" in text and "parity" in text and "margin of" not in text


def test_axis_is_where_the_intervals_are_not_the_first_looks(result):
    first = result.model_series["strict"]["n2"]
    assert np.nanmax(first.hi) > 100  # the first looks' intervals are huge (the ±300 of the issue)
    for chart in (models_convergence(result, "n1"), models_convergence(result, "n6", layout="columns"),
                  difference_convergence(result, "n1")):
        for scale in _y_scales(chart):
            lo, hi = scale["domain"]
            if scale.get("type") == "log":
                assert 1 / RATIO_LIMIT - 1e-12 <= lo and hi <= RATIO_LIMIT + 1e-9, scale
            assert -10 < lo and hi < 10, scale  # not the first looks' ±300
    final = [result.model_series[n]["n2"] for n in result.names]
    lo, hi = _y_scales(models_convergence(result, "n1"))[0]["domain"]
    assert all(lo <= s.lo[-1] and s.hi[-1] <= hi for s in final)  # every final interval inside the axis


def test_huge_and_infinite_bounds_are_marked_beyond():
    frame = pd.DataFrame({"rows": [10.0, 100.0, 1000.0], "estimate": [1.0, 0.9, 0.85],
                          "lo": [0.0, 0.3, 0.7], "hi": [20000.0, 300.0, math.inf]})
    lo, hi = axis_domain(frame, [1.0, 0.8, 1.25], log=True, limit=RATIO_LIMIT)
    assert 1 / RATIO_LIMIT - 1e-12 <= lo and hi <= RATIO_LIMIT + 1e-9
    lo, hi = axis_domain(frame.assign(hi=[20000.0, 300.0, 2.0]), [0.0])
    assert hi < 300  # the final interval and REACH spans around it, not the first looks' bounds


def test_small_group_ratio_marks_beyond_and_keeps_the_axis(small):
    fv = final_values_chart(small)
    spec = fv.to_dict()
    x_scales = [d["x"]["scale"] for d in _walk(spec, []) if isinstance(d.get("x"), dict)
                and isinstance(d["x"].get("scale"), dict) and d["x"]["scale"].get("type") == "log"]
    assert x_scales, "the ratios' panel is on a log scale"
    for s in x_scales:
        assert 1 / RATIO_LIMIT - 1e-12 <= s["domain"][0] and s["domain"][1] <= RATIO_LIMIT + 1e-9
    assert "Ratios (log scale)" in fv.to_json()
    for nid in ("n1", "n6"):
        assert json.loads(models_convergence(small, nid).to_json())


def test_non_ratio_charts_stay_linear():
    spec = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.1')
    r = compare("compas", spec, preds=PREDS)
    assert ratio_view(r, "n0") is None
    assert all(s.get("type") != "log" for s in _y_scales(models_convergence(r, "n0")))
    assert "Ratios" not in final_values_chart(r).to_json()


def test_compare_pdf_renders_ratio_charts(small):
    from fairaudit.report.compare import build_compare_pdf

    pdf = build_compare_pdf(small)
    assert pdf.startswith(b"%PDF") and len(pdf) > 20_000


def test_bounds_past_the_axis_are_marked_beyond_with_their_value():
    from fairaudit.viz.compare import _beyond

    frame = pd.DataFrame({"rows": [10.0, 1000.0, 1000.0], "model": ["A", "A", "B"], "estimate": [1.0, 0.9, 1.1],
                          "lo": [0.0, 0.7, 0.0], "hi": [20000.0, math.inf, 1.3]})
    domain = axis_domain(frame, [1.0, 0.8, 1.25], log=True, limit=RATIO_LIMIT)
    marks = _beyond(frame, domain, by="model")
    assert set(zip(marks["model"], marks["shape"])) == {("A", "triangle-up"), ("B", "triangle-down")}
    assert set(marks["label"]) == {"beyond"} and any("∞" in w for w in marks["what"])
