"""Out-of-core audits of big decision logs (CSV or Parquet files that need not fit in memory): the monitor with a
decision expression (``pred``), the file read in chunks, memory bounded whatever the file's length.

How a run goes (``audit_file``)
    1. **The schema, without loading the rows** (``FileDataset``): column names and kinds from the file's first
       chunk (Parquet: its schema); the values of the categorical columns that the specification, the decision and
       the row filter read (and of the label) from one pass over those columns only. ``fairaudit.core.preflight``
       validates against it as against an in-memory dataset (unknown columns, values a column never takes, …);
       the row-count warnings ("no row satisfies …"), which need every row, are not given.
    2. **Encode** (``encode_file``): chunk by chunk (pyarrow; only the columns used), the decision and the row
       filter are evaluated and every distinct leaf observed (``fairaudit.core.observations.observe``, as in
       memory); each audited row becomes a code of two bits per leaf (``fairaudit.core.counting.encode``), kept
       in memory up to ``memory_bytes`` and in a temporary file beyond.
    3. **Order**: file order, or a seeded uniform shuffle of the codes (``fairaudit.engines.monitor.stream.shuffle_codes``:
       in memory the in-memory run's very permutation; beyond, a bucket shuffle with its proof of uniformity).
    4. **Monitor**: the codes are decoded chunk by chunk into ``ChunkedObservations`` (leaf counts as running
       prefix sums) and audited by the monitor engine through the driver, like any run.

In file order and in a shuffle that fits in memory, the verdict, stop step and every interval are those of the
in-memory run (``fairaudit audit --data FILE.csv``, ``tests/engines/test_outofcore.py``). Memory: one chunk of
rows, the codes (1 byte a row for ≤ 4 distinct leaves, or a file), a window of checks and the bounded trace.

What runs out of core: the monitor engine with a decision expression (``--pred``, or a ``# decision:`` header) or a
saved model (its decision and score computed chunk by chunk, as ``fairaudit.core.inputs.Inputs.build`` computes them for
every row; every row is audited) over ``E[...]`` leaves (``pred``, ``score``, ``label`` with ``--label`` and data
columns) and ``Fair[...]`` leaves (with a model: each chunk's audited rows re-predicted with the attribute set to each
of the values of the whole file, ``file_fair_domains``, as in memory). Training a model needs the rows in memory: the
file is loaded whole.

``Fair[...]`` counterexamples, memory bounded: the first ``KEEP`` flipped rows of each leaf in stream order are kept
with their stream positions, and how many rows the flip changed among the rows checked so far is read off the leaf's
counts (``ChunkedObservations.counterexamples``). In file order they are found while encoding; in a shuffle the row
ids are shuffled with the codes (``shuffle_rows``: 4 more bytes a row, in memory or spilled like the codes), the first
flipped positions read off the shuffled codes and their rows read again from the file (``counterexamples_at``). In
file order and in a shuffle held in memory they equal the in-memory run's (``tests/engines/test_outofcore_fair.py``).

A CSV is parsed as ``fairaudit.data.from_csv`` parses it (``csv_options``: the header line's delimiter, quoted values
over several lines, pandas' missing markers); text columns are read as text, stripped, a missing or empty value
becomes "?" (``fairaudit.data.cleaning``); a column's type is fixed by the file's first block of rows (a column
with no value there, or true/false with a value missing, by a pass over all its values: ``_typed_late``), and a
later row that does not parse as that type is a one-line error (audit it in memory, ``--out-of-core off``, to let
pandas type the whole column).
"""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fairaudit.base.errors import DataError, FairauditError
from fairaudit.core.codes import ChunkEncoder, chunk_inputs, fair_keys
from fairaudit.core.codes import spec_code_dtype

if TYPE_CHECKING:
    from fairaudit.data.cleaning import FileDataset

SUFFIXES = (".csv", ".csv.gz", ".parquet", ".pq")
PARQUET = (".parquet", ".pq")
AUTO_BYTES = 256 << 20  # files at least this big are audited out of core unless told otherwise
READ_ROWS = 1 << 18  # rows per chunk read from the file
MEMORY_CODES = 1 << 30  # codes kept (and shuffled) in memory up to this many bytes; a temporary file beyond


def readable(path) -> bool:
    """Whether ``path`` is a log this module reads: a ``.csv``/``.csv.gz``/``.parquet``/``.pq`` file, a folder of
    them, or a glob."""
    from fairaudit.sources.files import file_format

    text = str(path)
    p = Path(text)
    if p.is_file():
        return file_format(p) is not None
    if p.is_dir():
        return any(file_format(f) for f in p.rglob("*") if f.is_file())
    return any(ch in text for ch in "*?[")


def is_parquet(path) -> bool:
    """Whether ``path`` is Parquet (a file, or a folder/glob whose parts are)."""
    from fairaudit.sources.files import file_format, list_parts

    if Path(str(path)).is_file():
        return file_format(path) == "parquet"
    try:
        return file_format(list_parts(path)[0]) == "parquet"
    except FairauditError:
        return False


def size(path) -> int:
    """The bytes of a file, or of every part of a folder or glob."""
    from fairaudit.sources.files import list_parts

    return sum(Path(f).stat().st_size for f in list_parts(path))


def log_of(source, declared=None, na_values=(), columns=None):
    """``source`` as a ``fairaudit.sources.FileLog`` (one is returned as it is); ``columns``: the only ones typed and
    read (``run_columns``; None: every column)."""
    from fairaudit.sources import FileLog

    if isinstance(source, FileLog):
        return source
    return FileLog(source, declared=declared, na_values=tuple(na_values or ()),
                   columns=None if columns is None else tuple(columns))


def run_columns(spec, pred: str | None = None, where: str | None = None, *, label: str | None = None,
                protected=(), model=None) -> list[str] | None:
    """The columns a run reads — those of the specification's leaves, the decision, the row filter, the label, the
    protected columns and a model's features — so that a log is typed and read in those alone (a log of 100,000
    columns audited on two); None where they are not known before reading: a model that does not name its features,
    or text that does not parse (its error is given, positioned, where it is checked)."""
    from fairaudit.spec import event_columns, parse_event
    from fairaudit.spec.events import spec_columns

    if model is not None and not list(getattr(model, "feature_names", None) or ()):
        return None
    try:
        names = list(spec_columns(spec))
        if pred:  # (a reserved name in the decision is an error whose hint needs the log's column of that name)
            names += event_columns(parse_event(pred), reserved=True)
        if where:
            names += event_columns(parse_event(where))
    except FairauditError:
        return None
    names += [label] if label else []
    names += list(protected or ()) + list(getattr(model, "feature_names", None) or ())
    return list(dict.fromkeys(names))


def read_frames(source, columns, rows: int = READ_ROWS):
    """The chosen ``columns`` of a log as cleaned pandas DataFrames of about ``rows`` rows each."""
    log = log_of(source)
    for frame, _ in log.frames(columns, rows):
        yield frame


def _empty_frame(n: int):
    import pandas as pd

    return pd.DataFrame(index=pd.RangeIndex(n))


def file_dataset(path, used: list[str], *, label: str | None = None, protected=None,
                 favourable=None, literals=frozenset()) -> FileDataset:
    """The ``FileDataset`` of a log; ``used``: the columns whose categorical values are needed (the ones the
    specification, the decision and the row filter read). A column of more than ``VALUES_CAP`` values (an id) keeps
    only those of ``literals`` (the values the audit compares columns with, ``fairaudit.spec.events.literals``)
    that it holds and a few others (``narrowed``), so that memory stays bounded; it is named in ``wide``."""
    from fairaudit.data.cleaning import known_dataset
    from fairaudit.sources.values import distinct_pass

    log = log_of(path)
    kinds = log.schema.dataset_kinds
    wanted = [c for c in dict.fromkeys(list(used) + ([label] if label else [])) if c in kinds
              and (kinds[c] == "categorical" or c == label)]
    known, wide, rows, unlabelled = distinct_pass((b.table for b in log.batches(wanted or log.schema.names[:1],
                                                                                encoded=True)),
                                                  log.schema, wanted, label, literals)
    if rows == 0:
        raise DataError(f"{log.name} has no data rows")
    if unlabelled:
        from fairaudit.data.roles import missing_labels

        raise missing_labels(label, unlabelled)
    return known_dataset(log.stem, log.name, kinds, known, label=label, protected=protected, favourable=favourable,
                         wide=wide)


def file_sha256(path) -> str:
    """SHA-256 of a file's bytes; of a folder or glob, of each part's name and bytes in order
    (``fairaudit.sources.fingerprint.of_log``: read once per process while unchanged)."""
    from fairaudit.sources.fingerprint import of_log

    return of_log(log_of(path)).digest


# ---- the run -----------------------------------------------------------------------------------------------------

def used_columns(spec, pred: str | None, where: str | None, dataset_columns) -> list[str]:
    """The data columns the run reads: those of the specification's leaves (a ``Fair[...]``'s column too), the
    decision and the row filter."""
    from fairaudit.spec import event_columns, parse_event

    events = []
    out = []
    for tn in spec.leaves:
        if tn.kind == "fair":
            out += [tn.node.column] if tn.node.column in dataset_columns else []
        for ev in (getattr(tn.node, "event", None), getattr(tn.node, "given", None)):
            if ev is not None:
                events.append(ev)
    events += [parse_event(t) for t in (pred, where) if t]
    for ev in events:
        out += [c for c in event_columns(ev) if c in dataset_columns]
    return list(dict.fromkeys(out))


def written_values(spec, pred: str | None, where: str | None) -> set:
    """The constants the specification, the decision and the row filter compare columns with (none for text that
    does not parse: its error is given where it is checked)."""
    from fairaudit.spec import parse_event
    from fairaudit.spec.events import literals

    try:
        return literals(spec, *(parse_event(t) for t in (pred, where) if t))
    except FairauditError:
        return literals(spec)


def file_fair_domains(path, spec, dataset: FileDataset) -> dict:
    """The values each ``Fair[column]`` flips between, as in memory (``fairaudit.core.observations.fair_domains``):
    a categorical column's values over the whole file (the schema's), a numeric column's distinct values over the
    whole file, sorted (one pass over that column; more than ``FAIR_MAX_VALUES`` is the in-memory error)."""
    import pandas as pd
    import pyarrow.compute as pac

    from fairaudit.data.roles import distinct_values
    from fairaudit.core.observations import FAIR_MAX_VALUES

    schema = {c.name: c for c in dataset.schema.columns}
    out = {}
    for key, column in fair_keys(spec).items():
        c = schema.get(column)
        if c is None:
            raise FairauditError(f"{key}: unknown column {column!r}")
        if c.kind == "categorical" and c.values and column not in dataset.wide:  # (wide: the pass refuses it)
            out[column] = list(c.values)
            continue
        if column in out:
            continue
        found: set = set()
        for batch in log_of(path).batches([column]):
            found.update(pac.unique(batch.table.column(column).drop_null()).to_pylist())
            if len(found) > FAIR_MAX_VALUES:
                raise FairauditError(f"{key}: column {column!r} has more than {FAIR_MAX_VALUES} values; Fair[...] "
                                     f"flips categorical columns (at most {FAIR_MAX_VALUES} values)")
        out[column] = list(distinct_values(pd.Series(sorted(found), dtype=object)))
    return out


def encode_file(spec, path, pred: str | None, *, where: str | None = None, label: str | None = None, favourable=None,
                rows: int = READ_ROWS, memory_bytes: int = MEMORY_CODES, folder=None, on_rows=None, model=None,
                domains: dict | None = None, first_flips=None, schema=None):
    """``(CodeStore, total rows read, agreement)``: every audited row of the file (those matching ``where``) as its
    code, in file order; ``agreement`` the share of all rows whose decision equals the label (None without a label
    or a decision), as ``fairaudit.models.expression`` measures it. ``on_rows(done)`` is told after each chunk.

    ``Fair[...]`` leaves (with a ``model``; ``domains``: the values each column flips between, ``file_fair_domains``)
    are observed on the audited rows of each chunk as in memory (``observe``); ``first_flips`` (a
    ``fairaudit.core.observations.FirstFlips``) takes in each chunk's flipped rows, numbered among the audited
    rows (their ``row`` the file's row number) — the counterexamples of a run in file order. ``schema``: the log's
    dataset schema, whose categorical values tell a column of logged classes (``--pred decision``) from a yes/no
    decision (``fairaudit.models.expression.decider``)."""
    from fairaudit.engines.monitor.stream import CodeStore
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.models.expression import decider as make_decider
    from fairaudit.spec import parse_event

    keys = compile_spec(spec).leaf_keys
    dtype = spec_code_dtype(spec)
    decider = model  # a model scored chunk by chunk (its decision and score), or the decision expression
    if pred is not None:
        if model is not None:
            raise FairauditError("give either a model or a decision expression (pred), not both")
        decider = make_decider(pred, schema)
    where_event = parse_event(where) if where else None
    log = log_of(path)
    present = list(log.schema.names)
    columns = list(dict.fromkeys(used_columns(spec, pred, where, present) + ([label] if label else [])
                                 + list(getattr(model, "feature_names", None) or [])))
    missing = [c for c in columns if c not in present]
    if missing:
        raise FairauditError(f"the model reads column(s) {', '.join(missing[:5])} that {log.name} does "
                             "not have")
    fair = fair_keys(spec)
    if fair and model is None:
        raise FairauditError(f"{next(iter(fair))} needs a model to re-predict with (use --model, not --pred)")
    store = CodeStore(dtype)
    spill = None
    encoder = ChunkEncoder(spec, keys, columns or [present[0]], log.schema, decider, model=model,
                           where_event=where_event, label=label, favourable=favourable, domains=domains,
                           first_flips=first_flips)
    for table in whole_chunks(log.batches(encoder.columns, rows=rows, encoded=not fair), rows):
        codes = encoder.codes(table)  # (text as dictionaries: distinct_rows)
        if spill is None and (store.rows + len(codes)) * dtype.itemsize > memory_bytes:
            from fairaudit.engines.monitor.stream import _fresh

            spill = CodeStore(dtype, path=_fresh(Path(folder or tempfile.gettempdir()), "stream-"))
            for part in store.chunks():
                spill.append(part)
            store = spill
        store.append(codes)
        if on_rows is not None:
            on_rows(encoder.total)
    store = store.close()
    store.missing = encoder.missing  # (read by audit_file: the warnings)
    store.where_unknown = (encoder.unknown, tuple(encoder.unknown_columns))
    total, agree = encoder.total, encoder.agree
    yes_no = pred is not None and decider.classes is None  # (a decision among classes does not agree with a label)
    return store, total, (agree / total if total and label is not None and yes_no else None)


def whole_chunks(batches, rows: int):
    """The conformed tables of ``batches`` joined, in order, into chunks of about ``rows`` rows: the parts of a log
    of many small files (20,000 parts of 100 rows) encoded a chunk at a time, not a part at a time (the encoding's
    cost per call, not per row, dominated such a log). The rows and their order are unchanged."""
    import pyarrow as pa

    pending, held = [], 0
    for batch in batches:
        pending.append(batch.table)
        held += batch.table.num_rows
        if held >= rows:
            yield pending[0] if len(pending) == 1 else pa.concat_tables(pending)
            pending, held = [], 0
    if pending:
        yield pending[0] if len(pending) == 1 else pa.concat_tables(pending)


def counterexamples_at(path, spec, model, domains: dict, wanted: dict, *, where: str | None = None, label=None,
                       favourable=None, rows: int = READ_ROWS) -> dict:
    """Per ``Fair[...]`` leaf, the ``Counterexample``s of the audited rows ``wanted[key]`` (audited positions: the
    rows matching ``where``, numbered in file order), in the order given — a second pass over the file, for a
    shuffled run whose first flipped rows are known only after the shuffle. Each row is re-predicted as in the
    first pass (the same model, values and flip test)."""
    from fairaudit.core.observations import event_array, flip_decisions, flips
    from fairaudit.spec import parse_event

    fair = fair_keys(spec)
    everything = np.unique(np.concatenate([np.asarray(v, dtype=np.int64) for v in wanted.values()] or
                                          [np.zeros(0, np.int64)]))
    if not len(everything):
        return {k: () for k in wanted}
    where_event = parse_event(where) if where else None
    log = log_of(path)
    present = list(log.schema.names)
    columns = list(dict.fromkeys(used_columns(spec, None, where, present) + ([label] if label else [])
                                 + list(getattr(model, "feature_names", None) or [])))
    made: dict = {k: {} for k in wanted}
    total = audited = 0
    for frame, _ in log.frames(columns, rows, keep_missing=label or ()):
        n = len(frame)
        file_rows = np.arange(total, total + n, dtype=np.int64)
        if where_event is not None:  # the audited rows, found as the first pass found them
            decided, scores, labels = chunk_inputs(frame, model, model, label, favourable)
            keep = event_array(where_event, frame, decided, labels, scores)
            frame, file_rows = frame[keep].reset_index(drop=True), file_rows[keep]
        lo = audited
        audited += len(frame)
        total += n
        local = everything[(everything >= lo) & (everything < audited)] - lo
        if not len(local):
            continue
        part = frame.iloc[local].reset_index(drop=True)
        pred = model.decisions_for(part)
        for key, column in fair.items():
            if key not in wanted:
                continue
            mine = np.intersect1d(np.asarray(wanted[key], dtype=np.int64) - lo, local)
            if not len(mine):
                continue
            at = np.searchsorted(local, mine)
            sub = part.iloc[at].reset_index(drop=True)
            values = domains[column]
            agree, decisions = flip_decisions(model, sub, column, values, pred[at])
            found = flips(key, model, sub, column, values, agree, decisions, file_rows[local][at])
            for p, example in zip(found.positions, found.first):
                made[key][int(mine[p] + lo)] = example
        if audited > everything[-1]:
            break
    lost = [int(p) for k, v in wanted.items() for p in v if int(p) not in made[k]]
    if lost:
        raise FairauditError(f"the model's decision for audited row {lost[0]:,} changed between two reads of "
                             f"{log.name}: its counterexamples cannot be shown (is the model deterministic?)")
    return {k: tuple(made[k][int(p)] for p in v) for k, v in wanted.items()}


def audit_file(path, spec, *, pred: str | None = None, model=None, where: str | None = None, label: str | None = None, protected=None,
               favourable=None, on_progress=None, iterate: bool = False, trace_points="auto", full_trace=None,
               memory_bytes: int = MEMORY_CODES, read_rows: int = READ_ROWS, dataset: FileDataset | None = None,
               ranges=None, **options):
    """Audit a CSV or Parquet file out of core with the monitor engine (module doc): the ``AuditResult`` (or,
    with ``iterate``, the generator of partial results). ``options``: the monitor's and every run's options
    (``delta``, ``batch``, ``split``, ``bound``, ``order``, ``seed``, ``stop``, ``time_budget``). ``model``: a loaded
    ``Model`` scored chunk by chunk instead of ``pred`` (every row audited: which rows trained it is known only in
    memory)."""
    from fairaudit.core.preflight import check_options
    from fairaudit.core.engine import Context
    from fairaudit.engines.monitor.engine import monitor_batches, order_assumption
    from fairaudit.core.observations import FirstFlips
    from fairaudit.engines.monitor.stream import shuffle_codes, shuffle_rows
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.core.inputs import Inputs
    from fairaudit.base.progress import Progress
    from fairaudit.core.driver import drive, last
    from fairaudit.spec.files import parsed_with_ranges

    engine, opts = check_options("monitor", **options)
    spec = parsed_with_ranges(spec, ranges)  # ``ranges``: of the columns the spec averages (``fairaudit.audit``'s)
    from fairaudit.core.preflight import check_decisions

    check_decisions(spec, model)  # what ``pred`` is compared with, against a loaded model's decisions
    fair = fair_keys(spec)
    if fair and model is None:
        raise FairauditError(f"{next(iter(fair))} re-predicts every row with the attribute flipped: it needs a model "
                             "(--model), not a decision expression")
    path = log_of(path)
    if dataset is None:
        dataset = file_dataset(path, used_columns(spec, pred, where, list(path.schema.names))
                               + list(getattr(model, "feature_names", None) or []), label=label,
                               protected=protected, favourable=favourable,
                               literals=written_values(spec, pred, where))
    label = dataset.schema.label
    favourable = dataset.schema.favourable
    folder = tempfile.TemporaryDirectory(prefix="fairaudit-stream-")
    progress = Progress(f"Auditing with {engine.title} (out of core)", None, engine.unit, on_progress)
    keys = compile_spec(spec).leaf_keys
    domains = file_fair_domains(path, spec, dataset) if fair else None
    firsts = FirstFlips() if fair else None
    store, total, agreement = encode_file(spec, path, pred, where=where, label=label, favourable=favourable,
                                          rows=read_rows, memory_bytes=memory_bytes, folder=folder.name, model=model,
                                          domains=domains, first_flips=firsts, schema=dataset.schema)
    missing, (unknown, unknown_columns) = store.missing, store.where_unknown
    if store.rows == 0:
        folder.cleanup()
        from fairaudit.core.observations import nothing_to_audit

        raise nothing_to_audit(where)
    how = {"shuffle": "none (file order)"}
    if opts["order"] == "shuffle" and fair:  # the rows are needed again: their counterexamples
        store, ids, how = shuffle_rows(store, int(opts["seed"]), memory_bytes=memory_bytes, folder=folder.name)
        firsts = _shuffled_firsts(store, ids, keys, path, spec, model, domains, where=where, label=label,
                                  favourable=favourable, rows=read_rows)
    elif opts["order"] == "shuffle":
        store, how = shuffle_codes(store, int(opts["seed"]), memory_bytes=memory_bytes, folder=folder.name)
    obs = store.observations(keys, halves=opts["order"] == "given", flips=firsts)
    obs.missing = missing
    ctx = Context(seed=int(opts.get("seed") or 0), time_budget=opts.get("time_budget"), progress=progress)
    inputs = Inputs(pred=pred, where=where, model=model)
    guarantee = engine.guarantee(opts, inputs)
    batches = monitor_batches(spec, obs, delta=opts["delta"], batch=opts["batch"],
                              thin_after=opts["thin_after"], split=opts["split"],
                              bound=opts["bound"], order=opts["order"], ctx=ctx,
                              assumes=order_assumption(opts["order"], opts["seed"]), stop=bool(opts.get("stop")))
    every = _rows_text(dataset, model, total)
    text = f"{store.rows:,} rows matching {where}, among {every}" if where else every
    from fairaudit.core.observations import where_missing_warning
    from fairaudit.models.expression import inverted_warning

    inverted = inverted_warning(agreement, dataset)
    rows = {"policy": "all", "audited": int(store.rows), "total": int(total), "text": text}
    s = dataset.schema
    from fairaudit.sources.fingerprint import of_log

    data_hash, hash_of = of_log(path)  # (``path`` is the FileLog read above)
    provenance = {"dataset": {"name": dataset.name, "rows": int(total), "content_hash": data_hash,
                              "hash_of": hash_of, "source": path.name, "label": s.label,
                              "favourable": None if s.favourable is None else str(s.favourable),
                              "protected": list(s.protected)}, "model": None}
    if model is not None:
        provenance["model"] = {"kind": model.kind, "params": getattr(model, "params", {}),
                               "content_hash": getattr(model, "content_hash", None), "description": model.describe()}
    describe = {"data": dataset.name, "model": None if model is None else model.describe(), "pred": pred,
                "where": where, "rows": "all"}
    writer = None
    if full_trace is not None:
        from fairaudit.core.fulltrace import FullTraceWriter

        writer = FullTraceWriter(full_trace, spec.text)
    results = drive(engine, spec, batches, options={**describe, **engine.used_options(opts, inputs)},
                    guarantee=guarantee, ctx=ctx,
                    stop=bool(opts.get("stop")), on_progress=on_progress, progress=progress,
                    warnings=list(getattr(path, "warnings", ())) + list(dataset.warnings)
                    + [str(w) for w in getattr(model, "warnings", ())]
                    + ([inverted] if inverted else []) + (
                        [where_missing_warning(where, unknown, unknown_columns)] if unknown else []),
                    rows=rows, provenance=provenance, trace_points=trace_points,
                    full_trace=writer, info={"out_of_core": True, "order_how": how.get("shuffle")})
    results = _finally(results, writer, folder)
    return results if iterate else last(results)


def _shuffled_firsts(store, ids, keys, path, spec, model, domains, **read):
    """After a shuffle (``ids``: each stream position's audited row), the ``Fair[...]`` leaves' first ``KEEP``
    flipped rows in the new order as a ``FirstFlips``, the rows read again (``counterexamples_at``)."""
    from fairaudit.core.counterexamples import KEEP
    from fairaudit.core.observations import FirstFlips, Flips

    fair = fair_keys(spec)
    positions = store.first_flipped(keys, list(fair), KEEP)
    wanted = {k: ids.take(p).astype(np.int64) for k, p in positions.items()}
    made = counterexamples_at(path, spec, model, domains, wanted, **read)
    firsts = FirstFlips()
    firsts.add({k: Flips(k, column, tuple(domains[column]), positions[k], made[k]) for k, column in fair.items()})
    return firsts


def _rows_text(dataset: FileDataset, model, total: int) -> str:
    """The "all rows" sentence, as ``fairaudit.core.inputs.audited_rows`` words it for a model whose training rows are
    not these (out of core, which rows trained a model is not known)."""
    every = f"all {total:,} rows of {dataset.name}"
    if model is None or getattr(model, "kind", "") == "expression":
        return every
    record = (getattr(model, "params", None) or {}).get("trained_on")
    where = (f"on {record.get('dataset')}, not on exactly these rows" if isinstance(record, dict)
             else "outside fairaudit")
    return (f"{every} (the model was trained {where}: if some of them trained it, label-based metrics are "
            "optimistic on those)")


def _finally(results, writer, folder):
    """``results``, then the full trace finished (discarded if the run fails) and the temporary codes removed."""
    try:
        yield from results
    except GeneratorExit:
        if writer is not None:
            writer.close()
        raise
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    else:
        if writer is not None:
            writer.close()
    finally:
        folder.cleanup()
