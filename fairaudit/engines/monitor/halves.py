"""The halves order test: do the first and the second half of the rows give a leaf rates too far apart for rows in
random (exchangeable) order? Once on a stream of known length (``OrderEvidence.halves``, test (4) of
``fairaudit.engines.monitor.engine.OrderEvidence``), and sequentially on a stream of unknown length (``SequentialHalves``,
a live log: ``fairaudit.engines.monitor.live``).

Why one test is sound (``halves_differ``)
    Take the first ``T`` rows, ``T`` fixed before looking at the data, and a leaf: ``n1`` of its observations
    (rows satisfying its ``given``) fall in rows ``[0, T/2)`` with ``s1`` successes, ``n2`` in ``[T/2, T)`` with
    ``s2``. If the rows are exchangeable, then conditionally on the multiset of the first ``T`` rows and on ``n1``,
    the first half's ``n1`` observations are a uniform sample without replacement from the ``N = n1 + n2``
    observations of those rows, whose mean is ``p``, and the second half's are the rest, a uniform sample of ``n2``.
    Hoeffding's inequality holds for sampling without replacement (Hoeffding 1963, §6;
    ``fairaudit.bounds.concentration.fixed_n_radius``): ``P(|s1/n1 − p| ≥ ε(δ, n1)) ≤ δ`` and the same for the
    second half, so the two fixed-n intervals fail to overlap (``|r1 − r2| > ε(δ, n1) + ε(δ, n2)``) with probability
    ≤ 2δ. A leaf with no observation in a half is not tested.

The sequential test (``SequentialHalves``)
    A live log's length is unknown, so its halves are not. The test looks at fixed row counts (epochs) and compares,
    at each epoch ``T``, each leaf's rows ``[0, T/2)`` with ``[T/2, T)``. The epochs double, with ``m`` of them per
    doubling (``PER_DOUBLING``): ``T_{i,q} = T_0 · 2^i · (m + q)/m`` for ``i ≥ 0`` and ``q = 0 … m−1``, where
    ``T_0`` is the first multiple of ``m · batch`` (``batch``: the check interval) that is at least ``MIN_ROWS``.
    So every epoch is a multiple of ``batch`` (a check), the epochs depend only on ``batch``, never on the data, and
    the half ``T_{i,q}/2 = T_{i−1,q}`` of an epoch is an earlier epoch: what is kept is each leaf's counts at the last
    ``m`` epochs, O(m · leaves) memory whatever the length (``m = 1`` is plain doubling, ``T_i = T_0·2^i``, keeping
    the last epoch only). The epochs with ``i ≥ 1`` are tested, each leaf's two intervals at the level
    ``δ_{i,q} = Δ/(2k) · 6/(π² i²) / m`` for ``k`` distinct leaves (``epoch_level``). Exchangeability of the whole log
    makes every prefix exchangeable, so each (leaf, epoch) test falsely alarms with probability ≤ 2δ_{i,q} (above),
    and by the union bound over leaves and epochs the probability of any false alarm is
    ≤ Σ_k Σ_{i≥1} Σ_q 2·Δ/(2k)·6/(π² i²)/m = Δ · (6/π²) Σ_i 1/i² = Δ. No independence between the epochs is needed.
    The at-rest test spends Δ/(2k) per leaf at its one look; an epoch of the ``i``-th doubling spends
    6/(π² i² m) of that, which widens its radius by a factor of ``sqrt(1 + (ln(π²/6) + 2 ln i + ln m) / ln(4k/Δ))``
    (1.5 for one leaf at Δ = 0.05 in the fifth doubling, 32·T_0 rows, with ``m = 4``). Each leaf is reported once
    (its first alarm); later epochs keep testing the others.

    What it sees: the last epoch ``T`` at or before the log's length ``L`` covers more than ``m/(m+1)`` of the log
    (80% with ``m = 4``; plain doubling covers only more than half), so a rate that changes anywhere in the first
    ``T/2`` rows is compared with the rows after it; a change in the last rows shows at the next epochs as the log
    grows, or through the running-intersection check (``OrderEvidence.observe``), which looks at every check.
    Example: COMPAS (6,172 rows) sorted by ``decile_score`` with ``pred = decile_score <= 4``: every leaf's rate is 1
    up to about row 3,400, then falls. Plain doubling from ``T_0 = 200`` tests at 3,200 (rate 1 in both halves) and
    would next at 6,400, after the log's end: it never fires; with ``m = 4`` the epoch 4,000 compares rows 1–2,000
    with 2,001–4,000 and fires (``tests/monitor/test_live_halves.py``).

Why a live run does not run the at-rest test when it ends (``--watch`` ending at the end of the input, the idle
timeout or Ctrl-C)
    The length is known then, but the test needs every leaf's counts at row ``L // 2``; a live run does not know
    ``L`` before the end, so it would have to keep the counts at every check (O(L / batch) memory) or read the log
    again. The O(1)-memory alternative, the last epoch against the rows after it, would be a fixed-n test at a
    length chosen while watching (a person pressing Ctrl-C, a writer stopping), which the argument above does not
    cover (it needs ``T`` fixed in advance), and it would take part of Δ from the epochs. The epochs replace it:
    their last test already compares the two halves of more than ``m/(m+1)`` of the log (80%), and each of their
    tests is sound whenever the log ends.
"""
from __future__ import annotations

import math

import numpy as np

from fairaudit.bounds.concentration import fixed_n_radius

MIN_ROWS = 200  # the first epoch: the first multiple of m · batch at or above this many rows
PER_DOUBLING = 4  # m: epochs per doubling of the rows (module doc)


def halves_differ(n1, s1, n2, s2, level: float) -> bool:
    """Whether the halves' fixed-n Hoeffding intervals at ``level`` each (``n1`` observations with ``s1`` successes,
    and ``n2`` with ``s2``) do not overlap; False when a half has no observation (module doc: probability ≤
    2·level under exchangeability)."""
    if n1 <= 0 or n2 <= 0:
        return False
    return abs(s1 / n1 - s2 / n2) > fixed_n_radius(level, n1) + fixed_n_radius(level, n2)


def halves_message(key: str, first: str, second: str, n1: int, s1: float, n2: int, s2: float, delta: float,
                   bounds: tuple[float, float] | None = None) -> str:
    """The warning of a halves test that fired (the one wording, at rest and live): ``first`` and ``second`` name
    the two halves' rows; ``bounds``: a mean of an amount's range (its statistics are kept on [0, 1]), to say its
    values in its own units."""
    from fairaudit.core.explain import number

    low, high = bounds or (0.0, 1.0)
    a, b = (low + (high - low) * s / n for s, n in ((s1, n1), (s2, n2)))
    shown = (lambda x: f"{x:.3f}") if bounds is None else number  # noqa: E731
    return (f"{key} is {shown(a)} on {first} and {shown(b)} on {second} ({int(n1):,} and {int(n2):,} "
            f"observations): more than chance allows at Δ = {delta:g}")


def first_epoch(batch: int, per_doubling: int = PER_DOUBLING, min_rows: int = MIN_ROWS) -> int:
    """``T_0``: the first multiple of ``per_doubling · batch`` that is at least ``min_rows`` (so every epoch falls on
    a check)."""
    unit = max(1, int(batch)) * max(1, int(per_doubling))
    return unit * max(1, -(-int(min_rows) // unit))


def epoch_rows(t0: int, per_doubling: int, index: int) -> int:
    """The ``index``-th epoch (from 0): ``T_{i,q} = T_0 · 2^i · (m + q)/m`` with ``index = i·m + q``."""
    i, q = divmod(index, per_doubling)
    return t0 * 2 ** i * (per_doubling + q) // per_doubling


def epoch_level(delta: float, leaves: int, doubling: int, per_doubling: int = PER_DOUBLING) -> float:
    """``δ_{i,q} = Δ/(2k) · 6/(π² i²) / m``: the level of each leaf's two intervals at an epoch of the ``i``-th
    doubling (``i ≥ 1``); over all leaves and epochs the false alarms have probability ≤ Δ (module doc)."""
    return delta / (2 * max(1, leaves)) * 6.0 / (math.pi ** 2 * doubling ** 2) / per_doubling


class SequentialHalves:
    """The halves test at the epochs of the module doc on a stream of unknown length, fed the leaves' statistics at
    the checks as they come (``observe``); keeps each leaf's counts at the last ``per_doubling`` epochs only."""

    def __init__(self, keys, delta: float, batch: int, per_doubling: int = PER_DOUBLING, min_rows: int = MIN_ROWS,
                 ranges=None):
        self.keys, self.delta = list(keys), float(delta)
        self.ranges = dict(ranges or {})  # the amounts' ranges, for the warning's words (``halves_message``)
        self.m = max(1, int(per_doubling))
        self.t0 = first_epoch(batch, self.m, min_rows)
        self.index = 0  # the next epoch's index
        self.kept: dict[int, dict[str, tuple[int, int]]] = {}  # epoch rows → (n, successes) per leaf
        self.fired: dict[str, int] = {}  # leaf → the epoch (rows) at which it was reported

    def epochs_between(self, lo: int, hi: int) -> list[int]:
        """The epochs (row counts) in ``(lo, hi]`` that are still to come: the steps whose statistics ``observe``
        needs (the checks need not include them once the schedule thins out)."""
        out, index = [], self.index
        while (end := epoch_rows(self.t0, self.m, index)) <= hi:
            if end > lo:
                out.append(end)
            index += 1
        return out

    def observe(self, steps, stats) -> list[str]:
        """Take in the checks at ``steps`` (rows so far, increasing) with each leaf's statistics there (``stats``:
        leaf key → ``LeafStats``); the warnings of the epochs among them."""
        out = []
        steps = np.asarray(steps)
        if not len(steps):
            return out
        while (end := epoch_rows(self.t0, self.m, self.index)) <= int(steps[-1]):
            at = int(np.searchsorted(steps, end))
            if at < len(steps) and int(steps[at]) == end:  # always, given the epochs' statistics
                now = {k: (int(stats[k].n[at]), float(stats[k].successes[at])) for k in self.keys}
                if end // 2 in self.kept and self.index >= self.m:
                    out += self._test(end, self.kept[end // 2], now, self.index // self.m)
                self.kept[end] = now
            self.index += 1
            half = epoch_rows(self.t0, self.m, self.index) // 2  # the next test's half: older epochs are not needed
            self.kept = {rows: c for rows, c in self.kept.items() if rows >= half}
        return out

    def _test(self, end: int, before: dict, now: dict, doubling: int) -> list[str]:
        level = epoch_level(self.delta, len(self.keys), doubling, self.m)
        half = end // 2
        out = []
        for k in self.keys:
            if k in self.fired:
                continue
            (n1, s1), (n, s) = before[k], now[k]
            n2, s2 = n - n1, s - s1
            if halves_differ(n1, s1, n2, s2, level):
                self.fired[k] = end
                out.append(halves_message(k, f"rows 1–{half:,} of the log", f"rows {half + 1:,}–{end:,}", n1, s1,
                                          n2, s2, self.delta, self.ranges.get(k))
                           + f" (the two halves of its first {end:,} rows, tested as the log grows)")
        return out
