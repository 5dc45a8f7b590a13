"""The charts of an engine's findings (issue 15): every group's rate interval with the most / least favoured marked,
the second interval lighter when given, feature influences sorted by size with their intervals."""
import json

import pytest

from fairaudit import viz
from fairaudit.core.findings import LEAST, MOST, Findings, GroupRate, Influence
from fairaudit.viz.findings import edge_rows, group_frame, influence_frame
from fairaudit.viz.palette import FAVOURED
from tests.viz.findings_sample import sample_findings


def _spec(chart) -> dict:
    return json.loads(chart.to_json())


def _rows(chart) -> list[dict]:
    return [row for rows in _spec(chart).get("datasets", {}).values() for row in rows]


def _marks(chart) -> list[dict]:
    return [layer["mark"] if isinstance(layer["mark"], dict) else {"type": layer["mark"]}
            for layer in _spec(chart)["layer"]]


def test_group_chart_marks_the_most_and_least_favoured_groups():
    chart = viz.group_rates_chart(sample_findings())
    rows = _rows(chart)
    marks = {r["group"]: r["mark"] for r in rows}
    assert marks["sex = Male, race = White"] == MOST
    assert marks["sex = Female, race = Black"] == LEAST
    assert marks["sex = Male, race = Black"] == ""
    text = json.dumps(_spec(chart))
    assert FAVOURED[MOST] in text and FAVOURED[LEAST] in text
    # the labels are drawn on the chart, beside their groups only
    labels = [layer for layer in _spec(chart)["layer"] if (layer["mark"].get("type") if isinstance(
        layer["mark"], dict) else layer["mark"]) == "text"]
    assert labels and all(layer["encoding"]["text"]["field"] == "mark" for layer in labels)
    # sorted from the highest rate down
    order = _spec(chart)["layer"][0]["encoding"]["y"]["sort"]
    assert order[0] == "sex = Male, race = White" and order[-1] == "sex = Female, race = Black"


def test_group_chart_draws_the_second_interval_only_when_given():
    with_ci = [m["type"] for m in _marks(viz.group_rates_chart(sample_findings(ci=True)))]
    without = [m["type"] for m in _marks(viz.group_rates_chart(sample_findings(ci=False)))]
    assert with_ci.count("rule") == 2 and without.count("rule") == 1
    lighter = _marks(viz.group_rates_chart(sample_findings(ci=True)))[0]
    assert lighter["opacity"] < 1
    frame = group_frame(sample_findings())
    row = frame.set_index("group").loc["sex = Male, race = Black"]
    assert row["rate_s"] == "0.18" and row["ci_s"].startswith("[0.15")  # a point interval prints as its value


def test_group_chart_with_one_group_or_none():
    one = Findings(groups=(GroupRate((("sex", "F"),), 0.2, 0.3),))
    assert _rows(viz.group_rates_chart(one))[0]["mark"] == ""  # nothing to compare: no mark
    with pytest.raises(ValueError):
        viz.group_rates_chart(Findings())


def test_group_chart_keeps_both_ends_of_many_groups():
    groups = tuple(GroupRate((("g", str(i)),), i / 100, i / 100) for i in range(90))
    rows = _rows(viz.group_rates_chart(Findings(groups=groups), max_groups=20))
    names = {r["group"] for r in rows}
    assert len(names) == 20 and "g = 89" in names and "g = 0" in names


def test_influence_chart_is_signed_and_sorted_by_size():
    chart = viz.influence_chart(sample_findings())
    frame = influence_frame(sample_findings())
    assert list(frame["feature"]) == ["age", "education", "capital_gain", "hours_per_week"]
    spec = _spec(chart)
    assert spec["layer"][0]["encoding"]["y"]["sort"] == list(frame["feature"])
    assert set(frame.set_index("feature")["sign"].items()) >= {("age", "raises the metric"),
                                                               ("capital_gain", "lowers the metric")}
    # error bars for the features whose influence is an interval, not for a point
    bars = [layer for layer in spec["layer"] if (layer["mark"].get("type") if isinstance(layer["mark"], dict)
                                                 else layer["mark"]) == "errorbar"]
    assert len(bars) == 1
    points = spec["datasets"][bars[0]["data"]["name"]]
    assert "hours_per_week" not in {r["feature"] for r in points} and "age" in {r["feature"] for r in points}
    with pytest.raises(ValueError):
        viz.influence_chart(sample_findings(influence=False))


def test_influence_colours_only_the_signs_present():
    f = Findings(influence=(Influence("a", 0.1, 0.2), Influence("b", 0.05, 0.05)))
    scale = _spec(viz.influence_chart(f))["layer"][0]["encoding"]["color"]["scale"]
    assert scale["domain"] == ["raises the metric"]


def test_edges_as_rows():
    assert edge_rows(sample_findings())[0]["edge"] == "sex → education"
    assert edge_rows(sample_findings(edges=False)) == []


def test_the_charts_render_offline():
    for chart in (viz.group_rates_chart(sample_findings()), viz.influence_chart(sample_findings())):
        assert viz.to_png(chart)[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_marks_sit_beside_their_own_interval_not_over_the_axis():
    """A wide confidence interval (e.g. [0, 1]) must not push a label onto the group names: the label goes
    right of the rate's own interval, or left of it only when that interval ends near the right edge."""
    # wide intervals (the low group's reaches 0 and 0.5) that still separate the two groups, so both are marked
    groups = (GroupRate((("g", "top"),), 0.9, 0.9, None, 0.6, 1.0), GroupRate((("g", "low"),), 0.004, 0.004, None,
                                                                             0.0, 0.5))
    spec = _spec(viz.group_rates_chart(Findings(groups=groups)))
    texts = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    placed = {row["group"]: (row["at"], layer["mark"]["align"]) for layer in texts
              for row in spec["datasets"][layer["data"]["name"]]}
    assert placed["g = low"] == (0.004, "left")
    assert placed["g = top"] == (0.9, "right")


def test_the_declared_size_is_the_plots_own():
    """Streamlit's default "fit" autosize squeezes labels and axes into the declared size (the plot collapses)."""
    for chart in (viz.group_rates_chart(sample_findings()), viz.influence_chart(sample_findings())):
        assert _spec(chart)["autosize"] == {"type": "pad", "contains": "padding"}
