"""The scan of a database table: counted by the database as one ``GROUP BY`` where the scan allows it, else its rows
read through the one ingestion pipeline — the same cells, counts and intervals either way, and the same as the scan
of the same rows in memory (``tests/sources/test_database_scan.py``).

``scan_table(database, table, protected, ...)`` checks everything first, as every route does
(``fairaudit.subgroups.reading.prepare``: the options, the columns — an unknown one with a suggestion — and the
decision and the row filter against the table's schema and values, the values collected by the database:
``TableLog.values_view``). Then:

* **counted in the database** (``why_streamed`` is None: a decision ``pred``, the selection rate, bins given by their
  edges, no history — ``looks=0``, or the one-look mode, whose intervals need only the final counts), when the
  decision, the row filter and the label translate faithfully (``fairaudit.sources.sql.translate``): one statement
  ``SELECT <each attribute as stored, or its bin>, <decision 0/1>, <label 0/1>, <filter 0/1/NULL>, COUNT(*) …
  GROUP BY …``. Its groups are the scan's step 1 done by the database: the attributes' values come back as a batch
  of the table would — conformed by ``fairaudit.sources.conform.conform`` and coded by each attribute's
  ``value_codes`` (bins: the statement's ``CASE``, ``Attribute.bin_codes``'s rule) — and each group is counted with
  its rows as its weight (``Scanner.add(..., weights=)``, the one counting kernel). Rows the filter is unknown on are
  counted and named as in memory. The result says so (``rows_record["counted"]``);
* **read** (``fairaudit.subgroups.reading.scan_log`` over a ``fairaudit.sources.database.TableLog``) otherwise — and
  also where the statement finds a value the pipeline refuses, a decision that is neither true nor false on some
  row, or a row on which the translation would not be memory's answer (``Translation.checks``): the rows are then read
  so that the pipeline answers, or refuses with its own words and row, exactly as from any other source.

The result names the data by ``fairaudit.sources.database.fingerprint`` (the database file's bytes) on both routes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COUNTED = "in the database: one GROUP BY (no looks recorded)"


def why_streamed(*, pred=None, model=None, rate: str = "selection", bins=None, mode: str = "anytime",
                 looks: int = 1) -> str | None:
    """Why a scan of a table reads its rows instead of counting them in the database (None: it can count them)."""
    if model is not None:
        return "a model decides row by row, here"
    if pred is None:
        return "there is no decision expression"
    if rate != "selection":
        return "the scoring rate needs every score"
    if any(isinstance(how, (int, np.integer)) and not isinstance(how, bool) for how in (bins or {}).values()):
        return "quantile bins are cut from every value"
    if mode != "one-look" and looks:
        return "the intervals at each look follow the rows in their order (looks=0, or the one-look mode, counts)"
    return None


def scan_table(database, table: str, protected, *, rows: int | None = None, pushdown: bool = True, **options):
    """The scan (``fairaudit.subgroups.reading.prepare``'s options: ``depth``, ``bins``, ``pred``, ``model``,
    ``label``, ``favourable``, ``where``, ``delta``, ``mode``, ``threshold``, ``min_share``, ``bound``, ``order``,
    ``seed``, ``rate``, ``allocation``, ``looks``, ``declared``, ``na_values``) of ``table`` (a table or view) in the
    DuckDB or SQLite file ``database``: counted in the database where it can be, else read in batches of ``rows``
    (module doc); ``pushdown=False`` reads the rows whatever the scan. A ``ScanResult``."""
    from fairaudit.sources.conform import UnfitValue
    from fairaudit.sources.database import TableLog, fingerprint
    from fairaudit.subgroups.reading import prepare, scan_log

    opened = []

    def open_table(source, declared, na_values, columns):
        opened.append(TableLog(source, table, columns=columns, declared=declared, na_values=na_values))
        return opened[-1]

    result = None
    if pushdown and why_streamed(**{k: options[k] for k in ("pred", "model", "rate", "bins", "mode", "looks")
                                    if k in options}) is None:
        def open_values(*args):
            return open_table(*args).values_view(options.get("label"))

        try:
            plan = prepare(database, protected, open_log=open_values, **options)
            counted = count(plan)
        except UnfitValue:  # (a refused value: read the rows, which place it)
            counted = False
        if counted:
            result = plan.finish()
            result.rows_record["counted"] = COUNTED
    if result is None:
        result = scan_log(database, protected, rows=rows, open_log=open_table, **options)
    result.data_hash, result.hash_of = fingerprint(opened[-1])
    return result


@dataclass
class Statement:
    """The one statement that counts a plan's rows (``statement``): its ``keys`` and ``values``
    (``TableLog.grouped``'s), and where the result's columns are — ``label`` and ``where`` whether those keys follow
    the decision, ``checks`` whether ``v1`` says that some row must be read instead, ``gaps`` the row filter's
    columns whose missing values are told (``v2 …``)."""

    keys: list
    values: list
    label: bool
    where: bool
    checks: bool
    gaps: list


def statement(plan) -> Statement | None:
    """The statement that counts a ``plan``'s rows (``prepare``'s, over a ``TableLog``), or None where the decision,
    the row filter, the label or a binned column cannot be read faithfully in SQL (module doc)."""
    from fairaudit.sources.sql import Column, compose, joined, missing, translate
    from fairaudit.spec import event_columns, parse_event

    log, attributes = plan.log, plan.scanner.attributes
    columns, dialect, na = log.sql_columns, log.dialect, log.schema.na_values
    checks, label = [], None
    if plan.label is not None:
        same = translate(_label_event(plan.label, plan.favourable), columns, dialect, na_values=na)
        if same is None:
            return None
        label = Column(compose("(CASE WHEN {} THEN 1 ELSE 0 END)", same.expr), "integer")
        checks += same.checks
    pred = parse_event(plan.pred)
    where = parse_event(plan.where) if plan.where else None
    decision = translate(pred, columns, dialect, na_values=na)
    kept = translate(where, columns, dialect, na_values=na, label=label) if where is not None else None
    if decision is None or (where is not None and kept is None):
        return None
    checks += list(decision.checks) + list(kept.checks if kept is not None else ())
    filtered = event_columns(where) if where is not None else []
    reads = event_columns(pred) + filtered + [a.name for a in attributes if a.binned] + [plan.label] * bool(label)
    for name in dict.fromkeys(reads):  # (an attribute is read as stored and conformed here: it needs neither)
        if not columns[name].exact:
            return None
        if columns[name].misfit is not None:
            checks.append(columns[name].misfit)
    keys = []
    for a in attributes:
        if a.binned:
            value = dialect.number(columns[a.name])
            if columns[a.name].kind == "integer":  # (memory reads whole numbers as floats exactly, up to 2^53)
                checks.append(compose("({} > 9007199254740992 OR {} < -9007199254740992)", value, value))
            keys.append((_bin_case(dialect.as_float(value), a.edges, dialect), None))
        else:
            keys.append((columns[a.name].key, a.name))
    keys.append((_zero_one(decision.expr), None))
    keys += [(label.value, None)] if label is not None else []
    keys += [(_zero_one(kept.expr), None)] if kept is not None else []
    values = [compose("COUNT(*)")]
    if checks:
        values.append(compose("MAX(CASE {} ELSE 0 END)", joined([compose("WHEN {} THEN 1", c) for c in checks], " ")))
    gaps = [c for c in dict.fromkeys(filtered) if columns[c].kind in ("integer", "float")]  # (text: never unknown)
    values += [compose("MAX(CASE WHEN {} IS NULL AND {} THEN 1 ELSE 0 END)", kept.expr,
                       missing(columns[c], dialect, na)) for c in gaps]
    return Statement(keys, values, label is not None, kept is not None, bool(checks), gaps)


def count(plan) -> bool:
    """Count a ``plan``'s rows in the database, by one statement (``statement``), into its scanner and tally; False
    (the plan is then spent) where the rows must be read instead (module doc)."""
    import pyarrow as pa

    from fairaudit.sources.conform import conform

    found = statement(plan)
    if found is None:
        return False
    log, scanner = plan.log, plan.scanner
    m = len(scanner.attributes)
    given = [a.name for a in scanner.attributes if not a.binned]
    told = 1 + found.checks  # the first ``v`` of the missing columns
    read = unknown = agree = 0
    missing: dict = {}
    for batch in log.grouped(found.keys, found.values):  # (a batch of groups at a time)
        n = _ints(batch.column("v0"))
        if found.checks and _ints(batch.column("v1")).any():
            return False
        d = batch.column(f"k{m}")
        if d.null_count:  # a decision neither true nor false on some row: the pipeline refuses it, naming the row
            return False
        d = _ints(d)
        labels = _ints(batch.column(f"k{m + 1}")) if found.label else None
        w = _ints(batch.column(f"k{len(found.keys) - 1}"), missing=-1) if found.where else None
        values = conform(pa.table([batch.column(f"k{i}") for i, a in enumerate(scanner.attributes) if not a.binned],
                                  names=given), log.schema, origin=log.name) if given else None
        codes = [_ints(batch.column(f"k{i}")) if a.binned else a.arrow_codes(values.column(a.name))
                 for i, a in enumerate(scanner.attributes)]
        audited = slice(None) if w is None else w == 1
        scanner.add([c[audited] for c in codes], d[audited], None if labels is None else labels[audited],
                    weights=n[audited])
        read += int(n.sum())
        unknown += int(n[w == -1].sum()) if w is not None else 0
        agree += int(n[d == labels].sum()) if labels is not None else 0
        missing.update((c, None) for i, c in enumerate(found.gaps) if _ints(batch.column(f"v{told + i}")).any())
    plan.tally(read=read, unknown=unknown, unknown_columns=[c for c in found.gaps if c in missing], agree=agree)
    return True


def _label_event(label: str, favourable):
    """The label's favourable value as an event: the 0/1 label every route computes (``frame[label] ==
    favourable``, ``fairaudit.core.codes.chunk_inputs``)."""
    from fairaudit.spec import ast

    value = favourable.item() if hasattr(favourable, "item") else favourable
    column = ast.Name(label, column=True)
    if isinstance(value, bool):
        return column if value else ast.EvNot(column)
    return ast.Compare("==", column, ast.Value(value))


def _zero_one(expr):
    from fairaudit.sources.sql import compose

    return compose("(CASE WHEN {} THEN 1 WHEN NOT {} THEN 0 END)", expr, expr)


def _bin_case(value, edges, dialect):
    """A number's bin (``Attribute.bin_codes``: ``edges[i] ≤ x < edges[i + 1]``, the last bin closed; a missing
    value or one outside the edges ``-1``) as a SQL ``CASE``."""
    from fairaudit.sources.sql import compose, joined

    p = dialect.param
    parts = [compose("WHEN {} IS NULL THEN -1", value),
             compose("WHEN NOT ({} >= {} AND {} <= {}) THEN -1", value, p(float(edges[0])), value,
                     p(float(edges[-1])))]
    parts += [compose(f"WHEN {{}} >= {{}} THEN {k}", value, p(float(edges[k]))) for k in range(len(edges) - 2, 0, -1)]
    return compose("(CASE {} ELSE 0 END)", joined(parts, " "))


def _ints(column, missing: int | None = None) -> np.ndarray:
    """An Arrow column of whole numbers as int64 (``missing``: what a NULL becomes)."""
    import pyarrow.compute as pac

    if missing is not None:
        column = pac.fill_null(column, missing)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.int64)


__all__ = ["COUNTED", "Statement", "count", "scan_table", "statement", "why_streamed"]
