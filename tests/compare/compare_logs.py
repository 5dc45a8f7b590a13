"""Synthetic logs of two models' decisions with known true rates (for the comparison's tests)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairaudit.data.dataset import Column, Dataset, Schema


def two_model_log(n: int, seed: int, *, rates: dict, agree: float = 0.8) -> Dataset:
    """``n`` rows of a group column ``g`` (``a``/``b``, half each) and decisions ``da``, ``db`` of two models.
    ``rates[(model, group)]``: the true rate of favourable decisions; model b copies model a's decision with
    probability ``agree`` when that keeps its rate, else draws so that its marginal rate is exact."""
    rng = np.random.default_rng(seed)
    g = np.where(rng.random(n) < 0.5, "a", "b")
    da = np.zeros(n, dtype=int)
    db = np.zeros(n, dtype=int)
    for group in ("a", "b"):
        rows = g == group
        k = int(rows.sum())
        pa, pb = rates[("A", group)], rates[("B", group)]
        a = rng.random(k) < pa
        # b = a with probability agree; otherwise an independent draw with the rate that makes Pr[b] = pb
        copy = rng.random(k) < agree
        other_rate = np.clip((pb - agree * pa) / (1 - agree), 0.0, 1.0)
        b = np.where(copy, a, rng.random(k) < other_rate)
        da[rows], db[rows] = a, b
    frame = pd.DataFrame({"g": g, "da": da, "db": db})
    schema = Schema((Column("g", "categorical", ("a", "b")), Column("da", "numeric"), Column("db", "numeric")),
                    protected=("g",))
    return Dataset(f"synthetic-{seed}", frame, schema, source="test")
