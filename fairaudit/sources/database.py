"""A table (or view) of a database file as a log at rest: ``TableLog``, the face of ``FileLog`` over SQL.

``TableLog(database, table, columns=...)`` opens a DuckDB or SQLite file **read-only** (which one is decided by the
file's first bytes: ``backend``), finds ``table`` in the database's catalog (a table or a view; a name that is not
there is refused with the closest one), fixes the schema **once** from the column types the database declares
(``KINDS``: DuckDB's types, SQLite's declared types by its affinity rules; only the columns a run reads; a type the
pipeline does not read is refused in one line; ``declared`` overrides as for a file), and reads the rows in batches
through the one ingestion pipeline: every batch, as the database stores it, goes through
``fairaudit.sources.conform.conform`` — the same values and refusals as the same rows in a CSV or Parquet file.

Order: a DuckDB table's rows in their stored order (``rowid``: the connection keeps ``preserve_insertion_order``
on); a SQLite table's by ``rowid`` (a ``WITHOUT ROWID`` table's by its primary key); a view's as the database gives
them (SQL fixes no order for a view: the looks of a scan in the given order follow it).

Safety: the file is opened read-only (DuckDB also with no access to other files or extensions, so a view cannot read
a file elsewhere; SQLite with ``query_only`` and an untrusted schema); the table's name is matched against the
catalog and every identifier is quoted (``fairaudit.sources.sql.Dialect.quote``); no text of the user's is ever run
as SQL — only the statements built here, with every value a bound parameter. Whatever the database refuses is one
line naming the database and the table.

SQLite holds values of any type in any column: a value whose type is not its column's (text in an ``INTEGER``
column) is refused with its row, as a CSV's would be. Each column is also described for SQL (``sql_columns``:
``fairaudit.sources.sql.Column`` — how to read, group and check it), for the scan counted in the database
(``fairaudit.subgroups.database``).

``fingerprint(log)``: the SHA-256 of the database file's bytes (and of its write-ahead log's, where one is beside
it), read once per process while unchanged (``fairaudit.sources.fingerprint.of_parts``).
"""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path

from fairaudit.base import limits
from fairaudit.base.errors import DataError, first_line
from fairaudit.sources.files import READ_ROWS, Batch, FileLog
from fairaudit.sources.schema import KINDS, LogSchema, _declared, _unique_names, kind_of_arrow, parse_declared
from fairaudit.sources.sql import DIALECTS, EXACT, Column, Sql, compose, joined, missing

DUCKDB_SUFFIXES = (".duckdb", ".ddb")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
SQLITE_HEADER = b"SQLite format 3\x00"
DUCKDB_MAGIC = (8, b"DUCK")  # DuckDB's storage header: a checksum, then "DUCK"
DATABASE_BYTES = "the database file's bytes"
DATABASE_AND_LOG = "the database file's and its write-ahead log's bytes (each one's name and bytes, in order)"
READS = "whole numbers, numbers, true/false, text, dates and times"


def is_database(path) -> bool:
    """Whether ``path`` names a database file this module reads: a DuckDB or SQLite suffix, or either's header."""
    p = Path(os.fspath(path)).expanduser()
    if p.suffix.lower() in DUCKDB_SUFFIXES + SQLITE_SUFFIXES:
        return True
    return p.is_file() and _sniff(p) is not None


def _sniff(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            start = f.read(16)
    except OSError:
        return None
    if start.startswith(SQLITE_HEADER):
        return "sqlite"
    at, magic = DUCKDB_MAGIC
    if start[at:at + len(magic)] == magic:
        return "duckdb"
    return None


def backend(path) -> str:
    """Which database ``path`` is — ``"duckdb"`` or ``"sqlite"`` — from its first bytes (the one place the backend
    is chosen; a URL of a database server would be told here too); anything else is one line."""
    p = Path(os.fspath(path)).expanduser()
    if not p.exists():
        raise DataError(f"file not found: {p}")
    if not p.is_file():
        raise DataError(f"{p} is not a database file (a DuckDB or SQLite file)")
    found = _sniff(p)
    if found is None:
        raise DataError(f"{p} is not a DuckDB or SQLite database: it starts with neither's header (a DuckDB file "
                        f"holds DUCK at byte 8, a SQLite file starts with 'SQLite format 3')")
    return found


# ---- the backends: how each opens, lists, types and reads ---------------------------------------------------------

class _Backend:
    """What a backend does for a ``TableLog``; ``Error``: its exceptions."""

    name = ""
    dialect = DIALECTS["sqlite"]
    Error: tuple = ()

    def connect(self, path: Path):
        raise NotImplementedError

    def catalog(self, con) -> list[tuple[str, str, bool]]:
        """Every ``(schema, name, is a view)`` of the database's own tables and views."""
        raise NotImplementedError

    def columns(self, con, schema: str, name: str) -> list[tuple[str, str]]:
        """``(column, declared type)`` of a table, in order."""
        raise NotImplementedError

    def relation(self, schema: str, name: str) -> str:
        q = self.dialect.quote
        return f"{q(schema)}.{q(name)}"


class _DuckDB(_Backend):
    name = "duckdb"
    dialect = DIALECTS["duckdb"]
    INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER")
    WIDE = ("UBIGINT", "HUGEINT", "UHUGEINT")  # whole numbers that may not fit an int64 (refused, with the row)
    TEMPORAL = ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS",
                "TIMESTAMP WITH TIME ZONE")

    @property
    def Error(self):  # noqa: N802 - the backend's exception class, as ``sqlite3.Error``
        import duckdb

        return (duckdb.Error,)

    def connect(self, path: Path):
        import duckdb

        con = duckdb.connect(str(path), read_only=True, config={
            "enable_external_access": False, "autoload_known_extensions": False,
            "autoinstall_known_extensions": False, "preserve_insertion_order": True})
        con.execute("SET enable_progress_bar = false")
        con.execute("SET lock_configuration = true")
        return con

    def catalog(self, con):
        rows = con.execute("SELECT table_schema, table_name, table_type FROM information_schema.tables "
                           "WHERE table_catalog = current_database() ORDER BY table_schema, table_name").fetchall()
        return [(s, n, t.upper() == "VIEW") for s, n, t in rows]

    def columns(self, con, schema, name):
        return [(c, str(t)) for c, t in con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() "
            "AND table_schema = ? AND table_name = ? ORDER BY ordinal_position", [schema, name]).fetchall()]

    def kind(self, stored: str) -> tuple[str | None, bool]:
        """``(kind, exact)`` of a DuckDB type: the ``LogSchema`` kind its values are read as (None: not read), and
        whether SQL compares them as the pipeline reads them (``fairaudit.sources.sql.Column.exact``)."""
        t = stored.upper().strip()
        if t == "BOOLEAN":
            return "boolean", True
        if t in self.INTEGERS or t in self.WIDE:
            return "integer", True
        if t in ("FLOAT", "DOUBLE"):
            return "float", True
        if t == "VARCHAR" or t.startswith("ENUM("):
            return "text", True
        if t in self.TEMPORAL or t == "UUID":
            return "text", False  # (read as their text by conform; not compared in SQL)
        found = re.fullmatch(r"DECIMAL\(\d+,\s*(\d+)\)", t)
        if found:  # (conform's rule: a whole-number decimal is an integer, another a number)
            return ("integer", True) if int(found.group(1)) == 0 else ("float", False)
        return None, False

    def misfit(self, ident: str, stored: str, kind: str) -> Sql | None:
        """True on a row whose value conform refuses (None: no value can be)."""
        t = stored.upper().strip()
        if kind == "float":
            return Sql(f"isinf({ident})")
        if kind == "boolean":
            return Sql(f"({ident} IS NULL)")
        if kind == "integer" and (t in self.WIDE or t.startswith("DECIMAL")):
            return Sql(f"({ident} IS NOT NULL AND TRY_CAST({ident} AS BIGINT) IS NULL)")
        return None

    def key(self, ident: str, stored: str, kind: str) -> Sql:
        """The column as stored, grouped byte by byte (a ``COLLATE NOCASE`` column's ``A`` and ``a`` apart)."""
        return Sql(f'({ident} COLLATE "binary")') if stored.upper().strip() == "VARCHAR" else Sql(ident)

    def read(self, con, sql: Sql, rows: int, kinds, origin: str, schema: LogSchema):
        """The Arrow batches of a query, as DuckDB gives them (its Arrow types; an ``ENUM``'s dictionary indices
        signed, as every reader of a dictionary here expects them)."""
        import pyarrow as pa

        for batch in con.sql(sql.text, params=list(sql.params)).to_arrow_reader(rows):
            if any(pa.types.is_dictionary(t) and pa.types.is_unsigned_integer(t.index_type)
                   for t in batch.schema.types):
                batch = pa.RecordBatch.from_arrays(
                    [a.cast(pa.dictionary(pa.int32(), a.type.value_type)) if pa.types.is_dictionary(a.type) else a
                     for a in batch.columns], names=batch.schema.names)
            yield batch


class _SQLite(_Backend):
    name = "sqlite"
    dialect = DIALECTS["sqlite"]

    @property
    def Error(self):  # noqa: N802
        import sqlite3

        return (sqlite3.Error,)

    def connect(self, path: Path):
        import sqlite3

        con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        con.execute("PRAGMA query_only = ON")
        con.execute("PRAGMA trusted_schema = OFF")
        return _Closing(con)

    def catalog(self, con):
        rows = con.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
                           "AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name").fetchall()
        return [("main", n, t == "view") for n, t in rows]

    def columns(self, con, schema, name):
        return [(c, str(t or "")) for c, t in con.execute("SELECT name, type FROM pragma_table_info(?)",
                                                          [name]).fetchall()]

    def kind(self, stored: str) -> tuple[str | None, bool]:
        """SQLite's affinity rules (``INT`` → whole numbers; ``CHAR``/``CLOB``/``TEXT`` → text; ``REAL``/
        ``FLOA``/``DOUB`` → numbers), then ``BOOL`` → true/false (0/1), ``DATE``/``TIME`` → text, ``NUMERIC``/
        ``DECIMAL`` → numbers; no type or ``BLOB``: not read (declare a type). Every type is compared in SQL as the
        pipeline reads it (a value of another type is a misfit: ``misfit``)."""
        t = stored.upper()
        if "INT" in t:
            return "integer", True
        if any(k in t for k in ("CHAR", "CLOB", "TEXT")):
            return "text", True
        if any(k in t for k in ("REAL", "FLOA", "DOUB")):
            return "float", True
        if "BOOL" in t:
            return "boolean", True
        if "DATE" in t or "TIME" in t:
            return "text", True
        if any(k in t for k in ("NUMERIC", "DECIMAL", "NUMBER")):
            return "float", True
        return None, False

    def misfit(self, ident: str, stored: str, kind: str) -> Sql | None:
        if kind == "integer":
            return Sql(f"(typeof({ident}) NOT IN ('integer', 'null'))")
        if kind == "text":
            return Sql(f"(typeof({ident}) NOT IN ('text', 'null'))")
        if kind == "boolean":
            return Sql(f"(typeof({ident}) <> 'integer' OR {ident} NOT IN (0, 1))")
        return Sql(f"(typeof({ident}) NOT IN ('integer', 'real', 'null') OR {ident} IN (9e999, -9e999) OR "
                   f"(typeof({ident}) = 'integer' AND ({ident} > {EXACT} OR {ident} < -{EXACT})))")

    def key(self, ident: str, stored: str, kind: str) -> Sql:
        return Sql(f"({ident} COLLATE BINARY)")

    def relation(self, schema, name):
        return self.dialect.quote(name)

    def read(self, con, sql: Sql, rows: int, kinds, origin: str, schema: LogSchema):
        """The rows of a query as Arrow batches, each column built as its kind (``kinds``: per column a schema
        column's name, typed as that column, or None: a whole number the query computed); a value of another type
        is refused with its row (``_sqlite_array``)."""
        import pyarrow as pa

        cursor = con.execute(sql.text, sql.params)
        names = [d[0] for d in cursor.description]
        first = 0
        while True:
            block = cursor.fetchmany(rows)
            if not block:
                return
            columns = list(zip(*block))
            arrays = [pa.array(values, pa.int64()) if column is None else
                      _sqlite_array(list(values), column, schema, origin, first)
                      for values, column in zip(columns, kinds)]
            yield pa.RecordBatch.from_arrays(arrays, names=names)
            first += len(block)


class _Closing:
    """A sqlite3 connection that closes when its ``with`` block ends (sqlite3's own only ends a transaction)."""

    def __init__(self, con):
        self.con = con

    def __getattr__(self, name):
        return getattr(self.con, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.con.close()


def _sqlite_array(values: list, name: str, schema: LogSchema, origin: str, first_row: int):
    """One column of SQLite values (Python objects) as the Arrow array a typed store would hold, for conform:
    whole numbers as int64, numbers as float64, text, true/false from 0/1. A value whose type its column's kind does
    not take — text in an ``INTEGER`` column, a ``BLOB`` — is refused with its row (conform's own words)."""
    import pyarrow as pa

    from fairaudit.sources.conform import _misfit, conform

    kind = schema.kind(name)
    try:
        arr = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        arr = None
    if arr is not None:
        if pa.types.is_null(arr.type) or name in schema.declared:
            return arr  # (conform reads a declared column's values in the declared type)
        stored = kind_of_arrow(arr.type)
        if stored == kind or (kind == "float" and stored == "integer"):
            return arr
        if kind == "boolean" and stored == "integer":
            import pyarrow.compute as pac

            if pac.all(pac.is_in(arr.drop_null(), value_set=pa.array([0, 1]))).as_py():
                return arr.cast(pa.bool_())  # (a missing one stays missing: conform refuses it)
    takes = {"integer": (int,), "float": (int, float), "text": (str,), "boolean": (int,)}[kind]
    for at, value in enumerate(values):
        if value is None:
            continue
        if type(value) not in takes or (kind == "boolean" and value not in (0, 1)):
            raise _misfit(origin, first_row + at + 1, name, value, schema)
        if type(value) is int and not -(1 << 63) <= value < (1 << 63):
            raise _misfit(origin, first_row + at + 1, name, value, schema)
        if kind == "float" and type(value) is int and abs(value) > EXACT:  # conform's own refusal, at its row
            conform(pa.table({name: pa.array([value], pa.int64())}), schema, origin=origin,
                    first_row=first_row + at)
    raise DataError(f"{origin}: column '{name}' holds values fairaudit cannot read together")  # pragma: no cover


BACKENDS = {"duckdb": _DuckDB(), "sqlite": _SQLite()}


# ---- the log ------------------------------------------------------------------------------------------------------

class TableLog(FileLog):
    """A table or view of a DuckDB or SQLite file read as a log (module doc): ``FileLog``'s face — ``name``,
    ``stem``, ``schema``, ``batches``, ``frames``, ``read_all``, ``parts`` (the database file: one part) — over SQL.
    ``columns``: the columns a run uses (only those are typed and read; where one is a name the table lacks, every
    column whose type the pipeline reads is typed, so that the run's own check names the table's columns)."""

    def __init__(self, database, table: str, *, columns=None, declared=None, na_values=()):
        self.table = str(table)
        self.view = None  # ``values_view``'s label (a one-element tuple) on a copy that reads the values only
        super().__init__(os.fspath(database), declared=declared, na_values=tuple(na_values or ()),
                         columns=None if columns is None else tuple(columns))

    def __post_init__(self):
        path = Path(self.source).expanduser()
        self.format = backend(path)
        self.backend = BACKENDS[self.format]
        self.path = str(path)
        self.parts = [self.path]
        self.first = self.path
        with self._connected() as con:
            self.schema_name, self.table, self.is_view = self._find(con)
            stored = self.backend.columns(con, self.schema_name, self.table)
            self.schema = self._fix_schema_from(stored)
            self._check_arrow(con)
        self.order = None if self.is_view else self._order()

    # ---- naming ---------------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return f"{self.path} (table {self.table})"

    @property
    def stem(self) -> str:
        return self.table

    @property
    def dialect(self):
        return self.backend.dialect

    @property
    def relation(self) -> str:
        """The table's quoted name, as every statement here names it."""
        return self.backend.relation(self.schema_name, self.table)

    def _connected(self):
        try:
            return self.backend.connect(Path(self.path))
        except self.backend.Error as err:
            raise DataError(f"cannot open {self.path} as a {self.format} database: {first_line(err)}") from None

    def _failed(self, err) -> DataError:
        return DataError(f"{self.name}: the database refused the read: {first_line(err)}")

    # ---- the catalog and the schema, once ---------------------------------------------------------------------------

    def _find(self, con) -> tuple[str, str, bool]:
        """``(schema, name, is a view)`` of the table asked for: its exact name in the default schema, else in the
        one schema that has it, else ``schema.name``; anything else is refused with the closest name."""
        from fairaudit.base.text import listing, suggestion

        try:
            entries = self.backend.catalog(con)
        except self.backend.Error as err:
            raise DataError(f"cannot read the catalog of {self.path}: {first_line(err)}") from None
        default = "main"
        exact = [e for e in entries if e[1] == self.table]
        found = [e for e in exact if e[0] == default] or (exact if len(exact) == 1 else [])
        found = found or [e for e in entries if f"{e[0]}.{e[1]}" == self.table]
        if len(found) == 1:
            return found[0]
        shown = [e[1] if e[0] == default else f"{e[0]}.{e[1]}" for e in entries]
        if len(exact) > 1:
            raise DataError(f"{self.path} has a table {self.table!r} in several schemas "
                            f"({', '.join(e[0] for e in exact)}): name one as schema.{self.table}")
        if not entries:
            raise DataError(f"{self.path} has no table or view (asked for {self.table!r})")
        hint = suggestion(self.table, shown) or f"; its tables and views: {listing(shown)}"
        raise DataError(f"{self.path} has no table or view named {self.table!r}{hint}")

    def _fix_schema_from(self, stored: list[tuple[str, str]]) -> LogSchema:
        """The schema of the columns a run reads, from the types the database declares (``FileLog._selected``'s
        rule for which columns)."""
        from fairaudit.base.text import suggestion

        where = self.name
        if not stored:
            raise DataError(f"{where} has no columns")
        raw = [c for c, _ in stored]
        names = list(_unique_names(raw, where))
        types = dict(zip(names, (t for _, t in stored)))
        declared = parse_declared(self.declared)
        unknown = [c for c in declared if c not in names]
        if unknown:
            raise DataError(f"--column-type names column '{unknown[0]}', which {where} does not have"
                            f"{suggestion(unknown[0], names)}")
        limit = limits.columns_limit()
        asked = None if self.columns is None else set(self.columns)
        lacking = asked is not None and not asked <= set(names)
        every = asked is None or (lacking and len(names) <= limit)
        kinds, exact = {}, {}
        for n in names:
            if not (every or n in asked):
                continue
            kind, same = self.backend.kind(types[n])
            if kind is None and n not in declared:
                if asked is not None and n not in asked:
                    continue  # (read only to name the table's columns: a type not read is left out)
                how = (f"declare its type (--column-type {n}=text)" if not types[n] else
                       "leave it out of the run, or cast it to text or numbers in a view")
                raise DataError(f"{where}: column '{n}' is {types[n] or 'declared with no type'}, which fairaudit "
                                f"does not read (it reads {READS}); {how}")
            kinds[n] = declared.get(n, kind)
            exact[n] = same and declared.get(n, kind) == kind
        chosen = [n for n in names if n in kinds]
        if len(chosen) > limit:
            raise DataError(f"{where} has {len(names):,} columns, {len(chosen):,} of them read, over the limit of "
                            f"{limit:,} columns that one run reads; keep only the columns the audit needs (or have "
                            f"whoever runs fairaudit raise the limit with {limits.COLUMNS_ENV})")
        if not chosen:  # (a batch of no column has no rows: the first column the pipeline reads)
            first = next((n for n in names if self.backend.kind(types[n])[0] is not None), None)
            if first is None:
                raise DataError(f"{where}: none of its columns is of a type fairaudit reads ({READS})")
            chosen = [first]
            kinds[first], exact[first] = self.backend.kind(types[first])
        self.names = tuple(names)
        self.stored_types = {n: types[n] for n in chosen}
        stored_names = dict(zip(names, raw))
        kind_list, fixed = _declared(chosen, [kinds[n] for n in chosen], declared, where)
        schema = LogSchema(tuple(chosen), kind_list, f"the column types {self.format} declares for {where}",
                           frozenset(self.na_values), fixed, tuple(stored_names[n] for n in chosen))
        self._exact = exact
        return schema

    def _check_arrow(self, con) -> None:
        """The Arrow types the database gives for the columns read must be their kinds' (else one line)."""
        if self.format != "duckdb":
            return
        q = self.dialect.quote
        select = ", ".join(q(self.schema.stored_name(n)) for n in self.schema.names)
        try:
            arrow = con.sql(f"SELECT {select} FROM {self.relation} LIMIT 0").to_arrow_table().schema
        except self.backend.Error as err:
            raise self._failed(err) from None
        for name, field in zip(self.schema.names, arrow):
            if name in self.schema.declared:
                continue
            if kind_of_arrow(field.type) != self.schema.kind(name):
                raise DataError(f"{self.name}: column '{name}' is {self.stored_types[name]}, which fairaudit does "
                                f"not read (it reads {READS}); leave it out of the run")

    def _order(self) -> str | None:
        """How a table's rows are ordered when read: SQLite's ``rowid`` (a ``WITHOUT ROWID`` table: its primary key);
        DuckDB reads a table in its stored order without being told (``preserve_insertion_order``)."""
        if self.format != "sqlite":
            return None
        with self._connected() as con:
            try:
                con.execute(f"SELECT rowid FROM {self.relation} LIMIT 0")
                return "rowid"
            except self.backend.Error:
                keys = con.execute("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk",
                                   [self.table]).fetchall()
                return ", ".join(self.dialect.quote(k) for (k,) in keys) or None

    # ---- SQL ------------------------------------------------------------------------------------------------------

    @property
    def sql_columns(self) -> dict[str, Column]:
        """Each column of the schema as SQL reads it (``fairaudit.sources.sql.Column``): its quoted name, kind,
        whether SQL compares it as the pipeline reads it, how to group it and what it refuses."""
        out = {}
        for name in self.schema.names:
            ident = self.dialect.quote(self.schema.stored_name(name))
            stored, kind = self.stored_types[name], self.schema.kind(name)
            out[name] = Column(Sql(ident), kind, self._exact.get(name, False), self.backend.key(ident, stored, kind),
                               self.backend.misfit(ident, stored, kind) if self._exact.get(name) else None, stored)
        return out

    def grouped(self, keys: list, values: list, rows: int = READ_ROWS):
        """``SELECT keys, values FROM the table GROUP BY keys``: one statement, run by the database; its groups as
        Arrow record batches of columns ``k0 …``, ``v0 …`` (at most ``rows`` each). ``keys``: ``(Sql, column)``
        pairs, a schema column's name where the key is that column as stored (it comes back as a batch of that
        column would: for conform), else None (a whole number the statement computes); ``values``: aggregates
        (whole numbers)."""
        select = joined([compose(f'{{}} AS "k{i}"', sql) for i, (sql, _) in enumerate(keys)]
                        + [compose(f'{{}} AS "v{i}"', sql) for i, sql in enumerate(values)])
        statement = compose(f"SELECT {{}} FROM {self.relation} GROUP BY "
                            f"{', '.join(str(i + 1) for i in range(len(keys)))}", select)
        yield from self._run(statement, [c for _, c in keys] + [None] * len(values), rows)

    def _run(self, statement: Sql, kinds, rows: int):
        """The batches of one statement built here (never the user's text)."""
        with self._connected() as con:
            try:
                yield from self.backend.read(con, statement, rows, kinds, self.name, self.schema)
            except self.backend.Error as err:
                raise self._failed(err) from None

    # ---- reading --------------------------------------------------------------------------------------------------

    def _select(self, names) -> str:
        q = self.dialect.quote
        return ", ".join(q(self.schema.stored_name(n)) for n in names)

    def read_part(self, path=None, columns=None, rows: int = READ_ROWS, offset: int = 0, encoded: bool = False):
        """The conformed ``Batch``es of the table (a database is one part; ``FileLog.read_part``'s face). Every
        column of the schema is read and checked, whichever are asked for (a row fits or not whatever is read of
        it; the schema holds only the columns the run reads)."""
        import pyarrow as pa
        import pyarrow.compute as pac

        from fairaudit.sources.conform import conform

        wanted = list(columns) if columns is not None else list(self.schema.names)
        every = list(self.schema.names)
        order = f" ORDER BY {self.order}" if self.order else ""
        statement = Sql(f"SELECT {self._select(every)} FROM {self.relation}{order}")
        first = 0
        for raw in self._run(statement, every, rows):
            if encoded:  # text as dictionaries: conform trims each distinct value once
                raw = pa.RecordBatch.from_arrays(
                    [pac.dictionary_encode(a) if self.schema.kind(n) == "text" and pa.types.is_string(a.type)
                     else a for n, a in zip(every, raw.columns)], names=raw.schema.names)
            table = conform(raw, self.schema, origin=self.name, first_row=first, columns=every, encoded=encoded)
            yield Batch(table.select(wanted), self.name, first, offset + first)
            first += raw.num_rows

    def batches(self, columns=None, rows: int = READ_ROWS, encoded: bool = False):
        """Every conformed ``Batch`` of the table, in its order (module doc); on a ``values_view``, its values."""
        if self.view is not None:
            yield from self._value_batches(columns, rows)
            return
        yield from self.read_part(self.path, columns, rows, 0, encoded=encoded)

    def values_view(self, label: str | None = None) -> "TableLog":
        """This log as the pass that collects its columns' values reads it (``fairaudit.sources.values.
        distinct_pass``, behind ``fairaudit.engines.monitor.outofcore.file_dataset``), computed by the database: its
        batches hold each distinct combination of the text and true/false columns asked for and the ``label`` once
        (a number column: missing), and every row whose label is missing (so that they are counted) — or, when no
        such column is asked for, one row. The values, whether there is a row and the rows without a label are
        those of the table; a refused value's row number is not (read the table itself to place it)."""
        view = copy.copy(self)
        view.view = (label,)
        return view

    def _value_batches(self, columns, rows: int):
        import pyarrow as pa

        from fairaudit.sources.conform import conform

        (label,) = self.view
        wanted = list(columns) if columns is not None else list(self.schema.names)
        kept = [c for c in wanted if self.schema.kind(c) in ("text", "boolean") or c == label]
        sql = self.sql_columns
        if not kept:
            statements = [Sql(f"SELECT {self._select(wanted[:1])} FROM {self.relation} LIMIT 1")]
            kept = wanted[:1]
        else:
            keys = joined([compose(f"{{}} AS {self.dialect.quote(self.schema.stored_name(c))}", sql[c].key)
                           for c in kept])
            statements = [compose(f"SELECT DISTINCT {{}} FROM {self.relation}", keys)]
            if label in kept:
                gone = missing(sql[label], self.dialect, self.na_values)
                statements = [compose(f"SELECT DISTINCT {{}} FROM {self.relation} WHERE NOT {{}}", keys, gone),
                              compose(f"SELECT {self._select(kept)} FROM {self.relation} WHERE {{}}", gone)]
        first = 0
        for statement in statements:
            for raw in self._run(statement, kept, rows):
                table = conform(raw, self.schema, origin=self.name, first_row=first, columns=kept)
                arrays = [table.column(c) if c in kept else pa.nulls(table.num_rows, _arrow_type(self.schema.kind(c)))
                          for c in wanted]
                yield Batch(pa.table(arrays, names=wanted), self.name, first, first)
                first += raw.num_rows


def _arrow_type(kind: str):
    import pyarrow as pa

    return {"integer": pa.int64(), "float": pa.float64(), "boolean": pa.bool_(), "text": pa.string()}[kind]


def fingerprint(log: TableLog):
    """``(SHA-256 hex, what it is of)`` of the database a ``TableLog`` reads: its file's bytes (``DATABASE_BYTES``),
    or with a write-ahead log beside it (DuckDB's ``.wal``, SQLite's ``-wal``: rows not yet in the file) each one's
    name and bytes in order (``DATABASE_AND_LOG``); read once per process while unchanged
    (``fairaudit.sources.fingerprint.of_parts``)."""
    from fairaudit.sources.fingerprint import Fingerprint, of_parts

    wal = log.path + (".wal" if log.format == "duckdb" else "-wal")
    parts = [log.path] + ([wal] if os.path.isfile(wal) and os.path.getsize(wal) else [])
    found = of_parts(parts)
    return Fingerprint(found.digest, DATABASE_BYTES if len(parts) == 1 else DATABASE_AND_LOG)


__all__ = ["BACKENDS", "DATABASE_AND_LOG", "DATABASE_BYTES", "KINDS", "TableLog", "backend", "fingerprint",
           "is_database"]
