"""Issue 32: the comparison's PDF builds, is known as a fairaudit report (its creator mark), and its text holds the
headline, the guarantee, every model's name and description, the sentences of the spec's comparisons and the
per-node table's verdicts."""
from __future__ import annotations

import io
import re

import pytest
from pypdf import PdfReader

from fairaudit.comparison import compare
from fairaudit.core.outputs import file_kind
from fairaudit.report.compare import build_compare_pdf, sentences

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.1'


def _text(pdf: bytes) -> str:
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def two_models():
    return compare("compas", SPEC, preds=["decile_score <= 4", "decile_score <= 6"], names=["strict", "lenient"])


def test_pdf_holds_the_headline_and_every_model(two_models, tmp_path):
    pdf = build_compare_pdf(two_models)
    (tmp_path / "c.pdf").write_bytes(pdf)
    assert file_kind(tmp_path / "c.pdf") == "pdf"  # known as a fairaudit report: --pdf may replace it
    text = _text(pdf)
    assert two_models.headline in text
    assert two_models.guarantee in text
    for name in ("strict", "lenient"):
        assert name in text
    for m in two_models.models:
        assert f"pred = {m['pred']}" in text
    for sentence in sentences(two_models):
        assert sentence in text
    assert "strict − lenient" in text and "strict vs lenient" in text
    n = len(PdfReader(io.BytesIO(pdf)).pages)
    assert f"page {n} of {n}" in text


def test_pdf_of_trained_models_and_of_three(two_models):
    trained = compare("compas", SPEC, models=["logreg", "tree"], engine="dataset")
    text = _text(build_compare_pdf(trained))
    assert trained.headline in text
    for m in trained.models:
        assert m["name"] in text and m["provenance"]["model"]["content_hash"][:24] in text
    three = compare("compas", SPEC, preds=["decile_score <= 4", "decile_score <= 6", "decile_score <= 5"])
    text = _text(build_compare_pdf(three))
    for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
        assert f"Differences {a} − {b}" in text


def test_decided_sentences_are_the_results(two_models):
    decided = [d for d in two_models.differences if d.verdict in ("a_lower", "b_lower")]
    assert decided
    said = sentences(two_models)
    assert all(two_models.sentence(d) in said for d in decided)


def test_audit_pdf_with_a_comparison_section(two_models):
    import fairaudit
    from fairaudit.base.errors import FairauditError
    from fairaudit.report import build_pdf

    audit = fairaudit.audit("compas", SPEC, pred="decile_score <= 4")
    text = _text(build_pdf(audit, comparison=two_models))
    assert "Comparison with other models: strict, lenient" in text
    assert two_models.headline in text
    assert "Comparison with other models" not in _text(build_pdf(audit))
    other = fairaudit.audit("compas", 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1',
                            pred="decile_score <= 4")
    with pytest.raises(FairauditError, match="another specification"):
        build_pdf(other, comparison=two_models)
