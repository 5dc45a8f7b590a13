"""A scored model's decisions at another decision threshold, read from its scores computed once (no re-prediction).

A model with scores (``score``: the probability of the favourable decision) decides favourable where its score is
above its own threshold, ``OWN_THRESHOLD`` (``Model.predict``: ``score > 0.5``; logreg, mlp and ``.nnet`` decide
``margin > 0``, the same cut). Moving the threshold changes only that last comparison, so the scores of the audited
rows are computed once and every threshold is one vectorised comparison:

* ``threshold_decisions(scores, threshold)``: the 0/1 decisions ``score > threshold`` (int8);
* ``CachedScores(model, frame)``: ``model``'s scores and own decisions of the rows of ``frame``, from one
  ``score_and_predict`` (or given: ``scores=``, ``decisions=``, e.g. from ``Inputs``); ``.at(threshold)`` is a
  ``ThresholdedScores``;
* ``ThresholdedScores``: a ``Model`` that decides ``score > threshold`` from the cache for the cached rows (the very
  frame object), so ``fairaudit.audit(data, spec, model=cache.at(t))`` audits at ``t`` without predicting again;
  other rows (``Fair[...]``'s flipped copies) are scored by the wrapped model, at the same threshold. At
  ``OWN_THRESHOLD`` it gives the model's own decisions exactly (those can differ from ``score > 0.5`` in the score's
  last bit, or for an imported classifier whose ``predict`` is not a cut of its score).

A threshold chosen by looking at the audited rows is a hypothesis about them: certifying it needs rows it was not
chosen on (DESIGN: "a threshold chosen after looking at the data is a hypothesis").
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError
from fairaudit.models.base import Model, sha256

#: the score above which a model's own decision is favourable (``Model.predict``)
OWN_THRESHOLD = 0.5


def has_scores(model) -> bool:
    """Whether ``model`` has scores a threshold can cut (a decision expression has only its 0/1 decisions)."""
    return model is not None and hasattr(model, "score") and getattr(model, "kind", None) != "expression"


def check_threshold(threshold) -> float:
    """``threshold`` as a float in [0, 1]; ``ModelError`` (one sentence) otherwise."""
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise ModelError(f"the decision threshold must be a number between 0 and 1, not {threshold!r}") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ModelError(f"the decision threshold must be between 0 and 1 (a probability), not {value:g}")
    return value


def threshold_decisions(scores, threshold: float) -> np.ndarray:
    """The decisions at ``threshold``: 1 (favourable) where the score is above it, else 0 (int8)."""
    return (np.asarray(scores, dtype=np.float64) > check_threshold(threshold)).astype(np.int8)


class CachedScores:
    """The scores and own decisions of ``model`` on the rows of ``frame`` (one ``score_and_predict``, or the
    ``scores`` and ``decisions`` given, one per row of ``frame``); ``at(threshold)`` decides from them."""

    def __init__(self, model, frame: pd.DataFrame, scores=None, decisions=None):
        if not has_scores(model):
            raise ModelError("decisions from an expression have no scores, so they have no threshold to move")
        if scores is None or decisions is None:
            scores, decisions = model.score_and_predict(frame)
        self.model = model
        self.frame = frame
        self.scores = np.asarray(scores, dtype=np.float64)
        self.decisions = np.asarray(decisions).astype(np.int8)
        if len(self.scores) != len(frame) or len(self.decisions) != len(frame):
            raise ModelError(f"{len(self.scores):,} scores and {len(self.decisions):,} decisions for "
                             f"{len(frame):,} rows: give one of each per row")

    def decisions_at(self, threshold: float) -> np.ndarray:
        """The decisions of every cached row at ``threshold`` (the model's own at ``OWN_THRESHOLD``)."""
        if check_threshold(threshold) == OWN_THRESHOLD:
            return self.decisions
        return threshold_decisions(self.scores, threshold)

    def at(self, threshold: float) -> "ThresholdedScores":
        return ThresholdedScores(self, threshold)


class ThresholdedScores(Model):
    """``cache.model`` deciding favourable where its score is above ``threshold``, from ``cache`` for its rows."""

    kind = "thresholded"

    def __init__(self, cache: CachedScores, threshold: float):
        self.cache = cache
        self.threshold = check_threshold(threshold)
        model = cache.model
        # the model's own parameters (which rows trained it: the held-out rows stay the same) and the threshold
        self.params = {**(getattr(model, "params", None) or {}), "decision_threshold": self.threshold,
                       "scored_model": model.kind}
        self.feature_names = list(getattr(model, "feature_names", []))
        # held-out metrics were measured at the model's own threshold: not claimed at another
        self.metrics = dict(getattr(model, "metrics", {}) or {}) if self.own else {}

    @property
    def own(self) -> bool:
        return self.threshold == OWN_THRESHOLD

    def _cached(self, frame) -> bool:
        return frame is self.cache.frame

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        return self.cache.scores if self._cached(frame) else np.asarray(self.cache.model.score(frame), dtype=float)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        if self._cached(frame):
            return self.cache.decisions_at(self.threshold)
        if self.own:
            return np.asarray(self.cache.model.predict(frame)).astype(np.int8)
        return threshold_decisions(self.cache.model.score(frame), self.threshold)

    def score_and_predict(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        if self._cached(frame):
            return self.cache.scores, self.cache.decisions_at(self.threshold)
        scores, own = self.cache.model.score_and_predict(frame)
        scores = np.asarray(scores, dtype=float)
        return scores, (np.asarray(own).astype(np.int8) if self.own else threshold_decisions(scores, self.threshold))

    @property
    def content_hash(self) -> str:
        return sha256(self.cache.model.content_hash.encode("utf-8"), repr(self.threshold).encode("utf-8"))

    def describe(self) -> str:
        if self.own:
            return self.cache.model.describe()
        return (f"{self.cache.model.describe()}, deciding favourable when its score is above {self.threshold:g} "
                f"instead of its own {OWN_THRESHOLD:g} (its held-out metrics are at its own)")
