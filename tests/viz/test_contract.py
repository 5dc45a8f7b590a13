"""The charts under the engine contract (issue 13): operators and constants from the nodes' ``op``/``value``, interval
arithmetic from ``fairaudit.bounds.rules``, the result's own unit and guarantee, one-step runs, no monitor words."""
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairaudit import viz
from fairaudit.core.guarantee import Guarantee
from fairaudit.core.trace import AuditResult
from fairaudit.viz.convergence import convergence_series, natural_range
from fairaudit.viz.tree import node_symbol, short_labels, spec_nodes
from fairaudit.viz.values import comparison_parts, shown
from tests.viz.synthetic import big_tree, make_result

VIZ = Path(__file__).resolve().parents[2] / "fairaudit" / "viz"


def _texts(chart) -> str:
    return json.dumps(chart.to_dict())


def _rows_of(chart, key):
    spec = json.loads(chart.to_json())
    return [row[key] for rows in spec.get("datasets", {}).values() for row in rows
            if isinstance(row, dict) and key in row]


def _tooltip_titles(chart) -> set[str]:
    found = set()

    def walk(x):
        if isinstance(x, dict):
            tip = x.get("tooltip")
            if isinstance(tip, list):
                found.update(t.get("title") for t in tip if isinstance(t, dict))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(chart.to_dict())
    return found


# ------------------------------------------------------------------------------------------ op / value


def _misleading_nodes():
    """A comparison whose text says ``> 0.5`` (with ``<=`` inside its leaf) while its ``op`` is ``>=`` and its
    constant's ``value`` is 0.25: whatever reads the text gets every one of them wrong."""
    return [
        {"id": "n0", "parent": None, "kind": "cmp", "op": ">=", "text": "E[pred | age <= 30] - E[pred] > 0.5",
         "final": {"estimate": 0.05, "lo": 0.0, "hi": 0.1, "delta": 0.0, "verdict": "unknown"}},
        {"id": "n1", "parent": "n0", "kind": "sub", "op": "-", "text": "E[pred | age <= 30] + E[pred]",
         "final": {"estimate": 0.3, "lo": 0.25, "hi": 0.35, "delta": 0.0, "verdict": None}},
        {"id": "n2", "parent": "n1", "kind": "expect", "text": "E[pred | age <= 30]", "final": {"estimate": 0.6}},
        {"id": "n3", "parent": "n1", "kind": "expect", "text": "E[pred]", "final": {"estimate": 0.3}},
        {"id": "n4", "parent": "n0", "kind": "const", "value": 0.25, "text": "0.5",
         "final": {"estimate": 0.25, "lo": 0.25, "hi": 0.25}},
    ]


def test_symbols_labels_and_thresholds_come_from_op_and_value_not_from_text():
    nodes = _misleading_nodes()
    frame, _ = viz.tree_frame(nodes)
    row = frame.set_index("id")
    assert row.loc["n0", "symbol"] == "≥"
    assert row.loc["n1", "symbol"] == "−"  # the sub's op, although its text has a "+"
    assert row.loc["n4", "symbol"] == "0.25"  # the value, not the text "0.5"
    labels = short_labels(nodes)
    assert labels["n0"].endswith("≥0.25") and "0.5" not in labels["n0"]
    assert comparison_parts("n0", nodes)[1:] == (">=", 0.25)
    tip = row.loc["n0", "estimate"]
    assert tip.startswith("0.3") and "≥ 0.25" in tip and "> 0.5" not in tip
    assert shown("n0", nodes).threshold_text == "≥ 0.25"
    s = convergence_series(pd.DataFrame([{"step": 1, "node": n["id"], **n["final"]} for n in nodes]), "n0", nodes)
    assert s.threshold == 0.25


def test_a_constant_on_the_left_flips_the_operator():
    nodes = [{"id": "n0", "parent": None, "kind": "cmp", "op": "<="},
             {"id": "n1", "parent": "n0", "kind": "const", "value": 0.8},
             {"id": "n2", "parent": "n0", "kind": "expect", "text": "E[pred]"}]
    term, op, c = comparison_parts("n0", nodes)
    assert term["id"] == "n2" and op == ">=" and c == 0.8


def test_nodes_without_op_are_drawn_without_an_operator_not_guessed_from_text():
    """A hand-built node list without ``op``/``value`` (a result's nodes always carry them): the chart draws, and
    nothing is read out of the text."""
    nodes = [{"id": "n0", "parent": None, "kind": "cmp", "text": "E[pred] < 0.5"},
             {"id": "n1", "parent": "n0", "kind": "expect", "text": "E[pred]"},
             {"id": "n2", "parent": "n0", "kind": "const", "text": "0.5"}]
    frame, _ = viz.tree_frame(nodes)
    assert frame.set_index("id").loc["n0", "symbol"] == "cmp"
    assert short_labels(nodes)["n0"] == "all rows vs 0.5"  # the constant's own text, as written
    assert comparison_parts("n0", nodes) is None
    viz.tree_chart(nodes).to_dict()


def test_a_spec_before_a_run_has_op_and_value():
    from fairaudit.spec import parse

    spec = parse('sex_gap: E[pred | sex == "Male"] / E[pred | sex == "Female"] <= 1.25')
    nodes = spec_nodes(spec)
    by = {n["kind"]: n for n in nodes}
    assert by["cmp"]["op"] == "<=" and by["div"]["op"] == "/" and by["const"]["value"] == 1.25
    assert by["cmp"]["name"] == "sex_gap"
    assert short_labels(spec)[by["cmp"]["id"]] == "sex_gap: ≤1.25"
    assert node_symbol(by["div"]) == "÷"
    viz.tree_chart(spec).to_dict()  # a Spec is accepted directly
    assert viz.tree.default_height(spec) == viz.tree.default_height(nodes)


def test_an_old_result_without_op_and_value_gets_them_once_from_its_spec(tmp_path):
    """``AuditResult.from_json`` fills ``op``/``value`` of a result written before nodes carried them, from the
    parsed spec text, so the charts never parse node text."""
    data = make_result()
    data["spec"] = ('E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1 and '
                    'E[pred | race == "White"] / E[pred | race == "Black"] < 1.25')
    for n in data["nodes"]:
        n.pop("op", None)
        n.pop("value", None)
    result = AuditResult.from_json(data)
    by = {n["id"]: n for n in result.nodes}
    assert by["n1"]["op"] == "<" and by["n2"]["op"] == "-" and by["n7"]["op"] == "/" and by["n0"]["op"] == "and"
    assert by["n5"]["value"] == 0.1 and by["n10"]["value"] == 1.25
    frame, _ = viz.tree_frame(result.nodes)
    assert frame.set_index("id").loc["n1", "symbol"] == "<"


# ------------------------------------------------------------------------------------------ bounds.rules


def test_natural_range_is_the_evaluators_interval_arithmetic():
    from fairaudit.bounds.rules import DIV, SUB, Interval

    nodes = make_result()["nodes"]
    e = Interval(np.float64(np.nan), np.float64(0.0), np.float64(1.0))
    sub = SUB.interval(e, e)
    assert natural_range("n2", nodes) == (float(sub.lo), float(sub.hi))  # E − E: [−1, 1] (outward)
    assert natural_range("n7", nodes) == (float(DIV.interval(e, e).lo), float(DIV.interval(e, e).hi))
    assert natural_range("n7", nodes) == (0.0, math.inf)  # E / E: the divisor's range contains 0 (≥ 0 where defined)
    assert natural_range("n5", nodes) == (0.1, 0.1)


# ------------------------------------------------------------------------------------------ unit, guarantee


def test_the_x_axis_and_tooltips_use_the_results_unit():
    r = make_result(steps=50)
    trace = pd.DataFrame(r["trace"])
    chart = viz.convergence_chart(trace, "n1", r["nodes"], stop_step=r["stop_step"], unit="rounds")
    text = _texts(chart)
    assert '"title": "rounds"' in text
    assert "steps" not in _tooltip_titles(chart) and "rounds" in _tooltip_titles(chart)
    default = _texts(viz.convergence_chart(trace, "n1", r["nodes"]))
    assert '"title": "steps"' in default  # the neutral default
    fair_r = make_result(big_tree(2), steps=30)
    fair = [n["id"] for n in fair_r["nodes"] if n["kind"] == "fair"][0]
    rates = viz.rates_chart(pd.DataFrame(fair_r["trace"]), fair, unit="rounds", stop_step=fair_r["stop_step"])
    assert '"title": "rounds"' in _texts(rates)


@pytest.mark.parametrize("guarantee, shown_", [(Guarantee("probabilistic", 0.05), True), (Guarantee("exact"), False),
                                               (Guarantee("sound"), False), ({"kind": "probabilistic"}, True)])
def test_delta_is_shown_only_under_a_probabilistic_guarantee(guarantee, shown_):
    r = make_result(steps=30)
    trace = pd.DataFrame(r["trace"])
    conv = viz.convergence_chart(trace, "n1", r["nodes"], guarantee=guarantee)
    tree = viz.tree_chart(r["nodes"], guarantee=guarantee)
    assert ("δ" in _tooltip_titles(conv)) is shown_
    assert any(t and t.startswith("δ") for t in _tooltip_titles(tree)) is shown_


def test_without_a_guarantee_an_all_zero_delta_is_hidden():
    r = make_result(steps=30, delta=0.05)
    trace = pd.DataFrame(r["trace"])
    assert "δ" in _tooltip_titles(viz.convergence_chart(trace, "n1", r["nodes"]))
    trace["delta"] = 0.0
    nodes = [{**n, "final": {**n["final"], "delta": 0.0}} for n in r["nodes"]]
    assert "δ" not in _tooltip_titles(viz.convergence_chart(trace, "n1", nodes))
    assert not any(t and t.startswith("δ") for t in _tooltip_titles(viz.tree_chart(nodes)))


# ------------------------------------------------------------------------------------------ one step


def _marks(chart) -> list[str]:
    found = []

    def walk(x):
        if isinstance(x, dict):
            m = x.get("mark")
            if m is not None:
                found.append(m if isinstance(m, str) else m.get("type"))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(chart.to_dict())
    return found


def test_a_one_step_trace_is_drawn_as_points_not_lines():
    r = make_result(steps=1, batch=1000)
    trace = pd.DataFrame(r["trace"])
    assert trace["step"].nunique() == 1
    for ids in ("n1", ["n1", "n6"], "n0", "n3"):
        chart = viz.convergence_chart(trace, ids, r["nodes"], stop_step=r["stop_step"], unit="rows")
        marks = _marks(chart)
        assert "line" not in marks and "area" not in marks
        assert "decided after" not in _texts(chart)  # nothing to mark on a single step
        assert viz.to_png(chart)[:4] == b"\x89PNG"
    marks = _marks(viz.convergence_chart(trace, "n1", r["nodes"]))
    assert "point" in marks and "rule" in marks


def test_a_one_step_fair_node_is_one_stacked_bar():
    r = make_result(big_tree(2), steps=1, batch=500)
    trace = pd.DataFrame(r["trace"])
    fair = [n["id"] for n in r["nodes"] if n["kind"] == "fair"][0]
    chart = viz.rates_chart(trace, fair, unit="rows", stop_step=r["stop_step"])
    assert _marks(chart) == ["bar"]
    assert _rows_of(chart, "at")[0] == "after 500 rows"
    assert viz.to_png(chart)[:4] == b"\x89PNG"


def test_a_real_dataset_engine_result_charts():
    """The dataset engine computes every value at once: one step, an exact guarantee, unit "rows"."""
    import fairaudit

    r = fairaudit.audit("german", 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.2', engine="dataset",
                        pred="credit_amount < 5000")
    assert len(r.trace_table) == 1 and r.unit == "rows"
    frame = r.to_frame()
    chart = viz.convergence_chart(frame, r.root, r.nodes, stop_step=r.stop_step, unit=r.unit, guarantee=r.guarantee)
    assert '"title": "rows"' in _texts(chart) and "line" not in _marks(chart)
    assert "δ" not in _tooltip_titles(chart)
    cmp_id = next(n["id"] for n in r.nodes if n["kind"] == "cmp")
    panel = viz.convergence_chart(frame, cmp_id, r.nodes, unit=r.unit, guarantee=r.guarantee)
    assert "threshold 0.2" in _texts(panel) and "point" in _marks(panel)
    tree = viz.tree_chart(r, guarantee=r.guarantee)  # the result itself is accepted
    assert not any(t and t.startswith("δ") for t in _tooltip_titles(tree))
    for c in (chart, panel, tree):
        assert viz.to_png(c)[:4] == b"\x89PNG"


# ------------------------------------------------------------------------------------------ wording


# Δ is case-sensitive (under IGNORECASE it would match every δ, which a probabilistic guarantee may show)
MONITOR_WORDS = re.compile(r"Δ|(?i:δ split|hoeffding|betting|observation|\bbatch|optimi[sz]er)")


def test_no_viz_file_words_a_monitor_only_concept():
    """The engines supply their own words (``result.unit``, ``result.guarantee``); the charts never say them."""
    hits = [f"{p.name}:{i}: {line.strip()}" for p in sorted(VIZ.glob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if MONITOR_WORDS.search(line)]
    assert hits == []


def test_no_viz_file_parses_operators_or_constants_out_of_text():
    banned = re.compile(r"comparison_operator|_CMP\b|_const_value|_const\(|float\(str\(node")
    hits = [f"{p.name}:{i}" for p in sorted(VIZ.glob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if banned.search(line)]
    assert hits == []
