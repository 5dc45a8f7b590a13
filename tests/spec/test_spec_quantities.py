"""Quantities in the language (issue 46): ``E[amount | …]``, arithmetic on columns, declared ranges."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairaudit import data
from fairaudit.base.errors import FairauditError
from fairaudit.spec import ast, parse, validate
from fairaudit.spec.errors import SpecError
from fairaudit.spec.files import parse_file_text
from fairaudit.spec.printer import to_text
from fairaudit.spec.quantities import (is_quantity, leaf_ranges, parse_range, parse_ranges, quantity_range,
                                       with_ranges)


@pytest.mark.parametrize("text", [
    'E[amount | sex == "F"] - E[amount | sex == "M"] > -1000',
    'E[abs(pred - label) | sex == "F"] < 0.2',
    "E[(score - label)^2] < 0.25",
    "E[clip(amount, 0, 1000)] >= 10",
    "E[a - b + c] > 0",
    "E[abs(amount - 20000) | race == \"A\"] < 9000",
    "E[amount + 1.5] > 0",
])
def test_quantities_print_and_parse_back(text):
    spec = parse(text)
    assert parse(to_text(spec)) == spec


@pytest.mark.parametrize("text, line, column, words", [
    ("E[foo(x)] > 0", 1, 3, "unknown function 'foo'"),
    ("E[abs(x, 1)] > 0", 1, 3, "abs(...) takes one argument"),
    ("E[clip(x, 2, 1)] > 0", 1, 3, "needs low <= high"),
    ("E[clip(x, 1)] > 0", 1, 3, "takes three arguments"),
    ("E[(x == 1)^2] > 0", 1, 4, "expected an amount here"),
    ("E[(x)^3] > 0", 1, 7, "only the square"),
    ("E[a * 2] < 2", 1, 5, "arithmetic is not allowed here"),
    ("E[`abs`(x)] > 0", 1, 3, "names a column, which cannot be called"),
])
def test_quantity_syntax_errors_are_positioned(text, line, column, words):
    with pytest.raises(SpecError) as info:
        parse(text)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert words in str(info.value)


def test_ranges_parse_in_every_form():
    assert parse_range("amount=0:50000") == ("amount", 0.0, 50000.0)
    assert parse_range("`net pay`=-10:10") == ("net pay", -10.0, 10.0)
    assert parse_ranges("a=0:1, b=-2:2") == {"a": (0.0, 1.0), "b": (-2.0, 2.0)}
    assert parse_ranges({"a": (0, 5)}) == {"a": (0.0, 5.0)}
    assert parse_ranges(["a=0:1", "b=1:2"]) == {"a": (0.0, 1.0), "b": (1.0, 2.0)}
    for bad in ("amount", "amount=5", "amount=1:0", "amount=0:inf", "amount=a:b", "=0:1", "a=1:1"):
        with pytest.raises(FairauditError):
            parse_range(bad)
    with pytest.raises(FairauditError, match="declared twice"):
        parse_ranges(["a=0:1", "a=0:2"])


def test_derived_ranges_follow_from_their_parts():
    r = {"a": (0.0, 10.0), "b": (-2.0, 3.0), "c": (-5.0, -1.0)}
    q = lambda text: parse(f"E[{text}] > 0").root.left.event  # noqa: E731
    assert quantity_range(q("a - b"), r) == (-3.0, 12.0)
    assert quantity_range(q("a + b"), r) == (-2.0, 13.0)
    assert quantity_range(q("abs(b)"), r) == (0.0, 3.0)
    assert quantity_range(q("abs(c)"), r) == (1.0, 5.0)
    assert quantity_range(q("(b)^2"), r) == (0.0, 9.0)
    assert quantity_range(q("(c)^2"), r) == (1.0, 25.0)
    assert quantity_range(q("clip(a, 2, 4)"), r) == (2.0, 4.0)
    assert quantity_range(q("clip(c, 0, 4)"), r) == (0.0, 0.0)
    assert quantity_range(q("a - 3"), r) == (-3.0, 7.0)
    assert quantity_range(q("abs(score - label)"), r) == (0.0, 1.0)
    # every value a derived quantity takes lies in its range (a boundary on a boundary included)
    rng = np.random.default_rng(0)
    for text in ("a - b", "abs(b - c)", "(a - c)^2", "clip(b - a, -4, 1)", "abs(a - 10) + b"):
        lo, hi = quantity_range(q(text), r)
        for _ in range(200):
            env = {k: rng.choice([lo_, hi_, rng.uniform(lo_, hi_)]) for k, (lo_, hi_) in r.items()}
            frame = pd.DataFrame({k: [v] for k, v in env.items()})
            from fairaudit.spec.events import EventEvaluator

            value = EventEvaluator(frame).quantity3(q(text))[0][0]
            assert lo - 1e-9 <= value <= hi + 1e-9, (text, env, value)


def test_a_bare_name_is_a_quantity_only_with_a_range():
    spec = parse('E[amount | sex == "F"] > 1')
    event = spec.root.left.event
    assert not is_quantity(event, {}) and is_quantity(event, {"amount": (0, 1)})
    assert is_quantity(parse("E[score] > 0").root.left.event, {})
    assert not is_quantity(parse("E[pred] > 0").root.left.event, {})
    bound = with_ranges(spec, "amount=0:100")
    assert bound.ranges == (("amount", 0.0, 100.0),)
    assert leaf_ranges(bound) == {'E[amount | sex == "F"]': (0.0, 100.0)}
    assert bound != spec  # the ranges are part of what is audited


def test_a_spec_file_header_declares_ranges_positioned():
    text = "# range: amount=0:500, limit=0:1000\nE[amount - limit] < 0\n"
    assert dict((n, (lo, hi)) for n, lo, hi in parse_file_text(text).spec.ranges) == {"amount": (0.0, 500.0),
                                                                                       "limit": (0.0, 1000.0)}
    with pytest.raises(SpecError) as info:
        parse_file_text("# range: amount=5:1\nE[amount] < 0\n")
    assert info.value.line == 1 and "LOW < HIGH" in str(info.value)


def _dataset():
    frame = pd.DataFrame({"sex": ["F", "M", "F", "M"], "amount": [10.0, 20.0, np.nan, 40.0],
                          "grade": ["a", "b", "a", "b"], "approved": [1, 0, 1, 1]})
    return data.from_csv(frame.to_csv(index=False).encode(), label="approved", protected=["sex"])


def _errors(text, ranges=None):
    ds = _dataset()
    spec = parse(text) if ranges is None else with_ranges(parse(text), ranges)
    return [d for d in validate(spec, ds.schema, ds.frame) if d.severity == "error"]


def test_validation_of_quantities():
    assert _errors('E[amount | sex == "F"] > 1', "amount=0:50") == []
    # no range: refused, positioned, with the hint
    (err,) = _errors('E[amount | sex == "F"] > 1')
    assert (err.line, err.column) == (1, 3) and "--range amount=LOW:HIGH" in err.message
    (err,) = _errors("E[abs(amount - amount)] > 1")[:1]
    assert "needs a declared range" in err.message
    # a value outside the declared range names the row; never clipped
    (err,) = _errors('E[amount | sex == "F"] > 1', "amount=0:30")
    assert "row 4" in err.message and "40" in err.message and "never clipped" in err.message
    # a categorical column has no mean; a range for a column the data lacks is a typo
    assert [e.message for e in _errors("E[grade] > 1", "grade=0:1")] == [
        "'grade' is categorical, so it has no mean: average a number, or the rate of a condition such as "
        'grade == "a"']
    (err,) = _errors('E[amount] > 1', {"amout": (0, 1)})  # a misspelt range: the column it was meant for has none
    assert "declare its range" in err.message and "a range is declared for 'amout': misspelt?" in err.message
    assert _errors('E[amount] > 1', {"amount": (0, 50), "grade": (0, 1), "other": (0, 1)}) == []  # not averaged
    assert "score" in _errors("E[pred] > 0", {"score": (5, 6)})[0].message  # pred, label, score have their own
    # an amount is not a condition
    (err,) = _errors('E[pred | amount - amount] > 1', "amount=0:50")
    assert "is an amount, not a condition" in err.message


def test_the_range_is_part_of_what_validation_checks_for_division():
    from fairaudit.spec.validate import interval

    spec = with_ranges(parse("E[amount] / E[amount - 10] > 1"), "amount=0:50")
    right = spec.root.left.right
    assert interval(right, dict((n, (lo, hi)) for n, lo, hi in spec.ranges)) == (-10.0, 40.0)
    assert isinstance(spec.root.left.left, ast.Expect)
