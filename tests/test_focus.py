"""One rule for "the comparison that matters" (``fairaudit.core.focus``; issue 44, item 2): the headline, the CLI's
``worst:`` line, the tree's default selection, the JSON and the PDF banner name the same comparison, and the
headline says which rule chose it. Before, an undecided audit's headline named the first undecided comparison
(estimate 1.18) while ``worst:`` named another (0.43)."""
from __future__ import annotations

import io
import json

import numpy as np
import pypdf
import pytest

from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.core.focus import choose, margin
from fairaudit.core.trace import AuditResult, Trace, node_infos
from fairaudit.spec import parse

TWO_RATIOS = ('E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8 and '
              'E[pred | race == "Black"] / E[pred | race == "White"] >= 0.8')


def _result(text: str, leaves: dict[str, tuple[float, float]], engine: str = "dataset") -> AuditResult:
    """A hand-made result of ``text`` whose ``E[...]`` leaves (by their text) have the given intervals."""
    spec = parse(text)
    values = evaluate(spec, {key: LeafValue(np.array([(lo + hi) / 2]), np.array([lo]), np.array([hi]), 0.0,
                                            np.array([200.0])) for key, (lo, hi) in leaves.items()})
    trace = Trace.from_values([200], [tn.id for tn in spec.nodes], values)
    root = {1: "true", 0: "false"}.get(int(values["n0"].verdict[0]), "unknown")
    return AuditResult(spec.text, engine, {}, root, None if root == "unknown" else 200, 200, node_infos(spec), trace,
                       tree=spec, rows={"audited": 200, "text": "200 rows"})


@pytest.fixture()
def undecided():
    """Both ratios undecided: sex's interval [0.67, 1.71] (estimate ≈ 1.2) lies mostly above 0.8, race's
    [0.18, 0.89] mostly below: race's comparison (n6) is the one closest to failing; the old headline named n1."""
    return _result(TWO_RATIOS, {'E[pred | sex == "Female"]': (0.3, 0.6), 'E[pred | sex == "Male"]': (0.35, 0.45),
                                'E[pred | race == "Black"]': (0.1, 0.4),
                                'E[pred | race == "White"]': (0.45, 0.55)})


def test_every_front_end_names_the_comparison_closest_to_failing(undecided, tmp_path, capsys):
    from fairaudit.cli._common import print_summary
    from fairaudit.report import build_pdf, content
    from fairaudit.ui import selection

    r = undecided
    assert r.claim.verdict == "unknown"
    assert [n["final"]["verdict"] for n in r.nodes if n["kind"] == "cmp"] == ["unknown", "unknown"]
    # the headline: the rule first, then the comparison's groups
    summary = r.summary
    assert summary.startswith("The comparison closest to failing: Those with race = Black receive a favourable "
                              "decision less often than those with race = White: the ratio of their favourable rates "
                              "is between 0.1818 and 0.8889, so it is not yet known"), summary
    assert "sex" not in summary
    # the CLI's summary and worst lines
    print_summary(r)
    out = capsys.readouterr().out
    worst = next(line for line in out.splitlines() if line.startswith("worst:"))
    assert worst.startswith("worst:     the comparison closest to failing: (n6) E[pred | race == \"Black\"]"), worst
    assert f"summary:   {summary}" in out
    # the tree's default selection, from the result or from its nodes
    assert selection.default_selection(r) == selection.default_selection(r.nodes) == ["n6"]
    assert r.worst_node()["id"] == "n6"
    # the JSON, and a result read back from it
    data = json.loads(r.to_json())
    assert data["headline"]["focus"] == {"id": "n6", "rule": "the comparison closest to failing",
                                         "margin": pytest.approx(margin("n6", r.nodes)), "among": 2,
                                         "verdict": "unknown"}
    back = AuditResult.from_json(r.to_json())
    assert back.summary == summary and back.worst_node()["id"] == "n6" and selection.default_selection(back) == ["n6"]
    # the PDF: the banner's sentence and the line under it
    assert content.headline(r)["summary"] == summary
    # named in words from the parsed specification, never by its node id (issue 44)
    worst = ("The comparison closest to failing, favourable rate of race = Black ÷ that of race = White ≥ 0.8, "
             "is undecided: the ratio's estimate")
    assert content.worst_line(r).startswith(worst)
    first = " ".join(pypdf.PdfReader(io.BytesIO(build_pdf(r))).pages[0].extract_text().split())
    assert " ".join(summary.split()) in first and worst in first and "(n6)" not in first


def test_a_violated_specification_names_its_most_violated_comparison():
    """Two violated differences: the one whose interval reaches farthest beyond its threshold (0.5 − 0.1 against
    0.3 − 0.1), not the first; one violated among undecided ones is "the violated comparison"."""
    text = ('E[pred | sex == "Male"] - E[pred | sex == "Female"] <= 0.1 and '
            'E[pred | race == "White"] - E[pred | race == "Black"] <= 0.1')
    r = _result(text, {'E[pred | sex == "Male"]': (0.6, 0.65), 'E[pred | sex == "Female"]': (0.35, 0.4),
                       'E[pred | race == "White"]': (0.7, 0.75), 'E[pred | race == "Black"]': (0.25, 0.3)})
    assert r.verdict == "false" and r.worst_node()["id"] == "n6"
    assert r.summary.startswith("The most violated comparison: Those with race = White receive a favourable decision "
                                "more often than those with race = Black")
    one = _result(text, {'E[pred | sex == "Male"]': (0.4, 0.65), 'E[pred | sex == "Female"]': (0.35, 0.4),
                         'E[pred | race == "White"]': (0.7, 0.75), 'E[pred | race == "Black"]': (0.25, 0.3)})
    assert one.worst_node()["id"] == "n6" and one.summary.startswith("The violated comparison: ")


def test_a_certified_specification_names_the_comparison_closest_to_failing():
    text = ('E[pred | sex == "Male"] - E[pred | sex == "Female"] <= 0.2 and '
            'E[pred | race == "White"] - E[pred | race == "Black"] <= 0.2')
    r = _result(text, {'E[pred | sex == "Male"]': (0.5, 0.52), 'E[pred | sex == "Female"]': (0.45, 0.47),
                       'E[pred | race == "White"]': (0.5, 0.52), 'E[pred | race == "Black"]': (0.38, 0.4)})
    assert r.verdict == "true" and r.worst_node()["id"] == "n6"
    assert r.summary.startswith("The comparison closest to failing: Those with race = White receive")


def test_one_comparison_needs_no_rule():
    r = _result('E[pred | sex == "Male"] - E[pred | sex == "Female"] <= 0.1',
                {'E[pred | sex == "Male"]': (0.6, 0.65), 'E[pred | sex == "Female"]': (0.35, 0.4)})
    assert r.summary.startswith("Those with sex = Male receive") and r.claim.focus.among == 1


def test_the_margin_of_a_difference_and_of_a_ratio():
    """``c − hi`` for ``≤ c``; ``(lo − c) / c`` for a ratio ``≥ c``; a hand-made node with an estimate only is
    read at its estimate; no interval at all comes last."""
    def nodes(op, kind, lo, hi, c):
        return [{"id": "n0", "kind": "cmp", "op": op, "parent": None, "final": {"verdict": "unknown"}},
                {"id": "n1", "kind": kind, "parent": "n0", "final": {"lo": lo, "hi": hi}},
                {"id": "n2", "kind": "const", "parent": "n0", "value": c, "final": {}}]

    assert margin("n0", nodes("<=", "sub", 0.05, 0.25, 0.1)) == pytest.approx(-0.15)
    assert margin("n0", nodes(">=", "div", 0.6, 1.2, 0.8)) == pytest.approx(-0.25)
    assert margin("n0", nodes(">=", "sub", 0.6, 1.2, 0.8)) == pytest.approx(-0.2)
    assert np.isnan(margin("n0", nodes("<=", "sub", None, None, 0.1)))
    hand = [{"id": "n0", "kind": "and", "final": {"verdict": "true"}},
            {"id": "n1", "kind": "cmp", "final": {"verdict": "true"}},
            {"id": "n2", "kind": "cmp", "final": {"verdict": "true", "estimate": 0.3}}]
    assert choose(hand).id == "n2"


def test_under_a_not_the_rule_falls_back_to_every_comparison():
    """``not (X <= 0.1)`` holds because ``X <= 0.1`` is violated: no comparison has the specification's verdict;
    the violated one is named with its own verdict (never "below the 0.1 you allowed")."""
    r = _result('not (E[pred | sex == "Male"] - E[pred | sex == "Female"] <= 0.1)',
                {'E[pred | sex == "Male"]': (0.6, 0.65), 'E[pred | sex == "Female"]': (0.35, 0.4)})
    assert r.verdict == "true" and r.worst_node()["id"] == "n1"
    assert "above the 0.1 you allowed" in r.summary
