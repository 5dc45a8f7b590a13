"""Every example in specs/ parses and validates against the dataset named in its header."""
from pathlib import Path

import pytest

from fairaudit.spec import parse, to_text, validate
from fairaudit.spec.files import load_spec_file
from fairaudit.spec.validate import validate_event

data = pytest.importorskip("fairaudit.data")

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.spec"))


def test_there_are_examples():
    names = {p.stem for p in SPECS}
    assert {"avoir_adult", "avoir_adult_refined", "avoir_compas_fpr", "avoir_compas_fpr_reciprocal",
            "compas_propublica", "compas_northpointe"} <= names
    assert len(SPECS) >= 15


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_example_parses_and_validates(path):
    spec_file = load_spec_file(path)
    assert spec_file.dataset in data.names(), "every example names a built-in dataset"
    assert spec_file.decision, "every example has a '# decision:' hint"
    assert any(line.startswith("#") and len(line) > 40 for line in spec_file.text.splitlines()[2:]), \
        "every example explains itself in a comment"
    dataset = data.load(spec_file.dataset)
    found = validate(spec_file.spec, dataset.schema, dataset.frame)
    assert [str(d) for d in found if d.severity == "error"] == []
    event = spec_file.decision_event()
    if event is not None:
        assert validate_event(event, dataset.schema) == []
    else:
        assert spec_file.uses_model
    assert parse(to_text(spec_file.spec)) == spec_file.spec


def test_avoir_case_study_texts():
    by_name = {p.stem: load_spec_file(p).spec for p in SPECS}
    assert by_name["avoir_adult"].root == parse(
        '(E[pred | sex == "Male" and workclass == "Federal-gov"] - E[pred | sex == "Female" and workclass == "Federal-gov"] < 0.5)'
        ' & (E[pred | race == "White" and workclass == "Federal-gov"] - E[pred | race != "White" and workclass == "Federal-gov"] < 0.5)').root
    refined = by_name["avoir_adult_refined"]
    assert [tn.text for tn in refined if tn.kind == "const"] == ["0.55", "0.5"]
    fpr = by_name["avoir_compas_fpr"]
    assert fpr.text.endswith("< 1.1") and fpr.root.left.kind == "div"
    assert by_name["avoir_compas_fpr_reciprocal"].text.endswith("> 0.9")
    assert {tn.name for tn in by_name["compas_propublica"] if tn.name} == {
        "fpr_african_american_over_caucasian", "fpr_caucasian_over_african_american"}
