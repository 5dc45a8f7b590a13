"""Walkthrough findings in the words and charts of a result: a negative threshold (``> -0.1``, parsed as the
negation of 0.1) is read as a threshold by the node's explanation, facts, tree label and convergence panel (they
said "left − right … below the threshold 0"), and a node's confidence is written cut down to six digits (it read
"≥ 0.9666666666666667")."""
from __future__ import annotations

import pytest

import fairaudit
from fairaudit.core import explain
from fairaudit.core.guarantee import _at_most
from fairaudit.viz.convergence import convergence_series
from fairaudit.viz.tree import short_labels

SPEC = ('race_gap: E[pred | race == "African-American"] - E[pred | race == "Caucasian"] > -0.1\n'
        'women: E[pred | sex == "Female"] >= 0.3')


@pytest.fixture(scope="module")
def result():
    return fairaudit.audit("compas", SPEC, pred="decile_score <= 4")


def test_a_negative_threshold_is_a_threshold(result):
    nodes = result.nodes
    gap = next(n for n in nodes if n.get("name") == "race_gap")["id"]
    term = explain.comparison_parts(gap, nodes)
    assert term is not None and term[1:] == (">", -0.1)
    facts = explain.node_facts(gap, nodes, result.guarantee, result.unit)
    assert facts["threshold"] == "> -0.1" and "(left − right)" not in facts["interval"]
    text = explain.explain_node(gap, nodes, result.guarantee, result.unit)
    assert "threshold -0.1" in text and "left − right" not in text, text
    assert short_labels(nodes)[gap] == "race_gap: >-0.1"
    series = convergence_series(result.to_frame(), gap, nodes)
    # the plotted quantity is the compared term (named in words), never the term minus its threshold
    assert series.threshold == -0.1 and "0.1" not in series.quantity and "left" not in series.quantity
    assert series.title.startswith("race_gap: favourable rate of") and "E[" not in series.title


@pytest.mark.parametrize("p,text", [(0.95, "0.95"), (1 - 0.05 / 3, "0.983333"), (1 - 0.1 / 3, "0.966666"),
                                    (1 - 1e-9, "0.999999999"), (1 - 0.05 / 1e6, "0.99999995"), (0.975, "0.975"), (0.5, "0.5")])
def test_a_confidence_reads_at_most_what_it_is(p, text):
    assert _at_most(p) == text and float(text) <= p


def test_the_explanation_never_prints_a_long_float(result):
    for node in result.nodes:
        words = explain.explain_node(node["id"], result.nodes, result.guarantee, result.unit)
        assert "666666666" not in words and "333333333" not in words, words
