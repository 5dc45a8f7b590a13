"""A database table as a source (``fairaudit.sources.database.TableLog``), events as SQL
(``fairaudit.sources.sql.translate``) and the scan of a table counted in the database as one GROUP BY
(``fairaudit.subgroups.database.scan_table``).

* The translation of an event is true, false or NULL on exactly the rows where ``evaluate_event3`` finds it true,
  false or unknown on the rows the pipeline reads — on generated events aimed at trouble (NULLs, empty and padded
  text, the category "?", boundaries of whole numbers and floats, 2^53 and 2^63, fractional literals against whole
  numbers, ``in`` lists mixing types, ``not``/``and``/``or`` over unknowns), in DuckDB and in SQLite.
* The scan of a DuckDB or SQLite table — counted in the database, and read in batches — gives the cells, counts,
  intervals, warnings and rows of the scan of the same rows as a CSV file in memory (NULLs, empty strings, numeric
  categories, a category in the last rows only, a row filter unknown on some rows, a label, bins, depth 1–3, the
  exact, one-look and anytime modes).
* What must be refused is refused in one line: a misspelt table (with the closest name), a name holding a quote or a
  semicolon (never run), a file that is no database, a value SQLite holds in a column of another type.
"""
from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest

duckdb = pytest.importorskip("duckdb")

from fairaudit.base.errors import DataError, FairauditError  # noqa: E402
from fairaudit.sources.database import DATABASE_BYTES, TableLog, fingerprint  # noqa: E402
from fairaudit.spec import ast  # noqa: E402

# ---- tables: the same rows in DuckDB, SQLite and a CSV file ------------------------------------------------------

SQL_TYPES = {"duckdb": {"text": "VARCHAR", "integer": "BIGINT", "float": "DOUBLE", "boolean": "BOOLEAN"},
             "sqlite": {"text": "TEXT", "integer": "INTEGER", "float": "REAL", "boolean": "BOOLEAN"}}


def write_duckdb(path, name: str, columns: dict, kinds: dict, parts: int = 1) -> None:
    con = duckdb.connect(str(path))
    q = '"' + name.replace('"', '""') + '"'
    con.execute(f"CREATE TABLE {q} (" + ", ".join(f'"{c}" {SQL_TYPES["duckdb"][kinds[c]]}' for c in columns) + ")")
    rows = list(zip(*columns.values()))
    step = max(1, -(-len(rows) // parts))
    for start in range(0, len(rows), step):  # several inserts: the table's parts
        con.executemany(f"INSERT INTO {q} VALUES ({', '.join('?' * len(columns))})", rows[start:start + step])
    con.close()


def write_sqlite(path, name: str, columns: dict, kinds: dict) -> None:
    con = sqlite3.connect(path)
    q = '"' + name.replace('"', '""') + '"'
    con.execute(f"CREATE TABLE {q} (" + ", ".join(f'"{c}" {SQL_TYPES["sqlite"][kinds[c]]}' for c in columns) + ")")
    con.executemany(f"INSERT INTO {q} VALUES ({', '.join('?' * len(columns))})", list(zip(*columns.values())))
    con.commit()
    con.close()


def write_csv(path, columns: dict) -> None:
    import csv

    def cell(v):
        if v is None or (isinstance(v, float) and v != v):
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(v) if isinstance(v, float) else str(v)

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(list(columns))
        for row in zip(*columns.values()):
            w.writerow([cell(v) for v in row])


def write_all(tmp_path, columns: dict, kinds: dict, name: str = "hiring", parts: int = 3) -> dict:
    paths = {"duckdb": tmp_path / "log.duckdb", "sqlite": tmp_path / "log.sqlite", "csv": tmp_path / "log.csv"}
    write_duckdb(paths["duckdb"], name, columns, kinds, parts)
    write_sqlite(paths["sqlite"], name, columns, kinds)
    write_csv(paths["csv"], columns)
    return paths


# ---- the translation against evaluate_event3 -----------------------------------------------------------------

BIG = [1 << 53, (1 << 53) + 1, 1 << 60, (1 << 63) - 1, -(1 << 63)]


def event_rows(rng, n: int, nan: bool) -> tuple[dict, dict]:
    """Rows aimed at trouble: NULLs, empty, padded and cased text, "?", whole numbers at 2^53 and 2^63, floats at
    the boundaries the literals use, a 0/1 column with NULLs, true/false."""
    texts = ["a", "b", "A", " a", "a ", "", "?", None, "\u3000b\u00a0", "ab", "NA"]
    ints = [0, 1, 2, -1, 3, None, None] + BIG
    floats = [0.0, -0.0, 0.5, 1.0, 2.0, 2.5, -0.5, None, 1e300, 9007199254740992.0, 0.1]
    if nan:
        floats.append(float("nan"))
    pick = lambda values: [values[int(k)] for k in rng.integers(0, len(values), n)]  # noqa: E731
    columns = {"t": pick(texts), "u": pick(texts), "i": pick(ints), "f": pick(floats), "g": pick(floats),
               "b": [bool(v) for v in rng.integers(0, 2, n)], "z": pick([0, 1, None]), "y": pick([0, 1]),
               "good": pick([0, 1])}
    kinds = {"t": "text", "u": "text", "i": "integer", "f": "float", "g": "float", "b": "boolean", "z": "integer",
             "y": "integer", "good": "integer"}
    return columns, kinds


NUMBERS = [0, 1, 2, -1, 0.5, 1.5, -0.5, 2.0, 2.5, 0.1, 1e300, 1e19, -1e19] + BIG + [(1 << 63), -(1 << 63) - 1,
                                                                                     9007199254740992.0]
TEXTS = ["a", "b", "A", "", "?", "ab", " a", "NA"]
OPS = ("<", "<=", ">", ">=", "==", "!=")


def random_leaf(rng):
    pick = lambda values: values[int(rng.integers(0, len(values)))]  # noqa: E731
    kind = int(rng.integers(0, 12))
    op = pick(OPS)
    if kind == 0:
        return ast.Compare(pick(("==", "!=")), ast.Name(pick(("t", "u"))), ast.Value(pick(TEXTS)))
    if kind == 1:
        return ast.Compare(op, ast.Name(pick(("t", "u"))), ast.Value(pick(TEXTS)))  # (order on text: memory allows)
    if kind == 2:
        return ast.Compare(op, ast.Name(pick(("i", "z", "y", "b"))), ast.Value(pick(NUMBERS)))
    if kind == 3:
        return ast.Compare(op, ast.Name(pick(("f", "g"))), ast.Value(pick(NUMBERS)))
    if kind == 4:
        return ast.Compare(op, ast.Value(pick(NUMBERS)), ast.Name(pick(("i", "f", "z"))))
    if kind == 5:
        return ast.Compare(op, ast.Name(pick(("i", "f", "z", "b", "y"))), ast.Name(pick(("i", "f", "g", "y"))))
    if kind == 6:
        return ast.Compare(pick(("==", "!=")), ast.Name("t"), ast.Name("u"))
    if kind == 7:
        fits = [v for v in NUMBERS if not isinstance(v, int) or -(1 << 63) <= v < (1 << 63)]  # (pandas' isin)
        values = tuple(ast.Value(pick(TEXTS + fits)) for _ in range(int(rng.integers(1, 4))))
        return ast.In(ast.Name(pick(("t", "i", "f", "z", "b"))), values, negated=bool(rng.integers(0, 2)))
    if kind == 8:
        return ast.Name(pick(("b", "z", "y", "i", "label", "t")))
    if kind == 9:
        return ast.Compare(op, ast.Name("label"), ast.Value(pick((0, 1, 0.5))))
    if kind == 10:
        return ast.Compare(op, ast.Value(pick(NUMBERS + TEXTS)), ast.Value(pick(NUMBERS + TEXTS)))
    return ast.Compare(op, ast.Name(pick(("i", "f"))), ast.Value(pick(TEXTS)))  # (a number against text)


def random_event(rng, depth: int = 3):
    r = rng.random()
    if depth == 0 or r < 0.35:
        return random_leaf(rng)
    if r < 0.5:
        return ast.EvNot(random_event(rng, depth - 1))
    node = ast.EvAnd if r < 0.75 else ast.EvOr
    return node(random_event(rng, depth - 1), random_event(rng, depth - 1))


@pytest.mark.parametrize("backend", ["duckdb", "sqlite"])
def test_events_in_sql_are_true_false_or_unknown_on_the_rows_memory_says(backend, tmp_path):
    from fairaudit.sources.sql import Column, compose, translate
    from fairaudit.spec.events import evaluate_event3
    from fairaudit.spec.errors import SpecError
    from fairaudit.spec.printer import event_text

    rng = np.random.default_rng(7 if backend == "duckdb" else 8)
    columns, kinds = event_rows(rng, 80, nan=backend == "duckdb")
    path = tmp_path / f"e.{backend}"
    (write_duckdb if backend == "duckdb" else write_sqlite)(path, "e", columns, kinds)
    log = TableLog(path, "e")
    frame = log.read_all()
    labels = frame["good"].to_numpy(dtype=np.int8)
    label = Column(compose("(CASE WHEN {} THEN 1 ELSE 0 END)", translate(
        ast.Compare("==", ast.Name("good"), ast.Value(1)), log.sql_columns, log.dialect).expr), "integer")
    order = " ORDER BY rowid" if backend == "sqlite" else ""
    con = duckdb.connect(str(path), read_only=True) if backend == "duckdb" else sqlite3.connect(path)
    compared = untranslated = unfaithful = 0
    for k in range(300):
        event = random_event(rng)
        try:
            true, known = evaluate_event3(event, frame, label=labels)
            refused = None
        except SpecError as err:
            refused = err
        found = translate(event, log.sql_columns, log.dialect, label=label)
        if found is None:
            untranslated += 1
            continue
        check = found.check()
        select = compose(f"SELECT {{}}, {{}} FROM {log.relation}{order}", found.expr, check or compose("0"))
        got = con.execute(select.text, list(select.params)).fetchall()
        if any(bool(c) for _, c in got):
            unfaithful += 1  # the caller reads the rows: nothing to compare
            continue
        assert refused is None, f"{event_text(event)}: memory refuses it ({refused}) but SQL answers"
        answer = [None if v is None else bool(v) for v, _ in got]
        expected = [None if not k_ else bool(t) for t, k_ in zip(true, known)]
        assert answer == expected, f"{backend}: {event_text(event)}\n{found.expr.text}"
        compared += 1
    con.close()
    print(backend, compared, untranslated, unfaithful)
    assert compared >= 150 and untranslated <= 120, (compared, untranslated, unfaithful)


def test_the_trimmed_whitespace_is_pyarrows():
    import pyarrow as pa
    import pyarrow.compute as pac

    from fairaudit.sources.sql import WHITESPACE

    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    trimmed = pac.utf8_trim_whitespace(pa.array(["x" + chr(c) for c in points])).to_pylist()
    assert WHITESPACE == "".join(chr(c) for c, t in zip(points, trimmed) if t == "x")


def test_every_literal_is_a_bound_parameter():
    from fairaudit.sources.sql import Column, Sql, translate
    from fairaudit.spec import parse_event

    columns = {"t": Column(Sql('"t"'), "text"), "i": Column(Sql('"i"'), "integer")}
    found = translate(parse_event('t == "x\'; DROP TABLE t; --" or i in {5, 7}'), columns, "duckdb")
    assert "DROP" not in found.expr.text and "5" not in found.expr.text
    assert "x'; DROP TABLE t; --" in found.expr.params and 5 in found.expr.params


# ---- the scan: counted in the database, read in batches, in memory ------------------------------------------------

def scan_rows(n: int = 900, seed: int = 1) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    g = [str(v) for v in rng.choice(["A", "B", " A", "a", "", "none"], n)]
    g = [None if v == "none" else v for v in g]
    g[-5:] = ["late"] * 5  # a category in the table's last rows only
    k = [None if r < 0.07 else int(v) for r, v in zip(rng.random(n), rng.integers(1, 4, n))]
    x = [None if r < 0.05 else float(v) for r, v in zip(rng.random(n), rng.choice([1.0, 2.5, 4.0], n))]
    age = [None if r < 0.1 else float(v) for r, v in zip(rng.random(n), rng.integers(18, 70, n))]
    dec = [int(v) for v in (rng.random(n) < np.where(np.asarray(g, dtype=object) == "B", 0.3, 0.55))]
    good = [int(v) for v in rng.integers(0, 2, n)]
    columns = {"g": g, "k": k, "x": x, "age": age, "dec": dec, "good": good}
    kinds = {"g": "text", "k": "integer", "x": "float", "age": "float", "dec": "integer", "good": "integer"}
    return columns, kinds


SCANS = [
    (["g"], dict(depth=1, pred="dec == 1", mode="exact", looks=0)),
    (["g", "k", "x"], dict(depth=3, pred="dec == 1", where="age > 30", label="good", mode="one-look")),
    (["g", "k"], dict(depth=2, pred="dec", bins={"age": [18, 30, 45, 70]}, mode="anytime", looks=0)),
    (["x", "g"], dict(depth=2, pred='dec == 1 and g != "B" or g == "A"', where="k != 2 and (age < 40.5 or label == 1)",
                      label="good", mode="exact", looks=0)),
    (["k"], dict(depth=1, pred='dec == 1 or g in {"A", "late"}', where="not (age >= 25.5) or k in {1, 3}",
                 mode="one-look",
                 bins={"x": [1, 2.5, 4]})),
]


def comparable(result, name_order: bool = True) -> dict:
    """What must be equal on every route (``name_order=False``: the columns a row filter is unknown on compared as
    a set — the scan read in batches names them in the order its batches meet them, ``reading.Decider``)."""
    import re

    d = result.to_dict()
    scan = d["scan"]
    for key in ("date", "data", "source", "data_hash", "hash_of"):
        scan.pop(key, None)
    scan["rows_record"].pop("counted", None)
    if not name_order:
        d["warnings"] = [re.sub(r"where (.*) (is|are) missing",
                                lambda m: "where " + " ".join(sorted(re.split(r", | or ", m.group(1)))), w)
                         for w in d.get("warnings", [])]
    return d


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    columns, kinds = scan_rows()
    return write_all(tmp_path_factory.mktemp("scan"), columns, kinds)


@pytest.mark.parametrize("backend", ["duckdb", "sqlite"])
@pytest.mark.parametrize("scan", range(len(SCANS)))
def test_a_table_scanned_in_the_database_and_in_batches_equals_the_scan_in_memory(backend, scan, logs):
    import fairaudit
    from fairaudit.subgroups.database import COUNTED, scan_table

    protected, kw = SCANS[scan]
    memory = fairaudit.scan(str(logs["csv"]), protected, **kw)
    counted = scan_table(logs[backend], "hiring", protected, **kw)
    read = scan_table(logs[backend], "hiring", protected, pushdown=False, rows=7, **kw)
    assert counted.rows_record.get("counted") == COUNTED
    assert "counted" not in read.rows_record
    assert comparable(counted) == comparable(memory)
    assert comparable(read, name_order=False) == comparable(memory, name_order=False)
    assert counted.data_hash == read.data_hash == hashlib.sha256(logs[backend].read_bytes()).hexdigest()
    assert counted.hash_of == read.hash_of == DATABASE_BYTES
    ids = [c.id for c in counted.cells]
    assert "g" not in protected or "g=late" in ids and "g=?" not in ids and "g=a" in ids and "g=A" in ids


@pytest.mark.parametrize("backend", ["duckdb", "sqlite"])
def test_a_table_read_in_order_gives_the_looks_of_memory(backend, logs):
    import fairaudit
    from fairaudit.subgroups.database import scan_table

    for order in ("given", "shuffle"):
        kw = dict(depth=2, pred="dec == 1", where="age > 30", mode="anytime", order=order, seed=3)
        memory = fairaudit.scan(str(logs["csv"]), ["g", "k"], **kw)
        read = scan_table(logs[backend], "hiring", ["g", "k"], rows=50, **kw)
        assert "counted" not in read.rows_record  # (the looks follow the rows: read, never counted)
        assert comparable(read) == comparable(memory)


def test_a_nocase_column_keeps_its_cases_apart_and_a_view_is_scanned(tmp_path):
    import fairaudit
    from fairaudit.subgroups.database import scan_table

    path = tmp_path / "c.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (g VARCHAR COLLATE NOCASE, d INTEGER)")
    con.execute("INSERT INTO t VALUES ('A', 1), ('a', 0), ('a', 1), (' A', 0), ('b', 1)")
    con.execute("CREATE VIEW v AS SELECT g, d FROM t WHERE d IS NOT NULL")
    con.close()
    for table in ("t", "v"):
        result = scan_table(path, table, ["g"], pred='d == 1 and g != "b"', mode="exact", looks=0)
        assert {c.id: (c.rows, c.selected) for c in result.cells} == {"g=A": (2, 1), "g=a": (2, 1), "g=b": (1, 0)}
    sq = tmp_path / "c.sqlite"
    con = sqlite3.connect(sq)
    con.execute("CREATE TABLE t (g TEXT COLLATE NOCASE, d INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [("A", 1), ("a", 0), ("a", 1), (" A", 0), ("b", 1)])
    con.commit()
    con.close()
    result = scan_table(sq, "t", ["g"], pred='d == 1 and g != "b"', mode="exact", looks=0)
    assert {c.id: (c.rows, c.selected) for c in result.cells} == {"g=A": (2, 1), "g=a": (2, 1), "g=b": (1, 0)}
    assert fairaudit  # (imported for the scan in memory elsewhere)


# ---- refusals -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["duckdb", "sqlite"])
def test_a_misspelt_table_is_refused_with_the_closest_name(backend, logs):
    from fairaudit.subgroups.database import scan_table

    with pytest.raises(DataError) as err:
        scan_table(logs[backend], "hirng", ["g"], pred="dec == 1")
    message = str(err.value)
    assert "\n" not in message and "'hirng'" in message and "did you mean 'hiring'" in message
    assert str(logs[backend]) in message


@pytest.mark.parametrize("backend", ["duckdb", "sqlite"])
def test_a_name_with_a_quote_or_a_semicolon_is_never_run(backend, tmp_path):
    from fairaudit.subgroups.database import scan_table

    name = 'odd"; DROP TABLE hiring; --'
    columns = {"g": ["a", "b", "a"], "dec": [1, 0, 1]}
    kinds = {"g": "text", "dec": "integer"}
    path = tmp_path / f"q.{backend}"
    (write_duckdb if backend == "duckdb" else write_sqlite)(path, "hiring", columns, kinds)
    with pytest.raises(DataError, match="has no table or view named"):
        scan_table(path, name, ["g"], pred="dec == 1")
    # a table that really has such a name: quoted, read, never run
    if backend == "duckdb":
        con = duckdb.connect(str(path))
        con.execute('CREATE TABLE "odd""; DROP TABLE hiring; --" AS SELECT * FROM hiring')
    else:
        con = sqlite3.connect(path)
        con.execute('CREATE TABLE "odd""; DROP TABLE hiring; --" AS SELECT * FROM hiring')
        con.commit()
    con.close()
    for pushdown in (True, False):
        result = scan_table(path, name, ["g"], pred="dec == 1", mode="exact", looks=0, pushdown=pushdown)
        assert {c.id: c.rows for c in result.cells} == {"g=a": 2, "g=b": 1}
    assert TableLog(path, "hiring").schema.names == ("g", "dec")  # still there


def test_a_file_that_is_no_database_is_refused(tmp_path, logs):
    from fairaudit.subgroups.database import scan_table

    with pytest.raises(DataError, match="is not a DuckDB or SQLite database") as err:
        scan_table(logs["csv"], "hiring", ["g"], pred="dec == 1")
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="file not found"):
        TableLog(tmp_path / "absent.duckdb", "t")


@pytest.mark.parametrize("backend", ["duckdb", "sqlite"])
def test_unknown_columns_and_undecided_rows_are_refused_as_from_a_file(backend, logs):
    from fairaudit.subgroups.database import scan_table
    from fairaudit.subgroups.reading import scan_log

    with pytest.raises(FairauditError, match=r"unknown column 'gg' \(did you mean 'g'\?\)"):
        scan_table(logs[backend], "hiring", ["gg"], pred="dec == 1")
    with pytest.raises(FairauditError, match="unknown column") as err:
        scan_table(logs[backend], "hiring", ["g"], pred="decc == 1", mode="exact", looks=0)
    assert "dec" in str(err.value)
    kw = dict(pred="age > 40", mode="exact", looks=0)  # age is missing on some rows: the decision is unknown there
    with pytest.raises(FairauditError) as from_file:
        scan_log(str(logs["csv"]), ["g"], **kw)
    with pytest.raises(FairauditError) as from_table:
        scan_table(logs[backend], "hiring", ["g"], **kw)
    assert str(from_table.value).replace(f"{logs[backend]} (table hiring)", "LOG") == \
        str(from_file.value).replace(str(logs["csv"]), "LOG")
    assert "neither true nor false" in str(from_table.value)


def test_a_sqlite_value_of_another_type_is_refused_with_its_row(tmp_path):
    from fairaudit.subgroups.database import scan_table

    path = tmp_path / "m.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (g TEXT, n INTEGER, d INTEGER, b BLOB)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [("a", 1, 1, b"x"), ("b", 2, 0, b"y"), ("a", "many", 1, b"")])
    con.commit()
    con.close()
    for pushdown in (True, False):  # (counted in the database: it finds the value and reads the rows to place it)
        with pytest.raises(DataError, match=r"data row 3: column 'n' holds 'many', which is not a whole number"):
            scan_table(path, "t", ["g"], pred="n > 1", mode="exact", looks=0, pushdown=pushdown)
        with pytest.raises(DataError, match=r"data row 3: column 'n' holds 'many'"):
            scan_table(path, "t", ["n"], pred="d == 1", mode="exact", looks=0, pushdown=pushdown)
    with pytest.raises(DataError, match="column 'b' is BLOB, which fairaudit does not read") as err:
        scan_table(path, "t", ["b"], pred="d == 1")
    assert "\n" not in str(err.value)


def test_a_duckdb_table_is_read_in_its_stored_order_and_opened_read_only(tmp_path):
    path = tmp_path / "o.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT i, (i % 3)::VARCHAR AS g FROM range(5000) r(i)")
    con.execute("DELETE FROM t WHERE i % 7 = 0")
    con.execute("UPDATE t SET g = 'x' WHERE i % 11 = 0")
    expected = [r[0] for r in con.execute("SELECT i FROM t ORDER BY rowid").fetchall()]
    con.close()
    log = TableLog(path, "t")
    got = [v for b in log.batches(rows=333) for v in b.table.column("i").to_pylist()]
    assert got == expected
    before = path.read_bytes()
    list(log.batches())
    assert path.read_bytes() == before
    assert fingerprint(log) == (hashlib.sha256(before).hexdigest(), DATABASE_BYTES)


@pytest.mark.parametrize("backend", ["duckdb", "sqlite"])
def test_missing_labels_missing_markers_and_declared_types_as_from_a_file(backend, tmp_path):
    from fairaudit.subgroups.database import scan_table
    from fairaudit.subgroups.reading import scan_log

    columns = {"g": ["a", "NA", " b", "", "a", "b", "NA", "a"], "code": [7, 7, 1, 2, 7, 1, 2, 2],
               "dec": [1, 0, 1, 1, 0, 1, 0, 1], "good": [1, None, 0, 1, None, 0, 1, 1]}
    kinds = {"g": "text", "code": "integer", "dec": "integer", "good": "integer"}
    paths = write_all(tmp_path, columns, kinds, name="t", parts=2)

    def same(**kw):
        table = {p: scan_table(paths[backend], "t", **kw) for p in (True, False)}
        del kw["protected"]
        file = scan_log(str(paths["csv"]), ["g", "code"], **kw)
        for result in table.values():
            assert comparable(result) == comparable(file)
        return table[True]

    with pytest.raises(DataError) as from_table:
        scan_table(paths[backend], "t", ["g"], pred="dec == 1", label="good", mode="exact", looks=0)
    with pytest.raises(DataError) as from_file:
        scan_log(str(paths["csv"]), ["g"], pred="dec == 1", label="good", mode="exact", looks=0)
    assert str(from_table.value) == str(from_file.value) and "2 missing values" in str(from_table.value)
    counted = same(protected=["g", "code"], pred='dec == 1 and g != "b"', mode="exact", looks=0,
                   na_values=("NA",))
    assert counted.rows_record.get("counted") and "g=NA" not in [c.id for c in counted.cells]
    read = same(protected=["g", "code"], pred='code == "7" or dec == 1', mode="exact", looks=0,
                declared={"code": "text"})
    assert "counted" not in read.rows_record  # (a declared type is read by the pipeline, not compared in SQL)
    assert "code=7" in [c.id for c in read.cells]


def test_duckdb_types_read_alike_counted_and_in_batches(tmp_path):
    from fairaudit.subgroups.database import scan_table

    path = tmp_path / "types.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', ' ok')")
    con.execute("CREATE TABLE t AS SELECT (['sad', 'ok', ' ok'])[1 + i % 3]::mood AS m, DATE '2024-01-01' + "
                "INTERVAL (i % 4) DAY AS day, (i % 5)::HUGEINT AS h, ((i % 7) / 4)::DECIMAL(10, 2) AS price, "
                "((i % 9) / 10)::FLOAT AS f, (i % 3)::UTINYINT AS u, i % 2 = 0 AS flag FROM range(400) r(i)")
    con.close()
    routes = []
    for protected, kw in ((["m", "day"], dict(pred="f > 0.3 and u != 1", where="flag", mode="exact", looks=0)),
                          (["h", "price"], dict(pred="h >= 2", depth=2, mode="one-look", bins={"f": [0, 0.3, 1]})),
                          (["m"], dict(pred="price > 0.5", mode="exact", looks=0))):
        counted = scan_table(path, "t", protected, **kw)
        read = scan_table(path, "t", protected, pushdown=False, rows=37, **kw)
        assert comparable(counted) == comparable(read)
        routes.append(bool(counted.rows_record.get("counted")))
    assert routes == [True, True, False]  # (a decimal with a fraction is compared by the pipeline, not in SQL)
    ids = [c.id for c in read.cells]
    assert ids and all(i.startswith("m=") for i in ids) and "m=ok" in ids and "m= ok" not in ids


def test_a_sqlite_table_without_rowid_and_after_deletes_is_read_in_order(tmp_path):
    path = tmp_path / "o.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (i INTEGER, g TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, str(i % 3)) for i in range(300)])
    con.execute("CREATE INDEX by_g ON t (g)")  # (a covering index would give the rows in g's order)
    con.execute("DELETE FROM t WHERE i % 7 = 0")
    con.execute("CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID")
    con.executemany("INSERT INTO w VALUES (?, ?)", [("b", 2), ("a", 1), ("c", 3)])
    con.commit()
    con.close()
    log = TableLog(path, "t", columns=("g", "i"))
    assert [v for b in log.batches(["i"], rows=50) for v in b.table.column("i").to_pylist()] == \
        [i for i in range(300) if i % 7]
    assert [v for b in TableLog(path, "w").batches() for v in b.table.column("k").to_pylist()] == ["a", "b", "c"]


def test_quantile_bins_and_a_scoring_rate_are_refused_as_from_a_file(logs):
    from fairaudit.subgroups.database import scan_table
    from fairaudit.subgroups.reading import scan_log

    for kw in (dict(bins={"age": 4}), dict(rate="scoring")):
        with pytest.raises(FairauditError) as from_table:
            scan_table(logs["duckdb"], "hiring", ["g"], pred="dec == 1", **kw)
        with pytest.raises(FairauditError) as from_file:
            scan_log(str(logs["csv"]), ["g"], pred="dec == 1", **kw)
        assert str(from_table.value) == str(from_file.value)


def test_a_sqlite_write_ahead_log_is_part_of_the_fingerprint(tmp_path):
    from fairaudit.sources.database import DATABASE_AND_LOG, is_database

    path = tmp_path / "w.db"
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("CREATE TABLE t (g TEXT, d INTEGER)")
    writer.executemany("INSERT INTO t VALUES (?, ?)", [("a", 1), ("b", 0)])
    writer.commit()
    try:
        log = TableLog(path, "t")
        first = fingerprint(log)
        assert first.of == DATABASE_AND_LOG and sum(b.table.num_rows for b in log.batches()) == 2
        writer.execute("INSERT INTO t VALUES ('c', 1)")
        writer.commit()
        assert fingerprint(log).digest != first.digest
        assert sum(b.table.num_rows for b in log.batches()) == 3
    finally:
        writer.close()
    assert is_database(path) and not is_database(tmp_path / "w.csv")


@pytest.mark.parametrize("pred", ["score >= 0.5", "pred == 1", "label", "dec"])
def test_a_refused_decision_reads_the_same_in_memory_in_batches_and_in_the_database(pred, tmp_path):
    # a decision that names a reserved word (the file has columns of those names: still the decision's own words),
    # or one that a missing value leaves undecided: one line, exit 2, the same words on every route
    import subprocess
    import sys

    columns = {"g": ["M", "F", "M", "F"], "pred": [1, 0, 1, 1], "label": [1, 0, 0, 1], "score": [.1, .9, .5, .7],
               "dec": [None, 1, 0, 1]}
    kinds = {"g": "text", "pred": "integer", "label": "integer", "score": "float", "dec": "integer"}
    paths = write_all(tmp_path, columns, kinds)
    base = [sys.executable, "-m", "fairaudit", "scan", "--protected", "g", "--pred", pred]
    runs = {"memory": ["--data", str(paths["csv"]), "--out-of-core", "off"],
            "batches": ["--data", str(paths["csv"]), "--out-of-core", "on"],
            "duckdb": ["--data", str(paths["duckdb"]), "--table", "hiring"],
            "sqlite": ["--data", str(paths["sqlite"]), "--table", "hiring"]}
    said = {}
    for route, args in runs.items():
        proc = subprocess.run(base + args, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (route, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, (route, proc.stderr)
        said[route] = lines[0]
    assert len(set(said.values())) == 1, said
    assert ("itself the decision" if pred != "dec" else "neither true nor false on 1 row (first: row 1)") \
        in said["memory"]
