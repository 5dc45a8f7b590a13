"""The PDF's counterexamples section: for a Fair[...] node with counterexamples, the count, where they were
found and the first few rows (decisions at each value, then the individual's features); none for a run without."""
import io

import pytest

from fairaudit import audit, models
from fairaudit.report import build_pdf
from fairaudit.testing import toy_dataset

pypdf = pytest.importorskip("pypdf")


def _text(pdf: bytes) -> str:
    return " ".join("\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


def test_the_first_counterexamples_and_their_total():
    dataset = toy_dataset(600)
    model = models.train(dataset, "logreg")
    r = audit(dataset, "Fair[sex] >= 0.99", engine="dataset", model=model, rows="all")
    found = r.counterexamples.get("Fair[sex]")
    assert found.total > 5
    text = _text(build_pdf(r, dataset=dataset, model=model))
    assert "Counterexamples: individuals whose decision changes with the attribute alone" in text
    assert f"Fair[sex]: {found.total:,} counterexamples found among the audited rows (the first 5 shown)" in text
    assert "sex = F" in text and "sex = M" in text and "unfavourable (" in text
    plain = audit(dataset, "E[pred] >= 0.1", engine="dataset", model=model, rows="all")
    assert "Counterexamples:" not in _text(build_pdf(plain, dataset=dataset, model=model))
