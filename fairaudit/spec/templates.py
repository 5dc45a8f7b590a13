"""Fairness-metric templates: pick a metric, fill in the protected attribute(s) and groups, get spec text.

Each ``Template`` has a ``key``, a ``title``, a one-line plain-language ``explanation``, its ``parameters``
and ``render(**params) -> str``. The text is built as a syntax tree and printed canonically, so it always
parses. Parameters shared by most templates:

* ``attribute``: a column name, or several (``["sex", "race"]``) for intersectional groups;
* ``groups``: the groups to compare (every pair of them, in both directions; the first is the reference that
  ``OTHERS`` is relative to). A group is one value (``"Female"``), or a tuple of values for several attributes
  (``("Female", "Black")`` means ``sex == "Female" and race == "Black"``), or ``OTHERS`` for every row
  not in the reference group;
* ``threshold``: how much difference is tolerated (``form="difference"``: |rate(g) − rate(ref)| < threshold,
  default 0.1) or the smallest acceptable ratio (``form="ratio"``: both rate(g)/rate(ref) and
  rate(ref)/rate(g) ≥ threshold, default 0.8).

``pred`` is the decision (1 = favourable; for a decision among several classes, the class: ``class_rate_gap``),
``label`` the true outcome (1 = favourable).
"""
from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from fairaudit.spec import ast
from fairaudit.spec.parser import parse_event
from fairaudit.spec.printer import to_text
from fairaudit.spec.tree import conjunction

OTHERS = "<others>"  # as a group: every row that is not in the reference group
REQUIRED = object()

PRED = ast.Name("pred")
LABEL = ast.Name("label")


@dataclass(frozen=True)
class Parameter:
    name: str
    description: str
    default: Any = REQUIRED
    choices: tuple[Any, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Template:
    key: str
    title: str
    explanation: str
    parameters: tuple[Parameter, ...]
    _build: Callable[..., ast.Node]
    note: str = ""  # how the metric is expressed, when that is not obvious

    def build(self, **params) -> ast.Node:
        """The spec tree for ``params`` (missing optional parameters take their defaults)."""
        known = {p.name for p in self.parameters}
        unknown = sorted(set(params) - known)
        if unknown:
            raise TypeError(f"{self.key}: unknown parameter(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        values = {}
        for p in self.parameters:
            if p.name in params and params[p.name] is not None:
                values[p.name] = params[p.name]
            elif p.required:
                raise TypeError(f"{self.key}: the parameter '{p.name}' is required ({p.description})")
            else:
                values[p.name] = p.default
            if p.choices and values[p.name] not in p.choices and values[p.name] is not None:
                raise ValueError(f"{self.key}: '{p.name}' must be one of {', '.join(map(str, p.choices))}")
        return self._build(**values)

    def render(self, **params) -> str:
        """The specification text for ``params``."""
        return to_text(self.build(**params))


# --------------------------------------------------------------------------------------------
# building blocks


def _value(value: Any) -> ast.Value:
    """A group's value as a literal: a string, an integer kept exact (a column of ids beyond 2**53), else a float."""
    if isinstance(value, str):
        return ast.Value(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):  # numpy integers too
        return ast.Value(int(value))
    return ast.Value(float(value))


def group_event(attribute: str | Sequence[str], group: Any, reference: Any = None) -> ast.Event:
    """The condition "row belongs to ``group``": ``sex == "Female"``, or for several attributes
    ``sex == "Female" and race == "Black"``; ``OTHERS`` is "not in ``reference``"."""
    attributes = [attribute] if isinstance(attribute, str) else list(attribute)
    if group == OTHERS:
        if reference is None or reference == OTHERS:
            raise ValueError("OTHERS needs a reference group before it")
        inner = group_event(attributes, reference)
        if isinstance(inner, ast.Compare):
            return ast.Compare("!=", inner.left, inner.right)
        return ast.EvNot(inner)
    values = [group] if len(attributes) == 1 else list(group) if isinstance(group, (tuple, list)) else None
    if values is None or len(values) != len(attributes):
        raise ValueError(f"the group {group!r} needs one value for each of {', '.join(attributes)}")
    parts = [ast.Compare("==", ast.Name(a), _value(v)) for a, v in zip(attributes, values)]
    event = parts[0]
    for part in parts[1:]:
        event = ast.EvAnd(event, part)
    return event


def _groups(attribute, groups) -> list[ast.Event]:
    groups = list(groups)
    if len(groups) < 2:
        raise ValueError("give at least two groups: the reference group first, then the groups compared with it")
    return [group_event(attribute, g, groups[0]) for g in groups]


def _and(*events: ast.Event | None) -> ast.Event:
    present = [e for e in events if e is not None]
    out = present[0]
    for event in present[1:]:
        out = ast.EvAnd(out, event)
    return out


def _is(name: ast.Name, value: int) -> ast.Compare:
    return ast.Compare("==", name, ast.Value(int(value)))


def _compare_rates(rate: Callable[[ast.Event], ast.Node], groups: list[ast.Event], form: str,
                   threshold: float | None) -> list[ast.Node]:
    """Comparisons of ``rate(g)`` with ``rate(h)`` for **every pair** of groups, in both directions, so that
    the verdict does not depend on the order the groups are listed in (comparing each group with the first
    only would let two non-reference groups differ by up to twice the tolerance)."""
    parts: list[ast.Node] = []
    for reference, group in itertools.combinations(groups, 2):
        a, b = rate(group), rate(reference)
        if form == "difference":
            t = ast.Const(float(0.1 if threshold is None else threshold))
            parts += [ast.Cmp("<", ast.Sub(a, b), t), ast.Cmp("<", ast.Sub(rate(reference), rate(group)), t)]
        else:
            t = ast.Const(float(0.8 if threshold is None else threshold))
            parts += [ast.Cmp(">=", ast.Div(a, b), t), ast.Cmp(">=", ast.Div(rate(reference), rate(group)), t)]
    return parts


def _params(*extra: Parameter, form: bool = True, threshold_help: str | None = None) -> tuple[Parameter, ...]:
    common = [
        Parameter("attribute", "protected column, or a list of columns for intersectional groups"),
        Parameter("groups", "groups to compare, every pair of them (a value, a tuple of values, or OTHERS = "
                                      "every row not in the first group)"),
    ]
    if form:
        common.append(Parameter("form", "compare rates by 'difference' or by 'ratio'", "difference",
                                ("difference", "ratio")))
    common.append(Parameter("threshold", threshold_help or
                            "largest tolerated difference (default 0.1) or smallest tolerated ratio (default 0.8)",
                            None))
    return tuple(common) + extra


# --------------------------------------------------------------------------------------------
# the metrics


def _rate_template(rate_of: Callable[..., Callable[[ast.Event], ast.Node]]):
    def build(attribute, groups, form, threshold, **extra):
        return conjunction(_compare_rates(rate_of(**extra), _groups(attribute, groups), form, threshold))
    return build


def _positive_rate(**_):
    return lambda g: ast.Expect(PRED, g)


def _conditional_rate(condition, **_):
    legit = parse_event(condition) if isinstance(condition, str) else condition
    return lambda g: ast.Expect(PRED, _and(g, legit))


def _true_positive_rate(**_):
    return lambda g: ast.Expect(PRED, _and(g, _is(LABEL, 1)))


def _false_positive_rate(**_):
    return lambda g: ast.Expect(PRED, _and(g, _is(LABEL, 0)))


def _precision(**_):
    return lambda g: ast.Expect(LABEL, _and(g, _is(PRED, 1)))


def _accuracy(**_):
    return lambda g: ast.Expect(ast.Compare("==", PRED, LABEL), g)


def _error_ratio(**_):
    # FN/FP within a group: the two conditional probabilities share the denominator P(group), so their
    # ratio is the ratio of the counts of false negatives and false positives in the group.
    false_negative = ast.EvAnd(_is(PRED, 0), _is(LABEL, 1))
    false_positive = ast.EvAnd(_is(PRED, 1), _is(LABEL, 0))
    return lambda g: ast.Div(ast.Expect(false_negative, g), ast.Expect(false_positive, g))


def _build_disparate_impact(attribute, groups, threshold, reference=None):
    # The four-fifths rule (29 CFR 1607.4(D)) compares each group's rate with the rate of the most-selected group.
    # With ``reference`` (the most-selected group, e.g. from the data: ``most_selected``): one ratio per other group,
    # E[pred | g] / E[pred | reference] >= 0.8. Without it: every ratio in both directions, which is the same
    # condition whichever group is the most-selected (each rate ≥ 0.8 × every rate ⇔ ≥ 0.8 × the highest), so the
    # verdict does not depend on which group is listed first (a one-sided ratio to a group that is not the
    # most-selected certifies nothing about the favoured one).
    if reference is None:
        return conjunction(_compare_rates(_positive_rate(), _groups(attribute, groups), "ratio", threshold))
    groups = list(groups)
    if reference not in groups:
        groups = [reference] + groups
    others = [g for g in groups if g != reference]
    if not others:
        raise ValueError("give at least one group besides the most-selected one")
    rate = _positive_rate()
    top = rate(group_event(attribute, reference))
    t = ast.Const(float(0.8 if threshold is None else threshold))
    return conjunction([ast.Cmp(">=", ast.Div(rate(group_event(attribute, g, reference)), top), t)
                        for g in others])


def most_selected(groups, attribute, frame, decisions):
    """The group of ``groups`` with the highest share of favourable ``decisions`` (0/1 per row of ``frame``) — the
    four-fifths rule's reference; None when no group has rows."""
    import numpy as np

    attributes = [attribute] if isinstance(attribute, str) else list(attribute)
    decisions = np.asarray(decisions, dtype=float)
    best, best_rate = None, -1.0
    for g in groups:
        values = [g] if len(attributes) == 1 else list(g)
        mask = np.ones(len(frame), dtype=bool)
        for a, v in zip(attributes, values):
            mask &= (frame[a] == v).to_numpy()
        if mask.any() and float(decisions[mask].mean()) > best_rate:
            best, best_rate = g, float(decisions[mask].mean())
    return best


def _class_rate(classes, **_):
    """The rate of a decision among several classes being one of ``classes`` (one class, or several counted as
    one outcome): ``E[pred == "approve" | g]``, ``E[pred in {"approve", "refer"} | g]``."""
    chosen = [classes] if isinstance(classes, (str, numbers.Number)) else list(classes)
    if not chosen:
        raise ValueError("name the class(es) whose rate is compared")
    event = ast.Compare("==", PRED, _value(chosen[0])) if len(chosen) == 1 else \
        ast.In(PRED, tuple(_value(c) for c in chosen))
    return lambda g: ast.Expect(event, g)


def _mean_of(amount, **_):
    quantity = ast.Name(str(amount))
    return lambda g: ast.Expect(quantity, g)


def _error_of(amount, target, **_):
    quantity = ast.Call("abs", ast.Arith("-", ast.Name(str(amount)), ast.Name(str(target))))
    return lambda g: ast.Expect(quantity, g)


def _amount_template(mean_of: Callable[..., Callable[[ast.Event], ast.Node]]):
    """A template over the mean of an amount: its threshold is in the amount's own units, so a difference needs one
    (there is no default gap for dollars or days); a ratio starts at 0.8."""
    def build(attribute, groups, form, threshold, **extra):
        if form == "difference" and threshold is None:
            raise ValueError("give the largest tolerated gap, in the amount's own units (e.g. 1000)")
        return conjunction(_compare_rates(mean_of(**extra), _groups(attribute, groups), form, threshold))
    return build


_AMOUNT_NOTE = ("The amount is averaged, so its range must be declared (the Data page, --range NAME=LOW:HIGH, "
                "ranges= in Python, or a '# range:' header): the guarantee rests on it.")


def _build_equalized_odds(attribute, groups, form, threshold):
    events = _groups(attribute, groups)
    return conjunction(_compare_rates(_true_positive_rate(), events, form, threshold)
                       + _compare_rates(_false_positive_rate(), events, form, threshold))


def _build_individual(attribute, threshold):
    attributes = [attribute] if isinstance(attribute, str) else list(attribute)
    return conjunction([ast.Cmp(">=", ast.Fair(a), ast.Const(float(threshold))) for a in attributes])


TEMPLATES: dict[str, Template] = {t.key: t for t in [
    Template("demographic_parity", "Demographic parity (statistical parity)",
             "Every group receives the favourable decision at about the same rate.",
             _params(), _rate_template(_positive_rate)),
    Template("disparate_impact", "Disparate impact (the 80% rule)",
             "Each group's rate of favourable decisions is at least 80% of the most-selected group's (the EEOC's "
             "four-fifths rule, 29 CFR 1607.4(D)): every group of the attribute, each against the most-selected one.",
             (Parameter("attribute", "protected column, or a list of columns for intersectional groups"),
              Parameter("groups", "the groups to compare (all of the attribute's, by default on the Specification "
                                  "page)"),
              Parameter("threshold", "smallest acceptable ratio", 0.8),
              Parameter("reference", "the most-selected group, each other group's rate divided by its rate (blank: "
                                     "every group against every other, the same condition whichever group is the "
                                     "most-selected)", None)),
             _build_disparate_impact),
    Template("conditional_statistical_parity", "Conditional statistical parity",
             "Among people who share a legitimate factor (e.g. the same education), every group receives "
             "the favourable decision at about the same rate.",
             _params(Parameter("condition", "the legitimate factor, as an event, e.g. education == \"Bachelors\"")),
             _rate_template(_conditional_rate)),
    Template("equal_opportunity", "Equal opportunity (true-positive-rate balance)",
             "People who deserve the favourable outcome get it at about the same rate in every group.",
             _params(), _rate_template(_true_positive_rate)),
    Template("predictive_equality", "Predictive equality (false-positive-rate balance)",
             "People who do not deserve the favourable outcome get it by mistake at about the same rate in every group.",
             _params(), _rate_template(_false_positive_rate)),
    Template("equalized_odds", "Equalized odds",
             "Both the true-positive rate and the false-positive rate are about the same in every group.",
             _params(), _build_equalized_odds),
    Template("predictive_parity", "Predictive parity (positive-predictive-value balance)",
             "A favourable decision is equally often deserved in every group.",
             _params(), _rate_template(_precision)),
    Template("accuracy_equality", "Overall accuracy equality",
             "The decision is right (equals the true outcome) about equally often in every group.",
             _params(), _rate_template(_accuracy)),
    Template("treatment_equality", "Treatment equality",
             "The ratio of false negatives to false positives is about the same in every group.",
             _params(threshold_help="largest tolerated difference of the FN/FP ratios (default 0.1) or smallest "
                                    "tolerated ratio of them (default 0.8)"),
             _rate_template(_error_ratio),
             note="FN/FP is a ratio of counts, not a probability: it is written "
                  "E[pred == 0 and label == 1 | g] / E[pred == 1 and label == 0 | g], whose shared "
                  "denominator P(g) cancels."),
    Template("class_rate_gap", "Class rate gap (several classes: approve / refer / decline)",
             "Every group receives a given class of a decision with several classes (or one of several classes) at "
             "about the same rate.",
             _params(Parameter("classes", "the class, or the classes counted together (e.g. approve and refer), "
                                          "whose rate is compared")),
             _rate_template(_class_rate),
             note="For decisions with several classes: a logged column of them named as the decision (--pred "
                  "COLUMN) or a classifier fitted on several classes; pred is then each row's class."),
    Template("mean_outcome_gap", "Mean outcome gap (amounts: a credit limit, an offer)",
             "The average amount (a numeric decision or outcome) is about the same in every group.",
             _params(Parameter("amount", "the numeric column averaged (its range declared)"),
                     threshold_help="largest tolerated difference of the means, in the amount's units (required "
                                    "for a difference), or smallest tolerated ratio of them (default 0.8)"),
             _amount_template(_mean_of), note=_AMOUNT_NOTE),
    Template("error_gap", "Mean absolute error gap (regression)",
             "A numeric prediction is off from the true value by about the same amount on average in every group.",
             _params(Parameter("amount", "the numeric prediction (its range declared)"),
                     Parameter("target", "the true value it predicts (its range declared)"),
                     threshold_help="largest tolerated difference of the mean absolute errors, in the amount's "
                                    "units (required for a difference), or smallest tolerated ratio of them"),
             _amount_template(_error_of), note=_AMOUNT_NOTE),
    Template("individual_fairness", "Individual fairness (flip test)",
             "Almost nobody's decision changes when only their protected attribute is changed.",
             (Parameter("attribute", "protected column, or a list of columns (one Fair[...] each)"),
              Parameter("threshold", "smallest acceptable fraction of unchanged decisions", 0.95)),
             _build_individual),
]}


def get(key: str) -> Template:
    """The template called ``key`` (``KeyError`` listing the known keys otherwise)."""
    try:
        return TEMPLATES[key]
    except KeyError:
        raise KeyError(f"unknown template '{key}' (known: {', '.join(TEMPLATES)})") from None


def render(key: str, **params) -> str:
    """``get(key).render(**params)``."""
    return get(key).render(**params)
