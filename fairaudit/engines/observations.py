"""Every leaf of a spec, evaluated on every audited row: the 0/1 observations the row-based engines count.

``E[event]`` observes ``event`` on every row; ``E[event | given]`` only on the rows satisfying ``given``
(rejection sampling: ``masks``). ``Fair[col]`` observes, for each row, whether the decision stays the same
when ``col`` is replaced by each other value of the column (categorical columns, or numeric ones with at
most ``FAIR_MAX_VALUES`` distinct values; the values are those of the whole dataset); it needs a model.
Identical leaves (same canonical text) are one estimator. Everything is evaluated with numpy up front.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairaudit.errors import FairauditError
from fairaudit.evaluate import compile_spec

FAIR_MAX_VALUES = 20


@dataclass
class Observations:
    """Per distinct leaf: ``values`` (0/1 per row, in stream order) and ``mask`` (rows that count for it)."""

    values: dict[str, np.ndarray]
    masks: dict[str, np.ndarray]
    length: int

    def stats(self, ends: np.ndarray) -> dict:
        """Per leaf ``LeafStats`` (successes, n) over the first ``ends[i] + 1`` rows, for each ``i``."""
        from fairaudit.bounds.allocation import LeafStats

        out = {}
        for key, v in self.values.items():
            m = self.masks[key]
            s = np.cumsum(v.astype(np.int64) & m.astype(np.int64))
            n = np.cumsum(m.astype(np.int64))
            out[key] = LeafStats(s[ends].astype(float), n[ends].astype(float))
        return out

    def take(self, order: np.ndarray) -> "Observations":
        """The same observations with the rows in ``order`` (positions into the current rows)."""
        return Observations({k: v[order] for k, v in self.values.items()},
                            {k: m[order] for k, m in self.masks.items()}, len(order))


def event_array(event, frame, pred, label, score) -> np.ndarray:
    """An event (``fairaudit.spec`` AST) on every row of ``frame``, as a bool array."""
    from fairaudit.spec import evaluate_event

    try:
        out = evaluate_event(event, frame, pred=pred, label=label, score=score)
    except FairauditError:
        raise
    except KeyError as err:
        raise FairauditError(f"unknown column {err} in the specification") from None
    return np.asarray(out, dtype=bool)


def fair_agreement(model, frame: pd.DataFrame, column: str, values, pred: np.ndarray) -> np.ndarray:
    """1 where the decision is the same for every other value of ``column`` (flip and re-predict)."""
    agree = np.ones(len(frame), dtype=bool)
    for value in values:
        flipped = frame.copy()
        flipped[column] = pd.Series([value] * len(frame), index=frame.index).astype(frame[column].dtype,
                                                                                     errors="ignore")
        agree &= np.asarray(model.predict(flipped)) == pred
    return agree


def observe(spec, frame: pd.DataFrame, *, pred=None, label=None, score=None, model=None,
            column_values: dict | None = None, note=None) -> Observations:
    """Evaluate every distinct leaf of ``spec`` on every row of ``frame`` (in order). ``note(message)`` is told
    before each ``Fair[...]`` leaf (re-predicting every row once per value of the column can take a while)."""
    cs = compile_spec(spec)
    values, masks = {}, {}
    everyone = np.ones(len(frame), dtype=bool)
    for key in cs.leaf_keys:
        node = cs.leaf_node[key].node
        if node.kind == "expect":
            values[key] = event_array(node.event, frame, pred, label, score)
            masks[key] = everyone if node.given is None else event_array(node.given, frame, pred, label, score)
        else:  # Fair[column]
            if model is None:
                raise FairauditError(f"{key} needs a model to re-predict with (use --model, not --pred)")
            if node.column not in frame.columns:
                raise FairauditError(f"{key}: unknown column {node.column!r}")
            domain = (column_values or {}).get(node.column)
            if domain is None:
                domain = pd.unique(frame[node.column].dropna())
            if len(domain) > FAIR_MAX_VALUES:
                raise FairauditError(f"{key}: column {node.column!r} has {len(domain)} values; "
                                     f"Fair[...] flips categorical columns (at most {FAIR_MAX_VALUES} values)")
            if note is not None:
                note(f"re-predicting {len(frame):,} rows for {key}")
            values[key] = fair_agreement(model, frame, node.column, list(domain), np.asarray(pred))
            masks[key] = everyone
    return Observations(values, masks, len(frame))


def observe_inputs(spec, inputs, positions: np.ndarray | None = None, note=None) -> Observations:
    """``observe`` on the audited rows of ``inputs`` (``positions`` into the dataset: default the audited
    rows in file order)."""
    dataset = inputs.dataset
    if positions is None:
        positions = np.arange(len(dataset)) if inputs.positions is None else inputs.positions
    frame = dataset.frame.iloc[positions].reset_index(drop=True)
    take = (lambda a: None if a is None else np.asarray(a)[positions])  # noqa: E731
    domains = {c.name: list(c.values) for c in dataset.schema.columns if c.kind == "categorical" and c.values}
    return observe(spec, frame, pred=take(inputs.decisions), label=take(inputs.labels), score=take(inputs.scores),
                   model=inputs.reprediction_model, column_values=domains, note=note)


def uses_decisions(spec) -> bool:
    """Whether ``spec`` reads the decision (``pred``/``score``, or ``Fair[...]``, which re-predicts)."""
    from fairaudit.spec.ast import event_names

    for tn in spec.leaves:
        if tn.kind == "fair":
            return True
        for ev in (tn.node.event, tn.node.given):
            if ev is not None and any(n.name in ("pred", "score") for n in event_names(ev)):
                return True
    return False


def decision_reasons(spec, inputs) -> list[str]:
    """Why the decisions of ``inputs`` cannot feed the leaves of ``spec`` (the row-based engines' shared check):
    ``Fair[...]`` needs a model to re-predict with, ``pred``/``score`` need a model or a decision expression."""
    if any(tn.kind == "fair" for tn in spec.leaves) and inputs.reprediction_model is None:
        return ["Fair[...] re-predicts with the attribute flipped: it needs a model, not a decision expression"]
    if uses_decisions(spec) and inputs.decisions is None:
        return ["the specification uses pred/score: it needs a model or a decision expression"]
    return []
