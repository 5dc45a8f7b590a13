"""The halves order test: do the first and the second half of the rows give a leaf rates too far apart for rows in
random (exchangeable) order? Once on a stream of known length (``OrderEvidence.halves``, test (4) of
``fairaudit.engines.monitor.OrderEvidence``), and sequentially on a stream of unknown length (``SequentialHalves``,
a live log: ``fairaudit.engines.live``).

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
    A live log's length is unknown, so its halves are not. The test looks at epochs that double: ``T_0`` is the first
    multiple of the check interval ``batch`` that is at least ``MIN_ROWS`` (so every epoch is a check, and the
    epochs depend only on ``batch``, never on the data), ``T_j = T_0·2^j``; at ``T_j`` (``j ≥ 1``) each leaf's
    rows ``[0, T_j/2)`` are compared with ``[T_j/2, T_j)``. ``T_j/2 = T_{j−1}`` is the previous epoch, so the only
    thing kept is each leaf's counts at the last epoch: O(leaves) memory whatever the length. The level of the test
    at epoch ``j`` for each of the ``k`` distinct leaves is ``δ_j = Δ/(2k) · 6/(π² j²)``. Exchangeability of the
    whole log makes every prefix exchangeable, so each (leaf, epoch) test falsely alarms with probability ≤ 2δ_j
    (above), and by the union bound over leaves and epochs the probability of any false alarm is
    ≤ Σ_k Σ_{j≥1} 2·Δ/(2k)·6/(π² j²) = Δ · (6/π²) Σ_j 1/j² = Δ. No independence between the epochs is needed.
    The at-rest test spends Δ/(2k) per leaf at its one look; epoch ``j`` spends 6/(π² j²) of that (0.61 at the
    first, 0.0095 at the eighth, i.e. ``T_8 = 256·T_0``), which widens its radius by a factor of only
    ``sqrt(1 + (ln(π²/6) + 2 ln j) / ln(4k/Δ))``. Each leaf is reported once (its first alarm); later epochs keep
    testing the others.

    What it sees: the last epoch ``T_J`` at or before the log's length ``L`` covers more than half of the log
    (``T_J > L/2``), so drift in the first half of what has arrived is compared against the rows after it as the log
    grows; drift in the rows after ``T_J`` shows at ``T_{J+1}``, or through the running-intersection check
    (``OrderEvidence.observe``), which looks at every check.

Why a live run does not run the at-rest test when it ends (``--watch`` ending at the end of the input, the idle
timeout or Ctrl-C)
    The length is known then, but the test needs every leaf's counts at row ``L // 2``; a live run does not know
    ``L`` before the end, so it would have to keep the counts at every check (O(L / batch) memory) or read the log
    again. The O(1)-memory alternative, the last epoch against the rows after it, would be a fixed-n test at a
    length chosen while watching (a person pressing Ctrl-C, a writer stopping), which the argument above does not
    cover (it needs ``T`` fixed in advance), and it would take part of Δ from the epochs. The doubling epochs
    replace it: their last test already compares two halves of more than half of the log.
"""
from __future__ import annotations

import math

import numpy as np

from fairaudit.bounds.concentration import fixed_n_radius

MIN_ROWS = 200  # the first epoch is the first multiple of the check interval at or above this many rows


def halves_differ(n1, s1, n2, s2, level: float) -> bool:
    """Whether the halves' fixed-n Hoeffding intervals at ``level`` each (``n1`` observations with ``s1`` successes,
    and ``n2`` with ``s2``) do not overlap; False when a half has no observation (module doc: probability ≤
    2·level under exchangeability)."""
    if n1 <= 0 or n2 <= 0:
        return False
    return abs(s1 / n1 - s2 / n2) > fixed_n_radius(level, n1) + fixed_n_radius(level, n2)


def halves_message(key: str, first: str, second: str, n1: int, s1: int, n2: int, s2: int, delta: float) -> str:
    """The warning of a halves test that fired (the one wording, at rest and live): ``first`` and ``second`` name
    the two halves' rows."""
    return (f"{key} is {s1 / n1:.3f} on {first} and {s2 / n2:.3f} on {second} ({int(n1):,} and {int(n2):,} "
            f"observations): more than chance allows at Δ = {delta:g}")


def first_epoch(batch: int, min_rows: int = MIN_ROWS) -> int:
    """``T_0``: the first multiple of ``batch`` that is at least ``min_rows`` (so every epoch falls on a check)."""
    batch = max(1, int(batch))
    return batch * max(1, -(-int(min_rows) // batch))


def epoch_level(delta: float, leaves: int, j: int) -> float:
    """``δ_j = Δ/(2k) · 6/(π² j²)``: the level of each leaf's two intervals at the ``j``-th test (``j ≥ 1``); over
    all leaves and epochs the false alarms have probability ≤ Δ (module doc)."""
    return delta / (2 * max(1, leaves)) * 6.0 / (math.pi ** 2 * j ** 2)


class SequentialHalves:
    """The halves test at doubling epochs on a stream of unknown length (module doc), fed the leaves' statistics at
    the checks as they come (``observe``); keeps each leaf's counts at the last epoch only."""

    def __init__(self, keys, delta: float, batch: int, min_rows: int = MIN_ROWS):
        self.keys, self.delta = list(keys), float(delta)
        self.start = first_epoch(batch, min_rows)
        self.next = self.start  # the next epoch's row count
        self.j = 0  # the index of the next epoch (0: T_0, recorded, not tested)
        self.kept: dict[str, tuple[int, int]] | None = None  # (n, successes) per leaf at the last epoch
        self.fired: dict[str, int] = {}  # leaf → the epoch at which it was reported

    def observe(self, steps, stats) -> list[str]:
        """Take in the checks at ``steps`` (rows so far, increasing) with each leaf's statistics there (``stats``:
        leaf key → ``LeafStats``); the warnings of the epochs among them."""
        out = []
        steps = np.asarray(steps)
        if not len(steps):
            return out
        while self.next <= int(steps[-1]):
            at = int(np.searchsorted(steps, self.next))
            now = None
            if at < len(steps) and int(steps[at]) == self.next:
                now = {k: (int(stats[k].n[at]), int(stats[k].successes[at])) for k in self.keys}
                if self.kept is not None and self.j >= 1:
                    out += self._test(now)
            self.kept = now  # an epoch that is not a check (never, with the epochs on checks) skips the next test
            self.next *= 2
            self.j += 1
        return out

    def _test(self, now: dict) -> list[str]:
        level = epoch_level(self.delta, len(self.keys), self.j)
        half, end = self.next // 2, self.next
        out = []
        for k in self.keys:
            if k in self.fired:
                continue
            (n1, s1), (n, s) = self.kept[k], now[k]
            n2, s2 = n - n1, s - s1
            if halves_differ(n1, s1, n2, s2, level):
                self.fired[k] = end
                out.append(halves_message(k, f"rows 1–{half:,} of the log", f"rows {half + 1:,}–{end:,}", n1, s1,
                                          n2, s2, self.delta)
                           + f" (the two halves of its first {end:,} rows, tested each time the log doubles)")
        return out
