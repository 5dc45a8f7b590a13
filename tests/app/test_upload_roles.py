"""Issue 44, item 8: no role guesses after an upload. A file that names no roles starts from guessed ones: a binary
column named like an outcome (``hired``) or the only 0/1 column as the label, the columns named like protected
attributes (``sex``, ``race``) as protected; the user can change them, and a built-in dataset keeps its own."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairaudit.data.roles import guess_label, guess_protected, guess_roles
from tests.app.test_workspace import ROOT, TIMEOUT, _data_upload, _ok


def _hiring(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"applicant_id": np.arange(n), "years_experience": rng.integers(0, 20, n),
                         "sex": rng.choice(["Male", "Female"], n), "race": rng.choice(["White", "Black", "Asian"], n),
                         "score": rng.random(n).round(3), "hired": rng.integers(0, 2, n)})


def test_guesses_on_a_hiring_file():
    assert guess_roles(_hiring()) == ("hired", ("sex", "race"))


@pytest.mark.parametrize("name", ["approved", "Outcome", "decision", "y", "target", "label", "Hired"])
def test_label_named_like_an_outcome(name):
    frame = _hiring().rename(columns={"hired": name}).assign(flag=1)
    assert guess_label(frame) == name


def test_the_only_zero_one_column_is_the_label_and_two_are_not_guessed():
    frame = _hiring().rename(columns={"hired": "got_offer"})
    assert guess_label(frame) == "got_offer"
    assert guess_label(frame.assign(other=frame["got_offer"][::-1].to_numpy())) is None  # two: unsure
    assert guess_label(frame.assign(got_offer=frame["score"])) is None  # no binary column


@pytest.mark.parametrize("name", ["gender", "Ethnicity", "age", "religion", "national_origin", "disability",
                                  "race_ethnicity", "marital-status"])
def test_protected_named_like_one(name):
    frame = _hiring().assign(**{name: "x"})
    assert name in guess_protected(frame)
    assert "agency" not in guess_protected(frame.assign(agency="x"))  # "age" only as a whole name


def test_the_data_page_prefills_the_guessed_roles_after_an_upload():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at = _data_upload(at, "applicants.csv", _hiring().to_csv(index=False).encode())
    assert at.selectbox(key="label_applicants").value == "hired"
    assert list(at.multiselect(key="protected_applicants").value) == ["sex", "race"]
    current = at.session_state["current_dataset"]
    assert current.schema.label == "hired" and list(current.schema.protected) == ["sex", "race"]
    # the user's own choice is kept
    at.multiselect(key="protected_applicants").set_value(["sex"])
    _ok(at.run())
    assert list(at.session_state["current_dataset"].schema.protected) == ["sex"]
