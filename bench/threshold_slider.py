"""Benchmark: one move of the Audit page's decision-threshold slider on Adult (train + test, 48,842 rows).

A move audits the specification exactly on the audited rows (the ``dataset`` engine) with the decisions at the new
threshold, and summarises them per group (``fairaudit.ui.threshold.audit_at_threshold``). "cached" reads the model's
scores computed once (``fairaudit.models.threshold.CachedScores``, what the page keeps per model and dataset);
"no cache" scores every row again at each move (a fresh ``CachedScores``), as re-predicting would. All 48,842 rows
are audited (``rows="all"``: the models are trained on 75 % of them; this times the arithmetic, it is no audit).

Run: ``.venv/bin/python bench/threshold_slider.py`` (about a minute on 2 shared cores: the fits, then 15 moves each way
per row of the table; the time of a move is the median).
"""
from __future__ import annotations

import dataclasses
import statistics
import time

import pandas as pd

from fairaudit import data, models
from fairaudit.models.features import default_features
from fairaudit.models.threshold import CachedScores
from fairaudit.ui.threshold import audit_at_threshold

SPEC = ('sex_parity: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1\n'
        'race_parity: E[pred | race == "White"] - E[pred | race == "Black"] < 0.1\n')
THRESHOLDS = (0.3, 0.4, 0.45, 0.6, 0.7)
ROUNDS = 3  # each threshold this many times: the median of 15 moves
KINDS = ("logreg", "gbm")


def adult_48k():
    train, test = data.load("adult"), data.load("adult_test")
    frame = pd.concat([train.frame, test.frame[train.frame.columns]], ignore_index=True)
    return dataclasses.replace(train, name="adult+adult_test", frame=frame, _hash=None, _rows_hash=None)


def seconds_per_move(dataset, model) -> tuple[float, float]:
    """Median seconds of a move from the cached scores and of one that scores every row again, the two measured in
    turn at each threshold (so that a busy machine slows both alike)."""
    cache = CachedScores(model, dataset.frame)
    cached, fresh = [], []
    for threshold in THRESHOLDS * ROUNDS:
        start = time.perf_counter()
        audit_at_threshold(dataset, SPEC, cache, threshold, rows="all")
        cached.append(time.perf_counter() - start)
        start = time.perf_counter()
        audit_at_threshold(dataset, SPEC, CachedScores(model, dataset.frame), threshold, rows="all")  # scored again
        fresh.append(time.perf_counter() - start)
    return statistics.median(cached), statistics.median(fresh)


def main() -> None:
    dataset = adult_48k()
    print(f"{'rows':>8}  {'model':<7} {'s/move cached':>14} {'s/move no cache':>16} {'time saved':>11}")
    for kind in KINDS:
        model = models.train(dataset, kind, seed=0, features=default_features(dataset))
        audit_at_threshold(dataset, SPEC, CachedScores(model, dataset.frame), 0.5, rows="all")  # warm imports
        cached, fresh = seconds_per_move(dataset, model)
        print(f"{len(dataset):>8,}  {kind:<7} {cached:>14.4f} {fresh:>16.4f} {1 - cached / fresh:>10.0%}")


if __name__ == "__main__":
    main()
