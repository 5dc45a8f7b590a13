"""The thresholds a repair tries: distinct quantiles of the scores, and the model's own threshold.

``own_threshold`` reads the threshold a model decides by from its scores and decisions (a scikit-learn or torch model
decides ``score > 0.5``: the threshold ``score ≥`` the next float above 0.5); ``candidates`` gives, per group, the
distinct quantiles of that group's scores on the search rows plus the model's own threshold, so that the original
decisions are always among the candidates.
"""
from __future__ import annotations

import numpy as np

QUANTILES = 96  # candidate thresholds per group (distinct quantiles of its scores), besides the model's own
HALF = float(np.nextafter(0.5, 1.0))  # ``score ≥ HALF`` is ``score > 0.5``, the default decision of a Model


def own_threshold(scores: np.ndarray, decisions: np.ndarray) -> tuple[float, bool]:
    """``(t, exact)``: a threshold ``t`` with ``decisions == (scores ≥ t)`` on these rows and ``exact`` True, or
    (0.5-and-a-bit, False) when the decisions are not a threshold of the score (then the original decisions are still
    the original point; the repaired model decides every row by a threshold)."""
    scores, decisions = np.asarray(scores, dtype=float), np.asarray(decisions).astype(bool)
    if np.array_equal(decisions, scores > 0.5):
        return HALF, True
    if np.array_equal(decisions, scores >= 0.5):
        return 0.5, True
    favoured, others = scores[decisions], scores[~decisions]
    if not len(favoured):
        return float(np.nextafter(others.max(), np.inf)) if len(others) else HALF, True
    if not len(others) or others.max() < favoured.min():
        return float(favoured.min()), True
    return HALF, False


def candidates(scores: np.ndarray, own: float, count: int = QUANTILES) -> np.ndarray:
    """Sorted distinct candidate thresholds for rows with these ``scores``: ``count`` quantiles (each a score, so
    ``score ≥ t`` is a cut between two distinct scores), the model's ``own`` threshold, and one above every score
    (no row favoured)."""
    scores = np.asarray(scores, dtype=float)
    found = [float(own)]
    if len(scores):
        found += np.quantile(scores, np.linspace(0.0, 1.0, count), method="inverted_cdf").tolist()
        found.append(float(np.nextafter(scores.max(), np.inf)))
    return np.unique(np.asarray(found, dtype=float))
