"""Validation against a schema: messages a person can act on."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from fairaudit.data.dataset import Column, Dataset, Schema
from fairaudit.spec import SpecError, check, parse, validate

SCHEMA = Schema(
    columns=(Column("age", "numeric"), Column("race", "categorical", ("Black", "Other", "White")),
             Column("sex", "categorical", ("Female", "Male")), Column("recid", "categorical", (0, 1)),
             Column("country", "categorical", tuple(f"country_{i:02d}" for i in range(30))),
             Column("income", "categorical", ("<=50K", ">50K"))),
    label="income", favourable=">50K", protected=("race", "sex"))
FRAME = pd.DataFrame({"age": [20, 30, 40, 50], "race": ["Black", "White", "White", "Other"],
                      "sex": ["Female", "Male", "Female", "Male"], "recid": [0, 1, 0, 1],
                      "country": ["country_00"] * 4, "income": ["<=50K", ">50K", ">50K", "<=50K"]})


def messages(text, schema=SCHEMA, frame=None, severity=None):
    return [d.message for d in validate(parse(text), schema, frame) if severity in (None, d.severity)]


def test_valid_spec_has_no_findings():
    assert validate(parse('E[pred | race == "White" and recid == 1] - E[pred | race != "White"] < 0.1 '
                          'and E[label | age >= 30] > 0 and Fair[sex] > 0.9'), SCHEMA) == []


def test_unknown_column_suggests_close_names():
    (found,) = validate(parse('E[pred | rac == "White"] > 0.1'), SCHEMA)
    assert found.severity == "error" and (found.line, found.column) == (1, 10)
    assert found.message == "unknown column 'rac'; did you mean 'race'?"
    assert messages('E[pred | Sex == "Male"] > 0') == ["unknown column 'Sex'; did you mean 'sex'?"]


def test_a_value_written_as_a_name_is_told_to_be_quoted():
    assert messages('E[pred | sex == Female] > 0') == [
        "unknown column 'Female'; to compare with the value of 'sex', quote it: \"Female\""]


def test_a_long_form_of_a_reserved_name_suggests_it():
    assert messages("E[prediction] > 0.1") == ["unknown column 'prediction'; did you mean 'pred'?"]
    assert messages("E[labels] > 0.1") == ["unknown column 'labels'; did you mean 'label'?"]


def test_unknown_value_lists_valid_values():
    (message,) = messages('E[pred | sex == "Femal"] > 0')
    assert message == "'sex' never takes the value \"Femal\"; did you mean \"Female\"? (valid values: \"Female\", \"Male\")"
    (message,) = messages('E[pred | race in {"White", "Asian"}] > 0')
    assert '"Asian"' in message and 'valid values: "Black", "Other", "White"' in message


def test_many_values_show_the_closest_few():
    (message,) = messages('E[pred | country == "country_5"] > 0')
    assert "did you mean" in message and "country_05" in message and "valid values" not in message
    (message,) = messages('E[pred | country == "zzz"] > 0')
    assert "30 values, e.g." in message


def test_kind_mismatches():
    assert "categorical, so '<' has no meaning" in messages('E[pred | race < "White"] > 0')[0]
    assert "numeric; compare it with a number" in messages('E[pred | age == "30"] > 0')[0]
    assert "write the value in quotes" in messages("E[pred | sex == 1] > 0")[0]
    assert messages("E[pred | recid == 1] > 0") == []  # categorical with numeric values
    assert "categorical: write a condition" in messages("E[race] > 0")[0]
    assert "cannot compare numeric 'age' with categorical 'sex'" in messages("E[age == sex] > 0")[0]
    assert "compare it with a number" in messages('E[pred == "yes"] > 0')[0]
    assert "several classes, name their column as the decision (--pred COLUMN)" in \
        messages('E[pred == "yes"] > 0')[0]  # (yes/no decisions here: the way to audit a multi-class one)


def test_fair_and_label():
    assert messages("Fair[gender] > 0.9") == [
        "Fair[...] names the column 'gender', which the dataset does not have (protected columns: race, sex)"]
    assert "did you mean 'sex'" in messages("Fair[sexx] > 0.9")[0]
    no_label = dataclasses.replace(SCHEMA, label=None)
    assert messages("E[pred | label == 1] > 0", no_label) == [
        "'label' needs a dataset with a label column, and this one has none"]


def test_row_count_warnings_need_the_frame():
    text = 'E[pred | age > 100] > 0.5 and E[pred | race == "Black"] > 0'
    assert messages(text) == []
    found = validate(parse(text), SCHEMA, FRAME)
    assert [d.severity for d in found] == ["warning", "warning"]
    assert "no row of the dataset satisfies the condition 'age > 100'" in found[0].message
    assert "only 1 rows satisfy" in found[1].message
    # label conditions are counted from the dataset's label column
    assert "no row" in messages("E[pred | label == 1 and age < 25] > 0", frame=FRAME)[0]


def test_division_warnings_and_errors():
    assert "can be 0 (it lies in [-1, 1])" in messages("E[pred] / (E[label] - E[pred]) < 2")[0]
    assert messages("E[pred] / E[label] < 2") == []  # E[...] is 0 only at the edge of its range
    assert messages("E[pred] / E[label] / (E[label] / E[pred]) > 1") == []  # [0, inf] does not straddle 0
    assert messages("E[pred] / 0 < 1") == ["division by zero: '0' is 0"]


def test_check_raises_first_error_with_excerpt_and_returns_warnings():
    dataset = Dataset("toy", FRAME, SCHEMA)
    with pytest.raises(SpecError) as info:
        check('E[pred | sex == "F"] > 0 and E[pred | rce == "x"] > 0', dataset)
    assert info.value.column == 17 and "'sex' never takes" in info.value.message
    assert "^" in info.value.pretty()
    warnings = check("E[pred | age > 100] > 0", dataset)
    assert len(warnings) == 1 and warnings[0].severity == "warning"
