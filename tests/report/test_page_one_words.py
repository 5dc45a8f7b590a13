"""Page one a signer signs (issue 44, walkthrough): the first page of the PDF, the Report page's node table and its
parameter table name every clause by its name and in words from the parsed specification — never a node id
(``n1``), never the specification's raw text (``E[pred | …]``) outside its own code block, never "left side" — and
print option values in one number format (``1,000,000``)."""
from __future__ import annotations

import io
import re

import numpy as np
import pypdf
import pytest

from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.core.trace import AuditResult, Trace, node_infos
from fairaudit.report import build_pdf, content
from fairaudit.spec import parse

SPEC = ('ratio: E[pred | sex == "Female" and race == "Black"] / E[pred | sex == "Male" and race == "White"] >= 0.8\n'
        'gap: E[pred | sex == "Female"] - E[pred | sex == "Male"] >= -0.1\n')
LEAVES = {'E[pred | sex == "Female" and race == "Black"]': (0.02, 0.08),
          'E[pred | sex == "Male" and race == "White"]': (0.3, 0.5),
          'E[pred | sex == "Female"]': (0.2, 0.3), 'E[pred | sex == "Male"]': (0.2, 0.35)}
NODE_ID = re.compile(r"\bn\d+\b")


def intersection_result(options=None) -> AuditResult:
    """The walkthrough's audit, by hand: the intersection's ratio violated, the sex gap undecided."""
    spec = parse(SPEC)
    values = evaluate(spec, {key: LeafValue(np.array([(lo + hi) / 2]), np.array([lo]), np.array([hi]), 0.0,
                                            np.array([200.0])) for key, (lo, hi) in LEAVES.items()})
    trace = Trace.from_values([200], [tn.id for tn in spec.nodes], values)
    root = {1: "true", 0: "false"}.get(int(values["n0"].verdict[0]), "unknown")
    return AuditResult(spec.text, "dataset", dict(options or {}), root, None if root == "unknown" else 200, 200,
                       node_infos(spec), trace, tree=spec, rows={"audited": 200, "text": "200 rows"})


@pytest.fixture(scope="module")
def result():
    r = intersection_result()
    assert r.verdict == "false" and r.worst_node()["id"] == "n1"
    return r


def test_the_violated_comparison_is_named_in_words(result):
    line = content.worst_line(result)
    assert line == ("The violated comparison, ratio (favourable rate of sex = Female and race = Black ÷ that of "
                    "sex = Male and race = White ≥ 0.8), is violated: the ratio's estimate 0.125 in [0.04, 0.2667].")
    assert not NODE_ID.search(line) and "E[" not in line and "left side" not in line


def test_suggestions_are_named_in_words(result):
    lines = content.suggestion_lines(result)
    assert lines[0] == "gap: favourable rate of sex = Female − that of sex = Male ≥ −0.1: undecided."
    assert any(line.strip().startswith("Certifiable now, at the same guarantee: favourable rate of sex = Female − "
                                       "that of sex = Male ≥ −0.15") for line in lines)
    for line in lines:
        assert not NODE_ID.search(line) and "E[pred" not in line and "==" not in line, line


def test_pdf_page_one_has_no_node_id_and_no_raw_spec_text(result):
    reader = pypdf.PdfReader(io.BytesIO(build_pdf(result)))
    first = " ".join(reader.pages[0].extract_text().split())
    assert "The violated comparison, ratio (favourable rate of sex = Female and race = Black" in first
    assert not NODE_ID.search(first), NODE_ID.findall(first)
    assert "E[pred" not in first and "left side" not in first
    # the specification's own text is in its code block, on a later page; no id anywhere in the PDF
    every = " ".join(" ".join(page.extract_text().split()) for page in reader.pages)
    assert "E[pred" in every and not NODE_ID.search(every), NODE_ID.findall(every)


def test_node_table_rows_are_labelled_by_name_or_words(result):
    labels = {row["id"]: row["label"] for row in content.node_rows(result)}
    assert labels["n1"] == "ratio" and labels["n6"] == "gap"
    assert labels["n2"] == "favourable rate of sex = Female and race = Black ÷ that of sex = Male and race = White"
    assert labels["n3"] == "favourable rate of sex = Female and race = Black"
    assert labels["n0"] == "ratio and gap" and labels["n10"] == "−0.1"
    for label in labels.values():
        assert not NODE_ID.search(label) and "E[" not in label


def test_option_values_have_one_number_format():
    rows = {title: value for title, value, _ in content.option_rows(
        intersection_result({"thin_after": 1_000_000, "batch": 5, "delta": 0.05, "time_budget": 2500.0}))}
    assert "1,000,000" in rows.values() and "2,500" in rows.values()
    assert "1000000" not in rows.values()
