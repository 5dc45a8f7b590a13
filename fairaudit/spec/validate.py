"""Checking a parsed specification against a dataset's schema (and, optionally, its rows).

``validate(spec, schema, frame=None)`` returns every finding as a ``Diagnostic`` (errors and warnings, in
source order); ``check(spec, dataset)`` raises the first error as a ``SpecError`` and returns the warnings.

Errors: unknown columns (with "did you mean"), values a categorical column never takes (with the valid
values), ``<``/``>`` on a categorical column, a string compared with a numeric column, ``Fair[...]`` on a
missing column, ``label`` without a label column, a bare categorical column used as an event, division by
the constant 0, a bare numeric column that is not 0/1 (or ``score``) used as an event, a specification
with no ``E[...]``/``Fair[...]`` term (``structure``, which needs no data). Warnings (need ``frame``): a condition that no row satisfies, or only a few rows; and a
division whose denominator can be 0 inside its range (e.g. ``E[a] - E[b]``).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from fairaudit.spec import ast
from fairaudit.spec.errors import SpecError, clip
from fairaudit.spec.events import EventEvaluator, evaluate_event, non_binary_message  # noqa: F401 — its home was here
from fairaudit.spec.parser import parse
from fairaudit.spec.printer import event_text, format_number, quote_string, to_text
from fairaudit.spec.quantities import is_quantity, out_of_range, quantity_range, ranges_of

SMALL_GROUP = 30  # a condition met by fewer rows than this gets a sample-size warning
_ORDER_OPS = ("<", "<=", ">", ">=")
_MAX_LISTED = 12


@dataclass(frozen=True)
class Diagnostic:
    """One finding: ``severity`` is ``"error"`` or ``"warning"``; line and column are 1-based (or None)."""

    severity: Literal["error", "warning"]
    line: int | None
    column: int | None
    message: str
    length: int = 1

    def __str__(self) -> str:
        where = "" if self.line is None else f"{self.line}:{self.column}: "
        return f"{where}{self.severity}: {self.message}"

    def to_error(self, source: str = "", filename: str | None = None) -> SpecError:
        err = SpecError(self.line, self.column, self.message, length=self.length)
        return err.with_source(source, filename) if source else err


def _at(severity: str, item, message: str) -> Diagnostic:
    span = getattr(item, "span", None)
    if span is None:
        return Diagnostic(severity, None, None, message)
    return Diagnostic(severity, span.line, span.column, message, max(1, span.end - span.start))


def _suggest(word: str, choices: list[str], n: int = 3) -> list[str]:
    by_case = [c for c in choices if c.lower() == word.lower()]
    return by_case or difflib.get_close_matches(word, choices, n=n, cutoff=0.6)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return clip(quote_string(value))
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return format_number(int(value))  # exactly: 2**60 + 1 is not shown as 2**60
    if isinstance(value, (float, np.floating)):
        return format_number(float(value))
    return repr(value)


def _listing(values) -> str:
    shown = [_show(v) for v in values]
    return ", ".join(shown)


def _same_value(a: Any, b: Any) -> bool:
    """Whether a value written in a spec and a value of a column are the same: strings equal, numbers equal
    exactly (Python compares an int with a float exactly: 2**60 + 1 is not the float 2**60)."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    a, b = (x.item() if isinstance(x, np.generic) else x for x in (a, b))
    if not all(isinstance(x, (int, float)) for x in (a, b)):  # bool is an int
        try:
            a, b = float(a), float(b)
        except (TypeError, ValueError):
            return False
    return a == b


class _Later:
    """``classes=LATER``: a model makes the decisions and is not loaded yet, so what ``pred`` is compared with is
    checked once it is (``decision_problems``)."""

    def __repr__(self) -> str:
        return "LATER"


LATER = _Later()


class _Checker:
    def __init__(self, schema, frame, label, pred, score, count_rows: bool = True, ranges=None, classes=None):
        self.schema = schema
        self.classes = classes  # the decision's classes (a tuple), None (yes/no) or LATER
        self.ranges = dict(ranges or {})
        self._averaged: set[str] = set()  # the averaged columns checked so far
        self.frame = frame
        self.count_rows = count_rows
        self.label = label
        self.pred = pred
        self.score = score
        self.found: list[Diagnostic] = []
        self._evaluator = None  # ``evaluator()``: one EventEvaluator over ``frame`` for every check of the rows
        self._counts: dict[str, int | None] = {}  # condition text → rows satisfying it (None: not countable)

    def evaluator(self) -> EventEvaluator:
        """One ``EventEvaluator`` over ``frame`` for every check that reads the rows (each column converted once)."""
        if self._evaluator is None:
            self._evaluator = EventEvaluator(self.frame, pred=self.pred, label=self.label, score=self.score)
        return self._evaluator

    def error(self, item, message: str) -> None:
        self.found.append(_at("error", item, message))

    def warning(self, item, message: str) -> None:
        self.found.append(_at("warning", item, message))

    # ---- names and values
    def column(self, name: ast.Name):
        """The schema column of ``name``, or None after reporting an error (or for reserved names)."""
        if name.reserved:
            if name.name == "label" and self.schema.label is None:
                self.error(name, "'label' needs a dataset with a label column, and this one has none"
                                 + reserved_hint(name.name, self.schema))
            return None
        if name.name in self.schema:
            return self.schema.column(name.name)
        quoted = next((c for c in self.schema.names if self.schema.column(c).kind == "categorical"
                       and name.name in [str(v) for v in (self.schema.column(c).values or ())]), None)
        if quoted is not None:  # ``sex == Female``: a value written as a name
            self.error(name, f"unknown column '{clip(name.name)}'; to compare with the value of '{quoted}', "
                             f"quote it: {quote_string(name.name)}")
            return None
        close = [r for r in ast.RESERVED if name.name.lower().startswith(r) and name.name.lower() != r] \
            or _suggest(name.name, self.schema.names)  # ``prediction`` → ``pred``
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else \
            f" (columns: {', '.join(self.schema.names[:_MAX_LISTED])}{', ...' if len(self.schema.names) > _MAX_LISTED else ''})"
        self.error(name, f"unknown column '{clip(name.name)}'{hint}")
        return None

    def categorical_numbers(self, col) -> bool:
        return bool(col.values) and all(not isinstance(v, str) for v in col.values)

    def value(self, name: ast.Name, col, value: ast.Value, op: str) -> None:
        """Check ``name op value`` (the value may be on either side)."""
        if name.reserved and name.name == "pred" and self.classes is not None:
            self.pred_class(value, op)
            return
        if name.reserved:
            if isinstance(value.value, str):
                what = "a probability" if name.name == "score" else "0 or 1 (1 = favourable)"
                hint = ("; for a decision with several classes, name their column as the decision (--pred COLUMN), "
                        "or audit a model that predicts them" if name.name == "pred" else "")
                self.error(value, f"'{name.name}' is {what}; compare it with a number, not {_show(value.value)}{hint}")
            elif name.name != "score" and op in ("==", "!=") and value.value not in (0, 1):
                self.warning(value, f"'{name.name}' is 0 or 1, so '{name.name} {op} {_show(value.value)}' is "
                                    f"{'never' if op == '==' else 'always'} true")
            return
        if col is None:
            return
        if col.kind == "numeric":
            if isinstance(value.value, str):
                self.error(value, f"'{col.name}' is numeric; compare it with a number, not {_show(value.value)}")
            return
        # categorical
        if op in _ORDER_OPS and not self.categorical_numbers(col):
            self.error(value, f"'{col.name}' is categorical, so '{op}' has no meaning; use ==, != or in {{...}}")
            return
        if op in _ORDER_OPS:
            return
        if any(_same_value(value.value, v) for v in col.values):
            return
        self.error(value, self.unknown_value(col, value.value))

    def pred_class(self, value: ast.Value, op: str) -> None:
        """``pred op value`` for a decision among classes: the value must be one of them (a typo would match no
        row); order has no meaning between text classes. Nothing yet while the model is not loaded (``LATER``)."""
        if self.classes is LATER:
            return
        classes = list(self.classes)
        if op in _ORDER_OPS:
            if any(isinstance(c, str) for c in classes) or isinstance(value.value, str):
                self.error(value, f"'pred' is a class ({_listing(classes[:_MAX_LISTED])}), so '{op}' has no "
                                  "meaning; use ==, != or in {...}")
            return
        if not any(_same_value(value.value, c) for c in classes):
            self.error(value, self.unknown_value(_Classes(classes), value.value))

    def unknown_value(self, col, value: Any) -> str:
        values = list(col.values)
        message = f"'{col.name}' never takes the value {_show(value)}"
        if isinstance(value, str) and all(isinstance(v, str) for v in values):
            close = _suggest(value, values)
            if close:
                message += f"; did you mean {' or '.join(_show(c) for c in close)}?"
        elif not isinstance(value, str) and all(isinstance(v, str) for v in values):
            message += " (it holds strings: write the value in quotes)"
        if len(values) <= _MAX_LISTED:
            message += f" (valid values: {_listing(values)})"
        else:
            close = _suggest(str(value), [str(v) for v in values], n=5) if isinstance(value, str) else []
            if not close:
                message += f" ({len(values)} values, e.g. {_listing(values[:5])}, ...)"
        return message

    # ---- quantities (what E[...] averages)
    def quantity(self, q) -> None:
        if isinstance(q, ast.Value):
            return
        if isinstance(q, ast.Arith):
            self.quantity(q.left)
            self.quantity(q.right)
        elif isinstance(q, ast.Call):
            self.quantity(q.argument)
        elif isinstance(q, ast.Power):
            self.quantity(q.base)
        elif isinstance(q, ast.Name):
            if q.reserved:
                self.column(q)  # 'label' without a label column
                return
            col = self.column(q)
            if col is None or q.name in self._averaged:
                return  # each column's problem is said once, at its first use
            self._averaged.add(q.name)
            if col.kind != "numeric":
                self.error(q, f"'{q.name}' is categorical, so it has no mean: average a number, or the rate of a "
                              f"condition such as {q.name} == {_show(col.values[0]) if col.values else '...'}")
            elif q.name not in self.ranges:
                self.error(q, f"'{q.name}' is averaged, so it needs a declared range: {range_hint(q.name)}"
                              + self.misspelt_range(q.name))
            elif self.frame is not None and q.name in self.frame.columns:
                values, known = self.evaluator().numbers(q)
                lo, hi = self.ranges[q.name]
                message = out_of_range(q.name, values, known, lo, hi)
                if message:
                    self.error(q, message)

    def quantity_span(self, node: ast.Expect) -> None:
        """The range of an averaged quantity must be finite (a square of a wide range may not be); a range far wider
        than the values seen is a warning: the bounds of a mean grow with its range."""
        lo, hi = quantity_range(node.event, self.ranges)
        if not (np.isfinite(lo) and np.isfinite(hi) and np.isfinite(hi - lo)):
            self.error(node.event, f"'{event_text(node.event)}' can take values too large for a number with the "
                                   "declared ranges; declare the ranges the values can take")
            return
        if hi == lo:
            self.error(node.event, f"'{event_text(node.event)}' can take one value only ({format_number(lo)}), so "
                                   "it has no mean to bound: write that number instead")
            return
        if self.frame is None or hi == lo:
            return
        try:
            values, known = self.evaluator().quantity3(node.event)
        except (SpecError, KeyError):
            return
        seen = values[known]
        if len(seen) and (float(seen.max()) - float(seen.min())) < (hi - lo) / 1000:
            self.warning(node.event, f"'{event_text(node.event)}' takes values from {format_number(float(seen.min()))} "
                                     f"to {format_number(float(seen.max()))}, less than a thousandth of its range "
                                     f"[{format_number(lo)}, {format_number(hi)}]: the bounds of its mean grow with "
                                     "the range, so declare the range the values can take")

    def misspelt_range(self, name: str) -> str:
        """" (a range is declared for 'amout': misspelt?)" when a declared range's name is close to ``name``."""
        close = _suggest(name, [r for r in self.ranges if r not in self.schema])
        return f" (a range is declared for {' and '.join(repr(c) for c in close)}: misspelt?)" if close else ""

    def declared_ranges(self) -> None:
        """A declared range is a data column's: ``pred``, ``label`` and ``score`` have theirs (0/1, [0, 1]). A range
        for a column the spec does not average is left alone (a range misspelt for one it averages shows as that
        column's missing range, with the declared names as hints: ``quantity``)."""
        for name in self.ranges:
            if name in ast.RESERVED:
                self.found.append(Diagnostic("error", None, None, f"a range is declared for '{name}', which has its "
                                                                  "own (pred and label are 0 or 1, score lies in "
                                                                  "[0, 1]); ranges are for data columns"))

    # ---- events
    def event(self, event: ast.Event, averaged: bool = False) -> None:
        if isinstance(event, ast.COMPOUND_QUANTITIES):
            self.error(event, f"'{event_text(event)}' is an amount, not a condition (true or false); only the "
                              "part of E[...] before '|' is averaged")
            return
        if isinstance(event, ast.Name):
            if event.reserved and event.name == "pred" and isinstance(self.classes, tuple):
                from fairaudit.spec.events import bare_classes_message

                self.error(event, bare_classes_message(self.classes))
                return
            if event.reserved and event.name == "score":
                self.error(event, "'score' is a probability, not a condition: write one such as score > 0.5")
                return
            col = self.column(event)
            if col is not None and col.kind == "categorical" and not self.binary(col):
                self.error(event, f"'{event.name}' is categorical: write a condition such as "
                                  f"{event.name} == {_show(col.values[0]) if col.values else '...'}")
            elif col is not None and col.kind == "numeric" and self.frame is not None \
                    and col.name in self.frame.columns and not (averaged and col.name in self._averaged):
                message = non_binary_message(col.name, self.frame[col.name],
                                             range_hint(col.name) if averaged else None)
                if message:
                    self.error(event, message + (self.misspelt_range(col.name) if averaged else ""))
                    if averaged:  # said once: every other E[column | …] gets the same hint
                        self._averaged.add(col.name)
        elif isinstance(event, ast.Compare):
            self.compare(event)
        elif isinstance(event, ast.In):
            col = self.column(event.operand)
            for value in event.values:
                self.value(event.operand, col, value, "==")
        elif isinstance(event, (ast.EvAnd, ast.EvOr)):
            self.event(event.left)
            self.event(event.right)
        elif isinstance(event, ast.EvNot):
            self.event(event.operand)

    def binary(self, col) -> bool:
        return bool(col.values) and all(_same_value(v, 0) or _same_value(v, 1) for v in col.values)

    def compare(self, event: ast.Compare) -> None:
        left, right = event.left, event.right
        if isinstance(left, ast.Value) and isinstance(right, ast.Value):
            self.warning(event, f"'{event_text(event)}' compares two constants")
            return
        if isinstance(left, ast.Name) and isinstance(right, ast.Name):
            cols = [self.column(left), self.column(right)]
            kinds = [(self.reserved_kind(n) if n.reserved else c.kind) if (c is not None or n.reserved) else None
                     for n, c in zip((left, right), cols)]
            if None not in kinds and kinds[0] != kinds[1]:
                self.error(event, f"cannot compare {kinds[0]} '{left.name}' with {kinds[1]} '{right.name}'")
            elif kinds == ["categorical", "categorical"] and event.op in _ORDER_OPS:
                self.error(event, f"'{left.name}' and '{right.name}' are categorical, so '{event.op}' has no "
                                  "meaning; use == or !=")
            return
        name, value = (left, right) if isinstance(left, ast.Name) else (right, left)
        self.value(name, self.column(name), value, event.op)

    def reserved_kind(self, name: ast.Name) -> str | None:
        """What ``pred``/``label``/``score`` hold: numbers, but ``pred`` holds classes (categorical) for a decision
        among several, and is not known before the model is loaded (None: not checked)."""
        if name.name != "pred" or self.classes is None:
            return "numeric"
        return None if self.classes is LATER else "categorical"

    # ---- rows
    def rows(self, expect: ast.Expect) -> None:
        """Warn when the condition of ``E[... | condition]`` selects no row (or very few)."""
        if self.frame is None or expect.given is None or not self.count_rows:
            return
        condition = event_text(expect.given)
        if condition not in self._counts:  # a condition is counted once, however many E[...] repeat it
            try:
                self._counts[condition] = int(self.evaluator().event(expect.given).sum())
            except SpecError:
                self._counts[condition] = None
        count = self._counts[condition]
        if count is None:
            return  # needs pred/score (not known before the audit) or has errors reported elsewhere
        if count == 0:
            self.warning(expect, f"no row of the dataset satisfies the condition '{condition}'; "
                                 "this E[...] can never be estimated")
        elif count < SMALL_GROUP:
            self.warning(expect, f"only {count} rows satisfy the condition '{condition}'; its bounds will be wide")

    # ---- spec nodes
    def node(self, node: ast.Node) -> None:
        if isinstance(node, ast.Expect):
            if is_quantity(node.event, self.ranges):
                errors = len([d for d in self.found if d.severity == "error"])
                self.quantity(node.event)
                if len([d for d in self.found if d.severity == "error"]) == errors:
                    self.quantity_span(node)
            else:
                self.event(node.event, averaged=True)
            if node.given is not None:
                self.event(node.given)
            if not any(d.severity == "error" for d in self.found):
                self.rows(node)
        elif isinstance(node, ast.Fair):
            if node.column not in self.schema:
                close = _suggest(node.column, self.schema.names)
                protected = ", ".join(self.schema.protected)
                hint = (f"; did you mean {' or '.join(repr(c) for c in close)}?" if close
                        else f" (protected columns: {protected})" if protected else "")
                self.error(node, f"Fair[...] names the column '{node.column}', which the dataset does not have"
                                 f"{hint}")
            elif node.column == self.schema.label:
                self.error(node, f"Fair[{node.column}] flips the label column; name a protected attribute")
        elif isinstance(node, ast.Div):
            lo, hi = interval(node.right, self.ranges)
            if lo == hi == 0:
                self.error(node.right, f"division by zero: '{to_text(node.right)}' is 0")
            elif lo < 0 < hi:
                self.warning(node.right, f"the denominator '{to_text(node.right)}' can be 0 (it lies in "
                                         f"{_interval_text(lo, hi)}); its bounds may be unbounded")


class _Classes:
    """A decision's classes in the shape of a schema column (``unknown_value``'s words for ``pred``)."""

    name = "pred"

    def __init__(self, values):
        self.values = tuple(values)


def decision_problems(spec, classes) -> list[Diagnostic]:
    """What ``spec`` compares ``pred`` with, checked against the decisions of a loaded model (``classes``: its classes,
    or None for yes/no): a class it never predicts (a typo would match no row), a bare ``pred`` for several classes, a
    text for a yes/no decision. ``validate`` defers these (``classes=LATER``) while the model is not loaded."""
    checker = _Checker(None, None, None, None, None, classes=classes)
    root = spec.root if isinstance(spec, ast.Spec) else spec
    if isinstance(root, (ast.Name, ast.Compare, ast.In, ast.EvAnd, ast.EvOr, ast.EvNot)):  # an event: a row filter
        root = ast.Expect(root, None)

    def visit(event) -> None:
        if isinstance(event, ast.Name) and event.reserved and event.name == "pred":
            if isinstance(classes, tuple):
                from fairaudit.spec.events import bare_classes_message

                checker.error(event, bare_classes_message(classes))
        elif isinstance(event, ast.Compare):
            sides = (event.left, event.right)
            names = [x for x in sides if isinstance(x, ast.Name) and x.reserved and x.name == "pred"]
            values = [x for x in sides if isinstance(x, ast.Value)]
            if names and values:
                checker.value(names[0], None, values[0], event.op)
        elif isinstance(event, ast.In) and isinstance(event.operand, ast.Name) and event.operand.reserved \
                and event.operand.name == "pred":
            for value in event.values:
                checker.value(event.operand, None, value, "==")
        elif isinstance(event, (ast.EvAnd, ast.EvOr)):
            visit(event.left)
            visit(event.right)
        elif isinstance(event, ast.EvNot):
            visit(event.operand)

    for node in ast.walk(root):
        if isinstance(node, ast.Expect):
            for event in (node.event, node.given):
                if event is not None and not isinstance(event, ast.COMPOUND_QUANTITIES):
                    visit(event)
        elif isinstance(node, ast.Fair) and isinstance(classes, tuple):
            checker.error(node, f"Fair[{node.column}] compares yes/no decisions before and after the flip; this "
                                "model decides among several classes, which Fair[...] does not audit yet")
    return sorted(checker.found, key=lambda d: (d.line or 0, d.column or 0))


def range_hint(name: str) -> str:
    """How to declare the range of ``name`` (the one hint, on every route)."""
    from fairaudit.spec.printer import quote_name

    return (f"--range {quote_name(name)}=LOW:HIGH on the command line, ranges={{{name!r}: (LOW, HIGH)}} in Python, "
            "a '# range:' line in the spec file, or the dashboard's Data page")


def class_column(event: ast.Event, schema) -> str | None:
    """The column a decision ``--pred COLUMN`` reads as classes, or None: a bare name of a categorical column that is
    not yes/no (0/1, True/False) — ``--pred decision`` where ``decision`` holds approve / refer / decline. ``pred``
    is then each row's class (``pred == "approve"``); any other decision expression is a yes/no decision."""
    if schema is None or not isinstance(event, ast.Name) or event.reserved or event.name not in schema:
        return None
    col = schema.column(event.name)
    binary = bool(col.values) and all(_same_value(v, 0) or _same_value(v, 1) for v in col.values)
    return event.name if col.kind == "categorical" and not binary and event.name != schema.label else None


def reserved_in_decision(event: ast.Event, schema) -> list[Diagnostic]:
    """The error of a decision expression that names ``pred``, ``label`` or ``score`` (the decision is what it
    defines; ``pred`` written in back-quotes is a column), with how to name a column so called; [] when none."""
    reserved = [name for name in ast.event_names(event) if name.reserved]
    if not reserved:
        return []
    word = reserved[0].name
    return [_at("error", reserved[0], f"a decision expression cannot use '{word}': it is itself the decision; write a "
                "condition over the data columns (true = favourable)" + reserved_hint(word, schema))]


def reserved_hint(word: str, schema) -> str:
    """For a reserved word (``pred``/``label``/``score``) used bare while the data has a column of that name:
    how to name the column instead ("" when there is no such column)."""
    if schema is not None and word in schema:
        return (f" (unquoted, '{word}' means the {'decision' if word == 'pred' else word}; the data's column "
                f"named {word} is written `{word}` in back-quotes)")
    return ""


def interval(node: ast.Node, ranges=None) -> tuple[float, float]:
    """The range a numeric term can take before any data is seen (an event's ``E[...]`` and ``Fair[...]`` lie in
    [0, 1], a quantity's ``E[...]`` in its range: ``ranges``, the declared ones)."""
    ranges = ranges or {}
    if isinstance(node, ast.Fair):
        return 0.0, 1.0
    if isinstance(node, ast.Expect):
        try:
            return quantity_range(node.event, ranges) if is_quantity(node.event, ranges) else (0.0, 1.0)
        except KeyError:  # a quantity without a range: reported as such
            return -np.inf, np.inf
    if isinstance(node, ast.Const):
        return node.value, node.value
    if isinstance(node, ast.Neg):
        lo, hi = interval(node.operand, ranges)
        return -hi, -lo
    if isinstance(node, (ast.Add, ast.Sub, ast.Mul, ast.Div)):
        (a, b), (c, d) = interval(node.left, ranges), interval(node.right, ranges)
        if isinstance(node, ast.Add):
            return a + c, b + d
        if isinstance(node, ast.Sub):
            return a - d, b - c
        if isinstance(node, ast.Mul):
            products = [_times(a, c), _times(a, d), _times(b, c), _times(b, d)]
            return min(products), max(products)
        return _quotient(a, b, c, d)
    raise TypeError(f"not a numeric term: {node!r}")


def _times(x: float, y: float) -> float:
    return 0.0 if x == 0 or y == 0 else x * y  # 0 * inf is 0 for ranges


def _quotient(a: float, b: float, c: float, d: float) -> tuple[float, float]:
    """The range of x / y for x in [a, b] and y in [c, d], y != 0."""
    inf = np.inf
    if c < 0 < d or c == d == 0:
        return -inf, inf
    if c == 0:  # y in (0, d]
        return (a / d, inf) if a >= 0 else (-inf, b / d) if b <= 0 else (-inf, inf)
    if d == 0:  # y in [c, 0)
        return (-inf, a / c) if a >= 0 else (b / c, inf) if b <= 0 else (-inf, inf)
    quotients = [a / c, a / d, b / c, b / d]
    return min(quotients), max(quotients)


def _interval_text(lo: float, hi: float) -> str:
    def show(x: float) -> str:
        return format_number(x) if np.isfinite(x) else ("-inf" if x < 0 else "inf")
    return f"[{show(lo)}, {show(hi)}]"


def structure(spec: ast.Spec | ast.Node) -> list[Diagnostic]:
    """Problems that need no data: a specification without any ``E[...]`` or ``Fair[...]`` term has
    nothing to estimate (``1 < 2``), so there is nothing to audit."""
    root = spec.root if isinstance(spec, ast.Spec) else spec
    if any(isinstance(node, (ast.Expect, ast.Fair)) for node in ast.walk(root)):
        return []
    return [_at("error", root, "the specification has no E[...] or Fair[...] term, so there is nothing to "
                               "audit; compare a probability with a threshold, e.g. E[pred | sex == \"Female\"] >= 0.3")]


def validate(spec: ast.Spec | ast.Node | str, schema, frame=None, *, label=None, pred=None,
             score=None, count_rows: bool = True, classes=None) -> list[Diagnostic]:
    """Every problem of ``spec`` with respect to ``schema`` (errors and warnings, in source order).

    ``frame`` (the rows) enables the row-count warnings (``count_rows=False``: not, when ``frame`` holds only the
    first rows of a log); ``label``/``pred``/``score`` arrays let conditions that use them be counted too
    (``label`` defaults to the schema's label column compared with its favourable value). ``classes``: the
    decision's classes when it has several (``pred == "approve"`` is checked against them), None for a yes/no
    decision, ``LATER`` while the model that makes them is not loaded (``decision_problems`` then).
    """
    if isinstance(spec, str):
        spec = parse(spec)
    root = spec.root if isinstance(spec, ast.Spec) else spec
    if label is None and frame is not None and schema.label is not None and schema.label in frame.columns:
        label = (frame[schema.label] == schema.favourable).to_numpy(dtype=np.int8)
    ranges = ranges_of(spec) if isinstance(spec, ast.Spec) else {}
    checker = _Checker(schema, frame, label, pred, score, count_rows, ranges, classes)
    checker.declared_ranges()
    for node in ast.walk(root):
        checker.node(node)
    checker.found.extend(structure(root))
    return sorted(checker.found, key=lambda d: (d.line or 0, d.column or 0, d.severity != "error"))


def validate_event(event: ast.Event | str, schema, frame=None, *, decision: bool = False,
                   rows: bool = True, classes=None) -> list[Diagnostic]:
    """The problems of a decision expression or a row filter (an event) with respect to ``schema``. With
    ``decision``, a reserved name (``pred``, ``label``, ``score``: the decision is what is being defined) is an
    error, and with ``frame`` (unless ``rows`` is False: the caller evaluates the decision on the rows itself), an
    expression that a missing value leaves neither true nor false on some row is an error too (a decision must be
    made on every row; a row filter just leaves such rows out)."""
    from fairaudit.spec.events import evaluate_event3, undecided_message
    from fairaudit.spec.parser import parse_event

    if isinstance(event, str):
        event = parse_event(event)
    reserved = reserved_in_decision(event, schema) if decision else []
    if reserved:
        return reserved
    if decision and class_column(event, schema) is not None:
        return []  # a column of logged classes: ``pred`` is each row's class
    checker = _Checker(schema, frame, None, None, None, classes=classes)  # (classes: what ``pred`` holds, ``validate``)
    checker.event(event)
    if decision and isinstance(event, ast.Name) and event.name in schema and checker.found \
            and schema.column(event.name).kind == "numeric":  # numbers that code classes (0 / 1 / 2)
        d = checker.found[0]
        checker.found[0] = Diagnostic(d.severity, d.line, d.column, d.message + "; if its numbers code classes, "
                                      f"declare it categorical (--column-type {event.name}=categorical, "
                                      f"column_types={{{event.name!r}: 'categorical'}} in Python)", d.length)
    if decision and rows and frame is not None and not any(d.severity == "error" for d in checker.found):
        try:
            _, known = evaluate_event3(event, frame)
        except SpecError:
            return checker.found
        message = undecided_message(event, frame, known)
        if message:
            checker.error(event, f"it is {message}")
    return checker.found


def check(spec: ast.Spec | str, dataset) -> list[Diagnostic]:
    """Validate ``spec`` against a ``Dataset``: raise the first error as ``SpecError``, return the warnings."""
    if isinstance(spec, str):
        spec = parse(spec)
    found = validate(spec, dataset.schema, dataset.frame)
    errors = [d for d in found if d.severity == "error"]
    if errors:
        raise errors[0].to_error(getattr(spec, "source", ""))
    return [d for d in found if d.severity == "warning"]
