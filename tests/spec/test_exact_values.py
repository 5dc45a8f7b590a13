"""Exact values in the spec language's evaluation (issue 27, part 2), on the one function every route uses.

1. Integers stay exact: an integer literal is an ``int``; an integer column (int64, nullable Int64) is compared
   with it exactly, and a float column with an integer no float holds is not rounded either.
2. Missing values are neither true nor false (Kleene logic): a row whose event or condition is unknown is left out
   of that leaf (and counted), a row filter leaves such a row out, a decision expression that is unknown on a row
   is an error — so ``x > 0.5`` and ``not (x <= 0.5)`` always give the same audit.
"""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairaudit
from fairaudit.data.dataset import Column, Schema
from fairaudit.core.observations import observe
from fairaudit.base.errors import FairauditError
from fairaudit.spec import evaluate_event, parse, parse_event, to_text, validate

BIG = 2 ** 60  # 1152921504606846976: 2**60 + 1 and 2**60 - 1 round to it as floats

INTS = pd.DataFrame({"g": np.array([BIG, BIG + 1, BIG - 1, 5], dtype=np.int64)})


def mask(text, frame, **kw):
    return evaluate_event(parse_event(text), frame, **kw).astype(int).tolist()


# --------------------------------------------------------------------------------------------
# 1. integers stay exact


def test_an_integer_literal_is_an_exact_int_and_prints_as_its_digits():
    event = parse_event(f"g == {BIG + 1}")
    assert type(event.right.value) is int and event.right.value == BIG + 1
    assert to_text(event) == f"g == {BIG + 1}"
    assert parse_event(to_text(event)) == event
    assert type(parse_event("g == -7").right.value) is int and parse_event("g == -7").right.value == -7
    # a number with '.' or an exponent stays a float, and the canonical text of the specs we had is unchanged
    for text, canonical in [("x == 3.0", "x == 3"), ("x > 1e3", "x > 1000"), ("x == -0", "x == -0"),
                            ("x in {1, 2.5, 0.1}", "x in {1, 2.5, 0.1}"), ("x < 1.5e20", "x < 1.5e+20"),
                            ("x == 007", "x == 7")]:
        assert to_text(parse_event(text)) == canonical
    assert type(parse_event("x == 3.0").right.value) is float
    spec = parse(f'E[pred | g == {BIG + 1}] - E[pred | g == 3.0] < 0.1')
    assert spec.text == f"E[pred | g == {BIG + 1}] - E[pred | g == 3] < 0.1"
    assert [n.id for n in spec.nodes] == ["n0", "n1", "n2", "n3", "n4"]
    with pytest.raises(fairaudit.spec.SpecError, match="too large"):
        parse_event("x == 1" + "0" * 400)


INT_CASES = [
    (f"g == {BIG}", [1, 0, 0, 0]),
    (f"g != {BIG}", [0, 1, 1, 1]),
    (f"g == {BIG + 1}", [0, 1, 0, 0]),
    (f"g < {BIG}", [0, 0, 1, 1]),
    (f"g <= {BIG}", [1, 0, 1, 1]),
    (f"g > {BIG}", [0, 1, 0, 0]),
    (f"g >= {BIG}", [1, 1, 0, 0]),
    (f"{BIG} < g", [0, 1, 0, 0]),
    (f"g in {{{BIG}, 5}}", [1, 0, 0, 1]),
    (f"g not in {{{BIG + 1}}}", [1, 0, 1, 1]),
    (f"g in {{{BIG}, 2.5}}", [1, 0, 0, 0]),  # a float in the set does not make the column floats
    ("g == 1.152921504606847e+18", [1, 0, 0, 0]),  # the float 2**60, compared exactly with the int64 column
    (f"g == {2 ** 70}", [0, 0, 0, 0]),  # beyond int64
    (f"g < {2 ** 70}", [1, 1, 1, 1]),
]


def wrong(cases, frame):
    """The cases whose mask is not the expected one (all of them checked, so that a failure lists every one)."""
    return [(text, mask(text, frame), expected) for text, expected in cases if mask(text, frame) != expected]


def test_an_int64_column_is_compared_exactly():
    assert wrong(INT_CASES, INTS) == []


def test_a_nullable_int64_column_is_compared_exactly_and_its_missing_values_are_unknown():
    frame = pd.DataFrame({"n": pd.array([BIG, None, BIG + 1, 5], dtype="Int64")})
    assert mask(f"n == {BIG + 1}", frame) == [0, 0, 1, 0]
    assert mask(f"n != {BIG + 1}", frame) == [1, 0, 0, 1]  # the missing value is neither
    assert mask(f"n > {BIG}", frame) == [0, 0, 1, 0]
    assert mask(f"n in {{{BIG}}}", frame) == [1, 0, 0, 0]


FLOAT_CASES = [
    (f"x == {BIG + 1}", [0, 0, 0]),  # no float is 2**60 + 1
    (f"x != {BIG + 1}", [1, 1, 1]),
    (f"x < {BIG + 1}", [1, 1, 0]),
    (f"x <= {BIG + 1}", [1, 1, 0]),
    (f"x > {BIG - 1}", [1, 0, 1]),
    (f"x >= {BIG + 1}", [0, 0, 1]),
    (f"x <= {BIG - 1}", [0, 1, 0]),
    (f"x == {BIG}", [1, 0, 0]),  # 2**60 is a float exactly
    (f"x in {{{BIG + 1}, {BIG - 1}}}", [0, 0, 0]),
    (f"x < {10 ** 308 + 1}", [1, 1, 1]),  # no float is it (1e308 is below it)
    (f"x > {10 ** 308 + 1}", [0, 0, 0]),
]


def test_a_float_column_is_not_rounded_to_a_big_integer():
    assert wrong(FLOAT_CASES, pd.DataFrame({"x": [float(BIG), 0.5, float(BIG + 2 ** 9)]})) == []


def test_a_value_a_categorical_column_never_takes_is_refused_exactly():
    schema = Schema((Column("g", "categorical", (BIG, 5)),))
    found = validate(parse(f"E[g == 5 | g == {BIG + 1}] > 0.5"), schema)
    assert [d.severity for d in found] == ["error"] and "never takes the value 1152921504606846977" in found[0].message
    assert validate(parse(f"E[g == 5 | g == {BIG}] > 0.5"), schema) == []


def test_a_template_keeps_an_integer_group_exact():
    from fairaudit.spec.templates import group_event

    assert to_text(group_event("g", np.int64(BIG + 1))) == f"g == {BIG + 1}"


# --------------------------------------------------------------------------------------------
# 2. missing values are neither true nor false

NAN = pd.DataFrame({
    "x": [0.9, np.nan, 0.2, np.nan, 0.7, np.nan],
    "flag": np.array([1, 1, 0, 0, 1, 0]),
    "sex": ["F", "M", "F", "M", "?", "F"],
})
PRED = np.array([1, 0, 1, 1, 0, 1])


KLEENE = [  # (event, where it is true, where it is known) on NAN's rows
    ("x > 0.5", [1, 0, 0, 0, 1, 0], [1, 0, 1, 0, 1, 0]),
    ("not x > 0.5", [0, 0, 1, 0, 0, 0], [1, 0, 1, 0, 1, 0]),
    ("x > 0.5 and flag == 1", [1, 0, 0, 0, 1, 0], [1, 0, 1, 1, 1, 1]),  # unknown and false = false
    ("x > 0.5 or flag == 1", [1, 1, 0, 0, 1, 0], [1, 1, 1, 0, 1, 0]),  # unknown or true = true
    ("not (x > 0.5 and flag == 1)", [0, 0, 1, 1, 0, 1], [1, 0, 1, 1, 1, 1]),
    ("not (x > 0.5 or flag == 1)", [0, 0, 1, 0, 0, 0], [1, 1, 1, 0, 1, 0]),
    ("x in {0.9, 0.2}", [1, 0, 1, 0, 0, 0], [1, 0, 1, 0, 1, 0]),
    ("x not in {0.9}", [0, 0, 1, 0, 1, 0], [1, 0, 1, 0, 1, 0]),
    ('sex != "?"', [1, 1, 1, 1, 0, 1], [1, 1, 1, 1, 1, 1]),  # "?" is a category, not a missing value
]


def test_kleene_logic():
    assert wrong([(text, true) for text, true, _ in KLEENE], NAN) == []  # evaluate_event: where known true
    from fairaudit.spec.events import evaluate_event3

    for text, true, known in KLEENE:
        t, k = evaluate_event3(parse_event(text), NAN)
        assert (t.astype(int).tolist(), k.astype(int).tolist()) == (true, known), text


@pytest.mark.parametrize("text", ["not x > 0.5", "not (x > 0.5 or flag == 1)", "x != 0.2", "x not in {0.9}"])
def test_a_missing_value_does_not_satisfy_a_negation(text):
    assert mask(text, NAN)[1] == mask(text, NAN)[3] == 0


def test_both_spellings_give_the_same_leaf():
    for event, negated in [("x > 0.5", "not (x <= 0.5)"), ("x == 0.2", "not (x != 0.2)"),
                           ("x in {0.9, 0.2}", "not (x not in {0.9, 0.2})"),
                           ("x > 0.5 and flag == 1", "not (x <= 0.5 or flag != 1)")]:
        a = observe(parse(f"E[pred | {event}] > 0.5 and E[{event}] > 0.5"), NAN, pred=PRED)
        b = observe(parse(f"E[pred | {negated}] > 0.5 and E[{negated}] > 0.5"), NAN, pred=PRED)
        for ka, kb in zip(a.values, b.values):
            assert a.masks[ka].tolist() == b.masks[kb].tolist(), (ka, kb)
            assert (a.values[ka] & a.masks[ka]).tolist() == (b.values[kb] & b.masks[kb]).tolist(), (ka, kb)


def test_a_leaf_counts_the_rows_it_leaves_out():
    from fairaudit.core.observations import Missing, add_missing, missing_warning

    obs = observe(parse("E[pred | x > 0.5] > 0.5 and E[flag == 1 | x > 0.5 or flag == 1] < 0.9 and E[pred] > 0"),
                  NAN, pred=PRED)
    assert obs.masks["E[pred | x > 0.5]"].astype(int).tolist() == [1, 0, 0, 0, 1, 0]
    assert obs.missing == {"E[pred | x > 0.5]": Missing(3, ("x",)),
                           "E[flag == 1 | x > 0.5 or flag == 1]": Missing(2, ("x",))}
    assert missing_warning("E[pred | x > 0.5]", obs.missing["E[pred | x > 0.5]"]).startswith(
        "E[pred | x > 0.5]: 3 rows with a missing value of x are left out of this leaf")
    total = add_missing({}, obs.missing)
    add_missing(total, {"E[pred | x > 0.5]": Missing(1, ("y",))})
    assert total["E[pred | x > 0.5]"] == Missing(4, ("x", "y"))
    assert "1 row with a missing value of x is left out" in missing_warning("k", Missing(1, ("x",)))


def _csv(tmp_path, frame=None):
    frame = NAN.assign(label=[1, 0, 1, 0, 1, 1]) if frame is None else frame
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("engine", ["dataset", "monitor"])
def test_an_audit_gives_the_same_result_for_both_spellings_and_says_how_many_rows_are_left_out(tmp_path, engine):
    path = _csv(tmp_path)
    options = {"order": "given", "batch": 1} if engine == "monitor" else {}
    results = [fairaudit.audit(path, f"E[flag == 1 | {condition}] >= 0.5", engine=engine, pred="flag == 1",
                               trace_points=None, **options)
               for condition in ("x > 0.5", "not (x <= 0.5)")]
    a, b = results
    assert a.verdict == b.verdict and a.steps == b.steps
    fa, fb = a.final_values("n1"), b.final_values("n1")  # the E[...] leaf
    assert (fa["estimate"], fa["lo"], fa["hi"]) == (fb["estimate"], fb["lo"], fb["hi"])
    assert fa["estimate"] == 1.0  # flag == 1 on both rows with x > 0.5 (rows 1 and 5); NaN rows are left out
    assert np.array_equal(a.trace_table.n, b.trace_table.n, equal_nan=True)
    assert np.array_equal(a.trace_table.estimate, b.trace_table.estimate, equal_nan=True)
    assert "E[flag == 1 | x > 0.5]: 3 rows with a missing value of x are left out of this leaf" in " ".join(a.warnings)
    assert "E[flag == 1 | not x <= 0.5]: 3 rows with a missing value of x are left out" in " ".join(b.warnings)


def test_a_row_filter_that_is_unknown_leaves_the_row_out(tmp_path):
    path = _csv(tmp_path)
    a, b = (fairaudit.audit(path, "E[pred] >= 0.5", engine="dataset", pred="flag == 1", where=where)
            for where in ("x > 0.5", "not (x <= 0.5)"))
    assert a.steps == b.steps == 2
    assert any("row filter 'x > 0.5' is neither true nor false on 3 rows, where x is missing" in w
               for w in a.warnings)


def test_a_decision_that_a_missing_value_leaves_undecided_is_an_error(tmp_path):
    path = _csv(tmp_path)
    with pytest.raises(FairauditError, match=r"neither true nor false on 3 rows \(first: row 2\), where x is "
                                             r"missing; .*drop those rows"):
        fairaudit.audit(path, "E[pred] >= 0.5", engine="dataset", pred="x > 0.5")
    with pytest.raises(FairauditError, match="neither true nor false on 3 rows"):
        fairaudit.audit(path, "E[pred] >= 0.5", engine="dataset", pred="not (x <= 0.5)")
    # known wherever it matters: 'or' with a true side decides the row
    fairaudit.audit(path, "E[pred] >= 0.5", engine="dataset", pred="x > 0.5 or x != x or flag in {0, 1}")


def test_a_decision_expression_model_refuses_rows_it_cannot_decide():
    from fairaudit.base.errors import ModelError
    from fairaudit.models.expression import ExpressionModel

    model = ExpressionModel("x > 0.5", parse_event("x > 0.5"), ["x"])
    with pytest.raises(ModelError, match=r"`x > 0.5` is neither true nor false on 3 rows \(first: row 2\), where x "
                                         "is missing"):
        model.predict(NAN)


# --------------------------------------------------------------------------------------------
# a property: E[c] and E[not (negated c)] are the same leaf, for any comparison on any column with missing values

NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
       "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
values = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5, float(BIG), BIG + 1, BIG - 1]))


def k_and(a, b):  # Kleene, None = unknown
    return False if a is False or b is False else None if a is None or b is None else True


def k_or(a, b):
    return True if a is True or b is True else None if a is None or b is None else False


@st.composite
def cases(draw):
    """A frame with missing values, a condition ``atom and/or other``, the negation of its negation written with
    the negated comparisons, and what the condition is on each row by Python's exact comparisons (None: unknown)."""
    n = draw(st.integers(1, 12))
    column = draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n))
    c = draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n))
    b = [None if v is None else v > 0 for v in column]
    frame = pd.DataFrame({"x": pd.Series([np.nan if v is None else float(v) for v in column], dtype=float),
                          "n": pd.array([None if v is None else int(v) for v in column], dtype="Int64"),
                          "b": pd.array(b, dtype="boolean"), "c": c})
    name = draw(st.sampled_from(["x", "n"]))
    row = [None if v is None else (float(v) if name == "x" else int(v)) for v in column]
    if draw(st.booleans()):
        members = draw(st.lists(values, min_size=1, max_size=3))
        written = ", ".join(str(v) for v in members)
        atom, negated = f"{name} in {{{written}}}", f"{name} not in {{{written}}}"
        truth = [None if v is None else any(v == m for m in members) for v in row]
    else:
        op, value = draw(st.sampled_from(sorted(NEGATED))), draw(values)
        atom, negated = f"{name} {op} {value}", f"{name} {NEGATED[op]} {value}"
        truth = [None if v is None else OPS[op](v, value) for v in row]
    other, other_negated, other_truth = draw(st.sampled_from([
        ("c == 1", "c != 1", [v == 1 for v in c]), ("b", "not b", b), (atom, negated, truth)]))
    join = draw(st.sampled_from(["and", "or"]))
    flip = {"and": "or", "or": "and"}[join]
    expected = [(k_and if join == "and" else k_or)(t, o) for t, o in zip(truth, other_truth)]
    return frame, f"{atom} {join} {other}", f"not ({negated} {flip} {other_negated})", expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_a_condition_and_the_negation_of_its_negation_are_the_same_leaf(case):
    frame, event, twice, expected = case
    pred = np.arange(len(frame)) % 2
    a = observe(parse(f"E[pred | {event}] > 0.5 and E[{event}] > 0.5"), frame, pred=pred)
    b = observe(parse(f"E[pred | {twice}] > 0.5 and E[{twice}] > 0.5"), frame, pred=pred)
    for ka, kb in zip(a.values, b.values):
        assert a.masks[ka].tolist() == b.masks[kb].tolist()
        assert (a.values[ka] & a.masks[ka]).tolist() == (b.values[kb] & b.masks[kb]).tolist()
    conditional, plain = a.values  # E[pred | event], then E[event]
    assert a.masks[plain].tolist() == [e is not None for e in expected]
    assert (a.values[plain] & a.masks[plain]).tolist() == [e is True for e in expected]
    assert a.masks[conditional].tolist() == [e is True for e in expected]
    from fairaudit.core.observations import Missing

    assert a.missing.get(plain, Missing()).rows == sum(e is None for e in expected)
