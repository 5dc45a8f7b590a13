"""Decisions without a model: a condition over the rows acts as the decision.

``from_expression('decile_score <= 4', compas)`` audits logged decisions: ``predict(frame)`` is the truth
value of the condition on each row (1 = favourable). The condition is written in the event syntax of
the specification language (``and``/``or``/``not``, comparisons, ``in {...}``) and evaluated by
``fairaudit.spec`` on the parsed tree; nothing is ever passed to ``eval``.
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


def from_expression(text: str, dataset) -> Model:
    """A Model whose decision is the condition ``text`` over ``dataset``'s columns.

    The expression is true where the decision is **favourable** (for COMPAS, a low risk score is the
    favourable decision: ``decile_score <= 4``). Its names must be columns of the dataset (``pred``,
    ``score`` and ``label`` are not allowed: the expression *is* the decision); it is validated
    against the dataset (unknown columns and category values are errors, with suggestions; warnings
    are kept in ``model.warnings``). When the dataset has a label, ``metrics`` holds the agreement of
    the decision with the label on all rows, overall and per protected group.
    """
    from fairaudit.spec import event_columns, parse_event, validate_event

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
    columns = event_columns(event)

    model = ExpressionModel(text, event, columns)
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
