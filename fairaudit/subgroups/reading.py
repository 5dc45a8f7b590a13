"""The scan of a log read in batches — a CSV or Parquet file, a folder or glob of parts (out of core) — memory
bounded by the cells, not the rows.

The rows come from the one ingestion pipeline (``fairaudit.sources.FileLog``: the same types, values and refusals as
in memory; only the columns the scan reads; text kept as dictionaries), a batch at a time, and every batch goes
through the same three steps as the scan in memory (``fairaudit.subgroups.scan.scan``):

1. **codes**: each attribute's category codes read off the batch's dictionaries (``cells.encode_arrow``: only the
   distinct values are looked at), the decision and the row filter evaluated as every route evaluates them
   (``decide``: on the batch's distinct combinations of the columns they read, spread to the rows), and each
   audited row's look slot (``fairaudit.subgroups.looks``: a function of its position among the audited rows and the
   seed);
2. **counts**: one ``bincount`` over the finest cells (``fairaudit.core.counting.count_cells``);
3. **merge**: the batches' counts added (``Scanner.add_counts``).

So the cells, their counts, every interval and every look equal the scan of the same rows in memory
(``tests/sources/test_scan_routes.py``). What needs every row at once stays in memory: quantile bins (give the
edges), the scoring rate (the median score) and a model trained here (``--model KIND``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError
from fairaudit.subgroups import cells as cells_mod

READ_ROWS = 1 << 20  # rows per batch


def why_not_out_of_core(*, model=None, rate: str = "selection", bins=None, rows: str | None = None) -> str | None:
    """Why a scan cannot read its log in batches (None if it can)."""
    if rate == "scoring":
        return "the scoring rate compares each score with the median of all of them, in memory"
    if any(isinstance(how, (int, np.integer)) and not isinstance(how, bool) for how in (bins or {}).values()):
        return "quantile bins are cut from every value of the column, in memory; give the bins' edges"
    if model is not None and isinstance(model, str):
        return "--model KIND trains a model on the data, in memory; a saved model file or --pred is read in batches"
    if rows == "held-out":
        return "--rows held-out needs a model trained here"
    return None


class Decider:
    """A batch's decisions, labels and kept rows, as ``fairaudit.core.inputs.Inputs.build`` computes them in memory:
    the decision expression (or a saved model's decision), the label as 0/1, and the row filter (a row it is unknown
    on — a missing value — is left out and counted)."""

    def __init__(self, log, *, pred=None, model=None, where=None, label=None, favourable=None):
        from fairaudit.models.expression import ExpressionModel
        from fairaudit.spec import event_columns, parse_event

        self.log, self.model, self.label, self.favourable = log, model, label, favourable
        self.decider = model
        if pred is not None:
            event = parse_event(pred)
            self.decider = ExpressionModel(pred, event, event_columns(event))
        self.where_event = parse_event(where) if where else None
        reads = list(getattr(self.decider, "feature_names", None) or ())
        if self.where_event is not None:
            reads += event_columns(self.where_event)
        self.columns = list(dict.fromkeys(reads + ([label] if label else [])))
        self.read = self.unknown = self.agree = 0
        self.unknown_columns: dict = {}

    def __call__(self, table) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """``(decisions, labels or None, kept rows or None)`` of every row of the batch ``table``."""
        from fairaudit.core.codes import chunk_inputs, distinct_rows
        from fairaudit.core.observations import event_array3
        from fairaudit.sources import to_frame
        from fairaudit.sources.conform import decoded
        from fairaudit.spec.events import missing_names

        import pyarrow as pa

        n = table.num_rows
        # a model is worth calling once per distinct combination of its columns; an expression too when they are
        # dictionaries (their indices are the combinations), not when hashing numbers would cost more than it saves
        worth = self.model is not None or all(pa.types.is_dictionary(table.schema.field(c).type)
                                              for c in self.columns)
        found = distinct_rows(table, self.columns, limit=max(1, n // 4)) if self.columns and worth else None
        if found is not None:  # every answer is a function of these columns: evaluate once per combination
            first, inverse = found
            frame = to_frame(decoded(table.select(self.columns).take(first)), self.log.schema, self.label)
        else:
            frame, inverse = to_frame(decoded(table.select(self.columns or table.column_names[:1])),
                                      self.log.schema, self.label), None
        spread = (lambda a: a) if inverse is None else (lambda a: None if a is None else np.asarray(a)[inverse])  # noqa: E731
        decided, scores, labels = chunk_inputs(frame, self.decider, self.model, self.label, self.favourable)
        keep = None
        if self.where_event is not None:
            mask, known = event_array3(self.where_event, frame, decided, labels, scores)
            if not known.all():
                unknown = ~known
                self.unknown += int(unknown.sum() if inverse is None else np.bincount(inverse,
                                                                                      minlength=len(frame))[unknown].sum())
                self.unknown_columns.update(dict.fromkeys(missing_names((self.where_event,), frame, unknown,
                                                                        pred=decided, label=labels, score=scores)))
            keep = spread(mask & known)
        decided, labels = spread(decided), spread(labels)
        if labels is not None:
            self.agree += int((decided == labels).sum())
        self.read += n
        return np.asarray(decided, dtype=np.int8), labels, keep


class Plan:
    """A scan of a log, checked and ready to count (``prepare``): the log (its schema fixed), the attributes, the
    decision, the scanner the pieces are merged into; ``tally`` adds what a reader saw of the rows, ``finish``
    builds the ``ScanResult``."""

    def __init__(self, **fields):
        self.__dict__.update(fields)
        self.read = self.unknown = self.agree = 0
        self.unknown_columns: dict = {}

    def tally(self, *, read: int, unknown: int = 0, unknown_columns=(), agree: int = 0) -> None:
        self.read += int(read)
        self.unknown += int(unknown)
        self.unknown_columns.update(dict.fromkeys(unknown_columns))
        self.agree += int(agree)

    def finish(self):
        from fairaudit.engines.monitor.engine import order_assumption
        from fairaudit.sources.files import content_sha256
        from fairaudit.subgroups.scan import history

        scanner, warnings = self.scanner, list(self.warnings)
        if not self.read:
            raise FairauditError(f"{self.log.name} has no data rows")
        if not scanner.total:
            from fairaudit.core.observations import nothing_to_audit

            raise nothing_to_audit(self.where)
        if self.unknown:
            from fairaudit.core.observations import where_missing_warning

            warnings.append(where_missing_warning(self.where, self.unknown, tuple(self.unknown_columns)))
        if self.label is not None and self.pred is not None:
            from fairaudit.models.expression import inverted_warning

            inverted = inverted_warning(self.agree / self.read, self.dataset)
            if inverted:
                warnings.append(inverted)
        scanner.allocate()
        digest, hash_of = content_sha256(self.log)
        model = self.model
        model_text = None if model is None else (model.describe() if hasattr(model, "describe") else str(model))
        meta = {"data": self.log.stem, "source": self.log.name,
                "decision": f"pred: {self.pred}" if self.pred is not None else f"model: {model_text}",
                "order": self.order, "seed": int(self.seed), "label": self.label,
                "bins": {name: "edges" for name in self.bins}, "event": "pred",
                "order_sentence": order_assumption(self.order, int(self.seed)) if self.mode == "anytime" else None,
                "warnings": warnings,
                "rows_record": {"policy": "all", "audited": int(scanner.total), "total": int(self.read),
                                "where": self.where or None},
                "data_hash": digest, "hash_of": hash_of}
        return scanner.build(meta, history(scanner) if self.history_wanted else None)


def prepare(source, protected, *, depth: int = 2, bins: dict | None = None, pred: str | None = None, model=None,
            label: str | None = None, favourable=None, where: str | None = None, delta: float = 0.05,
            mode: str = "anytime", threshold: float = 0.8, min_share: float = 0.02, bound: str = "mixture",
            order: str = "shuffle", seed: int = 0, rate: str = "selection", allocation: str = "decisive",
            looks: int = 1, declared=None, na_values=(), open_log=None) -> Plan:
    """Everything checked before a row is counted (the options, the columns, the decision and the row filter
    against the log's schema and values): a ``Plan``. ``open_log(source, declared, na_values, columns)``: how the
    log is opened (default ``fairaudit.engines.monitor.outofcore.log_of``)."""
    from fairaudit.engines.monitor.engine import ORDERS
    from fairaudit.subgroups import looks as looks_mod
    from fairaudit.subgroups.scan import Scanner, _check_where, _close, settings

    opts = settings(depth, delta, mode, bound, threshold, min_share, rate, allocation)
    if order not in ORDERS:
        raise FairauditError(f"unknown order {order!r}; choose one of: {', '.join(ORDERS)}")
    if (pred is None) == (model is None):
        raise FairauditError("give the decision: pred (a condition over the rows, true = selected) or a model, "
                             "one of them")
    why = why_not_out_of_core(model=model, rate=rate, bins=bins)
    if why:
        raise FairauditError(f"this scan cannot be read in batches: {why}")
    if where:
        _check_where(where)
    names = [p.strip() for p in protected.split(",")] if isinstance(protected, str) else list(protected or [])
    bins = dict(bins or {})
    if not names and not bins:
        raise FairauditError("give at least one protected attribute (or a binned numeric one) to scan")
    if open_log is None:
        from fairaudit.engines.monitor.outofcore import log_of as open_log
    log = open_log(source, declared, na_values, _read_columns(names, bins, pred, where, label, model))
    present = list(log.schema.names)
    seen: set = set()
    for name in names + list(bins):
        if name not in present:
            raise FairauditError(f"unknown column {name!r}{_close(name, present)}")
        if name in seen:
            raise FairauditError(f"column {name!r} is given twice (as a protected attribute and binned, or twice)")
        seen.add(name)
    for name in bins:
        if log.schema.dataset_kinds.get(name) != "numeric":
            raise FairauditError(f"bins for {name}: the column is not numeric (scan it as a protected attribute)")
    attributes = [cells_mod.Attribute(name) for name in names]
    attributes += [cells_mod.binned(name, pd.Series([], dtype=float), edges) for name, edges in bins.items()]
    dataset, warnings = _checked(log, names, pred, where, label, favourable, model)
    favourable = dataset.schema.favourable if label is not None else None
    history_wanted = opts.mode != "one-look" and bool(looks)
    scanner = Scanner(attributes, opts, label is not None, looks=looks_mod.LOOKS if history_wanted else 1)
    reads = [a.name for a in attributes] + list(_read_columns([], {}, pred, where, label, model) or ())
    return Plan(log=log, dataset=dataset, scanner=scanner, names=names, bins=bins, pred=pred, model=model,
                where=where, label=label, favourable=favourable, order=order, seed=int(seed), mode=opts.mode,
                history_wanted=history_wanted, warnings=warnings, read_columns=list(dict.fromkeys(reads)))


def scan_log(source, protected, *, rows: int | None = None, **options):
    """The scan (``fairaudit.subgroups.scan.scan``'s options) of a log read in batches: ``source`` a CSV or Parquet
    file, a folder or glob of parts, or a ``fairaudit.sources.FileLog``; the decision ``pred`` or a loaded ``model``
    (a saved one: its decision computed batch by batch); ``rows``: a batch's rows."""
    from fairaudit.engines.monitor.outofcore import whole_chunks
    from fairaudit.subgroups import looks as looks_mod

    plan = prepare(source, protected, **options)
    rows = READ_ROWS if rows is None else int(rows)
    decide = Decider(plan.log, pred=plan.pred, model=plan.model, where=plan.where, label=plan.label,
                     favourable=plan.favourable)
    scanner = plan.scanner
    audited = 0
    for table in whole_chunks(plan.log.batches(plan.read_columns, rows=rows, encoded=True), rows):
        decisions, labels, keep = decide(table)
        codes = cells_mod.encode_arrow(table, scanner.attributes)
        if keep is not None:
            codes, decisions = [c[keep] for c in codes], decisions[keep]
            labels = None if labels is None else labels[keep]
        slot = looks_mod.look_of(audited, len(decisions), plan.order, plan.seed) if plan.history_wanted else None
        scanner.add(codes, decisions, labels, look=slot)
        audited += len(decisions)
    plan.tally(read=decide.read, unknown=decide.unknown, unknown_columns=tuple(decide.unknown_columns),
               agree=decide.agree)
    return plan.finish()


def _read_columns(names, bins, pred, where, label, model) -> tuple | None:
    """The only columns the scan types and reads (None: a model that does not name its features)."""
    from fairaudit.spec import event_columns, parse_event

    out = list(names) + list(bins) + ([label] if label else [])
    for text in (pred, where):
        if text:
            try:
                out += event_columns(parse_event(text))
            except FairauditError:
                pass  # the syntax error is given where the text is checked
    if model is not None:
        features = list(getattr(model, "feature_names", None) or ())
        if not features:
            return None
        out += features
    return tuple(dict.fromkeys(out))


def _checked(log, names, pred, where, label, favourable, model):
    """``(the log's FileDataset, warnings)``: the decision and the row filter validated against the log's columns
    and values, as in memory (unknown columns, values a column never takes: one line, before any row is counted)."""
    from fairaudit.engines.monitor.outofcore import file_dataset
    from fairaudit.spec import event_columns, parse_event, validate_event

    from fairaudit.subgroups.scan import check_filter

    used = []
    event = None
    if pred:
        try:
            event = parse_event(pred)
        except FairauditError as err:
            raise FairauditError(f"decision expression: {err}") from None
        used += event_columns(event)
    if where:
        try:
            used += event_columns(parse_event(where))
        except FairauditError as err:
            raise FairauditError(f"row filter: {err}") from None
    from fairaudit.engines.monitor.outofcore import written_values

    kinds = log.schema.dataset_kinds
    if label is None and not any(kinds.get(c) == "categorical" for c in used):  # no value to learn: no pass
        from fairaudit.data.cleaning import known_dataset

        dataset = known_dataset(log.stem, log.name, kinds, {}, protected=[n for n in names if n in kinds])
    else:
        dataset = file_dataset(log, used, label=label, protected=names, favourable=favourable,
                               literals=written_values(None, pred, where))
    warnings: list[str] = []
    if where:  # (the row filter first, then the decision: the order the scan in memory checks them in)
        warnings += check_filter(where, dataset)
    if event is not None:
        found = validate_event(event, dataset.schema, None, decision=True)
        errors = [d for d in found if d.severity == "error"]
        if errors:
            at = f"{errors[0].line}:{errors[0].column}: " if errors[0].line is not None else ""
            raise FairauditError(f"decision expression: {at}{errors[0].message}")
        warnings += [d.message for d in found if d.severity == "warning" and d.message not in warnings]
    from fairaudit.models.expression import decider, require_yes_no

    require_yes_no(decider(pred, dataset.schema) if pred is not None else model, "the scan")
    if model is not None:
        missing = [c for c in getattr(model, "feature_names", None) or () if c not in log.schema.names]
        if missing:
            raise FairauditError(f"the model reads column(s) {', '.join(missing[:5])} that {log.name} does not have")
    return dataset, warnings
