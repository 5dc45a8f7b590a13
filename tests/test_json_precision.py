"""Issue 28 (6, "Reproducible and precise"): the JSON carries every float at full precision (before, estimates were
rounded to 6 significant digits: the dataset engine's exact 699/1175 = 0.5948936170212766 was written 0.594894), and a
node whose value the engine knows as an exact fraction carries it as text in its ``final`` (``"exact": "699/1175"``):
the dataset engine's counts on rows and justicia's exact rates, and the arithmetic above them — never a guess from a
float, so the monitor's estimates have none. ``AuditResult.from_json`` reads it all back.
"""
from __future__ import annotations

import json
from fractions import Fraction

import numpy as np

import fairaudit
from fairaudit.core.trace import AuditResult

SPEC = 'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1'


def _nodes(result) -> dict:
    return {n["id"]: n for n in json.loads(result.to_json())["nodes"]}


def test_the_json_holds_the_values_computed_bit_for_bit():
    r = fairaudit.audit("compas", SPEC, engine="dataset", pred="decile_score <= 4")
    data = json.loads(r.to_json())
    t = r.trace_table
    for row in data["trace"]:
        j = t.column(row["node"])
        c = int(np.flatnonzero(t.steps == row["step"])[0])
        for name in ("estimate", "lo", "hi"):
            assert row[name] == float(getattr(t, name)[c, j]), (row["node"], name)
    for node in data["nodes"]:
        for name in ("estimate", "lo", "hi"):
            assert node["final"][name] == r.final_values(node["id"])[name]


def test_exact_fractions_are_carried_where_the_engine_has_them():
    r = fairaudit.audit("compas", SPEC, engine="dataset", pred="decile_score <= 4")
    nodes = _nodes(r)
    leaves = [n for n in nodes.values() if n["kind"] == "expect"]
    assert leaves
    for n in leaves:
        exact = Fraction(n["final"]["exact"])
        assert n["final"]["estimate"] == float(exact)
        assert exact.denominator <= n["final"]["n"]  # k / n on the rows
        assert n["final"]["lo"] <= exact <= n["final"]["hi"]
    difference = next(n for n in nodes.values() if n["kind"] == "sub")
    a, b = (Fraction(nodes[c]["final"]["exact"]) for c in (l["id"] for l in leaves))
    assert Fraction(difference["final"]["exact"]) == a - b
    # more than 6 significant digits survive
    assert any(len(repr(n["final"]["estimate"]).lstrip("-0.")) > 6 for n in leaves)
    back = AuditResult.from_json(r.to_json())
    assert back.to_json() == r.to_json()
    assert back.final_values(leaves[0]["id"])["exact"] == leaves[0]["final"]["exact"]


def test_no_exact_fraction_without_one():
    r = fairaudit.audit("compas", SPEC, pred="decile_score <= 4")  # the monitor: estimates, not exact values
    assert all("exact" not in n["final"] for n in _nodes(r).values())


def test_justicia_exact_rates_are_carried():
    r = fairaudit.audit("compas", 'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.2', engine="justicia",
                        model="tree")
    assert r.guarantee.kind == "exact"
    for n in _nodes(r).values():
        if n["kind"] == "expect":
            assert n["final"]["estimate"] == float(Fraction(n["final"]["exact"]))
