"""Every leaf of a spec, evaluated on every audited row: the 0/1 observations the row-based engines count.

``E[event]`` observes ``event`` on every row; ``E[event | given]`` only on the rows satisfying ``given``
(rejection sampling: ``masks``). ``Fair[col]`` observes, for each row, whether the decision stays the same
when ``col`` is replaced by each other value of the column (categorical columns, or numeric ones with at
most ``FAIR_MAX_VALUES`` distinct values; the values are those of the whole dataset, ``fair_domains``); it needs a
model.
Identical leaves (same canonical text) are one estimator. Everything is evaluated with numpy up front.

Missing values (one rule, on every route): an event is three-valued (``fairaudit.spec.events``: a comparison
that reads a missing value is neither true nor false), and a row whose event or condition is unknown is left out
of that leaf — ``E[A]`` counts a row only where ``A`` is known, ``E[A | B]`` only where ``B`` is known to be true
and ``A`` is known (``masks``). How many rows each leaf leaves out so is ``Observations.missing`` (``Missing``,
added up across chunks with ``add_missing``), and ``missing_warning`` words it — the one sentence every route
shows.

The rows whose decision a ``Fair[col]`` flip changes are the leaf's counterexamples among the audited rows
(``Flips``): all of them counted, the first ``KEEP`` in stream order kept with the decisions the flip test made
(and, for those few, the model's scores) — ``Observations.counterexamples(upto)`` gives them for the first
``upto`` rows of the stream.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairaudit.core.counterexamples import KEEP, ROWS, Counterexample, Counterexamples, LeafCounterexamples
from fairaudit.base.errors import FairauditError, ModelError
from fairaudit.core.evaluate import compile_spec

FAIR_MAX_VALUES = 20


FLIPS_ABOUT = ("audited rows whose decision changes when only the attribute is set to another of its values "
               "(the flip test the Fair value counts), the first ones in the order the rows were read")


@dataclass
class Flips:
    """One ``Fair[...]`` leaf's counterexamples among the audited rows: ``positions`` (stream positions of every
    row whose decision the flip changes, increasing) and the first ``KEEP`` of them as ``Counterexample``s."""

    leaf: str
    attribute: str
    values: tuple
    positions: np.ndarray
    first: tuple[Counterexample, ...]

    def upto(self, n: int | None = None, total: int | None = None) -> LeafCounterexamples:
        """The counterexamples among the first ``n`` rows of the stream (default all). ``total``: how many there
        are, when ``positions`` holds only those of the ``first`` (a stream read in chunks counts them from the
        leaf's statistics: ``fairaudit.engines.monitor.stream.ChunkedObservations.counterexamples``)."""
        shown = len(self.positions) if n is None else int(np.searchsorted(self.positions, n))
        return LeafCounterexamples(self.leaf, self.attribute, self.values, self.first[:shown],
                                   shown if total is None else int(total), ROWS, FLIPS_ABOUT)


class FirstFlips:
    """The ``Fair[...]`` leaves' counterexamples of a stream taken in pieces (chunks of a file, a live log's polls,
    Dask partitions), memory bounded: each leaf's first ``KEEP`` flipped rows (their stream positions and
    ``Counterexample``s); how many rows the flip changed among the first ``done`` is ``done`` minus the leaf's
    successes there (every row counts for a ``Fair[...]`` leaf, and a success is a row the flip does not change),
    so the positions of the others are never kept."""

    def __init__(self):
        self.kept: dict = {}  # leaf key -> (attribute, values, positions, examples)

    @property
    def keys(self) -> list[str]:
        return list(self.kept)

    def add(self, flips: dict, offset: int = 0) -> None:
        """Take in one piece's ``Flips`` per leaf (positions in the piece, increasing; ``offset``: the stream rows
        before it), keeping each leaf's first ``KEEP``."""
        for key, f in flips.items():
            _, _, positions, examples = self.kept.setdefault(key, (f.attribute, tuple(f.values), [], []))
            room = KEEP - len(examples)
            if room > 0:
                positions.extend((np.asarray(f.positions[:room], dtype=np.int64) + offset).tolist())
                examples.extend(f.first[:room])

    def upto(self, done: int, successes: dict) -> Counterexamples | None:
        """The ``Counterexamples`` among the first ``done`` rows (``successes``: each leaf's there), or None without
        ``Fair[...]`` leaves."""
        if not self.kept:
            return None
        return Counterexamples(tuple(
            Flips(k, attribute, values, np.asarray(positions, dtype=np.int64), tuple(examples))
            .upto(done, total=done - int(successes[k]))
            for k, (attribute, values, positions, examples) in self.kept.items()))


@dataclass(frozen=True)
class Missing:
    """The rows one leaf leaves out because a missing value makes its event or condition unknown: how many
    (``rows``) and the columns missing on them (``columns``, in the order the leaf names them). Two add up (``+``:
    the chunks of one stream), so a route that reads rows in pieces sums its pieces' (``add_missing``)."""

    rows: int = 0
    columns: tuple[str, ...] = ()

    def __add__(self, other: "Missing") -> "Missing":
        return Missing(self.rows + other.rows, self.columns + tuple(c for c in other.columns if c not in self.columns))


def add_missing(total: dict, more) -> dict:
    """Add ``more`` (leaf key -> ``Missing``, e.g. one chunk's ``Observations.missing``) into ``total``, in place;
    returns ``total``."""
    for key, m in (more or {}).items():
        total[key] = total[key] + m if key in total else m
    return total


def missing_warning(key: str, missing: Missing) -> str:
    """The one sentence that says a leaf left rows out for missing values (every route shows this one):
    ``E[pred | x > 0.5]: 12 rows with a missing value of x are left out of this leaf (...)``."""
    from fairaudit.spec.events import names_text

    rows = missing.rows
    are = "row with a missing value of {} is" if rows == 1 else "rows with a missing value of {} are"
    return (f"{key}: {rows:,} {are.format(names_text(missing.columns))} left out of this leaf (a condition on a "
            "missing value is neither true nor false)")


def missing_warnings(missing) -> list[str]:
    """``missing_warning`` for every leaf of ``missing`` (leaf key -> ``Missing``) that left a row out, in order."""
    return [missing_warning(key, m) for key, m in (missing or {}).items() if m.rows]


def nothing_to_audit(where: str | None) -> FairauditError:
    """The one refusal of a stream with no audited row, on every route: no row matches the row filter ``where``, or
    (without one) there is no row at all."""
    if where:
        return FairauditError(f"no audited row matches the row filter {where!r}")
    return FairauditError("the stream is empty: no row to audit")


def where_missing_warning(where: str, rows: int, columns) -> str:
    """The sentence for a row filter that is unknown on ``rows`` rows (a missing value of ``columns``): they are
    left out of the audit."""
    from fairaudit.spec.events import names_text

    what = "row" if rows == 1 else "rows"
    return (f"the row filter {where!r} is neither true nor false on {rows:,} {what}, where "
            f"{names_text(columns)} {'is' if len(tuple(columns)) <= 1 else 'are'} missing: "
            f"{'it is' if rows == 1 else 'they are'} left out of the audit")


@dataclass
class Observations:
    """Per distinct leaf: ``values`` (0/1 per row, in stream order; a quantity leaf's numbers, ``ranges``) and
    ``mask`` (rows that count for it);
    ``flips`` the ``Fair[...]`` leaves' counterexamples; ``missing`` the rows each leaf leaves out for a missing
    value (``Missing``; only leaves that leave some out)."""

    values: dict[str, np.ndarray]
    masks: dict[str, np.ndarray]
    length: int
    flips: dict[str, Flips] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what the run should be told of these rows (a live chunk's new attribute value)
    missing: dict[str, Missing] = field(default_factory=dict)
    # the quantity leaves' ranges (leaf key -> (lo, hi)): their ``values`` are numbers in those units, not 0/1
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    def missing_warnings(self) -> list[str]:
        """``missing_warning`` for each leaf that leaves rows out for a missing value."""
        return missing_warnings(self.missing)

    def counterexamples(self, upto: int | None = None) -> Counterexamples | None:
        """The ``Fair[...]`` leaves' counterexamples among the first ``upto`` rows (None without such leaves)."""
        if not self.flips:
            return None
        return Counterexamples(tuple(f.upto(upto) for f in self.flips.values()))

    def stats(self, ends: np.ndarray) -> dict:
        """Per leaf ``LeafStats`` (successes, n) over the first ``ends[i] + 1`` rows, for each ``i``: the one
        counting kernel's (``fairaudit.core.counting.count_rows``)."""
        from fairaudit.core.allocation import LeafStats
        from fairaudit.core.counting import count_rows

        at, _ = count_rows(self, list(self.values), ends)
        return {key: LeafStats(s.astype(float), n.astype(float)) for key, (s, n) in at.items()}

    def take(self, order: np.ndarray) -> "Observations":
        """The same observations with the rows in ``order`` (positions into the current rows; without the
        counterexamples, whose positions belong to the former order; ``missing`` only when ``order`` reorders all
        the rows)."""
        return Observations({k: v[order] for k, v in self.values.items()},
                            {k: m[order] for k, m in self.masks.items()}, len(order),
                            missing=dict(self.missing) if len(order) == self.length else {}, ranges=dict(self.ranges))


def event_array3(event, frame, pred, label, score, *, evaluator=None) -> tuple[np.ndarray, np.ndarray]:
    """An event (``fairaudit.spec`` AST) on every row of ``frame``: ``(true, known)`` bool arrays
    (``fairaudit.spec.events.evaluate_event3``: a row on which a missing value decides it is unknown).
    ``evaluator``: a ``fairaudit.spec.events.EventEvaluator`` over these very rows, shared by several events (each
    column is then converted once)."""
    from fairaudit.spec.events import EventEvaluator

    try:
        if evaluator is None:
            evaluator = EventEvaluator(frame, pred=pred, label=label, score=score)
        return evaluator.event3(event)
    except FairauditError:
        raise
    except KeyError as err:
        raise FairauditError(f"unknown column {err} in the specification") from None


def event_array(event, frame, pred, label, score) -> np.ndarray:
    """An event (``fairaudit.spec`` AST) on every row of ``frame``, as a bool array: the rows where it is known to
    be true (a row filter: a row on which a missing value leaves it unknown is left out)."""
    return event_array3(event, frame, pred, label, score)[0]


def decision_array(event, frame) -> np.ndarray:
    """A decision expression (``--pred``) on every row of ``frame`` as 0/1 (int8, 1 = favourable); a row on which
    it is neither true nor false (a missing value decides it) is an error (``FairauditError``, one line: how many
    rows, the first, which column, what to do), never a silent 0."""
    from fairaudit.spec.events import undecided_message
    from fairaudit.spec.printer import event_text

    true, known = event_array3(event, frame, None, None, None)
    message = undecided_message(event, frame, known)
    if message:
        raise FairauditError(f"the decision `{event_text(event)}` is {message}")
    return true.astype(np.int8)


def flip_decisions(model, frame: pd.DataFrame, column: str, values, pred: np.ndarray):
    """``(agree, decisions)``: ``agree`` 1 where the decision is the same for every other value of ``column`` (flip
    and re-predict); ``decisions[i]`` the model's decision on every row
    with ``column`` set to ``values[i]`` (int8, one model call per value)."""
    agree = np.ones(len(frame), dtype=bool)
    decisions = np.zeros((len(values), len(frame)), dtype=np.int8)
    for i, value in enumerate(values):
        flipped = _with_value(frame, column, value)
        decisions[i] = np.asarray(model.predict(flipped))
        agree &= decisions[i] == pred
    return agree, decisions


def _with_value(frame: pd.DataFrame, column: str, value) -> pd.DataFrame:
    flipped = frame.copy()
    flipped[column] = pd.Series([value] * len(frame), index=frame.index).astype(frame[column].dtype,
                                                                                 errors="ignore")
    return flipped


def flips(key: str, model, frame: pd.DataFrame, column: str, values, agree: np.ndarray, decisions: np.ndarray,
          rows: np.ndarray | None = None) -> Flips:
    """The rows whose decision the flip changes (``agree`` false) as counterexamples: each one's features other
    than ``column`` (the model's inputs, as the dataset has them) and its own value of it, the flip test's decisions,
    and the model's
    scores for the first ``KEEP`` (one call on at most ``KEEP`` rows per value); ``rows`` the dataset positions
    of the frame's rows."""
    positions = np.flatnonzero(~agree)
    first = positions[:KEEP]
    names = [c for c in getattr(model, "feature_names", ()) if c in frame.columns and c != column] or \
        [c for c in frame.columns if c != column]
    part = frame.iloc[first].reset_index(drop=True)
    scores = None
    if len(first):
        try:
            scores = np.stack([np.asarray(model.score(_with_value(part, column, v)), dtype=float) for v in values])
        except (ModelError, NotImplementedError, AttributeError):  # a model that gives decisions only
            scores = None
    examples = tuple(Counterexample(tuple((c, part[c].iloc[i]) for c in names), tuple(int(d) for d in
                                    decisions[:, p]), None if scores is None else tuple(float(x) for x in scores[:, i]),
                                    None if rows is None else int(rows[p]), part[column].iloc[i])
                     for i, p in enumerate(first))
    return Flips(key, column, tuple(values), positions, examples)


def observe(spec, frame: pd.DataFrame, *, pred=None, label=None, score=None, model=None,
            column_values: dict | None = None, note=None, rows: np.ndarray | None = None,
            weights: np.ndarray | None = None, where: str = "") -> Observations:
    """Evaluate every distinct leaf of ``spec`` on every row of ``frame`` (in order). ``note(message)`` is told
    before each ``Fair[...]`` leaf (re-predicting every row once per value of the column can take a while);
    ``rows`` are the dataset positions of ``frame``'s rows (named by the counterexamples). ``weights``: how many
    audited rows each row of ``frame`` stands for (a route that evaluates each distinct combination of values once;
    0: a row the row filter leaves out), which the rows left out for a missing value are counted in. ``where``: the
    part of the data ``rows`` are numbered in, for an error naming a row (" of part-3.parquet")."""
    cs = compile_spec(spec)
    values, masks, found, missing, ranges = {}, {}, {}, {}, {}
    everyone = np.ones(len(frame), dtype=bool)
    evaluator = None  # one EventEvaluator for every leaf's events (each column converted once)
    for key in cs.leaf_keys:
        node = cs.leaf_node[key].node
        if node.kind == "expect":
            if evaluator is None:
                from fairaudit.spec.events import EventEvaluator

                evaluator = EventEvaluator(frame, pred=pred, label=label, score=score)
            # a row counts where the event is known and the condition known to be true (module doc)
            if key in cs.leaf_range:  # a quantity: its values on [0, 1] (``fairaudit.core.counting``)
                values[key], known = quantity_values(key, node.event, evaluator, cs.spec, rows, where)
                ranges[key] = cs.leaf_range[key]
            else:
                values[key], known = event_array3(node.event, frame, pred, label, score, evaluator=evaluator)
            if node.given is None:
                masks[key], left_out = known, ~known
            else:
                given, given_known = event_array3(node.given, frame, pred, label, score, evaluator=evaluator)
                masks[key], left_out = given & known, ~given_known | (given & ~known)
            if weights is not None:
                left_out = left_out & (np.asarray(weights) > 0)
            if not masks[key].all() and left_out.any():
                from fairaudit.spec.events import missing_names

                count = int(left_out.sum() if weights is None else np.asarray(weights)[left_out].sum())
                missing[key] = Missing(count, missing_names(
                    (node.event, node.given), frame, left_out, pred=pred, label=label, score=score))
            if masks[key].all():
                masks[key] = everyone
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
            if note is not None:
                note(f"re-predicting {len(frame):,} rows for {key}")
            domain = list(domain)
            values[key], decisions = flip_decisions(model, frame, node.column, domain, np.asarray(pred))
            found[key] = flips(key, model, frame, node.column, domain, values[key], decisions, rows)
            masks[key] = everyone
    return Observations(values, masks, len(frame), found, missing=missing, ranges=ranges)


def quantity_values(key: str, quantity, evaluator, spec, rows=None, where: str = "") -> tuple[np.ndarray, np.ndarray]:
    """A quantity leaf's values on every row (float64, 0 where unknown) and where they are known. A column value outside its declared range is an error naming the row (``rows``: the data's row
    positions of these rows), never clipped (``fairaudit.spec.quantities.out_of_range``)."""
    from fairaudit.spec.ast import event_names
    from fairaudit.spec.errors import SpecError
    from fairaudit.spec.quantities import out_of_range, ranges_of

    declared = ranges_of(spec)
    try:
        for name in event_names(quantity):
            if name.reserved or name.name not in declared:
                continue
            column, known = evaluator.numbers(name)
            message = out_of_range(name.name, column, known, *declared[name.name], rows=rows, complete=False,
                                   where=where)
            if message:
                raise FairauditError(f"{key}: {message}")
        raw, known = evaluator.quantity3(quantity)
    except SpecError as err:
        raise FairauditError(f"{key}: {err.message}") from None
    return raw, known


def observe_inputs(spec, inputs, positions: np.ndarray | None = None, note=None) -> Observations:
    """``observe`` on the audited rows of ``inputs`` (``positions`` into the dataset: default the audited
    rows in file order)."""
    dataset = inputs.dataset
    if positions is None:
        positions = np.arange(len(dataset)) if inputs.positions is None else inputs.positions
    frame = dataset.frame.iloc[positions].reset_index(drop=True)
    take = (lambda a: None if a is None else np.asarray(a)[positions])  # noqa: E731
    domains = fair_domains(spec, dataset.frame, dataset.schema)
    return observe(spec, frame, pred=take(inputs.decisions), label=take(inputs.labels), score=take(inputs.scores),
                   model=inputs.reprediction_model, column_values=domains, note=note, rows=np.asarray(positions))


def fair_domains(spec, frame: pd.DataFrame, schema) -> dict:
    """The values each ``Fair[column]`` of ``spec`` flips between: a categorical column's values as the schema has
    them, a numeric column's distinct values over the whole ``frame``, sorted (so they do not depend on the rows'
    order, and a stream read in chunks finds the same ones: ``fairaudit.engines.monitor.outofcore``, ``fairaudit.engines.monitor.live``)."""
    from fairaudit.data.roles import distinct_values

    out = {c.name: list(c.values) for c in schema.columns if c.kind == "categorical" and c.values}
    for tn in spec.leaves:
        column = tn.node.column if tn.kind == "fair" else None
        if column is not None and column not in out and column in frame.columns:
            out[column] = list(distinct_values(frame[column]))
    return out


def uses_decisions(spec) -> bool:
    """Whether ``spec`` reads the decision (``pred``/``score``, or ``Fair[...]``, which re-predicts)."""
    from fairaudit.spec.ast import event_names

    for tn in spec.leaves:
        if tn.kind == "fair":
            return True
        for ev in (tn.node.event, tn.node.given):
            if ev is not None and any(n.name in ("pred", "score") for n in event_names(ev)):
                return True
    return False


def decision_reasons(spec, inputs) -> list[str]:
    """Why the decisions of ``inputs`` cannot feed the leaves of ``spec`` (the row-based engines' shared check):
    ``Fair[...]`` needs a model to re-predict with, ``pred``/``score`` need a model or a decision expression."""
    if any(tn.kind == "fair" for tn in spec.leaves) and inputs.reprediction_model is None:
        return ["Fair[...] re-predicts with the attribute flipped: it needs a model, not a decision expression"]
    if uses_decisions(spec) and inputs.decisions is None:
        return ["the specification uses pred/score: it needs a model or a decision expression"]
    return []
