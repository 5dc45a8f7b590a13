"""Templates: every one renders text that parses, prints canonically and validates."""
import pytest

from fairaudit.spec import parse, templates, validate
from fairaudit.spec.templates import OTHERS, TEMPLATES

data = pytest.importorskip("fairaudit.data")


def _params(key):
    if key == "individual_fairness":
        return dict(attribute="sex")
    params = dict(attribute="sex", groups=["Male", "Female"])
    if key == "conditional_statistical_parity":
        params["condition"] = 'education == "Bachelors"'
    return params


@pytest.fixture(scope="module")
def adult():
    return data.load("adult")


@pytest.mark.parametrize("key", sorted(TEMPLATES))
def test_template_renders_parses_and_validates(key, adult):
    template = TEMPLATES[key]
    assert template.title and template.explanation and "\n" not in template.explanation
    text = template.render(**_params(key))
    spec = parse(text)
    assert spec.text == text
    assert [d for d in validate(spec, adult.schema, adult.frame) if d.severity == "error"] == []


@pytest.mark.parametrize("key", sorted(k for k in TEMPLATES if "form" in {p.name for p in TEMPLATES[k].parameters}))
def test_ratio_form(key, adult):
    text = templates.render(key, **_params(key), form="ratio", threshold=0.9)
    assert "/" in text and ">= 0.9" in text
    assert not [d for d in validate(parse(text), adult.schema) if d.severity == "error"]


def test_expected_texts():
    assert templates.render("disparate_impact", attribute="race", groups=["White", "Black"]) == \
        'E[pred | race == "Black"] / E[pred | race == "White"] >= 0.8'
    assert templates.render("demographic_parity", attribute="sex", groups=["Male", "Female"], threshold=0.05) == \
        'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.05 and ' \
        'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.05'
    assert templates.render("accuracy_equality", attribute="sex", groups=["Male", "Female"]).startswith(
        'E[pred == label | sex == "Female"]')
    assert templates.render("treatment_equality", attribute="sex", groups=["Male", "Female"]).startswith(
        'E[pred == 0 and label == 1 | sex == "Female"] / E[pred == 1 and label == 0 | sex == "Female"] - ')
    assert templates.render("individual_fairness", attribute=["sex", "race"]) == \
        "Fair[sex] >= 0.95 and Fair[race] >= 0.95"


def test_intersectional_groups_and_others(adult):
    text = templates.render("equal_opportunity", attribute=["sex", "race"],
                            groups=[("Male", "White"), ("Female", "Black"), OTHERS])
    assert 'E[pred | sex == "Female" and race == "Black" and label == 1]' in text
    assert 'E[pred | not (sex == "Male" and race == "White") and label == 1]' in text
    assert not [d for d in validate(parse(text), adult.schema, adult.frame) if d.severity == "error"]
    assert 'race != "White"' in templates.render("demographic_parity", attribute="race", groups=["White", OTHERS])


def test_parameter_errors():
    with pytest.raises(TypeError, match="'groups' is required"):
        templates.render("demographic_parity", attribute="sex")
    with pytest.raises(TypeError, match="unknown parameter"):
        templates.render("demographic_parity", attribute="sex", groups=["a", "b"], colour="red")
    with pytest.raises(ValueError, match="at least two groups"):
        templates.render("demographic_parity", attribute="sex", groups=["a"])
    with pytest.raises(ValueError, match="one value for each"):
        templates.render("demographic_parity", attribute=["sex", "race"], groups=[("a", "b"), "c"])
    with pytest.raises(ValueError, match="must be one of"):
        templates.render("demographic_parity", attribute="sex", groups=["a", "b"], form="log")
    with pytest.raises(KeyError, match="unknown template"):
        templates.get("nope")
