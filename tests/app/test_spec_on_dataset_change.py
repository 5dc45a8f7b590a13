"""Issue 44, item 8: the Adult demo's spec and placeholder text remained after switching to another dataset. A
specification that is not the analyst's own (the demo's, or the previous dataset's starting one, untouched) becomes
the new dataset's starting specification, and the editor's example and the "Only rows where" placeholder are in the
dataset's own columns; an analyst's own specification is never replaced."""
from __future__ import annotations

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from fairaudit.spec import parse
from fairaudit.ui import logic
from tests.app.test_workspace import ROOT, TIMEOUT, _data_upload, _ok

ADULT_WORDS = ("Adult", "workclass", "Federal-gov", "sex_parity: E[pred | sex == \"Male\"]")


def _hiring(n: int = 300) -> bytes:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"gender": rng.choice(["W", "M", "M"], n), "ethnicity": rng.choice(["A", "B", "B", "C"], n),
                         "score": rng.random(n).round(3), "hired": rng.integers(0, 2, n)}).to_csv(index=False).encode()


def test_starting_spec_is_in_the_new_datasets_columns():
    text = logic.starting_spec("applicants", {"gender": ["M", "W"], "ethnicity": ["B", "A", "C"], "age": list(range(50))})
    spec = parse(text)
    assert {"gender", "ethnicity"} <= set(spec.text.replace("|", " ").replace("==", " ").split())
    assert "age" not in spec.text and "Adult" not in text
    assert logic.starting_spec("x", {"age": list(range(50))}) == ""


def test_only_a_spec_that_is_not_the_analysts_own_is_replaced():
    starter = logic.starting_spec("a", {"g": ["x", "y"]})
    assert logic.replaceable_spec(logic.DEMO_SPEC, None) and logic.replaceable_spec("", None)
    assert logic.replaceable_spec(starter + "\n", starter)
    assert not logic.replaceable_spec(starter.replace("0.1", "0.05"), starter)  # edited: the analyst's own
    assert not logic.replaceable_spec('E[pred | g == "x"] >= 0.5', starter)


def test_examples_use_the_datasets_columns():
    assert logic.example_condition({"gender": ["M", "W"]}) == 'E[pred | gender == "M"] - E[pred | gender == "W"] < 0.1'
    assert logic.example_where({"national origin": ["US", "MX"]}) == 'e.g. `national origin` == "US"'
    assert "sex" not in logic.example_condition({}) and "workclass" not in logic.example_where({})


def test_switching_from_the_demo_spec_to_an_upload_replaces_it():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.session_state["spec_text"] = logic.DEMO_SPEC
    at = _data_upload(at, "applicants.csv", _hiring())
    text = at.session_state["spec_text"]
    assert text.strip() and not any(w in text for w in ADULT_WORDS), text
    assert "gender_parity:" in text and "ethnicity_parity:" in text
    _ok(at.switch_page("pages/3_Specification.py").run())
    editor = at.text_area(key="spec_editor")
    assert editor.value == text
    assert "gender ==" in editor.help and "sex ==" not in editor.help


def test_the_analysts_own_spec_stays():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    own = 'E[pred | ethnicity == "A"] >= 0.2\n'
    at.session_state["spec_text"] = own
    at = _data_upload(at, "applicants.csv", _hiring())
    assert at.session_state["spec_text"] == own
