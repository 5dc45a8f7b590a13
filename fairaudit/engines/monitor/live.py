"""The monitor on a stream of unknown length: a live log whose decisions keep arriving (AVOIR's online setting).

``monitor_batches`` (``fairaudit.engines.monitor.engine``) knows the stream's length up front and computes every check
point first. ``live_batches`` takes the stream one chunk at a time (each chunk's ``Observations``, in arrival
order, of any length, possibly empty) and keeps only running totals (``fairaudit.engines.monitor.stream.RunningCounts``):
the checks are the same as the monitor's on the whole stream (every ``batch`` rows counted from the first row,
and the last row once the stream ends), each check is judged on its own statistics with the monitor's own
decision (``_scan``: the directed, equal or optimised split) and its leaf intervals are the monitor's
(``_leaves``: the display levels before the decision, the frozen allocation and the running intersection after
it). So on the same rows in the same order the verdicts, the stop step and every interval equal the file-at-rest
run with ``order="given"``, however the rows were cut into chunks (``tests/monitor/test_live.py``).

The batches carry ``total=None`` (the length is unknown) and go through the shared driver (``fairaudit.core.driver.drive``)
like every engine's.

What the guarantee assumes (``LIVE_ASSUMPTION``, the one wording): a live log cannot be shuffled, so its arrival
order is used as is and the confidence sequences assume that order is random (exchangeable). The evidence against
it is watched as the rows arrive: the running intersection of every leaf's confidence sequence
(``OrderEvidence.observe``), and the driver's checks (a node decided both ways, the verdict changing after the
decision). The monitor's halves test needs the whole stream; a live log runs it sequentially instead
(``fairaudit.engines.monitor.halves.SequentialHalves``): at fixed row counts ``T`` that double (four per doubling), the two
halves of the first ``T`` rows, with Δ spent over the epochs so that all its false alarms together have probability
≤ Δ, in O(leaves) memory.

``Fair[...]`` leaves (a model re-predicts each arriving chunk with the attribute flipped over values fixed when the
watch started, ``fairaudit.engines.monitor.livelog.prepare``) carry their counterexamples
(``fairaudit.core.observations.FirstFlips``): the first ``KEEP`` in arrival order and how many so far, as the
file at rest gives them in file order.
"""
from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from fairaudit.core.allocation import Allocator, equal_split
from fairaudit.bounds.concentration import DEFAULT_BOUND, ReusedBound
from fairaudit.engines.monitor.directed import display_deltas
from fairaudit.core.engine import Context, LeafBatch
from fairaudit.engines.monitor.halves import SequentialHalves
from fairaudit.engines.monitor.engine import (DEFAULT_SPLIT, SOLVER_TIME_LIMIT, Monitor, OrderEvidence, _leaves,
                                       _scan, _State, decided_guarantee, joint_tests,
                                       record_decision)
from fairaudit.core.observations import FirstFlips
from fairaudit.engines.monitor.stream import RunningCounts, schedule_resolution
from fairaudit.base.errors import FairauditError
from fairaudit.core.guarantee import Guarantee

LIVE_ASSUMPTION = ("the rows were audited in the order they arrived in the live log, as is (a live log cannot be "
                   "shuffled): the guarantee assumes that arrival order is random (exchangeable), which drift or "
                   "a log sorted by some column breaks")


LIVE_HINT = ("the rows do not look randomly ordered as they arrive (rates that drift along the log), and the guarantee "
             "assumes they are: the verdict may be wrong; look for what changed in the deployed model, its inputs or "
             "the population it decides on")


class LiveMonitor(Monitor):
    """The monitor as the driver sees it on a live log: the same declarations, the drift hint for a log that cannot
    be shuffled (``LIVE_HINT`` instead of the monitor's advice to shuffle)."""

    evidence_hint = LIVE_HINT


class _Shifted:
    """A leaf's statistics over one chunk's checks, indexed by the run's check numbers (``_leaves`` slices them
    by the run's numbering); ``offset``: the run's number of the chunk's first check."""

    def __init__(self, stats, offset: int):
        self.stats, self.offset = stats, offset

    def at(self, index: slice):
        return self.stats.at(slice(index.start - self.offset, index.stop - self.offset))


def live_batches(spec, chunks: Iterable, *, delta: float = 0.05, batch: int = 5, thin_after: int = 0, split: str = DEFAULT_SPLIT,
                 bound: str = DEFAULT_BOUND, ctx: Context | None = None, assumes: str | None = LIVE_ASSUMPTION,
                 solver_time_limit: float = SOLVER_TIME_LIMIT, stop: bool = False,
                 where: str | None = None) -> Iterator[LeafBatch]:
    """The monitor over ``chunks`` (an iterable of each chunk's ``Observations``, in arrival order): one
    ``LeafBatch`` per chunk (empty ``steps`` when no check falls in it, so that the caller still learns how many
    rows were read, ``info["stream_length"]``), and, when ``chunks`` ends, one for the last row's check. With
    ``stop`` the batch holding the decision ends at it and the generator returns. A log that ends without an audited
    row (none matches the row filter ``where``) is refused as at rest (``nothing_to_audit``)."""
    from fairaudit.engines.monitor.options import SPLITS

    if split not in SPLITS:
        raise FairauditError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    ctx = ctx or Context()
    allocator = Allocator(spec, delta, bound, solver_time_limit=solver_time_limit)
    allocator.bound = ReusedBound(allocator.bound)  # as ``monitor_batches``: the same interval is computed once
    keys = allocator.cs.leaf_keys
    # the halves test at doubling row counts (its own steps' counts)
    halves = SequentialHalves(keys, delta, batch, ranges=allocator.cs.leaf_range)
    counts = RunningCounts(keys, batch, thin_after, extra=halves.epochs_between)
    equal = equal_split(keys, delta)
    joint = joint_tests(spec, delta, split, bound)  # the comparisons' joint e-processes, carried across chunks
    tested = joint.ids if joint is not None else set()
    shown = display_deltas(spec, delta, tested) if split.startswith("directed") else equal
    best = {k: delta for k in keys}
    st = _State()
    evidence = OrderEvidence(keys, allocator.bound, equal, delta, ranges=allocator.cs.leaf_range)
    base = Guarantee("probabilistic", delta, assumes=assumes)
    label_delta = delta if split == "optimized" else None
    checks = 0  # the run's number of the next check
    flips = FirstFlips()

    def facts() -> dict:
        resolution = schedule_resolution(batch, thin_after, int(counts.rows))  # None: every check ``batch`` apart
        return {"stream_length": int(counts.rows), "live": True, "leaf_keys": list(keys),
                **({"check_resolution": resolution} if resolution else {}),
                "allocation": dict(st.frozen) if st.frozen else None,
                "decision_deltas": dict(st.decision.deltas) if st.decision else None,
                "decision_delta": st.decision.total if st.decision else None,
                "decision_alternative": [list(a) for a in st.decision.alternative] if st.decision else None,
                "solver_calls": allocator.stats.calls, "solver_seconds": round(allocator.stats.seconds, 4),
                "search_timed_out": st.timed_out}

    def batches(steps: np.ndarray, stats: dict, notes=(), epochs=None) -> Iterator[tuple[LeafBatch, bool]]:
        """The LeafBatch(es) of one chunk's checks; the flag: the run ends after it (``stop`` at the decision);
        ``notes``: the chunk's own warnings (``Observations.notes``), given with its first batch; ``epochs``: the
        halves test's epochs in the chunk and the statistics there (``RunningCounts.extra_seen``)."""
        nonlocal checks
        epoch_steps, epoch_stats = epochs if epochs is not None else (np.zeros(0, dtype=np.int64), {})
        a, m = checks, len(steps)
        b, halt = a + m, False
        cum = joint.chunk(stats) if joint is not None and m else None
        if m and st.stop is None:
            found, _ = _scan(allocator, stats, split, shown, best, ctx, st, deadline=None,
                             solver_time_limit=solver_time_limit,
                             joint=None if cum is None else joint.certified(cum))
            if found is not None:
                record_decision(st, a + found[0], found[1], split, keys, delta, shown)
                if stop:
                    b, halt = st.stop + 1, True
        parts = [(a, b)] + ([] if halt or b == a + m else [(b, a + m)])
        for lo, hi in parts:
            local = slice(lo - a, hi - a)
            nodes = {}
            if cum is not None and hi > lo:  # this part's joint evidence, then its state carried on
                part = {key: v[local] for key, v in cum.items()}
                nodes = joint.evidence(part)
                joint.commit(part, hi - lo)
            shifted = {k: _Shifted(stats[k], a) for k in keys}
            leaves = _leaves(keys, shifted, lo, hi, shown, st, allocator, label_delta=label_delta)
            here = {k: stats[k].at(local) for k in keys}
            last_part = not halt and hi == a + m
            part_end = steps[hi - a - 1] if hi > lo else 0  # the halves' epochs up to this part's last check
            upto = len(epoch_steps) if last_part else int(np.searchsorted(epoch_steps, part_end, side="right"))
            said = evidence.observe(steps[local], here) + halves.observe(
                epoch_steps[:upto], {k: epoch_stats[k].at(slice(0, upto)) for k in epoch_stats})
            epoch_steps = epoch_steps[upto:]
            epoch_stats = {k: v.at(slice(upto, None)) for k, v in epoch_stats.items()}
            if hi > lo:
                done = int(steps[local][-1])
                successes = {k: int(here[k].successes[-1]) for k in flips.keys}
            else:
                done, successes = int(counts.rows), {k: counts.successes[k] for k in flips.keys}
            guarantee = base if st.decision is None else decided_guarantee(split, delta, len(keys), assumes)
            yield (LeafBatch(steps[local], leaves, done=done, total=None, guarantee=guarantee,
                             warnings=tuple(said) + tuple(notes), assumption_broken=bool(said), info=facts(),
                             nodes=nodes, counterexamples=flips.upto(done, successes)), halt)
            notes = ()
        checks = a + m

    for obs in chunks:
        flips.add(getattr(obs, "flips", None) or {}, counts.rows)
        steps, stats = counts.consume(obs)
        for item, halt in batches(steps, stats, getattr(obs, "notes", ()), epochs=counts.extra_seen):
            yield item
            if halt:
                return
    if not counts.rows:
        from fairaudit.core.observations import nothing_to_audit

        raise nothing_to_audit(where)
    steps, stats = counts.finish()
    for item, halt in batches(steps, stats):
        yield item
        if halt:
            return
