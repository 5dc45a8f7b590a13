"""Decisions without a model: a condition over the rows acts as the decision, or a column of logged classes.

``from_expression('decile_score <= 4', compas)`` audits logged decisions: ``predict(frame)`` is the truth
value of the condition on each row (1 = favourable). The condition is written in the event syntax of
the specification language (``and``/``or``/``not``, comparisons, ``in {...}``) and evaluated by
``fairaudit.spec`` on the parsed tree; nothing is ever passed to ``eval``.

A decision logged among several classes (``--pred decision`` where the categorical column ``decision`` holds
approve / refer / decline: ``fairaudit.spec.validate.class_column``) is a ``ClassColumnModel``: ``pred`` is each
row's class, compared by the spec (``E[pred == "approve" | sex == "F"]``). ``decider(text, schema)`` gives the one
or the other on every route (in memory, out of core, a live log, Dask).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError, ModelError
from fairaudit.models.base import Model, sha256
from fairaudit.models.training import held_out_metrics


class ExpressionModel(Model):
    """The decision ``expression`` (true = favourable) over the columns it names; score is 0.0 or 1.0."""

    kind = "expression"

    def __init__(self, expression: str, event, columns: list[str]):
        self.expression = " ".join(expression.split())
        self.event = event
        self.feature_names = columns
        self.params = {"expression": self.expression}
        self.metrics = {}
        self.warnings: list[str] = []  # from validating the expression against the dataset

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """1 where the expression is true, 0 where false; a row on which it is neither (a missing value decides
        it) is an error (``fairaudit.spec.events.undecided_message``), never a silent 0."""
        from fairaudit.models.encoding import check_columns
        from fairaudit.spec.events import evaluate_event3, undecided_message

        check_columns(frame, self.feature_names)
        try:
            decided, known = evaluate_event3(self.event, frame)
        except ModelError:
            raise
        except FairauditError as err:  # e.g. a text column compared with a number
            raise ModelError(f"decision expression `{self.expression}`: {err}") from None
        message = undecided_message(self.event, frame, known)
        if message:
            raise ModelError(f"the decision expression `{self.expression}` is {message}")
        return np.asarray(decided, dtype=bool).astype(np.int8)

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        return self.predict(frame).astype(np.float64)

    def score_and_predict(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        decisions = self.predict(frame)
        return decisions.astype(np.float64), decisions

    @property
    def content_hash(self) -> str:
        return sha256(self.expression.encode("utf-8"))

    def describe(self) -> str:
        text = f"decision expression `{self.expression}`"
        if "accuracy" in self.metrics:
            text += f", agrees with the label on {self.metrics['accuracy']:.1%} of rows"
        return text

    def save(self, path) -> None:
        raise ModelError("a decision expression has nothing to save; pass the expression again (--pred EXPR)")


class ClassColumnModel(Model):
    """Logged decisions among several classes: the categorical column ``column`` holds each row's class."""

    kind = "expression"  # decisions read from the rows (no model to re-predict with), as for an expression

    def __init__(self, column: str, classes):
        from fairaudit.data.dataset import MISSING_CATEGORY

        self.column = column
        self.expression = column
        self.classes = tuple(c for c in classes if c != MISSING_CATEGORY)  # (a missing decision is no class)
        self.feature_names = [column]
        self.params = {"expression": column, "classes": [str(c) for c in self.classes]}
        self.metrics = {}
        self.warnings: list[str] = []

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Each row's class (the column's values)."""
        from fairaudit.models.encoding import check_columns

        check_columns(frame, self.feature_names)
        values = frame[self.column]
        self.check_missing(values)
        return values.to_numpy()

    def check_missing(self, values, start: int = 0, where: str = "") -> None:
        """A decision must be made on every row (as for a yes/no decision expression): ``ModelError`` naming how many
        of ``values`` (the column's, in row order; the first numbered ``start + 1``, in ``where``: " of
        part-3.parquet") are missing, and the first."""
        from fairaudit.data.dataset import MISSING_CATEGORY

        values = pd.Series(values)
        missing = (values.isna() | (values == MISSING_CATEGORY)).to_numpy(dtype=bool)
        if missing.any():
            count, first = int(missing.sum()), start + int(np.flatnonzero(missing)[0])
            raise ModelError(f"the decision column '{self.column}' is missing on {count:,} row{'s' if count > 1 else ''} "
                             f"(first: row {first + 1:,}{where}); a decision must have a class on every row: drop those "
                             "rows or fill in the missing values before the audit")

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        raise ModelError(f"the decisions in column '{self.column}' have several classes and no score")

    @property
    def content_hash(self) -> str:
        return sha256(("classes of " + self.column).encode("utf-8"))

    def describe(self) -> str:
        return f"logged decisions in column `{self.column}` ({class_listing(self.classes)})"

    def save(self, path) -> None:
        raise ModelError("logged decisions have nothing to save; name their column again (--pred COLUMN)")


def class_listing(classes) -> str:
    """``3 classes: approve, decline, refer`` (the first 8)."""
    shown = ", ".join(str(c) for c in list(classes)[:8]) + (", …" if len(classes) > 8 else "")
    return f"{len(classes)} classes: {shown}"


def require_yes_no(model, what: str) -> None:
    """Refuse (``FairauditError``, one line) a decision among several classes where ``what`` (\"the scan\", \"the
    fairsquare engine\") counts yes/no decisions, with how to name one class favourable."""
    classes = getattr(model, "classes", None)
    if classes is None:
        return
    first = classes[0]
    shown = f'"{first}"' if isinstance(first, str) else str(first)
    how = (f"name the favourable class(es) as the decision: --pred '{model.column} == {shown}'"
           if isinstance(model, ClassColumnModel) else
           f"audit its classes with the monitor or dataset engine: E[pred == {shown} | …]")
    raise FairauditError(f"{what} reads yes/no decisions, and the decisions have several classes "
                         f"({class_listing(classes)}): {how}")


def decider(text: str, schema=None) -> Model:
    """The decisions ``--pred TEXT`` makes, on every route: a ``ClassColumnModel`` when ``TEXT`` names a categorical
    column of ``schema`` that is not yes/no (``fairaudit.spec.validate.class_column``), else an ``ExpressionModel``
    (true = favourable). Checks nothing else: the caller validated ``TEXT`` (``from_expression``, preflight)."""
    from fairaudit.spec import event_columns, parse_event
    from fairaudit.spec.validate import class_column

    event = parse_event(text)
    column = class_column(event, schema)
    if column is not None:
        return ClassColumnModel(column, schema.column(column).values)
    return ExpressionModel(text, event, event_columns(event))


def from_expression(text: str, dataset) -> Model:
    """A Model whose decision is the condition ``text`` over ``dataset``'s columns.

    The expression is true where the decision is **favourable** (for COMPAS, a low risk score is the
    favourable decision: ``decile_score <= 4``). Its names must be columns of the dataset (``pred``,
    ``score`` and ``label`` are not allowed: the expression *is* the decision); it is validated
    against the dataset (unknown columns and category values are errors, with suggestions; warnings
    are kept in ``model.warnings``). When the dataset has a label, ``metrics`` holds the agreement of
    the decision with the label on all rows, overall and per protected group. A bare categorical column that is
    not yes/no is a column of logged classes (``decider``: a ``ClassColumnModel``).
    """
    from fairaudit.spec import parse_event, validate_event

    if not isinstance(text, str) or not text.strip():
        raise ModelError("the decision expression is empty")
    try:
        event = parse_event(text)
    except FairauditError as err:
        raise ModelError(f"decision expression: {err}") from None
    # reserved names, unknown columns (with a suggestion), unknown category values, text compared with numbers, ...
    # (a row the expression cannot decide is refused by ``predict``, in the same words on every route)
    found = validate_event(event, dataset.schema, dataset.frame, decision=True, rows=False)
    errors = [d for d in found if d.severity == "error"]
    if errors:
        where = f"{errors[0].line}:{errors[0].column}: " if errors[0].line is not None else ""
        raise ModelError(f"decision expression: {where}{errors[0].message}")
    model = decider(text, dataset.schema)
    if model.classes is not None:
        return model
    model.warnings = [d.message for d in found if d.severity == "warning"]
    if dataset.schema.label is not None:
        model.metrics = held_out_metrics(model, dataset.frame, dataset.labels, dataset.schema.protected)
        inverted = inverted_warning(model.metrics.get("accuracy"), dataset)
        if inverted:
            model.warnings.append(inverted)
    return model


INVERTED_BELOW = 0.4  # agreement with the favourable label below this suggests true = unfavourable


def inverted_warning(agreement: float | None, dataset) -> str | None:
    """A warning when a decision agrees with the label on far fewer than half of the rows: a random
    decision agrees on about half, so much less usually means the condition describes the
    *unfavourable* outcome (``decile_score > 4`` for COMPAS, where low risk is favourable)."""
    if agreement is None or not agreement < INVERTED_BELOW:
        return None
    schema = dataset.schema
    return (f"the decision agrees with the label on only {agreement:.0%} of the rows: did you invert it? A decision "
            f"must be true for the favourable outcome (here {schema.label} == {schema.favourable!r}); "
            "negate the condition if it describes the unfavourable one")
