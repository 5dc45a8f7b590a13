"""Benchmark: the subgroup scan on a big applicant log (a Parquet folder), against DuckDB and pandas.

The log (generated once, outside the timing, cached in ``$FAIRAUDIT_BENCH_CACHE`` or ``$TMPDIR/fairaudit-scan-bench``
— delete it to regenerate; written one part of ``PART`` rows at a time, so 100 M rows never sit in memory): a
folder of Parquet parts with ``applicant_id`` (int64), ``score`` (float64), four protected attributes as text —
``sex`` (Female / Male / Nonbinary, 1.5 % missing), ``race`` (6 values), ``age_band`` (5), ``disability`` (3) —
and ``selected`` (0/1), whose rate depends on every attribute and on some intersections.

Contenders, each in a fresh process per round, interleaved (``bench/timing.py``), ≥ 5 rounds, medians:

* ``fairaudit scan --data DIR --protected sex race age_band disability --pred "selected == 1" --depth 3 --mode
  one-look --json OUT`` (and ``--mode exact``), the command line as a user runs it;
* DuckDB ``GROUP BY CUBE`` over ``read_parquet('DIR/*.parquet')`` (all 16 sets of the 4 attributes: a superset of
  the scan's cells; the floor of the issue's target, and DuckDB's fastest here) and ``GROUP BY GROUPING SETS``
  (every set of 1 to 3 attributes: exactly the depth-3 scan's 14 tables; slower than CUBE with DuckDB 2.0.1);
* pandas: ``read_parquet`` of the 5 columns + one ``groupby`` per table;
* the same scan on a 10,000-row log: what the command pays whatever the size (interpreter, imports, output).

Outside the timing, the scan's cells (its ``--json``: each cell's ``rows`` and ``selected``) are checked against
DuckDB's counts (rows with a missing value in one of a table's attributes are in no cell of that table), and the
table says "same cells: yes/no".

Tables (one per target; median wall, median CPU, peak RSS, ratio to the floor, target, met/missed):

1. the ``--rows`` (default 10,000,000) depth-3 one-look scan ≤ 3× DuckDB's CUBE in CPU and ≤ 1 GB peak RSS;
2. ``--mode exact`` at 1,000,000 rows (a fresh dataset, as the command line reads it) ≤ 1.5× pandas read +
   groupby in CPU;
3. with ``--big``: 100,000,000 rows out of core, peak RSS ≤ 1 GB (and DuckDB's time beside it);
4. the same scan of ``--rows`` rows on Dask against a running cluster (``--scheduler``: a ``LocalCluster`` of 2 worker
   processes, started afresh before every round outside the timing, as in ``bench/scale_dask.py``, its start-up
   reported apart) ≤ 2× the out-of-core route in wall seconds; the cluster's CPU during the run is added to the run's;
5. the same rows as a DuckDB table (``scan --data FILE.duckdb --table applicants``: counted by the database as one
   ``GROUP BY``), beside DuckDB's own ``GROUP BY CUBE`` on that table (no target: what the pushdown costs).

Run: ``nice -n 10 .venv/bin/python bench/scan_scale.py`` (``--rounds N``, default 5; ``--rows N``; ``--quick``: 1 M
rows for tables 1, 4 and 5; ``--only 1,2,3,4,5``, default 1,2,4,5; ``--big``).
Results: ``bench/scan_scale_results.md``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import Snippet, interleave, stamp, table  # noqa: E402

ATTRS = ("sex", "race", "age_band", "disability")
PART = 1_000_000
CACHE = Path(os.environ.get("FAIRAUDIT_BENCH_CACHE", Path(tempfile.gettempdir()) / "fairaudit-scan-bench"))
SETS = [c for k in (1, 2, 3) for c in itertools.combinations(ATTRS, k)]  # a depth-3 scan's tables

GEN = """
import sys, pathlib, numpy as np, pyarrow as pa, pyarrow.parquet as pq
n, out, part = int(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
out.mkdir(parents=True, exist_ok=True)
levels = {"sex": ["Female", "Male", "Nonbinary"], "race": ["White", "Black", "Hispanic", "Asian", "Native", "Other"],
          "age_band": ["<25", "25-34", "35-44", "45-54", "55+"], "disability": ["no", "yes", "undisclosed"]}
shares = {"sex": [.48, .5, .02], "race": [.55, .15, .15, .08, .02, .05], "age_band": [.15, .3, .25, .18, .12],
          "disability": [.85, .08, .07]}
effect = {"sex": [0, .15, -.1], "race": [.2, -.35, -.2, .1, -.4, 0], "age_band": [0, .2, .1, -.1, -.45],
          "disability": [0, -.5, -.2]}
for i, a in enumerate(range(0, n, part)):
    m = min(part, n - a)
    rng = np.random.default_rng(1000 + i)
    codes = {k: rng.choice(len(v), m, p=shares[k]) for k, v in levels.items()}
    logit = -0.6 + sum(np.asarray(effect[k])[c] for k, c in codes.items())
    logit -= 0.6 * ((codes["sex"] == 0) & (codes["race"] == 1) & (codes["age_band"] == 4))  # an intersection
    selected = (rng.random(m) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    cols = {"applicant_id": pa.array(np.arange(a, a + m, dtype=np.int64)), "score": pa.array(rng.random(m))}
    for k, v in levels.items():
        mask = (rng.random(m) < 0.015) if k == "sex" else None  # some missing values
        cols[k] = pa.DictionaryArray.from_arrays(pa.array(codes[k].astype(np.int32), mask=mask),
                                                 pa.array(v)).cast(pa.string())
    cols["selected"] = pa.array(selected)
    tmp = out / f".part-{i:05d}.tmp"
    pq.write_table(pa.table(cols), tmp)
    tmp.rename(out / f"part-{i:05d}.parquet")
"""


def dataset(rows: int) -> Path:
    """The cached log of ``rows`` rows (a folder of Parquet parts), generated when missing."""
    path = CACHE / f"applicants-{rows}"
    done = CACHE / f"applicants-{rows}.done"
    if not done.exists():
        if path.exists():
            for f in path.iterdir():
                f.unlink()
        print(f"generating {rows:,} rows in {path} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-c", GEN, str(rows), str(path), str(min(PART, rows))], check=True)
        done.touch()
    return path


def scan_argv(data: Path, mode: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "fairaudit", "scan", "--data", str(data), "--protected", *ATTRS,
            "--pred", "selected == 1", "--depth", "3", "--mode", mode, "--json", str(out), "--force"]


def _sql_sets(sets) -> str:
    return ", ".join("(" + ", ".join(s) + ")" for s in sets)


def duckdb_query(data: Path, cube: bool = False) -> str:
    group = f"CUBE ({', '.join(ATTRS)})" if cube else f"GROUPING SETS ({_sql_sets(SETS)})"
    return (f"SELECT {', '.join(ATTRS)}, GROUPING({', '.join(ATTRS)}) AS g, count(*) AS n, sum(selected) AS s "
            f"FROM read_parquet('{data}/*.parquet') GROUP BY {group}")


def duckdb(data: Path, cube: bool = False) -> Snippet:
    return Snippet("import duckdb\ncon = duckdb.connect()\ncon.execute('SET enable_progress_bar = false')",
                   f"rows = con.sql({duckdb_query(data, cube)!r}).fetchall()\nprint(len(rows))")


def pandas(data: Path) -> Snippet:
    body = (f"df = pd.read_parquet({str(data)!r}, columns={list(ATTRS) + ['selected']!r})\n"
            f"for t in {[list(s) for s in SETS]!r}:\n"
            "    df.groupby(t, observed=True, sort=False)['selected'].agg(['sum', 'count'])\n")
    return Snippet("import pandas as pd", body)


def duckdb_cells(data: Path, cube: bool = False) -> dict:
    """{(table, groups): (rows, selected)} from DuckDB, rows with a missing value in the table's attributes left out."""
    import duckdb as ddb

    out = {}
    con = ddb.connect()
    con.execute("SET enable_progress_bar = false")
    for *values, g, n, s in con.sql(duckdb_query(data, cube)).fetchall():
        used = tuple(a for i, a in enumerate(ATTRS) if not (g >> (len(ATTRS) - 1 - i)) & 1)
        if not 1 <= len(used) <= 3:
            continue
        vals = [v for a, v in zip(ATTRS, values) if a in used]
        if any(v is None for v in vals):
            continue
        out[(used, tuple(vals))] = (int(n), int(s))
    return out


def scan_cells(path: Path) -> dict:
    result = json.loads(path.read_text())
    out = {}
    for c in result["cells"]:
        table_ = tuple(c["table"])
        out[(table_, tuple(str(c["groups"][a]) for a in table_))] = (int(c["rows"]), int(c["selected"]))
    return out


def same_cells(json_path: Path, data: Path) -> str:
    mine, ref = scan_cells(json_path), duckdb_cells(data)
    if mine == ref:
        return f"same cells: yes ({len(ref)} cells, rows and selected counts equal to DuckDB's)"
    diff = sorted(set(mine.items()) ^ set(ref.items()))[:5]
    return f"same cells: NO ({len(mine)} cells from the scan, {len(ref)} from DuckDB; first differences: {diff})"


def ratio(res, a: str, b: str) -> str:
    return " / ".join(f"{res.stat(a, f) / res.stat(b, f):.2f}" for f in ("wall", "cpu")) + " (wall / CPU)"


STARTED = []


def header(title: str, data: Path, rows: int) -> None:
    STARTED[:] = [stamp()]
    print(f"\n### {title}\n\n{rows:,} rows, {len(list(data.glob('*.parquet')))} Parquet parts in {data}; "
          f"{STARTED[0]}\n")


def footer() -> None:
    """Says whether the code changed while the table was measured (others edit the tree meanwhile)."""
    now = stamp()
    if now.split("; ", 1)[1] != STARTED[0].split("; ", 1)[1]:
        print(f"\n**the code changed during this table's runs**: at the end {now}")


def target_scan(rows: int, rounds: int, tmp: Path) -> None:
    data = dataset(rows)
    out = tmp / "scan.json"
    cube, sets, scan = "DuckDB GROUP BY CUBE (16 sets, floor)", "DuckDB GROUPING SETS (the 14 tables)", \
        "fairaudit scan --mode one-look"
    contenders = {cube: duckdb(data, cube=True), scan: scan_argv(data, "one-look", out), sets: duckdb(data),
                  "pandas read_parquet + 14 groupby": pandas(data),
                  "fairaudit scan --mode exact": scan_argv(data, "exact", tmp / "exact.json"),
                  "fairaudit scan --mode one-look on 10,000 rows (start-up and fixed costs)":
                      scan_argv(dataset(10_000), "one-look", tmp / "small.json")}
    header(f"1. depth-3 scan of {rows:,} rows vs DuckDB's CUBE (target ≤ 3× in CPU, ≤ 1 GB peak RSS)", data, rows)
    res = interleave(contenders, rounds, ok=(0, 1, 3))
    print(table(res, floor=cube, targets={scan: 3}, rss_targets={scan: 1024}))
    print(f"\n{scan} ÷ {sets}: {ratio(res, scan, sets)}")
    agree = "yes" if duckdb_cells(data, cube=True) == duckdb_cells(data) else "NO"
    print(f"\n{same_cells(out, data)} (one-look); exact: {same_cells(tmp / 'exact.json', data).split(' (')[0]}; "
          f"DuckDB CUBE's sets of 1–3 attributes = its GROUPING SETS: {agree}")
    footer()


def target_exact(rounds: int, tmp: Path, rows: int = 1_000_000) -> None:
    data = dataset(rows)
    out = tmp / "exact1m.json"
    contenders = {"pandas read_parquet + 14 groupby (floor)": pandas(data),
                  "fairaudit scan --mode exact": scan_argv(data, "exact", out)}
    header(f"2. --mode exact at {rows:,} rows from a fresh dataset vs pandas (target ≤ 1.5× in CPU)", data, rows)
    res = interleave(contenders, rounds, ok=(0, 1, 3))
    names = list(contenders)
    print(table(res, floor=names[0], targets={names[1]: 1.5}))
    print(f"\n{same_cells(out, data)}")
    footer()


def target_big(rounds: int, tmp: Path, rows: int = 100_000_000) -> None:
    data = dataset(rows)
    out = tmp / "big.json"
    contenders = {"DuckDB GROUP BY CUBE (floor)": duckdb(data, cube=True),
                  "fairaudit scan --mode one-look": scan_argv(data, "one-look", out)}
    header(f"3. {rows:,} rows out of core (target peak RSS ≤ 1 GB)", data, rows)
    res = interleave(contenders, rounds, ok=(0, 1, 3), timeout=1800)
    names = list(contenders)
    print(table(res, floor=names[0], rss_targets={names[1]: 1024}))
    print(f"\n{same_cells(out, data)}")
    footer()


def target_dask(rows: int, rounds: int, tmp: Path) -> None:
    from scale_dask import Cluster, OnCluster

    data = dataset(rows)
    cluster = Cluster(imports=("fairaudit.subgroups.distributed", "fairaudit.subgroups.scan", "pyarrow.parquet"))
    ooc, dask = "fairaudit scan, out of core (floor of the target)", "fairaudit scan --scheduler (running cluster)"
    contenders = {ooc: scan_argv(data, "one-look", tmp / "ooc.json") + ["--out-of-core", "on"],
                  dask: OnCluster(cluster, scan_argv(data, "one-look", tmp / "dask.json"))}
    header(f"4. the scan of {rows:,} rows on Dask, 2 local workers, against a running cluster (target ≤ 2× out of "
           "core in wall seconds)", data, rows)
    try:
        res = interleave(contenders, rounds, ok=(0, 1, 3), before_round=cluster.restart)
    finally:
        cluster.close()
    print(table(res, floor=ooc, targets={dask: 2}, on="wall"))
    ups = sorted(cluster.startups)
    mid = ups[len(ups) // 2]
    print(f"\ncluster start-up, apart (median of {len(ups)}): workers connected {mid[0]:.1f} s, fairaudit imported on "
          f"them {mid[1]:.1f} s (wall); the workers' peak RSS during a run, summed: {res.stat(dask, 'extra_rss', max):,.0f} MB "
          "(the table's peak RSS is the client's)")
    mine, theirs = scan_cells(tmp / "dask.json"), scan_cells(tmp / "ooc.json")
    print(f"\nsame cells on Dask as out of core: {'yes' if mine == theirs else 'NO'} ({len(mine)} cells)")
    footer()


def database(rows: int) -> Path:
    """The log of ``rows`` rows as the table ``applicants`` of a DuckDB file (made once, next to the log)."""
    path = CACHE / f"applicants-{rows}.duckdb"
    if not path.exists():
        import duckdb as ddb

        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        con = ddb.connect(str(tmp))
        con.execute(f"CREATE TABLE applicants AS SELECT * FROM read_parquet('{dataset(rows)}/*.parquet')")
        con.close()
        tmp.rename(path)
    return path


def target_database(rows: int, rounds: int, tmp: Path) -> None:
    db = database(rows)
    cube = "DuckDB GROUP BY CUBE on the table (floor)"
    scan = "fairaudit scan --data FILE.duckdb --table applicants --mode one-look"
    query = duckdb_query(dataset(rows), cube=True).replace(f"read_parquet('{dataset(rows)}/*.parquet')", "applicants")
    contenders = {cube: Snippet(f"import duckdb\ncon = duckdb.connect({str(db)!r}, read_only=True)\n"
                                "con.execute('SET enable_progress_bar = false')",
                                f"print(len(con.sql({query!r}).fetchall()))"),
                  scan: scan_argv(db, "one-look", tmp / "db.json") + ["--table", "applicants"]}
    header(f"5. the scan of a {rows:,}-row DuckDB table, counted by the database (no target)", dataset(rows), rows)
    res = interleave(contenders, rounds, ok=(0, 1, 3))
    print(table(res, floor=cube))
    print(f"\n{same_cells(tmp / 'db.json', dataset(rows))}")
    footer()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7, help="rows of table 1 (default 10,000,000)")
    ap.add_argument("--quick", action="store_true", help="table 1 at 1,000,000 rows")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="1,2,4,5", help="which tables: 1 (scan vs DuckDB), 2 (exact vs pandas), "
                    "3 (--big), 4 (Dask vs out of core), 5 (a DuckDB table)")
    ap.add_argument("--big", action="store_true", help="also table 3: 100,000,000 rows out of core")
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) | ({"3"} if args.big else set())
    with tempfile.TemporaryDirectory(prefix="fairaudit-scan-scale-") as tmp:
        if "1" in only:
            target_scan(int(1e6 if args.quick else args.rows), args.rounds, Path(tmp))
        if "2" in only:
            target_exact(args.rounds, Path(tmp))
        if "3" in only:
            target_big(args.rounds, Path(tmp))
        if "4" in only:
            target_dask(int(1e6 if args.quick else args.rows), args.rounds, Path(tmp))
        if "5" in only:
            target_database(int(1e6 if args.quick else args.rows), args.rounds, Path(tmp))


if __name__ == "__main__":
    main()
