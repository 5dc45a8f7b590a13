"""The driver: the one place that turns an engine's leaf intervals into an ``AuditResult``.

For every engine alike it evaluates each ``LeafBatch`` (``fairaudit.core.evaluate``: every node's interval, δ and
three-valued verdict), appends it to the ``Trace``, derives the stop step (the first step at which the root is
decided), watches for a verdict that contradicts itself over the steps (a node decided both ways, the root
changing after a decision: evidence against what a probabilistic guarantee assumes, a bug for a sound one),
reports progress, and ends the run on request (``on_progress`` returning False, closing the ``iterate``
generator), at the time budget, or at the decision with ``stop=True``. Engines never build a result.
"""
from __future__ import annotations

import time
from typing import Iterator

import numpy as np

from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.core.engine import Context, Engine, LeafBatch
from fairaudit.core.evaluate import compile_spec, evaluate
from fairaudit.core.guarantee import Guarantee
from fairaudit.core.inputs import Inputs
from fairaudit.base.progress import Progress
from fairaudit.core.counterexamples import Counterexamples
from fairaudit.core.findings import Findings
from fairaudit.core.trace import AuditResult, Trace, TraceBuilder, display_points, node_infos, verdict_text


class _Evidence:
    """The generic self-consistency checks of a run (see the module doc)."""

    def __init__(self, spec):
        self.spec = spec
        n = len(spec.nodes)
        self.first_true = np.full(n, -1, dtype=np.int64)
        self.first_false = np.full(n, -1, dtype=np.int64)

    def observe(self, part: Trace) -> None:
        for code, first in ((TRUE, self.first_true), (FALSE, self.first_false)):
            hit = part.verdict == code
            fresh = (first < 0) & hit.any(axis=0)
            first[fresh] = part.steps[np.argmax(hit[:, fresh], axis=0)]

    def warnings(self, trace: Trace, stop: tuple[int, int] | None, verdict_step: int | None) -> list[str]:
        """``stop``: (the stop step, the root's verdict there), or None."""
        out = []
        for j, tn in enumerate(self.spec.nodes):
            if self.first_true[j] >= 0 and self.first_false[j] >= 0:
                name = getattr(tn, "name", None) or tn.text
                out.append(f"{name} was decided true at step {self.first_true[j]:,} and false at step "
                           f"{self.first_false[j]:,}")
        if stop is not None and len(trace) and int(trace.steps[-1]) > stop[0]:
            decided, last = stop[1], int(trace.verdict[-1, 0])
            if decided != last:
                since = f" from step {verdict_step:,}" if verdict_step is not None else " at the end"
                out.append(f"the verdict was {verdict_text(decided)} at step {stop[0]:,} but is "
                           f"{verdict_text(last)}{since}: it changed after a decision")
        return out


def drive(engine: Engine, spec, batches: Iterator[LeafBatch], *, options: dict, guarantee: Guarantee,
          ctx: Context, stop: bool = False, on_progress=None, warnings=(), rows: dict | None = None,
          provenance: dict | None = None, info: dict | None = None,
          progress: Progress | None = None, trace_points: int | None | str = "auto",
          full_trace=None, scope: str | None = None, rows_check: dict | None = None,
          confirmed: dict | None = None) -> Iterator[AuditResult]:
    """Consume ``batches`` (an engine's ``run``), yielding the ``AuditResult`` so far after each batch; the last
    one yielded is final. Closing this generator closes ``batches``.

    The result's trace keeps a bounded display subsample of the checks (``TraceBuilder``): ``trace_points``
    uniformly spaced checks ("auto": ``display_points`` for the tree's size; None or 0: every check) plus every
    verdict change, the stop step and a log grid; the cost per check is constant, whatever the stream's length.
    ``full_trace``: a ``fairaudit.core.fulltrace.FullTraceWriter`` (or anything with ``append(Trace)``) that receives
    every check. ``scope``: what the verdict is about (``Engine.scope``); ``rows_check``: for a modelled-distribution
    engine, the leaves' intervals on the audited rows (``fairaudit.core.claim.rows_intervals``), composed with the
    engine's bounds into the headline; ``confirmed``: the split of a confirmation run (``fairaudit.confirm``), whose
    chosen threshold is certified on rows the choice did not see."""
    from fairaudit.core.claim import exploratory_state, modelled_leaves, other_data_note, population_check

    cs = compile_spec(spec)
    # a spec that averages amounts: their declared ranges are part of what was run (the options, read back from the
    # JSON) and of what the guarantee rests on — on every route, here
    if getattr(spec, "ranges", ()):
        options = {**options, "ranges": {name: [lo, hi] for name, lo, hi in spec.ranges}}
    guarantee = with_declared_ranges(guarantee, spec)
    exploratory = exploratory_state(spec.source, provenance, confirmed, scope)
    elsewhere = other_data_note(spec.source, provenance)
    if elsewhere:
        warnings = [*warnings, elsewhere]
    node_ids = [tn.id for tn in spec.nodes]
    infos = node_infos(spec)
    builder = TraceBuilder(node_ids, display_points(len(node_ids)) if trace_points == "auto" else trace_points)
    evidence = _Evidence(spec)
    engine_warnings: list[str] = []
    broken = False
    facts = dict(info or {})
    found_facts = {"findings": Findings(), "counterexamples": Counterexamples()}
    exact: dict[str, str] = {}  # node id → its exact value at the last check (``LeafValue.exact`` and above)
    stop_at: tuple[int, int] | None = None  # (the stop step, the root's verdict there)
    progress = progress or Progress(f"Auditing with {engine.title or engine.name}", None, engine.unit, on_progress)
    state = {"complete": False, "timed_out": False}

    def result() -> AuditResult:
        trace = builder.view()
        root = int(trace.verdict[-1, 0]) if len(trace) else UNKNOWN
        verdict_step = trace.verdict_step()
        found = evidence.warnings(trace, stop_at, verdict_step)
        said = engine_warnings + found
        if (found or broken) and engine.evidence_hint:
            said.append(engine.evidence_hint)
        facts.update({"checks": int(builder.checks), "seconds": round(time.perf_counter() - ctx.started, 4)})
        if builder.thinned:
            facts["trace_kept"] = int(len(trace))  # the display trace is a subsample of the checks
        dropped = builder.changes_dropped  # verdict changes beyond the first and last per node (and the root's cap)
        facts.update({"verdict_changes": builder.changes, "verdict_changes_dropped": dropped} if dropped else {})
        if confirmed:
            facts["confirmation"] = dict(confirmed)
        out = AuditResult(spec.text, engine.name, dict(options), verdict_text(root) or "unknown",
                          stop_at[0] if stop_at is not None else None,
                          int(trace.steps[-1]) if len(trace) else 0, infos, trace, guarantee=guarantee,
                          unit=engine.unit, complete=state["complete"], timed_out=state["timed_out"],
                          verdict_step=verdict_step, warnings=list(warnings) + said,
                          assumption_broken=bool(found or broken), rows=rows, provenance=dict(provenance or {}),
                          info=dict(facts), findings=found_facts["findings"],
                          counterexamples=found_facts["counterexamples"], exact=dict(exact), tree=spec, scope=scope,
                          exploratory=exploratory)
        if rows_check is not None and len(trace):
            out.population = population_check(spec, modelled_leaves(out), rows_check)
        return out

    finished = True
    try:
        for batch in batches:
            if batch.guarantee is not None:
                guarantee = with_declared_ranges(batch.guarantee, spec)
            engine_warnings += [w for w in batch.warnings if w not in engine_warnings]
            broken = broken or bool(batch.assumption_broken)
            facts.update(batch.info or {})
            for name in ("findings", "counterexamples"):
                if getattr(batch, name) is not None:
                    found_facts[name] = getattr(batch, name)
            steps = np.asarray(batch.steps, dtype=np.int64)
            if len(steps):
                missing = [k for k in cs.leaf_keys if k not in batch.leaves]
                if missing:
                    raise RuntimeError(f"engine {engine.name} gave no value for leaf {missing[0]!r}")
                if (builder.size and steps[0] <= builder.last_step) or (np.diff(steps) <= 0).any():
                    raise RuntimeError(f"engine {engine.name} yielded steps out of order")
                values = evaluate(spec, batch.leaves, batch.nodes)
                part = Trace.from_values(steps, node_ids, values)
                decided = np.flatnonzero(part.verdict[:, 0] != UNKNOWN)
                halt = False
                pin = ()
                if stop_at is None and len(decided):
                    stop_at = (int(steps[decided[0]]), int(part.verdict[decided[0], 0]))
                    pin = (stop_at[0],)
                    if stop:  # the run ends at the decision: keep the checks up to it
                        part = _head(part, int(decided[0]) + 1)
                        halt = True
                exact = _exact_at(values, len(part) - 1)
                builder.append(part, pin=pin)
                if full_trace is not None:
                    full_trace.append(part)
                evidence.observe(part)
                if halt:
                    state["complete"] = True
                    progress(batch.done, batch.total, message="")  # a run decided at its first batch reports too
                    yield result()
                    return
            progress(batch.done, batch.total, message="")
            # a batch that reaches the total is the whole run: stopping there must not call the result incomplete
            finished = batch.total is not None and batch.done >= batch.total
            if progress.cancelled and not finished:
                yield result()
                return
            if ctx.timed_out() and not finished:
                state["timed_out"] = True
                yield result()
                return
            yield result()
        # an engine that ends unfinished at the time budget (it dropped a round the deadline cut) was cut short
        state["timed_out" if not finished and ctx.timed_out() else "complete"] = True
        yield result()
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()


def _exact_at(values: dict, check: int) -> dict[str, str]:
    """Each node's exact value at ``check`` of a batch as text ``"k/n"`` (the nodes that have one)."""
    out = {}
    for nid, value in values.items():
        v = None if value.exact is None else value.exact[check]
        if v is not None:
            out[nid] = f"{v.numerator}/{v.denominator}"
    return out


def _head(part: Trace, k: int) -> Trace:
    return Trace(part.steps[:k], part.node_ids, part.estimate[:k], part.lo[:k], part.hi[:k], part.delta[:k],
                 part.verdict[:k], part.n[:k], part.certified[:k], part.unfair[:k], part.undecided[:k],
                 part.evalue[:k], part.evalue_target[:k])


def start(engine: Engine, spec, inputs: Inputs, options: dict, *, on_progress=None,
          warnings=(), trace_points: int | None | str = "auto", full_trace=None,
          confirmed: dict | None = None, rows_spec=None) -> Iterator[AuditResult]:
    """Run ``engine`` on ``spec`` and ``inputs`` with resolved ``options`` (``Engine.resolve_options``): the
    generator of partial results (``drive``). ``trace_points``: see ``drive``; ``full_trace``: a path to write
    every check to (Parquet, ``fairaudit.core.fulltrace``)."""
    from fairaudit.core.preflight import check_decisions

    check_decisions(spec, inputs.model, where=inputs.where)  # what ``pred`` is compared with, against the decisions
    reasons = engine.check(spec, inputs)
    if reasons:
        from fairaudit.base.errors import FairauditError

        raise FairauditError(f"the {engine.name} engine cannot audit this: " + "; ".join(reasons))
    progress = Progress(f"Auditing with {engine.title or engine.name}", None, engine.unit, on_progress)
    ctx = Context(seed=int(options.get("seed") or 0), time_budget=options.get("time_budget"), progress=progress)
    guarantee = engine.guarantee(options, inputs)
    scope = engine.scope(options, inputs)
    rows_check = None
    if scope == "modelled":  # the headline composes the engine's bound with what the audited rows support
        from fairaudit.core.claim import rows_intervals

        rows_check = rows_intervals(spec, inputs, rows_spec=rows_spec)
    batches = engine.run(spec, inputs, options, ctx)
    writer = None
    if full_trace is not None:
        from fairaudit.core.fulltrace import FullTraceWriter

        writer = FullTraceWriter(full_trace, spec.text)
    results = drive(engine, spec, batches, options={**inputs.describe(), **engine.used_options(options, inputs)},
                    guarantee=guarantee, ctx=ctx,
                    stop=bool(options.get("stop")), on_progress=on_progress, progress=progress,
                    warnings=[*inputs.warnings, *[w for w in warnings if w not in inputs.warnings]],
                    rows=inputs.rows or None, provenance=inputs.provenance, trace_points=trace_points,
                    full_trace=writer, scope=scope, rows_check=rows_check, confirmed=confirmed)
    return results if writer is None else _writing(results, writer)


def with_declared_ranges(guarantee: Guarantee, spec) -> Guarantee:
    """``guarantee`` with what a spec that averages quantities adds to what it rests on: each averaged column lies in
    its declared range (every audited row is checked against it, so this is a statement about the rows not yet seen,
    for a guarantee about a population). Unchanged for a spec that averages none, or an exact guarantee (about the
    audited rows, which were checked)."""
    from dataclasses import replace

    from fairaudit.spec.ast import event_names
    from fairaudit.spec.quantities import ranges_of, range_text, quantity_leaves

    if guarantee.kind == "exact" or not quantity_leaves(spec):
        return guarantee
    used = {n.name for tn in quantity_leaves(spec) for n in event_names(tn.node.event)}
    ranges = [f"{name} in {range_text(lo, hi)}" for name, (lo, hi) in ranges_of(spec).items() if name in used]
    if not ranges:
        return guarantee
    sentence = (f"every value of an averaged column lies in its declared range ({', '.join(ranges)}; each audited "
                "row was checked)")
    if guarantee.assumes and sentence in guarantee.assumes:
        return guarantee
    return replace(guarantee, assumes=f"{guarantee.assumes}; {sentence}" if guarantee.assumes else sentence)


def _writing(results: Iterator[AuditResult], writer) -> Iterator[AuditResult]:
    """``results``, the full trace file finished when they end (discarded when the run fails)."""
    try:
        yield from results
    except GeneratorExit:  # the caller stopped the run: the file holds the checks made so far
        writer.close()
        raise
    except BaseException:
        writer.discard()
        raise
    writer.close()


def last(results: Iterator[AuditResult]) -> AuditResult:
    """The final result of a ``drive`` generator."""
    final = None
    for final in results:
        pass
    return final
