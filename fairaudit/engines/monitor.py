"""The ``monitor`` engine (AVOIR): a stream of decisions, anytime-valid bounds on every ``E[...]``.

The stream
    The rows of a dataset (by default only the rows the model was not trained on, when fairaudit
    trained it on this dataset: ``audited_rows``), restricted to ``where`` (AVOIR's materialised view),
    shuffled (``order="shuffle"``, the default, seeded) or in file order (``order="given"``, for a log
    whose arrival order is the point). The guarantee assumes random (exchangeable) order; a run records
    the evidence against it that it sees (``OrderEvidence``) as warnings. Decisions (``pred``) come from a
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
    At each check the root is decided when an allocation of δ's with Σδᵢ ≤ Δ decides it:
    ``split="equal"`` uses Δ/k per distinct leaf (VeriFair, AVOIR-VF); ``split="optimized"`` asks
    ``fairaudit.bounds.allocation`` (AVOIR-OB; the solver runs only at checks that its exact screens
    cannot settle; see "The guarantee of each split" below). ``stop_step`` is the number of
    observations at the first deciding check. From then on the deciding allocation is frozen (AVOIR Appendix C) and every leaf interval is the
    running intersection of its intervals since the decision (an intersection of a confidence
    sequence at a fixed δ is one too), so the verdict cannot drift back to unknown; if an
    intersection ever became empty (probability ≤ δ), that leaf shows its current interval instead.
    Leaves that the deciding alternative does not involve (e.g. the other side of an ``and`` proved
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
    the deciding allocation.

The guarantee of each split
    ``split="equal"`` (the default) is a fixed allocation: by the union bound the probability that
    the verdict (or any displayed interval) is ever wrong is ≤ Δ. ``split="optimized"`` chooses the
    δ's after looking at the data at each check; AVOIR's Theorem 1 claims Δ for it too, but the
    union-bound argument does not cover a data-chosen allocation and the claim is false in general
    (``tests/monitor/test_soundness_optimized.py``: a 12-leaf ``or`` at Δ = 0.2 is wrongly certified
    in about a third of the runs). What holds is k·Δ for k distinct leaves (every δᵢ ≤ Δ, see
    ``fairaudit.bounds.allocation.sound_delta``); the result records it as ``info["guarantee_delta"]``
    and states it in ``AuditResult.guarantee``. After an optimised decision each leaf's δ column
    shows Δ (the level its interval provably holds at), not the data-chosen δᵢ it was computed with.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
import pandas as pd

from fairaudit.bounds.allocation import (Allocation, Allocator, LeafStats, SPLITS, equal_split, leaf_values,
                                         sound_delta)
from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.errors import FairauditError
from fairaudit.evaluate import LeafValue, compile_spec, evaluate, leaf_key
from fairaudit.spec.files import ORDERS
from fairaudit.trace import AuditResult, Trace, node_infos, verdict_text

FAIR_MAX_VALUES = 20
CHUNK_CHECKS = 256  # checks per partial result of ``iter_monitor`` (at most)
YIELD_SECONDS = 0.5  # ``iter_monitor`` yields a partial result at least this often while it scans for a decision
SOLVER_TIME_LIMIT = 1.0  # seconds per solver call; a call that runs out just does not decide that check


# ---------------------------------------------------------------------------------------------
# observations


@dataclass
class Observations:
    """Per distinct leaf: ``values`` (0/1 per stream row) and ``mask`` (rows that count for it)."""

    values: dict[str, np.ndarray]
    masks: dict[str, np.ndarray]
    length: int

    def stats(self, check_index: np.ndarray) -> dict[str, LeafStats]:
        out = {}
        for key, v in self.values.items():
            m = self.masks[key]
            s = np.cumsum(v.astype(np.int64) & m.astype(np.int64))
            n = np.cumsum(m.astype(np.int64))
            out[key] = LeafStats(s[check_index].astype(float), n[check_index].astype(float))
        return out


def check_points(length: int, batch: int) -> np.ndarray:
    """0-based index of the last observation of each check: every ``batch`` rows, and the last row."""
    if batch < 1:
        raise FairauditError(f"batch must be a positive integer, got {batch}")
    idx = np.arange(batch - 1, length, batch)
    if length and (not len(idx) or idx[-1] != length - 1):
        idx = np.append(idx, length - 1)
    return idx.astype(np.int64)


def _event_array(event, frame, pred, label, score) -> np.ndarray:
    from fairaudit.spec import evaluate_event

    try:
        out = evaluate_event(event, frame, pred=pred, label=label, score=score)
    except FairauditError:
        raise
    except KeyError as err:
        raise FairauditError(f"unknown column {err} in the specification") from None
    return np.asarray(out, dtype=bool)


def fair_agreement(model, frame: pd.DataFrame, column: str, values, pred: np.ndarray) -> np.ndarray:
    """1 where the decision is the same for every other value of ``column`` (flip and re-predict)."""
    agree = np.ones(len(frame), dtype=bool)
    for value in values:
        flipped = frame.copy()
        flipped[column] = pd.Series([value] * len(frame), index=frame.index).astype(frame[column].dtype,
                                                                                     errors="ignore")
        agree &= np.asarray(model.predict(flipped)) == pred
    return agree


def observe(spec, frame: pd.DataFrame, *, pred=None, label=None, score=None, model=None,
            column_values: dict | None = None) -> Observations:
    """Evaluate every distinct leaf of ``spec`` on every row of ``frame`` (the stream, in order)."""
    cs = compile_spec(spec)
    values, masks = {}, {}
    everyone = np.ones(len(frame), dtype=bool)
    for key in cs.leaf_keys:
        node = cs.leaf_node[key].node
        if node.kind == "expect":
            values[key] = _event_array(node.event, frame, pred, label, score)
            masks[key] = everyone if node.given is None else _event_array(node.given, frame, pred, label, score)
        else:  # Fair[column]
            if model is None:
                raise FairauditError(f"{key} needs a model to re-predict with (use --model, not --pred)")
            if node.column not in frame.columns:
                raise FairauditError(f"{key}: unknown column {node.column!r}")
            domain = (column_values or {}).get(node.column)
            if domain is None:
                domain = pd.unique(frame[node.column].dropna())
            if len(domain) > FAIR_MAX_VALUES:
                raise FairauditError(f"{key}: column {node.column!r} has {len(domain)} values; "
                                     f"Fair[...] flips categorical columns (at most {FAIR_MAX_VALUES} values)")
            values[key] = fair_agreement(model, frame, node.column, list(domain), np.asarray(pred))
            masks[key] = everyone
    return Observations(values, masks, len(frame))


# ---------------------------------------------------------------------------------------------
# the core: observations -> AuditResult (dataset-free, used by the validity simulations too)


@dataclass
class _State:
    stop: int | None = None  # check index of the decision
    frozen: dict | None = None
    decision: Allocation | None = None
    run_lo: dict = field(default_factory=dict)  # running intersections after the decision
    run_hi: dict = field(default_factory=dict)
    parts: list = field(default_factory=list)
    timed_out: bool = False
    order: "OrderEvidence | None" = None


def iter_monitor(spec, obs: Observations, *, delta: float = 0.05, batch: int = 5, split: str = "equal",
                 bound: str = "hoeffding", stop: bool = False, time_budget: float | None = None,
                 options: dict | None = None, chunk: int = CHUNK_CHECKS, yield_every: float = YIELD_SECONDS,
                 solver_time_limit: float = SOLVER_TIME_LIMIT,
                 provenance: dict | None = None, warnings: list[str] | None = None) -> Iterator[AuditResult]:
    """Run the monitor over ``obs``, yielding a partial ``AuditResult`` every ``chunk`` checks, or
    sooner when the search for a decision has run for ``yield_every`` seconds since the last yield,
    and the complete one last. Closing the generator stops the run. Each solver call is limited to
    ``solver_time_limit`` seconds (a call that runs out finds no allocation: that check is just not
    decided, which is sound). ``provenance`` (what was audited: the dataset's and model's
    identifying facts) is copied into every result's ``info``; ``warnings`` (from validating the inputs)
    lead ``info["warnings"]``, followed by any evidence that the rows are not in random order
    (``OrderEvidence``)."""
    if split not in SPLITS:
        raise FairauditError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    t_start = time.perf_counter()
    allocator = Allocator(spec, delta, bound, solver_time_limit=solver_time_limit)
    cs = allocator.cs
    keys = cs.leaf_keys
    idx = check_points(obs.length, batch)
    steps = idx + 1
    stats = obs.stats(idx)
    equal = equal_split(keys, delta)
    best = {k: delta for k in keys}
    node_ids = [tn.id for tn in spec.nodes]
    st = _State()
    options = dict(options or {})
    options.update({"delta": delta, "batch": batch, "split": split, "bound": allocator.bound.name, "stop": stop})
    K = len(idx)
    st.order = OrderEvidence(spec, keys, allocator.bound, equal, delta)

    def result(upto: int, final: bool) -> AuditResult:
        trace = Trace.concat(st.parts) if st.parts else Trace.empty(node_ids)
        root = trace.verdict[-1, 0] if len(trace) else UNKNOWN
        verdict_step = trace.verdict_step()
        evidence = st.order.warnings(trace, st.stop, verdict_step)
        if final and options.get("order") == "given":
            evidence += st.order.halves(obs)
        found = list(warnings or []) + evidence + ([ORDER_HINT] if evidence else [])
        info = {
            "unit": "observations", "checks": int(len(trace)), "stream_length": int(obs.length),
            "allocation": dict(st.frozen) if st.frozen else None,
            "decision_deltas": dict(st.decision.deltas) if st.decision else None,
            "decision_delta": st.decision.total if st.decision else None,
            "decision_alternative": [list(a) for a in st.decision.alternative] if st.decision else None,
            "solver_calls": allocator.stats.calls, "solver_seconds": round(allocator.stats.seconds, 4),
            "seconds": round(time.perf_counter() - t_start, 4), "complete": final,
            "timed_out": st.timed_out, "leaf_keys": list(keys),
            # before any decision the intervals use the fixed equal split, so Δ holds; a decision taken
            # with data-chosen δ's only guarantees the weaker sound_delta (see "The guarantee of each split")
            "guarantee_delta": sound_delta(split, delta, len(keys)) if st.decision is not None else delta,
            "verdict_step": verdict_step, "warnings": found, "assumption_broken": bool(evidence),
        }
        info.update(provenance or {})
        return AuditResult(spec.text, "monitor", options, verdict_text(root) or "unknown",
                           int(steps[st.stop]) if st.stop is not None else None,
                           int(steps[upto - 1]) if upto else 0, node_infos(spec), trace, info, spec)

    a, last_yield = 0, time.perf_counter()
    while a < K:
        b = min(a + chunk, K)
        if st.stop is None:
            chunk_stats = {k: s.at(slice(a, b)) for k, s in stats.items()}
            found, scanned = _scan(allocator, chunk_stats, split, equal, best, t_start, time_budget, st,
                                   deadline=last_yield + yield_every)
            if found is not None:
                pos, allocation = found
                st.stop, st.decision = a + pos, allocation
                st.frozen = _frozen(allocation, keys, delta)
            else:
                b = a + scanned  # paused: checks [a, a + scanned) are known undecided, the rest is scanned next
        last = b if not (stop and st.stop is not None) else min(b, st.stop + 1)
        st.parts.append(_trace_part(spec, keys, stats, steps, a, last, equal, st, allocator,
                                    label_delta=delta if split == "optimized" else None))
        st.order.observe(st.parts[-1], {k: s.at(slice(a, last)) for k, s in stats.items()})
        done = last < b or b == K
        yield result(last, done)
        last_yield = time.perf_counter()
        if done:
            return
        a = b


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
    stream ends, so one test per leaf) do not overlap.
    """

    def __init__(self, spec, keys, bound, equal: dict[str, float], delta: float):
        self.spec, self.keys, self.bound, self.equal, self.delta = spec, list(keys), bound, equal, delta
        self.run_lo = {k: -np.inf for k in keys}
        self.run_hi = {k: np.inf for k in keys}
        self.empty_at: dict[str, int] = {}
        n_nodes = len(spec.nodes)
        self.first_true = np.full(n_nodes, -1, dtype=np.int64)
        self.first_false = np.full(n_nodes, -1, dtype=np.int64)

    def observe(self, part: Trace, stats) -> None:
        """Take in one chunk of checks: its trace part and each leaf's statistics at those checks."""
        if not len(part):
            return
        for k in self.keys:
            if k in self.empty_at:
                continue
            s = stats[k]
            lo, hi = self.bound.interval(s.successes, s.n, self.equal[k])
            run_lo = np.maximum.accumulate(np.concatenate([[self.run_lo[k]], lo]))[1:]
            run_hi = np.minimum.accumulate(np.concatenate([[self.run_hi[k]], hi]))[1:]
            empty = np.flatnonzero(run_lo > run_hi)
            if len(empty):
                self.empty_at[k] = int(part.steps[empty[0]])
            self.run_lo[k], self.run_hi[k] = float(run_lo[-1]), float(run_hi[-1])
        for code, first in ((TRUE, self.first_true), (FALSE, self.first_false)):
            hit = part.verdict == code
            fresh = (first < 0) & hit.any(axis=0)
            first[fresh] = part.steps[np.argmax(hit[:, fresh], axis=0)]

    def warnings(self, trace: Trace, stop: int | None, verdict_step: int | None) -> list[str]:
        out = []
        for k, step in self.empty_at.items():
            out.append(f"{k}: its running confidence interval became empty at step {step:,} (the estimates "
                       "before and after disagree more than chance allows)")
        for j, tn in enumerate(self.spec.nodes):
            if self.first_true[j] >= 0 and self.first_false[j] >= 0:
                name = getattr(tn, "name", None) or tn.text
                out.append(f"{name} was decided true at step {self.first_true[j]:,} and false at step "
                           f"{self.first_false[j]:,}")
        if stop is not None and len(trace) > stop:
            decided, last = int(trace.verdict[stop, 0]), int(trace.verdict[-1, 0])
            if decided != last:
                since = f" from step {verdict_step:,}" if verdict_step is not None else " at the end"
                out.append(f"the verdict was {verdict_text(decided)} at step {int(trace.steps[stop]):,} but is "
                           f"{verdict_text(last)}{since}: it changed after a decision")
        return out

    def halves(self, obs: "Observations") -> list[str]:
        """Test (4) of the class doc, on the whole stream (also the rows after a stop)."""
        from fairaudit.bounds.concentration import fixed_n_radius

        out = []
        half = obs.length // 2
        level = self.delta / (2 * max(1, len(self.keys)))
        for k in self.keys:
            v, m = obs.values[k], obs.masks[k]
            n1, n2 = int(m[:half].sum()), int(m[half:].sum())
            if n1 == 0 or n2 == 0:
                continue
            r1, r2 = float(v[:half][m[:half]].mean()), float(v[half:][m[half:]].mean())
            if abs(r1 - r2) > fixed_n_radius(level, n1) + fixed_n_radius(level, n2):
                out.append(f"{k} is {r1:.3f} on the first half of the stream's {obs.length:,} rows and {r2:.3f} "
                           f"on the second ({n1:,} and {n2:,} observations): more than chance allows at "
                           f"Δ = {self.delta:g}")
        return out


def _frozen(allocation: Allocation, keys, delta: float) -> dict[str, float]:
    """The deciding δ's plus an equal share of what is left of Δ for every leaf (Σ = Δ).

    Raising δ's only narrows intervals, so the decision stands; sharing the rest keeps every
    displayed interval informative (the optimum may give a leaf δ ≈ 0, i.e. the interval [0, 1])."""
    left = max(delta - allocation.total, 0.0)
    return {k: float(allocation.deltas.get(k, 0.0)) + left / len(keys) for k in keys}


def _scan(allocator: Allocator, stats, split, equal, best, t_start, time_budget, st,
          deadline: float | None = None) -> tuple[tuple[int, Allocation] | None, int]:
    """``(found, scanned)``: ``found`` is the first check of this chunk at which the root is decided,
    with its allocation, or None; without a decision, checks ``[0, scanned)`` are undecided. The
    search pauses (``scanned`` < chunk length) at the first solver candidate met after ``deadline``
    (``time.perf_counter()``), so that the caller can report progress; candidates are checks in
    order and each check is judged on its own statistics, so resuming at ``scanned`` gives the same
    decision as an uninterrupted scan."""
    n_checks = len(next(iter(stats.values())).n)
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
        if time_budget is not None and time.perf_counter() - t_start > time_budget:
            st.timed_out = True
            break
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
    found = None if st.timed_out else allocator.try_decide(at, target, optimize=True)
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


def _trace_part(spec, keys, stats, steps, a, b, equal, st: _State, allocator,
                label_delta: float | None = None) -> Trace:
    """Evaluate every node at checks [a, b) with the allocation in force at each check. With
    ``label_delta`` (optimised split) the δ column after the decision is that level per leaf: the
    data-chosen δᵢ are ≤ it, so each interval provably holds at it (module doc)."""
    if b <= a:
        return Trace.empty([tn.id for tn in spec.nodes])
    sl = slice(a, b)
    checks = np.arange(a, b)
    after = np.zeros(b - a, dtype=bool) if st.stop is None else checks >= st.stop
    leaves = {}
    for k in keys:
        s = stats[k].at(sl)
        d = np.full(b - a, equal[k])
        if st.frozen is not None:
            d = np.where(after, st.frozen[k], d)
        lo, hi = allocator.bound.interval(s.successes, s.n, d)
        if after.any():
            lo, hi = _intersect(k, lo, hi, after, st)
        if label_delta is not None:
            d = np.where(after, label_delta, d)
        leaves[k] = LeafValue(s.estimate, lo, hi, d, s.n)
    values = evaluate(spec, leaves)
    return Trace.from_values(steps[sl], [tn.id for tn in spec.nodes], values)


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


def run_monitor(spec, obs: Observations, *, on_step: Callable[[int, int], object] | None = None,
                **kwargs) -> AuditResult:
    """``iter_monitor`` to the end. ``on_step(step, total)`` is called after each chunk of checks
    with the observations processed so far; returning ``False`` stops the run there."""
    last = None
    gen = iter_monitor(spec, obs, **kwargs)
    for last in gen:
        if on_step is not None and on_step(last.steps, obs.length) is False:
            gen.close()
            break
    return last


# ---------------------------------------------------------------------------------------------
# datasets and models -> observations


def resolve_model(model, dataset, seed: int = 0, *, trust_pickle: bool = False, trusted_types=()):
    """A ``Model``: passed through; a string: a saved-model path (loaded safely: ``fairaudit.models.load``
    with the given trust), else a training kind."""
    if model is None or hasattr(model, "predict"):
        return model
    import os

    from fairaudit import models

    if os.path.exists(str(model)):
        return models.load(str(model), trust_pickle=trust_pickle, trusted_types=trusted_types)
    return models.train(dataset, str(model), seed=seed)


def stream(dataset, where: str | None = None, order: str = "shuffle", seed: int = 0, *, pred=None, label=None,
           score=None, rows: np.ndarray | None = None) -> np.ndarray:
    """Row positions of the stream: ``rows`` (default all, in file order) matching ``where``, in that
    order or shuffled with ``seed``."""
    if order not in ORDERS:
        raise FairauditError(f"unknown order {order!r}; choose one of: {', '.join(ORDERS)}")
    rows = np.arange(len(dataset.frame)) if rows is None else np.asarray(rows, dtype=np.int64)
    if where:
        from fairaudit.spec import parse_event

        mask = _event_array(parse_event(where), dataset.frame, pred, label, score)
        rows = rows[mask[rows]]
    if order == "shuffle":
        rows = np.random.default_rng(seed).permutation(rows)
    return rows


ROWS = ("held-out", "all")


def audited_rows(dataset, model, rows: str | None) -> tuple[np.ndarray | None, dict]:
    """``(positions or None for all rows, the "rows" record of the result)`` for a rows policy.

    ``rows=None`` means held-out when fairaudit trained ``model`` on this very dataset (the rows it did
    not train on, ``fairaudit.models.held_out_positions``), else all. Label-based metrics measured on
    training rows are optimistic, so ``"all"`` with such a model says how many training rows it includes.
    """
    from fairaudit.models import held_out_positions

    if rows is not None and rows not in ROWS:
        raise FairauditError(f"unknown rows policy {rows!r}; choose one of: {', '.join(ROWS)}")
    held = held_out_positions(model, dataset) if model is not None else None
    total = len(dataset)
    if rows is None:
        rows = "held-out" if held is not None else "all"
    if rows == "held-out":
        if held is None:
            why = ("the decisions come from an expression, not a trained model" if model is None
                   or getattr(model, "kind", "") == "expression" else
                   "the model was not trained by fairaudit on this dataset, so which rows it trained on is unknown")
            raise FairauditError(f"cannot audit held-out rows only: {why}; use rows 'all' (--rows all)")
        return held, {"policy": "held-out", "audited": int(len(held)), "total": total,
                      "text": f"{len(held):,} held-out rows of {dataset.name} (the {len(held) / total:.0%} of "
                              f"its {total:,} rows the model was not trained on)"}
    if held is not None:
        text = (f"all {total:,} rows of {dataset.name}, including the {total - len(held):,} the model was "
                "trained on (label-based metrics such as TPR, FPR and accuracy are optimistic on them)")
    elif model is not None and getattr(model, "kind", "") != "expression":
        record = (getattr(model, "params", None) or {}).get("trained_on")
        where = (f"on {record.get('dataset')}, not on exactly these rows" if isinstance(record, dict)
                 else "outside fairaudit")
        text = (f"all {total:,} rows of {dataset.name} (the model was trained {where}: if some of them trained "
                "it, label-based metrics are optimistic on those)")
    else:
        text = f"all {total:,} rows of {dataset.name}"
    return None, {"policy": "all", "audited": total, "total": total, "text": text}


def order_assumption(order: str, seed: int) -> str:
    """What the guarantee assumes about the order of the observations, in one sentence."""
    if order == "shuffle":
        return (f"the rows were shuffled (seed {seed}) before streaming, so they arrive in the random order "
                "the guarantee assumes")
    return ("the rows were streamed in their given order: the guarantee assumes that order is random "
            "(exchangeable), which a sorted file or drift breaks")


def monitor(dataset, spec, *, model=None, pred: str | None = None, where: str | None = None,
            delta: float = 0.05, batch: int = 5, split: str = "equal", bound: str = "hoeffding",
            order: str = "shuffle", seed: int = 0, rows: str | None = None, stop: bool = False,
            time_budget: float | None = None, on_step=None, iterate: bool = False,
            warnings: list[str] | None = None, trust_pickle: bool = False, trusted_types=()):
    """Audit ``dataset`` against ``spec`` (a ``Spec``) with the monitor; see the module doc.

    ``rows``: ``"held-out"``, ``"all"`` or None (``audited_rows``). ``warnings``: found while validating
    the inputs, recorded in the result. With ``iterate=True`` returns the generator of partial results
    (``iter_monitor``) instead.
    """
    if model is not None and pred is not None:
        raise FairauditError("give either a model or a decision expression (pred), not both")
    model_obj = resolve_model(model, dataset, seed, trust_pickle=trust_pickle, trusted_types=trusted_types)
    if pred is not None and any(tn.kind == "fair" for tn in spec.leaves):
        raise FairauditError("Fair[...] re-predicts with the attribute flipped: it needs a model (--model), "
                             "not a decision expression (--pred)")
    warnings = list(warnings or [])
    if pred is not None:
        from fairaudit.models import from_expression

        model_obj = from_expression(pred, dataset)
        warnings += [w for w in model_obj.warnings if w not in warnings]
    base_rows, rows_record = audited_rows(dataset, model_obj if pred is None else None, rows)
    frame_all = dataset.frame
    labels_all = dataset.labels
    decisions = scores = None
    if model_obj is not None:
        scores = np.asarray(model_obj.score(frame_all), dtype=float) if hasattr(model_obj, "score") else None
        if scores is not None and not np.isfinite(scores).all():  # NaN scores would silently decide 0
            bad = np.flatnonzero(~np.isfinite(scores))
            raise FairauditError(f"the model's score is not a number for {len(bad):,} row(s) (first: row {bad[0] + 1:,}); "
                                 "check those rows for missing or extreme values, or drop them")
        decisions = np.asarray(model_obj.predict(frame_all)).astype(np.int8)
    elif _uses_pred(spec):
        raise FairauditError("the specification uses pred/score: give a model (--model) or a decision (--pred)")
    positions = stream(dataset, where, order, seed, pred=decisions, label=labels_all, score=scores,
                       rows=base_rows)
    if where:  # the rows actually streamed: those matching the filter among the audited ones
        rows_record = {**rows_record, "audited": int(len(positions)),
                       "text": f"{len(positions):,} rows matching {where}, among {rows_record['text']}"}
    frame = frame_all.iloc[positions].reset_index(drop=True)
    take = (lambda a: None if a is None else np.asarray(a)[positions])  # noqa: E731
    domains = {c.name: list(c.values) for c in dataset.schema.columns if c.kind == "categorical" and c.values}
    obs = observe(spec, frame, pred=take(decisions), label=take(labels_all), score=take(scores),
                  model=model_obj, column_values=domains)
    if obs.length == 0:
        raise FairauditError("the stream is empty" + (f": no row matches --where {where!r}" if where else ""))
    options = {"data": dataset.name, "model": model_obj.describe() if model_obj is not None and pred is None else None,
               "pred": pred, "where": where, "order": order, "seed": seed, "rows": rows_record["policy"],
               "time_budget": time_budget}
    facts = provenance(dataset, model_obj if pred is None else None)
    facts.update({"rows": rows_record, "assumption": order_assumption(order, seed)})
    kwargs = dict(delta=delta, batch=batch, split=split, bound=bound, stop=stop, time_budget=time_budget,
                  options=options, provenance=facts, warnings=warnings)
    if iterate:
        return iter_monitor(spec, obs, **kwargs)
    return run_monitor(spec, obs, on_step=on_step, **kwargs)


def provenance(dataset, model) -> dict:
    """The facts that identify what was audited, recorded in ``AuditResult.info`` for the report."""
    s = dataset.schema
    facts = {"dataset": {"name": dataset.name, "rows": len(dataset), "content_hash": dataset.content_hash,
                         "source": dataset.source, "label": s.label,
                         "favourable": None if s.favourable is None else str(s.favourable),
                         "protected": list(s.protected)},
             "model": None}
    if model is not None:
        facts["model"] = {"kind": model.kind, "params": getattr(model, "params", {}),
                          "content_hash": getattr(model, "content_hash", None), "description": model.describe()}
    return facts


def _uses_pred(spec) -> bool:
    from fairaudit.spec.ast import event_names

    for tn in spec.leaves:
        if tn.kind == "fair":
            return True
        for ev in (tn.node.event, tn.node.given):
            if ev is not None and any(n.name in ("pred", "score") for n in event_names(ev)):
                return True
    return False
