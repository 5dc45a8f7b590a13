"""Issue 44 (the Compare page and its PDF, seen in the analyst's walkthrough): no node id ("n1") is shown to a reader
— nodes are named by their clause name, else in words from the syntax tree; a model is named in sentences by its
phrase ("the current model (logreg)"), never by a table tag ("current: logreg"), and the specification is named
(never "it"); and the page and the PDF say why a model's verdict here can be less decided than in an audit of that
model alone (the comparison shares the failure probability with the differences)."""
from __future__ import annotations

import io
import json
import re

import pytest

from fairaudit.comparison import compare
from fairaudit.comparison.wording import node_words, share_sentence
from fairaudit.report.compare import build_compare_pdf, sentences
from fairaudit.viz.compare import (chart_nodes, difference_convergence, final_values_chart, models_convergence,
                                   node_label, node_table)

NODE_ID = re.compile(r"\bn\d+\b")
SPEC = ('E[pred | race == "African-American" and sex == "Female"] / E[pred | race == "Caucasian" and sex == "Male"] '
        '>= 0.8 and E[pred | sex == "Female"] - E[pred | sex == "Male"] >= -0.1')
NAMED = ('ratio: E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8\n'
         'gap: E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1\n')
PREDS = ["decile_score <= 4", "decile_score <= 6"]
SAID = ["the current model (logreg)", "the decision tree"]


@pytest.fixture(scope="module")
def result():
    return compare("compas", SPEC, preds=PREDS, names=["logreg (current)", "tree"], said=SAID)


def _titles(chart) -> list[str]:
    found = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("title", "subtitle", "text") and isinstance(v, (str, list)):
                    found.extend([v] if isinstance(v, str) else [t for t in v if isinstance(t, str)])
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(chart.to_dict())
    return found


def test_nodes_are_named_in_words_never_by_id(result):
    for tn in result.tree.nodes:
        words = node_words(result.tree, tn.id)
        assert words and not NODE_ID.search(words) and (tn.kind in ("const", "neg") or tn.text not in words)
    assert node_words(result.tree, "n1").endswith("is at least 0.8")
    assert "divided by that of those with race = Caucasian and sex = Male" in node_words(result.tree, "n1")
    named = compare("compas", NAMED, preds=PREDS)
    assert node_words(named.tree, "n0") == "ratio and gap"
    assert node_words(named.tree, "n1") == "ratio"
    for nid in chart_nodes(result):
        assert not NODE_ID.search(node_label(result, nid))
    assert not NODE_ID.search(node_table(result).drop(columns=["id"]).to_string())


def test_chart_titles_have_no_node_id(result):
    a, b = result.names
    for nid in chart_nodes(result):
        for chart in (models_convergence(result, nid), difference_convergence(result, nid, a, b)):
            if chart is None:
                continue
            for title in _titles(chart):
                assert not NODE_ID.search(title), title
    for title in _titles(final_values_chart(result)):
        assert not NODE_ID.search(title), title
    labels = json.dumps(final_values_chart(result).to_dict())
    assert not re.search(r'"node": "n\d+', labels)


def test_headline_names_models_plainly_and_the_specification(result):
    text = result.headline
    assert "current:" not in text and "(current)" not in text and " it" not in text.replace("its ", "")
    assert "the current model (logreg)" in text and "the decision tree" in text
    assert "undecided on the specification" in text or "the specification" in text
    named = compare("compas", NAMED, preds=PREDS, names=["logreg (current)", "tree"], said=SAID)
    assert "the specification (ratio and gap)" in named.headline
    for sentence in sentences(result) + sentences(named):
        assert "current:" not in sentence and not NODE_ID.search(sentence)
        assert 'E[pred' not in sentence  # the spec's text is not a sentence's words
    with pytest.raises(Exception):
        compare("compas", SPEC, preds=PREDS, said=["only one"])


def test_share_sentence_when_the_comparison_shares_the_failure_probability(result):
    note = result.share_note
    assert note == share_sentence(result) and "smaller share of the failure probability" in note
    assert "Δ" not in note
    levels = result.levels
    assert levels["model_leaf"] < 0.05 / 6  # six distinct leaves: an audit alone gives none below its own level
    exact = compare("compas", SPEC, preds=PREDS, engine="dataset")
    assert exact.share_note is None  # exact values: nothing is shared


def test_pdf_has_no_node_id_and_says_why_verdicts_differ(result):
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(io.BytesIO(build_compare_pdf(result)))
    text = " ".join(" ".join((page.extract_text() or "").split()) for page in reader.pages)
    assert not NODE_ID.search(text), NODE_ID.search(text)
    assert "current:" not in text
    assert "smaller share of the failure probability" in text
    assert "the current model (logreg)" in text
