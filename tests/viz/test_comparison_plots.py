"""Issue 28 (6, example 7 of "Why"): a convergence plot draws nothing for a leaf before its first observation (before,
``E[pred | race == "Asian"]`` had rows — a [0, 1] band and no value — from the first step, drawn as 0 before any such
row had arrived), and two stacked plots (the Audit page shows two selected nodes this way) share one y range (before,
each had its own, so the same value sat at different heights).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import fairaudit
from fairaudit import viz

SPEC = 'E[pred | race == "Asian"] - E[pred | race == "Caucasian"] < 0.1'


@pytest.fixture(scope="module")
def run():
    result = fairaudit.audit("compas", SPEC, pred="decile_score <= 4", trace_points=None)
    return result, result.to_frame(), json.loads(result.to_json())["nodes"]


def _node(nodes, text):
    return next(n["id"] for n in nodes if n["text"] == text)


def _panel_rows(chart_dict, panel: int) -> list[dict]:
    """The rows of the values plotted in panel ``panel`` (its band's data set)."""
    main = chart_dict["vconcat"][panel]["vconcat"][0]
    name = main.get("data", {}).get("name") or main["layer"][0]["data"]["name"]
    return chart_dict["datasets"][name]


def _y_domain(chart_dict, panel: int) -> list:
    return chart_dict["vconcat"][panel]["vconcat"][0]["layer"][0]["encoding"]["y"]["scale"]["domain"]


def test_a_leaf_has_no_rows_before_its_first_observation(run):
    result, frame, nodes = run
    asian = _node(nodes, 'E[pred | race == "Asian"]')
    rows = frame[frame["node"] == asian]
    first = float(rows.loc[rows["n"] > 0, "step"].min())
    assert first > float(rows["step"].min())  # the rows of the first steps hold no Asian defendant
    for shown in (asian, _node(nodes, 'E[pred | race == "Asian"] - E[pred | race == "Caucasian"]')):
        chart = viz.convergence_chart(frame, shown, nodes, stop_step=result.stop_step, unit=result.unit,
                                      guarantee=result.guarantee).to_dict()
        plotted = _panel_rows(chart, 0)
        assert plotted and min(r["step"] for r in plotted) == first, shown
        assert all(r["estimate_plot"] is not None and np.isfinite(r["estimate_plot"]) for r in plotted)


def test_two_stacked_plots_share_their_y_range(run):
    result, frame, nodes = run
    asian, white = _node(nodes, 'E[pred | race == "Asian"]'), _node(nodes, 'E[pred | race == "Caucasian"]')
    chart = viz.convergence_chart(frame, [asian, white], nodes, stop_step=result.stop_step, unit=result.unit,
                                  guarantee=result.guarantee).to_dict()
    assert _y_domain(chart, 0) == _y_domain(chart, 1)
    # each alone keeps its own range (the panels differ: sharing is what makes them equal)
    alone = [_y_domain(viz.convergence_chart(frame, i, nodes, unit=result.unit).to_dict(), 0) for i in (asian, white)]
    assert alone[0] != alone[1]
    lo, hi = _y_domain(chart, 0)
    assert lo <= min(a[0] for a in alone) and hi >= max(a[1] for a in alone)
