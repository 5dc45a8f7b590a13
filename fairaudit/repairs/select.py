"""Which candidate repairs to certify, and which certified one to adopt (``fairaudit.repairs.repair``).

A repair is worth adopting only if it keeps most of what the user cares about. The rule, on the search rows only:

1. **Useful** (``useful``): a candidate is refused when it decides every row favourably or none, or when it gives up
   more of the objective than ``max_loss`` allows — accuracy: the original's accuracy less the candidate's
   ≤ ``max_loss``; favourable: the favourable share moves by at most ``max_loss`` either way.
2. **Odds** (``odds``): for each useful candidate, the predicted probability that the certificate certifies it on the
   certification rows at level δ. The certification rows' rate of each leaf is drawn ``DRAWS`` times from a normal
   law around the search rows' rate (variance p(1 − p)(1/n_search + 1/n_cert): the search rows' error and the
   certification rows' own), with the leaf's expected number of certification rows, and the certificate's own rule
   decides each draw (``one_look_verdict``: the ``dataset`` engine's one-look intervals, the arithmetic above).
3. **Plan** (``plan``): for each k = 1 … ``K_MAX``, at most k candidates certified together, each at δ = Δ/k (so that
   all certificates hold together with probability ≥ 1 − Δ, Bonferroni), chosen to maximise the expected objective
   of the certified repair: with the candidates in decreasing objective a₁ > a₂ > … and their odds P₁ < P₂ < …
   (a safer candidate certifies whenever a riskier one does, roughly), it is Σ aᵢ (Pᵢ − Pᵢ₋₁); a repair that is not
   certified is worth nothing. The best k wins.

Then (``repair``): each planned candidate is audited by one look at the certification rows at Δ/k, and the
certified one with the best objective on the search rows is adopted. Every certificate is a one-look verdict at Δ/k
on rows that chose nothing, so the probability that any of them is wrong is ≤ k · Δ/k = Δ, whichever one is adopted.

``rows_needed``: when nothing useful is certified, the number of certification rows at which the most certifiable
useful candidate would be certified (its search rates taken as the truth, δ = Δ): the sentence a refusal ends with.
"""
from __future__ import annotations

import numpy as np

K_MAX = 4  # candidates certified together at most (each at Δ/k)
DRAWS = 48  # draws per candidate when predicting the odds of its certificate
FRONT = 48  # candidates on the front (objective against odds) the plan chooses among, at most
DEFAULT_MAX_LOSS = 0.10  # the most of the objective a repair may give up (accuracy points, or favourable share):
# above what certified parity repairs cost in bench/repair.py (1–8 points), far below a degenerate one (20–55)


def useful(values, original, objective: str, max_loss: float) -> np.ndarray:
    """Bool per candidate: not degenerate (some rows favourable, not all) and within ``max_loss`` of the original
    (module doc). ``values``: the candidates' ``Evaluated``; ``original``: the original point's."""
    fav = np.asarray(values.favourable, float)
    ok = (fav > 0) & (fav < 1)
    if objective == "accuracy" and values.accuracy is not None:
        ok &= (float(original.accuracy[0]) - np.asarray(values.accuracy, float)) <= max_loss + 1e-12
    else:
        ok &= np.abs(fav - float(original.favourable[0])) <= max_loss + 1e-12
    return ok & np.isfinite(np.asarray(values.margin, float))


def goal(values, original, objective: str) -> np.ndarray:
    """What a candidate is worth (higher is better): its accuracy, or 1 − how far its favourable share moved."""
    if objective == "accuracy" and values.accuracy is not None:
        return np.asarray(values.accuracy, float)
    return 1.0 - np.abs(np.asarray(values.favourable, float) - float(original.favourable[0]))


def odds(search, values, rows: np.ndarray, cert_ratio: float, delta: float, seed: int = 0) -> np.ndarray:
    """Predicted probability that the certificate certifies each candidate ``rows`` (indices into ``values``) on the
    certification rows (``cert_ratio`` = certification rows ÷ search rows) at level ``delta`` (module doc)."""
    rows = np.asarray(rows, dtype=int)
    if not len(rows) or not search.keys:
        return np.zeros(len(rows))
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((len(search.keys), 1, DRAWS))  # the same draws for every candidate (common numbers)
    stats = {}
    for i, key in enumerate(search.keys):
        n = np.asarray(values.counts[key], float)[rows][:, None]
        p = np.nan_to_num(np.asarray(values.rates[key], float)[rows], nan=0.5)[:, None]
        m = np.maximum(np.round(n * cert_ratio), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            sd = np.sqrt(p * (1 - p) * (np.where(n > 0, 1 / n, 0.0) + np.where(m > 0, 1 / m, 0.0)))
        drawn = np.clip(p + sd * z[i], 0.0, 1.0)
        stats[key] = (np.round(drawn * m).ravel(), np.broadcast_to(m, drawn.shape).ravel())
    verdict = one_look_verdict(search.spec, stats, float(delta)).reshape(len(rows), DRAWS)
    return (verdict == 1).mean(axis=1)


def one_look_verdict(spec, counts, delta: float) -> np.ndarray:
    """The certificate's own rule, vectorised: the ``dataset`` engine's one-look verdict (each distinct leaf's exact
    binomial interval at its share of ``delta``, ``fairaudit.engines.dataset.engine.allocate``; interval arithmetic
    up the tree, ``fairaudit.core.evaluate``) for counts ``{leaf key: (successes, n)}`` (arrays of one shape, one
    entry per case). int8: 1 certified, 0 violated, -1 undecided."""
    from fairaudit.bounds.fixed_sample import clopper_pearson
    from fairaudit.core.evaluate import LeafValue, root_verdict
    from fairaudit.engines.dataset.engine import allocate

    deltas = allocate(list(counts), delta)
    leaves = {}
    for key, (s, n) in counts.items():
        s, n = np.asarray(s, float), np.asarray(n, float)
        lo, hi = clopper_pearson(s, n, deltas[key])
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate = np.where(n > 0, s / np.where(n > 0, n, 1.0), np.nan)
        leaves[key] = LeafValue(estimate, np.asarray(lo, float), np.asarray(hi, float), deltas[key], n)
    return np.asarray(root_verdict(spec, leaves))


def front(score: np.ndarray, chance: np.ndarray, size: int = FRONT) -> np.ndarray:
    """Indices of the candidates no other beats on both ``score`` and ``chance`` (certification odds), in
    decreasing score (so increasing odds); at most ``size`` of them, spread along the front."""
    order = np.lexsort((-chance, -score))
    keep, best = [], -1.0
    for i in order:
        if chance[i] > best:
            keep.append(int(i))
            best = chance[i]
    keep = np.asarray(keep, dtype=int)
    if len(keep) > size:
        keep = keep[np.unique(np.linspace(0, len(keep) - 1, size).round().astype(int))]
    return keep


def best_set(score: np.ndarray, chance: np.ndarray, k: int) -> tuple[float, list[int]]:
    """``(expected objective, indices)``: at most ``k`` candidates (given in decreasing ``score``, increasing
    ``chance``) maximising Σ scoreᵢ (chanceᵢ − chanceᵢ₋₁) over the chosen ones in that order (module doc);
    dynamic programming over (how many chosen, the last one chosen)."""
    n = len(score)
    if not n:
        return 0.0, []
    value = np.full((k, n), -np.inf)
    back = np.full((k, n), -1, dtype=int)
    value[0] = score * chance
    for j in range(1, k):
        for i in range(n):
            gains = value[j - 1, :i] + score[i] * (chance[i] - chance[:i])
            if len(gains) and np.isfinite(gains).any():
                at = int(np.argmax(gains))
                value[j, i], back[j, i] = gains[at], at
    j, i = np.unravel_index(int(np.argmax(value)), value.shape)
    total, chosen = float(value[j, i]), []
    while i >= 0 and j >= 0:
        chosen.append(int(i))
        i, j = back[j, i], j - 1
    return total, sorted(chosen)


def plan(search, values, candidates: np.ndarray, score: np.ndarray, cert_ratio: float, delta: float,
         seed: int = 0, k_max: int = K_MAX) -> tuple[list[int], int, float, dict]:
    """``(rows to certify, k, expected objective, odds)``: the candidates (indices into ``values``, among the useful
    ``candidates``) to certify together at Δ/k each (module doc); ``odds``: index → predicted odds at Δ/k."""
    candidates = np.asarray(candidates, dtype=int)
    if not len(candidates):
        return [], 1, 0.0, {}
    # first a cheap front on (objective, margin), then the odds of its candidates at each k
    margin = np.asarray(values.margin, float)[candidates]
    pre = candidates[front(score[candidates], margin, size=4 * FRONT)]
    best = (-1.0, [], 1, {})
    for k in range(1, k_max + 1):
        chance = odds(search, values, pre, cert_ratio, delta / k, seed)
        on = front(score[pre], chance)
        total, picked = best_set(score[pre][on], chance[on], k)
        if total > best[0] + 1e-9:
            best = (total, [int(pre[on][i]) for i in picked], k, {int(pre[i]): float(chance[i]) for i in on})
    total, rows, k, found = best
    if not rows:  # no candidate has any odds: the one with the largest margin, alone
        rows = [int(pre[int(np.argmax(np.asarray(values.margin, float)[pre]))])] if len(pre) else []
        k = 1
    return rows, k, max(total, 0.0), found


def rows_needed(search, values, candidates: np.ndarray, cert_rows: int, delta: float) -> tuple[int | None, int | None]:
    """``(certification rows, candidate)``: the fewest certification rows at which a useful candidate would be
    certified at ``delta`` if its search rates were the truth (``one_look_verdict``), searched over
    ``cert_rows`` × 2^(i/4) up to 4,096 times as many; ``(None, None)`` when none would be (no useful candidate
    satisfies the specification on the search rows)."""
    candidates = np.asarray(candidates, dtype=int)
    margin = np.asarray(values.margin, float)[candidates] if len(candidates) else np.zeros(0)
    candidates = candidates[margin > 0]
    if not len(candidates) or not search.keys:
        return None, None
    if len(candidates) > 4 * FRONT:  # the largest margins are the most certifiable
        candidates = candidates[np.argsort(-np.asarray(values.margin, float)[candidates])[:4 * FRONT]]
    scales = 2.0 ** (np.arange(0, 49) / 4.0)
    base = max(int(cert_rows), 1) / max(search.rows, 1)
    stats = {}
    for key in search.keys:
        n = np.asarray(values.counts[key], float)[candidates][:, None] * base * scales[None, :]
        p = np.nan_to_num(np.asarray(values.rates[key], float)[candidates], nan=0.5)[:, None]
        m = np.round(n)
        stats[key] = (np.round(p * m).ravel(), m.ravel())
    verdict = one_look_verdict(search.spec, stats, float(delta)).reshape(len(candidates), len(scales))
    ok = verdict == 1
    if not ok.any():
        return None, None
    first = np.where(ok.any(axis=1), np.argmax(ok, axis=1), len(scales))
    at = int(np.argmin(first))
    return int(np.ceil(max(int(cert_rows), 1) * scales[first[at]])), int(candidates[at])
