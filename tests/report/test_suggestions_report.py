"""The PDF shows the refinement suggestions of an undecided audit, with the sentence saying what was tested."""
import io

import pypdf

import fairaudit
from fairaudit.core import suggest
from fairaudit.report import build_pdf


def _flat(pdf: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return " ".join(" ".join(page.extract_text() or "" for page in reader.pages).split())


def test_pdf_has_the_suggestions_of_an_undecided_audit(tmp_path):
    r = fairaudit.audit("compas", 'E[pred | race == "Asian"] >= 0.7', engine="dataset", pred="decile_score <= 4",
                        interval="one-look")
    assert r.verdict == "unknown"
    text = _flat(build_pdf(r))
    assert "Refinement suggestions" in text
    assert "Certifiable now, at the same guarantee" in text and "Projection: about" in text
    assert " ".join(suggest.POST_HOC.split())[:60] in text
    decided = fairaudit.audit("compas", 'E[pred | race == "Asian"] >= 0.5', engine="dataset", pred="decile_score <= 4")
    assert "Refinement suggestions" not in _flat(build_pdf(decided))
