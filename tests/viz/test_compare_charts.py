"""Issue 32: a comparison's charts give every model one colour, the same in every chart; the node table lists each
model's value and every pair's difference with its verdict; a one-look (exact) comparison is drawn as points."""
from __future__ import annotations

import json

import pytest

from fairaudit.comparison import compare
from fairaudit.viz.compare import (difference_convergence, difference_word, final_values_chart, models_convergence,
                                   node_table, spec_verdicts)
from fairaudit.viz.palette import model_colours

SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.1 and '
        'E[pred | race == "Caucasian"] - E[pred | race == "African-American"] < 0.1')
PREDS = ["decile_score <= 4", "decile_score <= 6"]


@pytest.fixture(scope="module")
def result():
    return compare("compas", SPEC, preds=PREDS, names=["strict", "lenient"])


def _colour_ranges(spec: dict) -> list[list[str]]:
    """Every colour scale's (domain, range) found anywhere in a chart's JSON."""
    found = []

    def walk(x):
        if isinstance(x, dict):
            colour = x.get("color")
            if isinstance(colour, dict) and isinstance(colour.get("scale"), dict) and "range" in colour["scale"]:
                found.append((colour["scale"]["domain"], colour["scale"]["range"]))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(spec)
    return found


def test_one_colour_per_model_in_every_chart(result):
    colours = model_colours(result.names)
    assert len(set(colours.values())) == 2
    for chart in (models_convergence(result, "n1"), models_convergence(result, "n3", layout="columns"),
                  final_values_chart(result)):
        scales = _colour_ranges(json.loads(chart.to_json()))
        assert scales, "no model colour scale"
        for domain, colour_range in scales:
            assert dict(zip(domain, colour_range)) == colours


def test_difference_band_wears_the_lower_models_colour(result):
    decided = [d for d in result.differences if d.verdict in ("a_lower", "b_lower")]
    assert decided, "the two thresholds must differ somewhere"
    d = decided[0]
    lower = d.a if d.verdict == "a_lower" else d.b
    text = difference_convergence(result, d.node).to_json()
    assert model_colours(result.names)[lower] in text
    assert difference_word(d.verdict, d.a, d.b) in text
    root = difference_convergence(result, "n0")  # a boolean node: the difference of its slack
    assert root is not None and "slack" in root.to_json()


def test_node_table_has_every_model_and_the_verdicts(result):
    table = node_table(result)
    assert list(table.columns) == ["id", "node", "kind", "strict", "lenient", "strict − lenient", "strict vs lenient"]
    assert "const" not in set(table["kind"]) and table["id"].iloc[0] == "n0"
    words = set(table["strict vs lenient"]) - {""}
    assert words <= {"strict lower", "lenient lower", "undecided", "equal"}
    assert spec_verdicts(result) == " · ".join(f"{name}: {table.set_index('id').loc['n0', name]}"
                                               for name in result.names)  # the whole specification, per model
    d = result.difference("n3")
    assert table.set_index("id").loc["n3", "strict vs lenient"] == difference_word(d.verdict, d.a, d.b)


def test_exact_comparison_is_drawn_as_points():
    exact = compare("compas", SPEC, preds=PREDS, engine="dataset")
    spec = json.loads(models_convergence(exact, "n1").to_json())
    marks = {layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]}
    assert "area" not in marks and "point" in marks
    table = node_table(exact).set_index("id")
    assert "[" not in table.loc["n3", "A"]  # an exact value has no interval to show
