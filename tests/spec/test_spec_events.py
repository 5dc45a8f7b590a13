"""evaluate_event against masks computed by hand, and event_columns."""
import numpy as np
import pandas as pd
import pytest

from fairaudit.spec import SpecError, evaluate_event, event_columns, parse, parse_event, spec_columns

FRAME = pd.DataFrame({
    "sex": ["Male", "Female", "Female", "Male", None],
    "age": [25, 40, 31, 60, np.nan],
    "flag": [True, False, True, False, True],
    "recid": [0, 1, 1, 0, 1],
})
PRED = np.array([1, 0, 1, 1, 0])
LABEL = np.array([1, 1, 0, 0, 1])
SCORE = np.array([0.9, 0.1, 0.6, 0.0, 0.2])


@pytest.mark.parametrize("text, expected", [
    ('sex == "Female"', [0, 1, 1, 0, 0]),
    ('sex != "Female"', [1, 0, 0, 1, 1]),  # a missing value satisfies only !=
    ('"Female" == sex', [0, 1, 1, 0, 0]),
    ("age >= 31", [0, 1, 1, 1, 0]),
    ("30 < age", [0, 1, 1, 1, 0]),
    ("age < 30 or age > 50", [1, 0, 0, 1, 0]),
    ('sex in {"Male", "Other"}', [1, 0, 0, 1, 0]),
    ('sex not in {"Male"}', [0, 1, 1, 0, 1]),
    ("recid in {1}", [0, 1, 1, 0, 1]),
    ("flag", [1, 0, 1, 0, 1]),
    ("recid", [0, 1, 1, 0, 1]),
    ("not recid and age > 30", [0, 0, 0, 1, 0]),
    ("pred", [1, 0, 1, 1, 0]),
    ("pred == 0 and label == 1", [0, 1, 0, 0, 1]),
    ("pred == label", [1, 0, 0, 0, 0]),
    ("score > 0.5", [1, 0, 1, 0, 0]),
    ("(sex == 'Male' | flag) and not pred", [0, 0, 0, 0, 1]),
    ("1 == 1", [1, 1, 1, 1, 1]),
])
def test_masks(text, expected):
    mask = evaluate_event(parse_event(text), FRAME, pred=PRED, label=LABEL, score=SCORE)
    assert mask.dtype == bool
    assert mask.tolist() == [bool(x) for x in expected]


@pytest.mark.parametrize("text, message", [
    ("score", "'score' is a probability, not a condition"),  # it used to mean score > 0
    ("age", "'age' holds numbers .25 to 60., not a yes/no value: write a condition such as age >="),
    ("recid and age", "'age' holds numbers"),
    ("sex", "categorical"),
    ("pred == 1", "no decisions"),
    ("label", "no labels"),
    ("score > 0.5", "no scores"),
    ("nope == 1", "unknown column 'nope'"),
    ("sex < 3", "need numbers"),
])
def test_errors(text, message):
    with pytest.raises(SpecError, match=message):
        evaluate_event(parse_event(text), FRAME)


def test_error_keeps_the_position_of_the_name():
    with pytest.raises(SpecError) as info:
        evaluate_event(parse_event("age > 3 and pred"), FRAME)
    assert (info.value.line, info.value.column) == (1, 13)


def test_length_mismatch():
    with pytest.raises(SpecError, match="5 rows"):
        evaluate_event(parse_event("pred"), FRAME, pred=[1, 0])


def test_event_columns():
    event = parse_event("pred == label and sex == 'F' or age > 3 and sex != 'M'")
    assert event_columns(event) == ["sex", "age"]
    assert event_columns(event, reserved=True) == ["pred", "label", "sex", "age"]
    spec = parse('E[pred | race == "A"] / E[score > 0.5 | age > 3] > 0.8 and Fair[sex] > 0.9')
    assert spec_columns(spec) == ["race", "age", "sex"]
