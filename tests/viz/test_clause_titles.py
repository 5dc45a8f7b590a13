"""Charts and tree labels that read (issue 44, walkthrough): a convergence panel is titled by its clause's name and
words (not the truncated spec text), a tree label of a ratio of intersections wraps between whole groups, and an
option's number is shown with thousands separators."""
from __future__ import annotations

import pytest

from fairaudit.viz import _format
from fairaudit.viz.convergence import convergence_chart, convergence_series
from fairaudit.viz.tree import _node_label, short_labels, tree_frame

import numpy as np

from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.core.trace import AuditResult, Trace, node_infos
from fairaudit.spec import parse

SPEC = ('ratio: E[pred | sex == "Female" and race == "Black"] / E[pred | sex == "Male" and race == "White"] >= 0.8\n'
        'gap: E[pred | sex == "Female"] - E[pred | sex == "Male"] >= -0.1\n')
LEAVES = {'E[pred | sex == "Female" and race == "Black"]': (0.02, 0.08),
          'E[pred | sex == "Male" and race == "White"]': (0.3, 0.5),
          'E[pred | sex == "Female"]': (0.2, 0.3), 'E[pred | sex == "Male"]': (0.2, 0.35)}


def intersection_result(options=None) -> AuditResult:
    """The walkthrough's audit, by hand: the intersection's ratio violated, the sex gap undecided."""
    spec = parse(SPEC)
    values = evaluate(spec, {key: LeafValue(np.array([(lo + hi) / 2]), np.array([lo]), np.array([hi]), 0.0,
                                            np.array([200.0])) for key, (lo, hi) in LEAVES.items()})
    trace = Trace.from_values([200], [tn.id for tn in spec.nodes], values)
    root = {1: "true", 0: "false"}.get(int(values["n0"].verdict[0]), "unknown")
    return AuditResult(spec.text, "dataset", dict(options or {}), root, None if root == "unknown" else 200, 200,
                       node_infos(spec), trace, tree=spec, rows={"audited": 200, "text": "200 rows"})


def test_convergence_title_is_the_clause_name_and_words():
    r = intersection_result()
    s = convergence_series(r.to_frame(), "n1", r.nodes)
    assert s.title == ("ratio: favourable rate of sex = Female and race = Black ÷ that of sex = Male and race = "
                       "White")
    spec = convergence_chart(r.to_frame(), "n1", r.nodes, width=560).to_dict()
    title = next(t["text"] for t in _titles(spec) if "ratio" in str(t.get("text")))
    lines = title if isinstance(title, list) else [title]
    assert " ".join(lines) == s.title and "E[" not in " ".join(lines)
    assert all(not line.endswith("…") for line in lines)
    # wrapped at word boundaries: every line's words are whole words of the title
    words = set(s.title.split())
    assert all(set(line.split()) <= words for line in lines)


def _titles(spec):
    if isinstance(spec, dict):
        if isinstance(spec.get("title"), dict):
            yield spec["title"]
        for value in spec.values():
            yield from _titles(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _titles(value)


@pytest.mark.parametrize("width", [8, 10, 12, 14, 18])
def test_a_ratio_of_intersections_wraps_between_whole_groups(width):
    label = _node_label("Female · Black ÷ Male · White", None, width, 2)
    assert label == "Female·Black ÷\nMale·White"


def test_tree_labels_of_the_walkthrough_spec():
    r = intersection_result()
    assert short_labels(r.nodes, max_chars=36)["n2"] == "Female · Black ÷ Male · White"
    frame, _ = tree_frame(r.nodes, label_width=12, label_lines=3)
    for label in frame["label"]:
        for line in label.split("\n"):
            assert not line.startswith("·") and not line.endswith("·"), label
            assert not line.startswith(("÷", "−")) or line == label, label


def test_a_label_that_fits_is_unchanged():
    assert _format.wrap_groups("Male · Private", 18) == "Male · Private"


@pytest.mark.parametrize("value,text", [(1_000_000, "1,000,000"), (5, "5"), (0, "0"), (0.05, "0.05"),
                                        (2500.0, "2,500"), (1e-7, "1e-07"), (True, "yes"), (None, "–")])
def test_option_value_format(value, text):
    assert _format.option_value(value) == text
