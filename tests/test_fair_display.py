"""A ``Fair[...]`` node is shown by its certified share, its upper bound (1 − unfair) and its undecided share —
wherever it is shown (the selected-node panel, the explanation, the side-by-side cell, the tree's tooltip, the
PDF's node table, the CLI's worst line and summary) — and never by a midpoint "value" between them."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from fairaudit import audit
from fairaudit.core import explain  # noqa: E402
from fairaudit.ui import selection  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent / "fixtures" / "example.nnet"
SPEC = "Fair[x1] >= 0.95"


@pytest.fixture(scope="module")
def undecided():
    """The example network refined two levels deep, whole partitions only: Fair[x1] in [0.6, 1] (0.4 undecided),
    midpoint 0.8."""
    r = audit(None, SPEC, engine="fairquant", model=str(EXAMPLE), max_depth=2, count_inside=False)
    assert r.verdict == "unknown"
    f = r.final_values("n1")
    assert (f["lo"], f["hi"], f["undecided"]) == pytest.approx((0.6, 1.0, 0.4))
    return r


MIDPOINT = "0.8"
RATES = ("certified 0.6", "upper bound 1 (1 − unfair)", "undecided 0.4")


def test_the_selected_node_panel_shows_the_rates_not_a_value(undecided):
    r = undecided
    for node_id in ("n0", "n1"):  # the comparison and its Fair term
        facts = explain.node_facts(node_id, r.nodes, r.guarantee, r.unit)
        assert "value" not in facts and "estimate" not in facts and "interval" not in facts
        assert (facts["certified (lower bound)"], facts["upper bound (1 − unfair)"], facts["undecided"]) == (
            "0.6", "1", "0.4")
        assert MIDPOINT not in " ".join(facts.values())
    assert explain.node_facts("n0", r.nodes, r.guarantee, r.unit)["threshold"] == "≥ 0.95"
    words = explain.explain_node("n1", r.nodes, r.guarantee, r.unit)
    assert "at least 0.6" in words and "at most 1" in words and "0.4 are undecided" in words
    assert "estimate" not in words and MIDPOINT not in words


def test_every_other_place_shows_the_rates_not_a_midpoint(undecided):
    from fairaudit.report.content import node_rows
    from fairaudit.viz.tree import _value_columns

    r = undecided
    texts = {"worst line": r.worst_summary(),
             "side by side": explain.compare_rows(r, r)[0],
             "tooltip": _value_columns("n0", r.nodes)["estimate"] + _value_columns("n1", r.nodes)["estimate"],
             "pdf table": " ".join(row["estimate"] for row in node_rows(r))}
    texts["side by side"] = " ".join(str(v) for v in texts["side by side"].values())
    for where, text in texts.items():
        assert all(rate in text for rate in RATES), (where, text)
        assert MIDPOINT not in text.replace("0.85", ""), (where, text)


def test_the_cli_summary_prints_the_rates(undecided, capsys):
    from fairaudit.cli.audit import print_summary

    print_summary(undecided)
    out = capsys.readouterr().out
    assert f"fair:      Fair[x1] (n1): {', '.join(RATES[:2])}, {RATES[2]}" in out
    worst = next(line for line in out.splitlines() if line.startswith("worst:"))
    assert all(rate in worst for rate in RATES) and MIDPOINT not in worst


def test_a_selected_comparison_of_a_fair_node_gets_its_rates_and_counterexamples(undecided):
    """The Audit page's default selection is a comparison (``Fair[x1] >= 0.95``, n0): it shows the rates plot and
    the counterexample table of its Fair term (n1) — before, only a click on the Fair node itself did, so a run
    showed no breakdown at all."""
    r = undecided
    kinds = {n["id"]: n["kind"] for n in r.nodes}
    assert selection.default_selection(r.nodes) == ["n0"]
    fair_of = selection.fair_nodes(["n0"], r.nodes)
    assert fair_of == {"n0": "n1"} and selection.fair_nodes(["n1", "n2"], r.nodes) == {"n1": "n1"}
    panels = selection.panels_for(["n0"], kinds, {"n1": True}, fair_of)
    assert panels == [selection.Panel("convergence", ("n0",)), selection.Panel("rates", ("n1",))]
    # both selected: one rates plot for the one Fair node
    both = selection.panels_for(["n0", "n1"], kinds, {"n1": True}, selection.fair_nodes(["n0", "n1"], r.nodes))
    assert [p.kind for p in both] == ["convergence", "rates"]


def test_the_bounds_plot_draws_no_midpoint_for_a_fair_node(undecided):
    from fairaudit.viz.convergence import convergence_series

    r = undecided
    frame = r.to_frame()
    for node_id in ("n0", "n1"):
        series = convergence_series(frame, node_id, r.nodes)
        last = series.frame.iloc[-1]
        assert (last["lo"], last["hi"]) == pytest.approx((0.6, 1.0))
        assert last["estimate_s"] != MIDPOINT and not last["estimate"] == pytest.approx(0.8)
