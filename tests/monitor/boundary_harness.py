"""Validity harness at the boundary, vectorised over streams (numpy): each leaf is an independent Bernoulli
stream whose rows join it with probability ``share`` and succeed with probability ``rate``; the true rates put
the specification exactly at its threshold. ``wrong_rate`` is the fraction of streams in which a decision rule
(statistics → verdict per check) EVER gives the verdict the truth is not. Used by the tests (≥ 1,000 streams)
and by ``bench/power.py``."""
from __future__ import annotations

import numpy as np

from fairaudit.core.allocation import LeafStats
from fairaudit.bounds.rules import FALSE, TRUE
from fairaudit.engines.monitor.engine import check_points


def leaf_stats(rates: dict, shares: dict, streams: int, rows: int, batch: int, seed: int) -> dict[str, LeafStats]:
    """Each leaf's (successes, n) at every check, arrays of shape (streams, checks)."""
    rng = np.random.default_rng(seed)
    idx = check_points(rows, batch)
    out = {}
    for key, rate in rates.items():
        member = rng.random((streams, rows)) < shares.get(key, 1.0)
        ok = member & (rng.random((streams, rows)) < rate)
        out[key] = LeafStats(np.cumsum(ok, axis=1)[:, idx].astype(float), np.cumsum(member, axis=1)[:, idx].astype(float))
    return out


def wrong_rate(verdicts: np.ndarray, truth: bool) -> float:
    """Fraction of streams (rows of ``verdicts``) whose verdict is ever the opposite of ``truth``."""
    wrong = FALSE if truth else TRUE
    return float(np.any(verdicts == wrong, axis=1).mean())
