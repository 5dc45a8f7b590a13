"""Live decision logs audited with the monitor as the rows arrive.

The log is read by a live source (``fairaudit.sources.live``: a growing CSV, a folder of Parquet files, JSON lines
on standard input — the one ingestion pipeline of a file at rest, poll by poll). ``prepare`` validates the audit on
the log's header and first rows before any work; ``observations`` evaluates each poll's rows (the decision, the row
filter, every leaf: ``fairaudit.core.observations.observe``), which the monitor counts by the one counting kernel
(``fairaudit.engines.monitor.live.live_batches``, ``fairaudit.core.counting``); ``live_audit`` runs it through the
shared driver (``fairaudit.core.driver.drive``) and yields each partial ``AuditResult``. An error reading the log
ends the audit: the verdict so far is kept marked incomplete (``failed``), never as a final answer. ``LiveRun`` does
the same in a background thread for the dashboard.
"""
from __future__ import annotations

import copy
import threading
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError
from fairaudit.sources.live import END_TEXT, POLL_SECONDS, STOPPED, first_rows, follow, open_log

from fairaudit.engines import STREAMING as LIVE_ENGINE  # audits a log as it grows (``fairaudit.engines.monitor.live``)


LIVE_OPTIONS = ("delta", "batch", "thin_after", "split", "bound", "order", "stop", "time_budget")  # the options a live run uses


def live_engine():
    """The engine a live log is audited with (its options are the ones a live run takes)."""
    from fairaudit import engines

    return engines.get(LIVE_ENGINE)


def runs_live(engine) -> bool:
    """Whether ``engine`` (an ``Engine`` or its name) is the one a live log runs on, so its chosen options apply."""
    return getattr(engine, "name", engine) == LIVE_ENGINE


def failed(result, error):
    """``result`` (the verdict so far of a live audit that ``error`` ended: a value that does not fit, a log
    truncated, ...) marked incomplete: its ``stopped_reason`` says the log failed and that the verdict so far is
    no final answer."""
    if result is None:
        return None
    out = copy.copy(result)
    out.complete = False
    out.info = {**(result.info or {}), "failed": str(error)}
    return out


def log_dataset(frame: pd.DataFrame, name: str, spec=None, events=(), schema=None):
    """The first rows as a ``Dataset`` (no label, no protected attribute), to validate the audit against.
    ``schema``: the log's ``fairaudit.sources.LogSchema`` (default: the types of ``frame``'s columns). A live log's
    first rows need not hold every category yet: a text column also takes the string values that ``spec`` and the
    ``events`` (parsed) compare it with (a value that never arrives simply matches no row); a true/false column
    takes both. A value of another type than the column's — ``decision == 1`` on a column of text, ``group ==
    "true"`` on one of true/false — is not a value of it, nor is text that the schema reads as missing
    (``na_values``): the checks refuse them, as for the file at rest."""
    from fairaudit.data.dataset import Dataset
    from fairaudit.data.roles import build_schema, distinct_values

    kinds = {c: (schema.kind(c) if schema is not None and c in schema else _frame_kind(frame[c]))
             for c in frame.columns}
    named = mentioned_values(spec, events)
    missing = set(getattr(schema, "na_values", ()) or ())  # text read as missing: never a value
    known = {}
    for c, kind in kinds.items():
        if kind == "boolean":
            known[c] = (False, True)
        elif kind == "text":
            seen = distinct_values(frame[c])
            known[c] = tuple(seen) + tuple(sorted(v for v in named.get(c, ()) if isinstance(v, str)
                                                  and v not in set(seen) and v.strip() not in missing))
    dataset_kinds = {c: "numeric" if k in ("integer", "float") else "categorical" for c, k in kinds.items()}
    return Dataset(name, frame, build_schema(frame, dataset_kinds, known_values=known), source=name)


def _frame_kind(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    if pd.api.types.is_integer_dtype(series):
        return "integer"
    if pd.api.types.is_numeric_dtype(series):
        return "float"
    return "text"


def mentioned_values(spec, events=()) -> dict[str, set]:
    """Per column, the literal values the leaves of ``spec`` and the ``events`` compare it with (``==``, ``in``)."""
    from fairaudit.spec import ast

    found: dict[str, set] = {}

    def walk(ev) -> None:
        if isinstance(ev, ast.Compare):
            for a, b in ((ev.left, ev.right), (ev.right, ev.left)):
                if isinstance(a, ast.Name) and not a.reserved and isinstance(b, ast.Value):
                    found.setdefault(a.name, set()).add(b.value)
        elif isinstance(ev, ast.In):
            found.setdefault(ev.operand.name, set()).update(v.value for v in ev.values)
        elif isinstance(ev, (ast.EvAnd, ast.EvOr)):
            walk(ev.left)
            walk(ev.right)
        elif isinstance(ev, ast.EvNot):
            walk(ev.operand)

    for tn in (spec.leaves if spec is not None else ()):
        for ev in (getattr(tn.node, "event", None), getattr(tn.node, "given", None)):
            if ev is not None:
                walk(ev)
    for ev in events:
        if ev is not None:
            walk(ev)
    return found


def named_columns(spec, events) -> set[str]:
    """The data columns ``spec`` and the ``events`` (decision, row filter; parsed) read."""
    from fairaudit.spec.events import event_columns, spec_columns

    names = set(spec_columns(spec))
    for ev in events:
        names |= set(event_columns(ev))
    return names


def check_columns(spec, events, columns, where: str) -> None:
    """Refuse a log whose header lacks a column the audit reads (one line)."""
    import difflib

    missing = sorted(named_columns(spec, events) - set(columns))
    if missing:
        close = difflib.get_close_matches(missing[0], columns, n=2)
        hint = (f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else
                f" (its columns: {', '.join(columns[:12])}{' ...' if len(columns) > 12 else ''})")
        raise FairauditError(f"{where} has no column {', '.join(repr(m) for m in missing)}{hint}")


class Tally:
    """The rows a live run leaves out for a missing value so far — per leaf (``Missing``) and those the row filter
    cannot decide — summed over the polls as every route sums its chunks, and said as the routes at rest say them."""

    def __init__(self, where_text: str | None = None):
        self.missing: dict = {}
        self.unknown, self.columns = 0, {}
        self.where_text = where_text

    def warnings(self) -> list[str]:
        from fairaudit.core.observations import missing_warnings, where_missing_warning

        said = missing_warnings(self.missing)
        if self.unknown:
            said.append(where_missing_warning(self.where_text, self.unknown, tuple(self.columns)))
        return said


def observations(spec, frames, *, decide, where=None, score=None, model=None, domains=None,
                 tally: Tally | None = None) -> Iterator:
    """Each frame's ``Observations`` (``decide(frame)``: the decisions, ``Model.decisions_for``; ``score(frame)``: a model's
    probabilities, for a spec that reads ``score``; ``where``: a parsed row filter). ``Fair[...]`` leaves re-predict
    with ``model``, flipping each column over ``domains[column]`` (fixed when the watch starts: ``prepare``); their
    counterexamples name rows by their position in the log (0-based, in arrival order, before ``where``), and each
    value of the column outside those is told once, with its first row (``Observations.notes``)."""
    from fairaudit.core.counterexamples_view import row_number
    from fairaudit.core.observations import add_missing, event_array3, observe

    fair = {tn.node.column: tn.text for tn in spec.leaves if tn.kind == "fair"}
    told: set = set()
    seen = 0
    for frame in frames:
        rows = np.arange(seen, seen + len(frame), dtype=np.int64)
        seen += len(frame)
        if where is not None:  # (a row the filter cannot decide for a missing value is left out, and counted)
            keep, known = event_array3(where, frame, None, None, None)
            if tally is not None and not known.all():
                from fairaudit.spec.events import missing_names

                tally.unknown += int((~known).sum())
                tally.columns.update(dict.fromkeys(missing_names((where,), frame, ~known)))
            frame, rows = frame[keep].reset_index(drop=True), rows[keep]
        decided = None if decide is None else np.asarray(decide(frame))  # (None: a spec without pred)
        if decided is not None and decided.dtype != object:  # 0/1; a decision among classes keeps them (``Model.decisions_for``)
            decided = decided.astype(np.int8)
        scores = None if score is None else np.asarray(score(frame), dtype=float)
        obs = observe(spec, frame, pred=decided, score=scores, model=model, column_values=domains, rows=rows)
        if tally is not None:
            add_missing(tally.missing, obs.missing)
        notes = []
        for column, key in fair.items():
            if column not in frame.columns:
                continue
            held = frame[column]
            outside = held.notna().to_numpy() & ~held.isin(list(domains.get(column, ()))).to_numpy()
            new = {}  # each value not told yet → its first row here
            for i in np.flatnonzero(outside):
                value = held.iloc[i]
                if (column, value) not in told and value not in new:
                    new[value] = int(rows[i])
            if new:
                told.update((column, v) for v in new)
                which = ", ".join(f"{v!r} (row {row_number(r)})" for v, r in new.items())
                values = ", ".join(str(v) for v in domains.get(column, ()))
                notes.append(f"{key}: the log has {column} = {which}, a value the log's first rows did not have; the "
                             f"flip test compares only the values fixed when the watch started ({values}): restart "
                             "the audit to include it")
        if notes:
            obs.notes = tuple(notes)
        yield obs


def live_audit(spec, frames, *, decide, where=None, options: dict, describe: dict | None = None,
               on_progress=None, trace_points="auto", warnings=(), score=None, model=None,
               domains=None) -> Iterator:
    """The monitor over ``frames`` (each poll's new rows, in arrival order) through the driver: each partial
    ``AuditResult`` (``options``: the monitor's resolved options; ``order`` must be ``given``; ``model`` and
    ``domains``: what ``Fair[...]`` re-predicts with, as ``prepare`` gives them)."""
    from fairaudit.core.engine import Context
    from fairaudit.engines.monitor.live import LIVE_ASSUMPTION, LiveMonitor, live_batches
    from fairaudit.core.guarantee import Guarantee
    from fairaudit.core.driver import drive

    engine = LiveMonitor()
    ctx = Context(seed=int(options.get("seed") or 0), time_budget=options.get("time_budget"))
    from fairaudit.spec.printer import event_text

    tally = Tally((describe or {}).get("where") or (event_text(where) if where is not None else None))
    batches = live_batches(spec, observations(spec, frames, decide=decide, where=where, score=score, model=model,
                                              domains=domains, tally=tally),
                           delta=options["delta"],
                           batch=options["batch"], thin_after=options["thin_after"],
                           split=options["split"], bound=options["bound"], ctx=ctx,
                           stop=bool(options.get("stop")), where=tally.where_text)
    guarantee = Guarantee("probabilistic", options["delta"], assumes=LIVE_ASSUMPTION)
    used = {k: options[k] for k in LIVE_OPTIONS if k in options}  # not the options a live run ignores (samples, …)
    results = drive(engine, spec, batches, options={**(describe or {}), **used}, guarantee=guarantee, ctx=ctx,
                    stop=bool(options.get("stop")), on_progress=on_progress, trace_points=trace_points,
                    warnings=list(warnings))
    return _with_rows(results, (describe or {}).get("dataset") or "the log", (describe or {}).get("where"), tally)


def _with_rows(results, name: str, where: str | None = None, tally: Tally | None = None) -> Iterator:
    """Each result with its rows record: how many rows of the log were audited (those matching ``where``), in
    arrival order; and the rows left out for missing values so far (``tally``)."""
    try:
        for result in results:
            if tally is not None:
                said = tally.warnings()
                if said:
                    result.warnings = [*result.warnings, *said]
            n = int((result.info or {}).get("stream_length", 0))
            text = (f"the {n:,} rows matching {where} among the rows of the live log {name} read so far, in the "
                    "order they arrived" if where else
                    f"the first {n:,} rows of the live log {name}, in the order they arrived")
            result.rows = {"policy": "live", "audited": n, "text": text}
            yield result
    finally:
        results.close()


def prepare(spec, source, *, pred: str | None = None, model=None, where: str | None = None, name: str, stop=None,
            poll: float = POLL_SECONDS, idle_timeout: float | None = None, why: dict | None = None, spec_source=None,
            decision=None, where_source=None):
    """Validate a live audit on the log's columns and first rows, before any work: ``(first rows, the model that
    decides, the parsed row filter or None, the warnings, the domains)``. The decisions come from ``pred`` (a
    condition over the log's columns) or from ``model`` (a loaded ``Model``, which reads its feature columns from the
    log). ``Fair[column]`` needs the model; the values it flips the column between (the domains, column → values)
    are fixed by the first rows, as ``fairaudit.core.observations.fair_domains`` fixes them on a whole dataset
    (a value that first arrives later is told as a warning, ``observations``). The spec,
    the decision and the row filter are checked against the header as soon as it arrives, then against the first
    rows (``fairaudit.core.preflight``; ``spec_source``/``decision``/``where_source`` position its messages).
    ``FairauditError`` when they do not fit or no row arrives."""
    from fairaudit.models import from_expression
    from fairaudit.core.preflight import option_source, preflight
    from fairaudit.spec import parse_event

    from fairaudit.core.observations import uses_decisions

    if pred is not None and model is not None:
        raise FairauditError("a live log takes one decision: a condition over its columns (pred) or a model, not both")
    if pred is None and model is None and uses_decisions(spec):
        raise FairauditError("the specification reads the decision: a live log needs one, a condition over its "
                             "columns (pred) or a model")
    fair = [tn.text for tn in spec.leaves if tn.kind == "fair"]
    if fair and model is None:
        raise FairauditError(f"{fair[0]} re-predicts each row with the attribute flipped: it needs a model (--model "
                             "PATH), not a decision expression")
    if pred is not None:
        decision = decision or option_source(pred, "the decision")
    where_source = where_source or (option_source(where, "the row filter") if where else None)
    preflight(None, spec, spec_source=spec_source, decision=decision, where=where_source, uses_model=model is not None)
    if model is not None:
        from fairaudit.core.preflight import check_decisions

        check_decisions(spec, model)  # what ``pred`` is compared with, against the model's decisions
    events = ([parse_event(pred)] if pred is not None else []) + ([parse_event(where)] if where else [])
    needs = list(getattr(model, "feature_names", ()) or ())

    def check(columns) -> None:
        check_columns(spec, events, columns, f"the log {name}")
        missing = [c for c in needs if c not in columns]
        if missing:
            raise FairauditError(f"the model reads column(s) {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''} "
                                 f"that the log {name} does not have")

    why = {} if why is None else why
    first = first_rows(source, check=check, stop=stop, poll=poll, idle_timeout=idle_timeout, why=why)
    if first is None:
        ended = END_TEXT[why.get("end", STOPPED)].format(idle=idle_timeout or 0)
        raise FairauditError(f"no row arrived in the log {name} ({ended}): nothing to audit")
    dataset = log_dataset(first, name, spec, events, schema=getattr(source, "schema", None))
    found = preflight(dataset, spec, spec_source=spec_source, decision=decision, where=where_source,
                      uses_model=model is not None, count_rows=False)  # rows keep coming: no count of the first
    warnings = [str(w) for w in found]
    domains = {}
    if fair:
        from fairaudit.core.observations import fair_domains

        domains = fair_domains(spec, dataset.frame, dataset.schema)
    if model is None and pred is not None:
        model = from_expression(pred, dataset)
        warnings += [w for w in model.warnings if w not in warnings]
    return first, model, (parse_event(where) if where else None), warnings, domains


class LiveRun:
    """A live audit in a background thread (the dashboard attaches one to a log and draws ``latest`` as it
    changes): ``latest`` (the last partial ``AuditResult``), ``error`` (one line), ``done``, ``why`` (how the watch
    ended); ``stop()`` ends it (the final result then covers every row read). A run that an error ends (a value that
    does not fit its column, a log truncated, ...) keeps its verdict so far in ``latest``, marked incomplete
    (``failed``): the page shows it as evidence so far, not as the log's final answer."""

    def __init__(self, spec, path, *, pred: str | None = None, model=None, options: dict, where: str | None = None,
                 poll: float = POLL_SECONDS, idle_timeout: float | None = None, name: str | None = None,
                 links: bool = True, unwatched: float | None = None, alive=None):
        self.spec, self.path, self.pred, self.model, self.where = spec, path, pred, model, where
        self.options = {**options, "order": "given"}
        self.poll, self.idle_timeout = poll, idle_timeout
        self.name = name or Path(str(path)).name
        self.links = links
        self.stopping = threading.Event()
        self.latest = None
        self.error: str | None = None
        self.done = False
        self.why: dict = {}
        self.started = time.time()
        self.unwatched = unwatched  # stop when nobody looked (``touch``) for this many seconds (a closed page)
        self.alive = alive  # a callable: whether whoever started the run is still connected (then it is watched)
        self.seen = time.monotonic()
        self.thread = threading.Thread(target=self._run, name="fairaudit-live", daemon=True)
        self.thread.start()
        if unwatched is not None:
            threading.Thread(target=self._watchdog, name="fairaudit-live-watchdog", daemon=True).start()

    def touch(self) -> None:
        """Someone is looking at the run (the page drew it)."""
        self.seen = time.monotonic()

    def _watchdog(self) -> None:
        while not self.done and not self.stopping.wait(min(1.0, self.unwatched)):
            if self.alive is not None and self._alive():
                self.touch()
            if time.monotonic() - self.seen > self.unwatched:
                self.why["unwatched"] = True
                self.stopping.set()

    def _run(self) -> None:
        source = None
        try:
            source = open_log(self.path, links=self.links)
            first, decider, where, warnings, domains = prepare(self.spec, source, pred=self.pred, model=self.model,
                                                      where=self.where, name=self.name, stop=self.stopping,
                                                      poll=self.poll, idle_timeout=self.idle_timeout, why=self.why)
            frames = follow(source, stop=self.stopping, poll=self.poll, idle_timeout=self.idle_timeout, first=first,
                            why=self.why)
            model = None if self.model is None else self.model.describe()
            for result in live_audit(self.spec, frames, decide=None if decider is None else decider.decisions_for, where=where,
                                     options=self.options,
                                     describe={"dataset": self.name, "follow": self.name, "pred": self.pred,
                                               "model": model, "where": self.where}, warnings=warnings,
                                     score=None if self.model is None else self.model.score, model=self.model,
                                     domains=domains):
                self.latest = result
        except FairauditError as err:
            self.error = str(err).replace(str(self.path), self.name)  # the log's name, not the server's path
            self.latest = failed(self.latest, self.error)
        except Exception as err:  # noqa: BLE001 - a bug: one line for the page, never a traceback
            self.error = f"internal error: {type(err).__name__}: {' '.join(str(err).split())[:200]}"
            self.latest = failed(self.latest, self.error)
        finally:
            if source is not None:
                source.close()
            self.done = True

    @property
    def rows(self) -> int:
        return int(((self.latest.info or {}) if self.latest is not None else {}).get("stream_length", 0))

    def _alive(self) -> bool:
        try:
            return bool(self.alive())
        except Exception:  # noqa: BLE001 - cannot tell: count on the page's own touches
            return False

    def ended(self) -> str | None:
        """How the watch ended, in words (None while it runs)."""
        if not self.done or self.error:
            return None
        if self.why.get("unwatched"):
            return f"stopped: the dashboard was closed (no page of it connected for {self.unwatched:g} s)"
        return END_TEXT[self.why.get("end", STOPPED)].format(idle=self.idle_timeout or 0)

    def stop(self, wait: float | None = 5.0) -> None:
        self.stopping.set()
        if wait:
            self.thread.join(wait)
