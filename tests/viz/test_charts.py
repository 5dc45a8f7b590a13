import json
import math

import altair as alt
import numpy as np
import pandas as pd
import pytest

from fairaudit import viz
from fairaudit.core.group_metrics import group_base_rates, group_model_metrics
from fairaudit.viz import _format
from fairaudit.viz.convergence import convergence_series, display_range, thin_steps, verdict_runs
from fairaudit.viz.palette import RATES, VERDICTS, normalise_verdict
from tests.viz.synthetic import big_tree, make_result


@pytest.fixture(scope="module")
def result():
    return make_result()


@pytest.fixture(scope="module")
def big():
    return make_result(big_tree(4), steps=200)


def _valid(chart):
    d = chart.to_dict()  # validates against the Vega-Lite schema
    json.dumps(d)
    return d


def _params(d):
    found = []

    def walk(x):
        if isinstance(x, dict):
            for p in x.get("params", []) or []:
                found.append(p)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(d)
    return found


def test_palette_distinct_and_verdicts():
    colours = [c for _, c in VERDICTS.values()]
    assert len(set(colours)) == len(colours)
    assert VERDICTS["true"][1] == "#0072B2" and VERDICTS["false"][1] == "#D55E00"
    assert len(set(RATES.values())) == 3
    assert normalise_verdict(None) == "term"
    assert normalise_verdict(True) == "true" and normalise_verdict("unknown") == "unknown"
    with pytest.raises(ValueError):
        normalise_verdict("maybe")


def test_tree_chart_builds_with_selection(result):
    chart = viz.tree_chart(result["nodes"], selected=["n1", "n6"], width=1300, height=800)
    d = _valid(chart)
    params = [p for p in _params(d) if p.get("name") == viz.SELECTION]
    assert len(params) == 1
    sel = params[0]["select"]
    assert sel["type"] == "point" and sel["fields"] == ["id"] and sel.get("toggle") == "event.shiftKey"
    assert params[0]["value"] == [{"id": "n1"}, {"id": "n6"}]
    # every node verdict's colour is in the scale (exploratory is a headline's status, never a node's)
    text = json.dumps(d)
    for key in ("true", "false", "unknown", "term"):
        assert VERDICTS[key][1] in text


def test_tree_frame_labels_and_tooltips(result):
    frame, edges = viz.tree_frame(result["nodes"], label_width=12)
    assert len(frame) == len(result["nodes"]) and len(edges) == len(result["nodes"]) - 1
    long = frame.set_index("id").loc["n0"]  # the full text goes to the tooltip, a short label on the tree
    assert long["label"] == "all must\nhold" and len(long["text"]) > len(long["label"])
    assert frame.set_index("id").loc["n3", "label"] == "Male"
    assert all(len(line) <= 12 for lab in frame["label"] for line in lab.split("\n"))
    assert frame.set_index("id").loc["n1", "symbol"] == "<"
    assert frame.set_index("id").loc["n5", "symbol"] == "0.1"
    assert frame.set_index("id").loc["n3", "verdict"] == "term"


def test_tree_chart_without_final_values():
    nodes = [{"id": "n0", "parent": None, "kind": "cmp", "text": "E[pred] < 0.5"},
             {"id": "n1", "parent": "n0", "kind": "expect", "text": "E[pred]"},
             {"id": "n2", "parent": "n0", "kind": "const", "text": "0.5"}]
    _valid(viz.tree_chart(nodes))


def test_big_tree_chart(big):
    assert 20 <= len(big["nodes"]) <= 30
    _valid(viz.tree_chart(big["nodes"], width=1400, height=900))


def test_convergence_single_and_compare(result):
    trace = pd.DataFrame(result["trace"])
    d = _valid(viz.convergence_chart(trace, "n1", result["nodes"], stop_step=result["stop_step"]))
    assert "threshold 0.1" in json.dumps(d)
    d2 = _valid(viz.convergence_chart(trace, ["n1", "n6"], result["nodes"], stop_step=result["stop_step"]))
    assert d2["resolve"]["scale"]["x"] == "shared"
    assert len(d2["vconcat"]) == 2
    # boolean node: verdict only
    _valid(viz.convergence_chart(trace, "n0", result["nodes"]))
    # a plain term
    _valid(viz.convergence_chart(trace, "n3", result["nodes"]))


def test_cmp_against_constant_plots_the_term(result):
    trace = pd.DataFrame(result["trace"])
    s = convergence_series(trace, "n1", result["nodes"])
    assert s.threshold == pytest.approx(0.1)
    n2 = trace[trace["node"] == "n2"].set_index("step")["estimate"]
    assert np.allclose(s.frame.set_index("step")["estimate"], n2.loc[s.frame["step"]])


def test_cmp_of_two_terms_plots_the_difference():
    nodes = [{"id": "a", "parent": None, "kind": "cmp", "text": "E[x] < E[y]"},
             {"id": "b", "parent": "a", "kind": "expect", "text": "E[x]"},
             {"id": "c", "parent": "a", "kind": "expect", "text": "E[y]"}]
    trace = pd.DataFrame([
        {"step": 1, "node": "a", "estimate": None, "lo": None, "hi": None, "verdict": "unknown"},
        {"step": 1, "node": "b", "estimate": 0.2, "lo": 0.1, "hi": 0.3, "verdict": None},
        {"step": 1, "node": "c", "estimate": 0.5, "lo": 0.4, "hi": 0.7, "verdict": None},
    ])
    s = convergence_series(trace, "a", nodes)
    assert s.threshold == 0.0
    row = s.frame.iloc[0]
    assert row["estimate"] == pytest.approx(-0.3)
    assert row["lo"] == pytest.approx(0.1 - 0.7) and row["hi"] == pytest.approx(0.3 - 0.4)


def test_infinite_bounds_are_clipped(result):
    trace = pd.DataFrame(result["trace"]).copy()
    first = trace["step"].min()
    sel = (trace["node"] == "n7") & (trace["step"] <= first + 20)
    trace.loc[sel, "lo"] = -math.inf
    trace.loc[sel, "hi"] = math.inf
    s = convergence_series(trace, "n6", result["nodes"])
    lo, hi = s.domain
    assert math.isfinite(lo) and math.isfinite(hi)
    assert np.isfinite(s.frame["lo_plot"]).all() and np.isfinite(s.frame["hi_plot"]).all()
    assert (s.frame["lo_plot"] >= lo).all() and (s.frame["hi_plot"] <= hi).all()
    assert s.frame["clipped"].iloc[0]
    d = _valid(viz.convergence_chart(trace, "n6", result["nodes"]))
    assert "Infinity" not in json.dumps(d)


def test_display_range_respects_natural_range_and_threshold():
    est = np.array([0.5, 0.45, 0.4])
    lo = np.array([-np.inf, 0.2, 0.35])
    hi = np.array([np.inf, 0.8, 0.45])
    a, b = display_range(est, lo, hi, (0.0, 1.0), 0.9)
    assert -0.1 < a <= 0.2 and 0.9 <= b <= 1.1


def test_verdict_runs_and_thinning():
    runs = verdict_runs(np.array([5, 10, 15, 20]), ["unknown", "unknown", "false", "false"])
    assert list(runs["verdict"]) == ["unknown", "false"]
    assert list(runs["start"]) == [5, 15] and list(runs["end"]) == [15, 25]
    mask = thin_steps(np.arange(10_000), 100, keep=[4321])
    assert mask.sum() <= 102 and mask[0] and mask[-1] and mask[4321]


def test_rates_chart():
    r = make_result(big_tree(2), steps=100)
    trace = pd.DataFrame(r["trace"])
    fair = [n["id"] for n in r["nodes"] if n["kind"] == "fair"][0]
    assert viz.has_rates(trace, fair)
    assert not viz.has_rates(trace, r["nodes"][0]["id"])
    d = _valid(viz.rates_chart(trace, fair, stop_step=r["stop_step"]))
    assert d["layer"][0]["mark"]["type"] == "area"
    with pytest.raises(ValueError):
        viz.rates_chart(trace, r["nodes"][0]["id"])


def test_group_charts():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"sex": rng.choice(["Male", "Female"], 500), "race": rng.choice(["A", "B", "C"], 500, p=[.8, .15, .05]),
                          "label": rng.integers(0, 2, 500)})
    stats = group_base_rates(frame, ["sex", "race"], "label", 1)
    assert stats["small"].any()
    _valid(viz.group_bars(stats))
    _valid(viz.group_bars(group_base_rates(frame, ["sex"])))  # counts only
    pred = rng.integers(0, 2, 500)
    metrics = group_model_metrics(frame, ["sex", "race"], pred, frame["label"])
    _valid(viz.group_metrics_chart(metrics))


def test_format_helpers():
    # the library's one rule (fairaudit.base.numbers.clean + fairaudit.core.guarantee.format_interval); "–" when missing
    assert _format.num(math.inf) == "inf" and _format.num(None) == "–" and _format.num(math.nan) == "–"
    assert _format.num(-5e-324) == "0" and _format.num(0.30337) == "0.3034" and _format.num(0.5) == "0.5"
    assert _format.interval(0.1, -math.inf) == "[0.1, -inf]" and _format.interval(None, None) == "–"
    assert _format.interval(0.5, 0.5) == "0.5"
    assert _format.wrap("a" * 50, 10, 2).endswith("…")
    assert _format.wrap("short", 10) == "short"


def test_png_renders_offline(result, tmp_path):
    png = viz.to_png(viz.tree_chart(result["nodes"], selected=["n1"]))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    trace = pd.DataFrame(result["trace"])
    png2 = viz.to_png(viz.convergence_chart(trace, ["n1", "n6"], result["nodes"], stop_step=result["stop_step"]))
    assert png2[:4] == b"\x89PNG"


def test_short_labels_of_the_tree():
    from fairaudit.viz.tree import expect_label, short_labels

    assert expect_label('E[pred | sex == "Male"]') == "Male"
    assert expect_label('E[pred | sex == "Male" and workclass == "Private"]') == "Male · Private"
    assert expect_label("E[label == 1 | age > 30]") == "label = 1 | age > 30"
    assert expect_label("E[pred]") == "all rows"
    nodes = [{"id": "n0", "parent": None, "kind": "and", "text": "…"},
             {"id": "n1", "parent": "n0", "kind": "cmp", "op": "<", "name": "sex_parity",
              "text": 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1'},
             {"id": "n2", "parent": "n1", "kind": "sub", "op": "-", "text": 'E[pred | sex == "Male"] - E[pred | sex == "Female"]'},
             {"id": "n3", "parent": "n2", "kind": "expect", "text": 'E[pred | sex == "Male"]'},
             {"id": "n4", "parent": "n2", "kind": "expect", "text": 'E[pred | sex == "Female"]'},
             {"id": "n5", "parent": "n1", "kind": "const", "value": 0.1, "text": "0.1"},
             {"id": "n6", "parent": "n0", "kind": "cmp", "op": ">=", "text": 'E[pred | race == "Black"] >= 0.2'},
             {"id": "n7", "parent": "n6", "kind": "expect", "text": 'E[pred | race == "Black"]'},
             {"id": "n8", "parent": "n6", "kind": "const", "value": 0.2, "text": "0.2"}]
    labels = short_labels(nodes)
    assert labels == {"n0": "all must hold", "n1": "sex_parity: <0.1", "n2": "Male − Female", "n3": "Male",
                      "n4": "Female", "n5": "threshold", "n6": "Black ≥0.2", "n7": "Black", "n8": "threshold"}
    frame, _ = viz.tree_frame(nodes, label_width=20)
    row = frame.set_index("id").loc["n1"]
    assert row["label"] == "sex_parity: <0.1" and "E[pred | sex" in row["text"]  # full text in the tooltip


# ---------------------------------------------------------------------------------------------- issue 11


def test_each_node_marks_its_own_decided_step_not_the_roots():
    """"decided after N <unit>" on a node's plot is the step that node's own verdict was first decided; the root's
    step is a separate, labelled "spec decided" rule (issue 11 #12)."""
    r = make_result(steps=2000)  # n1 (sex parity) is decided long after the root (decided by n6)
    trace = pd.DataFrame(r["trace"])
    own = trace[trace["node"] == "n1"].sort_values("step")
    first = int(own[own["verdict"].isin(["true", "false"])]["step"].iloc[0])
    root_step = r["stop_step"]
    assert root_step < first
    s = convergence_series(trace, "n1", r["nodes"])
    assert s.decided_step == first
    chart = viz.convergence_chart(trace, "n1", r["nodes"], stop_step=root_step, unit="rounds")
    spec = json.loads(chart.to_json())
    labels = []
    for name, rows in spec.get("datasets", {}).items():
        labels += [row.get("label") for row in rows if isinstance(row, dict) and "label" in row]
    assert f"decided after {first:,} rounds" in labels
    assert f"spec decided after {root_step:,} rounds" in labels
    assert f"decided after {root_step:,} rounds" not in labels
    # a term (no verdict of its own) shows only the spec's rule
    leaf = json.loads(viz.convergence_chart(trace, "n3", r["nodes"], stop_step=root_step).to_json())
    leaf_labels = [row.get("label") for rows in leaf.get("datasets", {}).values() for row in rows
                   if isinstance(row, dict) and "label" in row]
    assert leaf_labels == [f"spec decided after {root_step:,} steps"]  # the neutral default unit


def test_rates_chart_keeps_its_plot_height_in_streamlit():
    """Streamlit gives a single-view chart ``autosize: fit`` unless the spec sets one, which squeezed the title,
    the top legend and the axes into the declared height and left the Fair[...] area with zero height on the
    Audit page (issue 11 #13). The chart declares ``pad``: its width and height are the plot's own."""
    r = make_result(big_tree(2), steps=100)
    trace = pd.DataFrame(r["trace"])
    fair = [n["id"] for n in r["nodes"] if n["kind"] == "fair"][0]
    d = _valid(viz.rates_chart(trace, fair, height=160, stop_step=r["stop_step"], title="Fair[sex]: individuals"))
    from streamlit.elements import vega_charts

    prepared = vega_charts._prepare_vega_lite_spec(d, use_container_width=False)
    assert prepared["autosize"]["type"] == "pad"
