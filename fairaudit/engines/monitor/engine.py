"""The ``monitor`` engine (AVOIR): a stream of decisions, anytime-valid bounds on every ``E[...]``.

It implements the engine contract (``fairaudit.core.engine``): ``Monitor.run`` yields, per chunk of checks,
every leaf's interval; the driver (``fairaudit.core.driver``) evaluates the tree and builds the result.

The stream
    The rows of a dataset (by default only the rows the model was not trained on, when fairaudit
    trained it on this dataset: ``audited_rows``), restricted to ``where`` (AVOIR's materialised view),
    shuffled (``order="shuffle"``, the default, seeded) or in file order (``order="given"``, for a log
    whose arrival order is the point). The guarantee assumes random (exchangeable) order; a run records
    the evidence against it that it sees (``OrderEvidence`` here, and the driver's generic checks) as warnings. Decisions (``pred``) come from a
    model (a ``Model``, a training kind or a saved-model path) or from a condition over the rows
    (``pred="decile_score <= 4"``, true = favourable). A check runs every ``batch`` observations (and at the last one).

Leaves
    ``E[event]`` counts every observation; ``E[event | given]`` only the observations satisfying
    ``given`` (rejection sampling). ``Fair[col]`` observes, for each row, whether the decision stays
    the same when ``col`` is replaced by each other value of the column (categorical columns, or
    numeric ones with at most 20 distinct values; the values are those of the whole dataset); it
    needs a model. Identical leaves (same canonical text) are one estimator with one δ.
    Everything is evaluated for the whole stream up front with numpy; cumulative sums give each
    leaf's (successes, n) at every check, so a 48k-row stream costs a few numpy passes.

The decision (``stop_step``)
    ``split="directed"`` (the default) decides the root by ``fairaudit.engines.monitor.directed``: one
    certificate per verdict direction, each at the full Δ (only the direction the truth is not can be
    wrong), shared by Berger's intersection–union rule (a TRUE ``and`` gives each conjunct the full Δ;
    a FALSE ``and`` / TRUE ``or`` splits it; a comparison splits its share among its leaves); its
    proof is in that module and in the methods text. With the mixture bound, a comparison of two
    disjoint groups spends its share on its joint e-process instead (``fairaudit.engines.monitor.eprocess``;
    the proof that it replaces the interval certificate at the same level is there): the batches carry
    its verdict, e-value and target 1/β as ``NodeEvidence`` (``LeafBatch.nodes``), which the driver
    uses as the comparison's verdict. ``split="directed-intervals"`` is the directed rule on leaf
    intervals only. Otherwise the root is decided when an allocation
    of δ's with Σδᵢ ≤ Δ decides it:
    ``split="equal"`` uses Δ/k per distinct leaf (VeriFair, AVOIR-VF); ``split="optimized"`` asks
    ``fairaudit.core.allocation`` (AVOIR-OB; the solver runs only at checks that its exact screens
    cannot settle; see "The guarantee of each split" below). ``stop_step`` is the number of
    observations at the first deciding check. From then on the deciding allocation is frozen (AVOIR Appendix C) and every leaf interval is the
    running intersection of its intervals since the decision (an intersection of a confidence
    sequence at a fixed δ is one too), so the verdict cannot drift back to unknown; if an
    intersection ever became empty (probability ≤ δ), that leaf shows its current interval instead.
    With the directed split, each leaf then shows the level the deciding certificate gave it (each
    interval holds at its δ column; the verdict at Δ by the certificate's proof). Otherwise, leaves
    that the deciding alternative does not involve (e.g. the other side of an ``and`` proved
    false) share the budget left over, Δ − Σδ*. The reported ``verdict`` is the root's verdict at
    the last check (the stop step with ``stop=True``).

What is displayed before the decision
    AVOIR shows each leaf at δᵢ = Δ while undecided; then each leaf interval is a (1 − Δ)
    confidence sequence on its own but the node intervals, which combine k leaves, only hold with
    probability 1 − kΔ. Here every check before the decision displays the *equal split*
    Δ/k, a fixed allocation: every displayed interval is an anytime-valid confidence sequence at
    the δ shown in its ``delta`` column, and the root's is at Δ jointly. A node's verdict displayed
    before the decision is therefore sound at its ``delta``; the root's decision may come earlier
    than the equal split shows when ``split="optimized"``, at which check the display switches to
    the deciding allocation. With ``split="directed"`` the levels shown before the decision are
    ``fairaudit.engines.monitor.directed.display_deltas``: Δ/k, lowered where a certificate uses a leaf at a
    smaller level, so the display never decides before the certificates do.

The guarantee of each split
    ``split="directed"`` (the default): the verdict is ever wrong with probability ≤ Δ (theorem in
    ``fairaudit.engines.monitor.directed``). ``split="equal"`` is a fixed allocation: by the union bound the
    probability that the verdict (or any displayed interval) is ever wrong is ≤ Δ. ``split="optimized"`` chooses the
    δ's after looking at the data at each check; AVOIR's Theorem 1 claims Δ for it too, but the
    union-bound argument does not cover a data-chosen allocation and the claim is false in general
    (``tests/monitor/test_soundness_optimized.py``: a 12-leaf ``or`` at Δ = 0.2 is wrongly certified
    in about a third of the runs). What holds is k·Δ for k distinct leaves (every δᵢ ≤ Δ, see
    ``fairaudit.core.allocation.sound_delta``); the batches carry it as a weaker ``Guarantee``
    (with a note saying why), which the result states. After an optimised decision each leaf's δ column
    shows Δ (the level its interval provably holds at), not the data-chosen δᵢ it was computed with.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from fairaudit.core.allocation import Allocation, Allocator, equal_split, sound_delta
from fairaudit.bounds.concentration import BOUND_ALIASES, DEFAULT_BOUND, ReusedBound, get_bound
from fairaudit.engines.monitor.directed import directed_verdict, display_deltas, witness_deltas
from fairaudit.bounds.rules import TRUE, UNKNOWN
from fairaudit.core.engine import Context, Engine, LeafBatch
from fairaudit.engines.monitor.options import DEFAULT_SPLIT, OPTIONS, ORDERS, SPLITS, TITLE
from fairaudit.engines.monitor.stream import CheckPoints, checks_in, schedule_resolution
from fairaudit.core.observations import Observations, decision_reasons, observe_inputs
from fairaudit.base.errors import FairauditError
from fairaudit.core.evaluate import LeafValue
from fairaudit.core.guarantee import Guarantee
from fairaudit.base.limits import OutOfTime

CHUNK_CHECKS = 256  # checks in the first batch (at most)
CHUNK_LIMIT = 8192  # the batches double up to this many checks (numpy's cost per call is then negligible)
YIELD_SECONDS = 0.5  # a batch is yielded at least this often while the scan searches for a decision
SOLVER_TIME_LIMIT = 1.0  # seconds per solver call; a call that runs out just does not decide that check


def check_points(length: int, batch: int, thin_after: int = 0) -> np.ndarray:
    """0-based index of the last observation of each check: the schedule's steps
    (``fairaudit.engines.monitor.stream.schedule_steps``: every ``batch`` rows up to ``thin_after``, then
    geometrically), and the last row — ``checks_in`` of the whole stream, as every route computes its checks."""
    return checks_in(0, length, batch, thin_after, end=length)


@dataclass
class _State:
    stop: int | None = None  # check index of the decision
    frozen: dict | None = None
    decision: Allocation | None = None
    run_lo: dict = field(default_factory=dict)  # running intersections after the decision
    run_hi: dict = field(default_factory=dict)
    timed_out: bool = False


def monitor_batches(spec, obs: Observations, *, delta: float = 0.05, batch: int = 5, thin_after: int = 0,
                    split: str = DEFAULT_SPLIT,
                    bound: str = DEFAULT_BOUND, order: str = "shuffle", ctx: Context | None = None,
                    assumes: str | None = None, chunk: int = CHUNK_CHECKS, chunk_limit: int = CHUNK_LIMIT,
                    yield_every: float = YIELD_SECONDS,
                    solver_time_limit: float = SOLVER_TIME_LIMIT, stop: bool = False) -> Iterator[LeafBatch]:
    """The monitor over ``obs``: a ``LeafBatch`` of ``chunk`` checks, the next ones twice as long up to
    ``chunk_limit`` (every check is computed on its own statistics, so the batches' lengths change nothing but how
    often the run reports), or sooner when the search for a decision has run for ``yield_every`` seconds since the
    last one. Each solver call is limited to
    ``solver_time_limit`` seconds and to the time the run has left (a call that runs out finds no allocation:
    that check is just not decided, which is sound). With ``order="given"`` the first batch carries the
    halves test of ``OrderEvidence`` (it needs the whole stream, which is known up front). With ``stop`` the
    batch that holds the decision ends at it (the driver ends the run there): the checks after it are neither
    yielded nor watched for evidence, so no warning names a step the result does not have."""
    if split not in SPLITS:
        raise FairauditError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    ctx = ctx or Context()
    allocator = Allocator(spec, delta, bound, solver_time_limit=solver_time_limit)
    allocator.bound = ReusedBound(allocator.bound)  # the same interval asked twice is computed once
    keys = allocator.cs.leaf_keys
    if getattr(obs, "lazy_checks", False):  # a stream read in chunks: the checks without an array of them all
        idx = CheckPoints(obs.length, batch, thin_after=thin_after)
    else:
        idx = check_points(obs.length, batch, thin_after)
    steps = idx + 1
    stats = obs.stats(idx)
    equal = equal_split(keys, delta)
    joint = joint_tests(spec, delta, split, bound)
    tested = joint.ids if joint is not None else set()
    shown = (display_deltas(spec, delta, tested) if split.startswith("directed")  # the levels shown before a decision
             else equal)
    best = {k: delta for k in keys}
    st = _State()
    K = len(idx)
    evidence = OrderEvidence(keys, allocator.bound, equal, delta, ranges=allocator.cs.leaf_range)
    halves = evidence.halves(obs) if order == "given" else []
    base = Guarantee("probabilistic", delta, assumes=assumes)
    resolution = schedule_resolution(batch, thin_after, int(obs.length))  # None: every check ``batch`` apart

    def facts(upto: int) -> dict:
        return {"stream_length": int(obs.length), "leaf_keys": list(keys),
                **({"check_resolution": resolution} if resolution else {}),
                "allocation": dict(st.frozen) if st.frozen else None,
                "decision_deltas": dict(st.decision.deltas) if st.decision else None,
                "decision_delta": st.decision.total if st.decision else None,
                "decision_alternative": [list(a) for a in st.decision.alternative] if st.decision else None,
                "solver_calls": allocator.stats.calls, "solver_seconds": round(allocator.stats.seconds, 4),
                "search_timed_out": st.timed_out}

    def guarantee() -> Guarantee:
        return base if st.decision is None else decided_guarantee(split, delta, len(keys), assumes)

    a, last_yield = 0, time.perf_counter()
    first, cut_noted = True, False
    while a < K:
        b = min(a + chunk, K)
        try:
            chunk_stats = {k: s.at(slice(a, b)) for k, s in stats.items()}
        except OutOfTime:  # observations drawn on demand (a population program) ran into the time budget
            b = min(b, int(getattr(obs, "filled", a)))
            if b <= a:  # nothing new: an empty batch, at which the driver sees the budget spent
                yield LeafBatch(np.zeros(0, dtype=np.int64), {}, done=int(steps[a - 1]) if a else 0, total=obs.length,
                                guarantee=guarantee(), info=facts(a))
                return
            chunk_stats = {k: s.at(slice(a, b)) for k, s in stats.items()}  # the checks already filled
        cum = joint.chunk(chunk_stats) if joint is not None else None
        if st.stop is None:
            found, scanned = _scan(allocator, chunk_stats, split, shown, best, ctx, st,
                                   deadline=last_yield + yield_every, solver_time_limit=solver_time_limit,
                                   joint=None if joint is None else joint.certified(cum))
            if found is not None:
                record_decision(st, a + found[0], found[1], split, keys, delta, shown)
                if stop:
                    b = st.stop + 1
            else:
                b = a + scanned  # paused: checks [a, a + scanned) are known undecided, the rest is scanned next
        nodes = {}
        if joint is not None:  # the evidence of the checks yielded, then their state carried to the next chunk
            nodes = joint.evidence({key: v[: b - a] for key, v in cum.items()})
            joint.commit(cum, b - a)
        leaves = _leaves(keys, stats, a, b, shown, st, allocator, label_delta=delta if split == "optimized" else None)
        found_now = evidence.observe(steps[a:b], {k: s.at(slice(a, b)) for k, s in stats.items()})
        said = found_now + (halves if first else [])
        if first:  # the rows each leaf leaves out for a missing value (the whole stream's, known up front)
            notes = list(getattr(obs, "missing_warnings", list)())
        else:
            notes = []
        if st.timed_out and not cut_noted:  # the run may still finish this batch: say the search was cut short
            cut_noted = True
            notes.append(f"the time budget ran out while the {split} δ split was searching for a decision (by step "
                         f"{int(steps[b - 1]):,}): the checks it had not searched were judged with the equal split "
                         "only, so a decision may have been possible earlier")
        done = int(steps[b - 1]) if b > a else 0
        yield LeafBatch(steps[a:b], leaves, done=done, total=obs.length,
                        guarantee=guarantee(), warnings=tuple(said + notes), assumption_broken=bool(said),
                        info=facts(b), counterexamples=_counterexamples(obs, done), nodes=nodes)
        first = False
        last_yield = time.perf_counter()
        a = b
        chunk = max(chunk, min(2 * chunk, chunk_limit))


def record_decision(st: _State, check: int, allocation: Allocation, split: str, keys, delta: float, shown) -> None:
    """The run is decided at ``check`` by ``allocation``: freeze the levels the leaves are shown at from then on (the
    deciding certificate's levels with the directed split, else the deciding δ's plus an equal share of the rest)."""
    st.stop, st.decision = check, allocation
    st.frozen = (_frozen(allocation, keys, delta) if not split.startswith("directed")
                 else {k: allocation.deltas.get(k, shown[k]) for k in keys})


def decided_guarantee(split: str, delta: float, leaves: int, assumes: str | None) -> Guarantee:
    """The guarantee of a run once it is decided with ``split`` over ``leaves`` distinct leaves. Before any decision
    the intervals use a fixed split, so Δ holds; a decision taken with data-chosen δ's only guarantees the weaker
    ``sound_delta`` (module doc, "The guarantee of each split")."""
    level = sound_delta(split, delta, leaves)
    note = None
    if level > delta * (1 + 1e-12):
        k = round(level / delta) if level < 1 else None
        what = f"{k} probabilities" if k else "every probability"
        note = (f"optimised δ split: the δ's were chosen after looking at the data, so the guarantee is the "
                f"union over {what} at Δ = {delta:g} each; use the equal split for 1 − Δ")
    return Guarantee("probabilistic", level, note=note, assumes=assumes)


def joint_tests(spec, delta: float, split: str, bound) -> JointTests | None:
    """The joint e-process tests of the comparisons that have one (``fairaudit.engines.monitor.eprocess``), with the default
    ``split="directed"`` and the mixture bound (they are its two-group form), else None; None too when no
    comparison of ``spec`` has one."""
    name = BOUND_ALIASES.get(bound, bound) if isinstance(bound, str) else getattr(bound, "name", None)
    if split != "directed" or name != "mixture":
        return None
    from fairaudit.engines.monitor.eprocess import JointTests  # here: it imports scipy.special (start-up time)

    tests = JointTests(spec, delta)
    return tests if tests.forms else None


def decisions(spec, stats, delta: float, split: str = DEFAULT_SPLIT, bound=DEFAULT_BOUND) -> np.ndarray:
    """The root's verdict at every check by the engine's rule for a directed split (int8; the joint tests where
    ``joint_tests`` uses them), vectorised: ``stats`` (leaf key → ``LeafStats``) may have a leading axis of
    independent streams (the validity harness, ``bench/power.py``). The engine makes the same calls chunk by chunk,
    carrying the joint tests' running maxima (``tests/monitor/test_eprocess.py`` checks both agree)."""
    if not split.startswith("directed"):
        raise ValueError(f"decisions() is the directed rule; got split={split!r}")
    joint = joint_tests(spec, delta, split, bound)
    certs = None if joint is None else joint.certified(joint.chunk(stats))
    return directed_verdict(spec, stats, delta, get_bound(bound) if isinstance(bound, str) else bound, joint=certs)


def _counterexamples(obs, rows: int):
    """The Fair[...] leaves' counterexamples among the first ``rows`` rows of the stream (the rows checked so far;
    None for observations that keep none, e.g. a population's draws)."""
    found = getattr(obs, "counterexamples", None)
    return None if found is None else found(rows)


ORDER_HINT = ("the rows do not look randomly ordered (a sorted file, or rates that drift along the stream), and "
              "the guarantee assumes they are: audit with --order shuffle unless the arrival order is the point")


class OrderEvidence:
    """Watches a run for signs that the observations do not arrive in random (exchangeable) order.

    Under that assumption each of the following happens with probability ≤ Δ, so each is reported as a
    warning rather than silently: (1) the running intersection, from the first check on, of a leaf's
    equal-split confidence sequence (each interval holds at every step with probability ≥ 1 − Δ/k, so
    their intersection contains the true value too) becomes empty; (2) a node is decided true at one
    check and false at another (one of the two displayed intervals excluded the true value); (3) the root's
    verdict changes after the decision; (4) with file order, the first and second half of the stream
    give a leaf rates whose fixed-n Hoeffding intervals (Δ/(2k) each; the halves are fixed once the
    stream ends, so one test per leaf) do not overlap; on a live log, whose length is unknown, (4) runs at epochs
    that double instead (``fairaudit.engines.monitor.halves.SequentialHalves``). (2) and (3) hold for any engine and are
    checked by the driver (``fairaudit.core.driver``); (1) and (4) are checked here and in ``fairaudit.engines.monitor.halves``.
    """

    def __init__(self, keys, bound, equal: dict[str, float], delta: float, ranges=None):
        self.keys, self.bound, self.equal, self.delta = list(keys), bound, equal, delta
        self.ranges = dict(ranges or {})  # the amounts' ranges, for the halves warning's words
        self.run_lo = {k: -np.inf for k in keys}
        self.run_hi = {k: np.inf for k in keys}
        self.empty_at: dict[str, int] = {}

    def observe(self, steps: np.ndarray, stats) -> list[str]:
        """Take in one chunk of checks (each leaf's statistics at ``steps``); the warnings it gives rise to."""
        out = []
        if not len(steps):
            return out
        keys = [k for k in self.keys if k not in self.empty_at]
        answers = self.bound.intervals([(stats[k].successes, stats[k].n, self.equal[k]) for k in keys])
        for k, (lo, hi) in zip(keys, answers):  # every leaf's interval at once
            run_lo = np.maximum.accumulate(np.concatenate([[self.run_lo[k]], lo]))[1:]
            run_hi = np.minimum.accumulate(np.concatenate([[self.run_hi[k]], hi]))[1:]
            empty = np.flatnonzero(run_lo > run_hi)
            if len(empty):
                self.empty_at[k] = int(steps[empty[0]])
                out.append(f"{k}: its running confidence interval became empty at step {self.empty_at[k]:,} (the "
                           "estimates before and after disagree more than chance allows)")
            self.run_lo[k], self.run_hi[k] = float(run_lo[-1]), float(run_hi[-1])
        return out

    def halves(self, obs: "Observations") -> list[str]:
        """Test (4) of the class doc, on the whole stream (also the rows after a stop)."""
        from fairaudit.engines.monitor.halves import halves_differ, halves_message

        out = []
        half = obs.length // 2
        level = self.delta / (2 * max(1, len(self.keys)))
        for k in self.keys:
            counts = _half_counts(obs, k, half)
            if counts is None:  # a stream read in chunks without its halves' counts: the test cannot run
                continue
            n1, s1, n2, s2 = counts
            if halves_differ(n1, s1, n2, s2, level):
                out.append(halves_message(k, f"the first half of the stream's {obs.length:,} rows", "the second",
                                          n1, s1, n2, s2, self.delta, self.ranges.get(k)))
        return out


def _half_counts(obs, key: str, half: int):
    """``(n1, s1, n2, s2)``: a leaf's observations and successes among the stream's first ``half`` rows and the
    rest — from the whole stream's values, or from the counts a chunked stream knows (``half_counts``)."""
    if hasattr(obs, "half_counts"):
        return obs.half_counts(key)
    from fairaudit.core.counting import encode, halves

    return halves([encode(obs, [key])], [key], half)[key]


def _frozen(allocation: Allocation, keys, delta: float) -> dict[str, float]:
    """The deciding δ's plus an equal share of what is left of Δ for every leaf (Σ = Δ).

    Raising δ's only narrows intervals, so the decision stands; sharing the rest keeps every
    displayed interval informative (the optimum may give a leaf δ ≈ 0, i.e. the interval [0, 1])."""
    left = max(delta - allocation.total, 0.0)
    return {k: float(allocation.deltas.get(k, 0.0)) + left / len(keys) for k in keys}


def _scan(allocator: Allocator, stats, split, equal, best, ctx: Context, st, deadline: float | None = None,
          solver_time_limit: float = SOLVER_TIME_LIMIT, joint=None) -> tuple[tuple[int, Allocation] | None, int]:
    """``(found, scanned)``: ``found`` is the first check of this chunk at which the root is decided,
    with its allocation, or None; without a decision, checks ``[0, scanned)`` are undecided. The
    search pauses (``scanned`` < chunk length) at the first solver candidate met after ``deadline``
    (``time.perf_counter()``), so that the caller can report progress; candidates are checks in
    order and each check is judged on its own statistics, so resuming at ``scanned`` gives the same
    decision as an uninterrupted scan. The run's time budget (``ctx``) ends the search; each solver call gets
    at most what is left of it."""
    n_checks = len(next(iter(stats.values())).n)
    if split.startswith("directed"):
        v = directed_verdict(allocator.spec, stats, allocator.total, allocator.bound, joint=joint)
        hits = np.flatnonzero(v != UNKNOWN)
        if not len(hits):
            return None, n_checks
        at, target = {k: s.at(int(hits[0])) for k, s in stats.items()}, bool(v[hits[0]] == TRUE)
        joint_at = {key: bool(c[hits[0]]) for key, c in (joint or {}).items()}
        deltas = witness_deltas(allocator.spec, at, target, allocator.total, allocator.bound, joint_at)
        return (int(hits[0]), Allocation(deltas, target, ())), n_checks
    v_eq = allocator.root_verdict(stats, equal)
    eq_hits = np.flatnonzero(v_eq != UNKNOWN)
    first_eq = int(eq_hits[0]) if len(eq_hits) else None
    if split == "equal":
        if first_eq is None:
            return None, n_checks
        return (first_eq, Allocation(dict(equal), bool(v_eq[first_eq] == TRUE), ())), n_checks
    v_best = allocator.root_verdict(stats, best)
    end = first_eq if first_eq is not None else len(v_best)
    candidates = np.flatnonzero(v_best[:end] != UNKNOWN)
    if len(candidates):
        candidates = _prescreen(allocator, stats, v_best, candidates)
    for i, c in enumerate(candidates):
        if ctx.expired():
            st.timed_out = True
            break
        allocator.solver_time_limit = ctx.bounded(solver_time_limit)
        if deadline is not None and i > 0 and time.perf_counter() > deadline:
            return None, int(c)
        at = {k: s.at(c) for k, s in stats.items()}
        found = allocator.try_decide(at, bool(v_best[c] == TRUE), optimize=False)
        if found is not None:
            return (int(c), _optimal(allocator, at, found)), n_checks
    if first_eq is None:
        return None, n_checks
    at = {k: s.at(first_eq) for k, s in stats.items()}
    target = bool(v_eq[first_eq] == TRUE)
    allocator.solver_time_limit = ctx.bounded(solver_time_limit)
    found = None if st.timed_out or ctx.expired() else allocator.try_decide(at, target, optimize=True)
    return (first_eq, found or Allocation(dict(equal), target, ())), n_checks


def _optimal(allocator: Allocator, at, found: Allocation) -> Allocation:
    """The optimum Σδ at the deciding check (reported and frozen); ``found`` if it already is."""
    if found.optimal:
        return found
    better = allocator.try_decide(at, found.target, optimize=True)
    return better if better is not None and better.total <= found.total else found


def _prescreen(allocator: Allocator, stats, v_best, candidates) -> np.ndarray:
    """Vectorised necessary condition: some alternative whose per-leaf minimal δ's sum to ≤ Δ."""
    sub = {k: s.at(candidates) for k, s in stats.items()}
    keep = np.zeros(len(candidates), dtype=bool)
    targets = v_best[candidates] == TRUE
    for target in (True, False):
        rows = targets == target
        if not rows.any():
            continue
        for alt in allocator.alternatives(target):
            ok = allocator.satisfied(alt, sub, {k: allocator.total for k in allocator.keys}) & rows
            if not ok.any():
                continue
            mins = allocator.smallest_deltas(alt, sub)
            need = sum(mins.values())
            keep |= ok & (need <= allocator.total)
    return candidates[keep]


def _leaves(keys, stats, a, b, equal, st: _State, allocator, label_delta: float | None = None) -> dict:
    """Every leaf's interval at checks [a, b) with the allocation in force at each check. With
    ``label_delta`` (optimised split) the δ column after the decision is that level per leaf: the
    data-chosen δᵢ are ≤ it, so each interval provably holds at it (module doc)."""
    sl = slice(a, b)
    checks = np.arange(a, b)
    after = np.zeros(b - a, dtype=bool) if st.stop is None else checks >= st.stop
    leaves, asked = {}, []
    for k in keys:
        s = stats[k].at(sl)
        d = np.full(b - a, equal[k])
        if st.frozen is not None:
            d = np.where(after, st.frozen[k], d)
        asked.append((k, s, d))
    answers = allocator.bound.intervals([(s.successes, s.n, d) for _, s, d in asked])  # every leaf at once
    for (k, s, d), (lo, hi) in zip(asked, answers):
        if after.any():
            lo, hi = _intersect(k, lo, hi, after, st)
        if label_delta is not None:
            d = np.where(after, label_delta, d)
        leaves[k] = allocator.cs.leaf_value(k, s.estimate, lo, hi, d, s.n)
    return leaves


def _intersect(key, lo, hi, after, st: _State):
    """Running intersection since the decision (carried across chunks)."""
    lo, hi = lo.copy(), hi.copy()
    i0 = int(np.argmax(after))
    prev_lo = st.run_lo.get(key, -np.inf)
    prev_hi = st.run_hi.get(key, np.inf)
    run_lo = np.maximum.accumulate(np.concatenate([[prev_lo], lo[i0:]]))[1:]
    run_hi = np.minimum.accumulate(np.concatenate([[prev_hi], hi[i0:]]))[1:]
    empty = run_lo > run_hi
    lo[i0:] = np.where(empty, lo[i0:], run_lo)
    hi[i0:] = np.where(empty, hi[i0:], run_hi)
    st.run_lo[key], st.run_hi[key] = float(run_lo[-1]), float(run_hi[-1])
    return lo, hi


def stream_positions(inputs, order: str = "shuffle", seed: int = 0) -> np.ndarray:
    """Row positions of the stream: the audited rows of ``inputs`` in file order, or shuffled with ``seed``."""
    if order not in ORDERS:
        raise FairauditError(f"unknown order {order!r}; choose one of: {', '.join(ORDERS)}")
    rows = np.arange(len(inputs.dataset)) if inputs.positions is None else np.asarray(inputs.positions, np.int64)
    if order == "shuffle":
        from fairaudit.base.order import order_rng

        rows = order_rng(seed).permutation(rows)
    return rows


def order_assumption(order: str, seed: int) -> str:
    """What the guarantee assumes about the order of the observations, in one sentence."""
    if order == "shuffle":
        return (f"the rows were shuffled (seed {seed}) before streaming, so they arrive in the random order "
                "the guarantee assumes")
    return ("the rows were streamed in their given order: the guarantee assumes that order is random "
            "(exchangeable), which a sorted file or drift breaks")


def population_assumption(inputs, options) -> str:
    """What the guarantee assumes when the stream is sampled from a population program."""
    name = (inputs.provenance.get("population") or {}).get("name", "program")
    return f"individuals drawn independently from the population program {name} (seed {options['seed']})"


HOEFFDING = [
    "Adaptive Hoeffding bound (Zhao et al. 2016, Theorem 1, as used by VeriFair and AVOIR). After n observations "
    "with sample mean p̂, the probability is within p̂ ± ε(δ, n), clipped to [0, 1], where",
    "= ε(δ, n) = √( (0.6 · ln(log₁.₁(n) + 1) + (5/9) · ln(24/δ)) / n )",
    "The interval holds at every n simultaneously with probability ≥ 1 − δ. It is symmetric and does not depend "
    "on the observed rate.",
]

MIXTURE = [
    "Beta-binomial mixture confidence sequence (Robbins 1970; Howard, Ramdas, McAuliffe & Sekhon 2021, §3.2) "
    "with the Krichevsky–Trofimov (Jeffreys) prior Beta(½, ½). For a candidate mean m, the likelihood ratio of "
    "the observations, averaged over the prior on the alternative, is a nonnegative martingale with mean 1 when "
    "m is the true mean. With S successes and F = n − S failures, the interval is the set of means m at which "
    "that ratio is still below 1/δ:",
    "= CI_n = { m : S·ln m + F·ln(1 − m) > ln B(½ + S, ½ + F) − ln B(½, ½) + ln δ }",
    "(B is the beta function; the interval is found by bisection and rounded outwards). By Ville's inequality it "
    "holds at every n simultaneously with probability ≥ 1 − δ. It adapts to the variance m(1 − m), so it is much "
    "narrower than Hoeffding for rates far from ½.",
]


class Monitor(Engine):
    name = "monitor"
    title = TITLE
    summary = ("streams the decisions one row at a time and bounds every E[...] with anytime-valid confidence "
               "sequences; decides as soon as the evidence allows, with probability ≥ 1 − Δ")
    unit = "observations"
    leaf_kinds = frozenset({"expect", "fair"})
    averages_quantities = True
    decides_classes = True
    requires = ("dataset",)
    accepts = ("population",)  # or individuals sampled from a population program (``--population FILE.fr``)
    evidence_hint = ORDER_HINT
    options = OPTIONS

    def check(self, spec, inputs) -> list[str]:
        reasons = super().check(spec, inputs)
        if inputs is not None and inputs.population is not None:
            if spec is not None and any(tn.kind == "fair" for tn in spec.leaves):
                reasons.append("Fair[...] re-predicts a dataset's rows: it cannot be audited on a population "
                               "program")
        elif inputs is not None and spec is not None:
            reasons += decision_reasons(spec, inputs)
        return reasons

    def scope(self, options, inputs) -> str:
        # individuals sampled from a population program: a statement about that program
        return "program" if getattr(inputs, "population", None) is not None else "population"

    def guarantee(self, options, inputs) -> Guarantee:
        if inputs is not None and inputs.population is not None:
            return Guarantee("probabilistic", options["delta"], assumes=population_assumption(inputs, options))
        return Guarantee("probabilistic", options["delta"], assumes=order_assumption(options["order"],
                                                                                       options["seed"]))

    def leaf_bound(self, options):
        return get_bound(options.get("bound") or self.option("bound").default).interval

    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        # the observations are computed here, not in the generator: a problem with them (a Fair[...] column with
        # too many values, an empty stream) raises when the run starts — ``audit(..., iterate=True)`` raises at the
        # call, as the whole-stream work always did — not at the first partial result
        if inputs.population is not None:
            return self._run_population(spec, inputs, options, ctx)
        positions = stream_positions(inputs, options["order"], options["seed"])
        obs = observe_inputs(spec, inputs, positions, note=ctx.note)
        if obs.length == 0:
            from fairaudit.core.observations import nothing_to_audit

            raise nothing_to_audit(None)
        return monitor_batches(spec, obs, delta=options["delta"], batch=options["batch"],
                                   thin_after=options["thin_after"],
                                   split=options["split"], bound=options["bound"], order=options["order"],
                                   ctx=ctx, assumes=order_assumption(options["order"], options["seed"]),
                                   stop=bool(options.get("stop")))

    def _run_population(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        """The stream is individuals drawn from the program (seeded by the run's seed), ``CHUNK`` at a time as
        the checks need them; i.i.d. draws are exchangeable, as the guarantee assumes."""
        from fairaudit.engines.monitor.population import PopulationObservations

        obs = PopulationObservations(spec, inputs.population, options["samples"], seed=options["seed"])
        obs.draw(min(16, obs.length))  # an unknown column raises at the start, not at the first batch
        obs = PopulationObservations(spec, inputs.population, options["samples"], seed=options["seed"],
                                     expired=ctx.expired)
        return monitor_batches(spec, obs, delta=options["delta"], batch=options["batch"],
                               thin_after=options["thin_after"], split=options["split"],
                               bound=options["bound"], order="shuffle", ctx=ctx,
                               assumes=population_assumption(inputs, options), stop=bool(options.get("stop")))

    def methods(self, options) -> list[tuple[str, list[str]]]:
        """The report's methods appendix for this engine: the guarantee, the bound used, the δ allocation."""
        delta = options.get("delta")
        out: list[tuple[str, list[str]]] = []
        d = f"{delta:g}" if delta is not None else "Δ"
        out.append(("The guarantee: anytime-valid confidence sequences", [
            "The monitor reads the rows one after another and, after every batch, recomputes each probability's "
            "interval. The intervals are confidence sequences: each holds at every step simultaneously with "
            "probability ≥ 1 − δᵢ, not only at one pre-planned sample size. The audit may therefore be watched "
            "continuously and stopped as soon as the verdict is decided without invalidating the guarantee.",
            f"The total failure probability Δ = {d} bounds the probability that the verdict is ever wrong. How it "
            "is shared among the k distinct probabilities E[…] of the specification is the δ allocation below; "
            "every interval shown holds at the δ in its column.",
            "Conditional probabilities E[A | B] are estimated by counting only rows that satisfy B (rejection "
            "sampling); their number of observations n is the number of such rows, shown in the node table.",
        ]))
        bound = BOUND_ALIASES.get(str(options.get("bound", DEFAULT_BOUND)), str(options.get("bound", DEFAULT_BOUND)))
        used, other = (HOEFFDING, MIXTURE) if bound == "hoeffding" else (MIXTURE, HOEFFDING)
        out.append((f"The bound used: {bound}", used))
        out.append(("The alternative bound (not used in this audit)", other))
        split = str(options.get("split", DEFAULT_SPLIT))
        alloc = [
            "• Directed split (the default, with the joint test below; 'directed-intervals' without it; Berger's "
            "intersection–union principle). A verdict is wrong in one "
            "direction only: if the specification is true, only FALSE can be wrong, and vice versa. So each "
            "direction has its own certificate at the full level Δ, built by the node kind "
            "(chains of 'and' / 'or' count as one node with n children):",
            "= comparison L op R (its arithmetic + − × ÷ included): each of its m distinct probabilities gets a "
            "confidence sequence at β / m, and the comparison is certified when interval arithmetic on them "
            "decides it; 'A and B' TRUE: every conjunct certified TRUE at the full β; 'and' FALSE: some conjunct "
            "certified FALSE at β / n; 'or' TRUE: some disjunct certified TRUE at β / n; 'or' FALSE: every "
            "disjunct certified FALSE at β; 'not A' with verdict v: A certified ¬v at β.",
            "Claim: if a node's true value is not v, its certificate for v ever holds with probability ≤ β. "
            "Proof by the node kind: a comparison is wrongly certified only if one of its m confidence "
            "sequences misses (interval arithmetic is sound), ≤ m · β / m; a false 'and' has a false conjunct "
            "c — fixed by the truth, not by the data — and a wrong TRUE certificate needs c's TRUE certificate, "
            "≤ β; a true 'and' has n true conjuncts and a wrong FALSE certificate needs one of theirs, ≤ n · β / n; "
            "'or' and 'not' are the duals. The verdict is TRUE when the TRUE certificate at Δ holds and the FALSE "
            "one does not (and mirrored); if the specification's true value is v, a wrong verdict needs the "
            "certificate for ¬v at some check, which has probability ≤ Δ. Only one direction can be wrong, so "
            "the two certificates do not add up. Every confidence sequence holds at all steps at once, so the "
            "statement covers continuous monitoring and stopping at the decision. Before the decision each "
            "probability is shown at Δ / k (lowered to the smallest level a certificate uses it at, so the "
            "plots never decide before the certificates do); from the decision on, at the level the deciding "
            "certificate used it at.",
            "• Joint test per comparison (with the directed split and the mixture bound, the default). A "
            "comparison of two groups no row can belong to both of (E[y | sex = \"Male\"] − E[y | sex = "
            "\"Female\"] < c, or a ratio a / b > c read as a − c·b > 0) is tested as a whole instead of by "
            "interval arithmetic on its two probabilities. Each row updates one of the two beta-binomial mixture "
            "martingales M_a(m_a), M_b(m_b) above, so their product at the true rates is a nonnegative martingale "
            "with mean 1. Against the null 'the comparison is not v' — a half-plane H of (m_a, m_b) — the e-value is "
            "the smallest product over H,",
            "= E_t = min over (m_a, m_b) in H of M_a(m_a) · M_b(m_b)",
            "which is at most the product at the true rates whenever they lie in H; by Ville's inequality it ever "
            "reaches 1/β with probability ≤ β. So 'E_t has reached 1/β at some check so far' is a certificate of v at "
            "level β with the same property as the interval certificate it REPLACES — it is not used besides it, "
            "which would cost 2β — and the directed rule's proof above goes through unchanged: the tree gives the "
            "comparison one level β per direction (its share of Δ along its path from the root), and that level is "
            "spent by the joint test alone. (The pooled split of a FALSE 'and' is used only when no comparison under "
            "it has a joint test.) The two directions never both certify: the maximum-likelihood point lies in one of "
            "the two closed half-planes, where E_t ≤ 1 < 1/β. The node shows its e-value (the largest so far) "
            "against 1/β; its interval is still the interval arithmetic's, which may straddle the threshold of a "
            "comparison the joint test has decided — the node's sentence then says so. (Should both directions "
            "ever reach their lines — probability ≤ β, a sign that the rows are not in random order — the later "
            "one is shown; dropping a certificate never makes one wrong.)",
            "• Equal split (VeriFair, 'AVOIR-VF'): every distinct probability gets δᵢ = Δ / k.",
            "• Optimised split (AVOIR eq. (2), 'AVOIR-OB'; exploratory, valid only at k·Δ): at a check, choose the δᵢ that decide the verdict with "
            "the smallest total budget,",
            "= minimise δ₁ + … + δ_k  subject to the constraints inferred from the specification "
            "(each comparison the verdict needs must hold on the intervals at those δᵢ),",
            "and decide when the minimum is ≤ Δ. The problem is solved globally by SCIP through Pyomo; every "
            "solution is re-checked with the exact evaluator before it is used.",
            f"This audit used the {split} split. Before the decision every plot shows a fixed allocation (the equal "
            "split Δ / k, or the directed split's display levels), so each displayed interval is a confidence "
            "sequence at the δ shown. From the "
            "decision on, the deciding allocation is frozen and each interval is the running intersection of its "
            "intervals since the decision, so the verdict cannot drift back.",
        ]
        if split == "optimized":
            alloc.append("The guarantee of the optimised split is weaker: its δᵢ are chosen after looking at "
                         "the data, so the union bound over a fixed allocation does not apply (AVOIR's Theorem 1 "
                         "overlooks this; fairaudit has a reproducer in which the optimised split is wrong far more "
                         "often than Δ). What holds is that every δᵢ is at most Δ, so a wrong verdict needs one of "
                         "the k confidence sequences at level Δ to miss: probability ≤ k·Δ. The verdict sentence "
                         "states this level, and after the decision the δ column shows Δ per probability. Use the "
                         "equal split for a 1 − Δ guarantee.")
        out.append(("How Δ is divided: the δ allocation", alloc))
        return out


def run_monitor(spec, obs: Observations, *, on_step: Callable[[int, int], object] | None = None,
                options: dict | None = None, time_budget: float | None = None, stop: bool = False,
                **kwargs):
    """The monitor on ready-made observations (the validity simulations use it), through the driver.
    ``on_step(step, total)`` is called after each batch; returning ``False`` stops the run there. ``kwargs``:
    ``delta``, ``batch``, ``split``, ``bound`` and the tuning of ``monitor_batches``."""
    from fairaudit.core.driver import drive, last

    engine = Monitor()
    extra = {k: kwargs.pop(k) for k in ("chunk", "chunk_limit", "yield_every", "solver_time_limit") if k in kwargs}
    bound = kwargs.pop("bound", None)  # a name, a ``Bound`` object (the validity tests pass one), or the default
    if isinstance(bound, str):
        kwargs["bound"] = bound
    opts = engine.resolve_options({**{k: v for k, v in (options or {}).items() if k in
                                      {o.name for o in engine.all_options()}}, **kwargs,
                                   "stop": stop, "time_budget": time_budget})
    ctx = Context(seed=opts["seed"], time_budget=time_budget)
    batches = monitor_batches(spec, obs, delta=opts["delta"], batch=opts["batch"], thin_after=opts["thin_after"],
                              split=opts["split"],
                              bound=bound if bound is not None and not isinstance(bound, str) else opts["bound"],
                              order=opts["order"],
                              ctx=ctx, stop=stop, **extra)
    progress = None if on_step is None else (lambda p: on_step(int(p.done), obs.length))
    if bound is not None and not isinstance(bound, str):
        opts["bound"] = getattr(bound, "name", type(bound).__name__)
    return last(drive(engine, spec, batches, options={**(options or {}), **opts},
                      guarantee=Guarantee("probabilistic", opts["delta"]), ctx=ctx, stop=stop,
                      on_progress=progress))
