"""Benchmark: ``fairaudit audit`` on big decision logs — rows/s and peak memory, in process and out of core.

Generates synthetic COMPAS-like logs (``sex, race, age, decile_score, two_year_recid``) of the requested sizes,
Parquet (and CSV for the configurations that read it), written in pieces of 1 M rows so that generating 100 M rows
needs little memory, and cached in ``$TMPDIR/fairaudit-scale-bench`` (delete it to regenerate). Each configuration
audits ``E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2`` with ``--pred 'decile_score >
4'`` (Δ = 0.05, a check every 5 rows up to 1 M rows, then 0.01 % of the stream apart; the monitor runs to the end of the stream, it does not stop at the decision) in
its own fresh process (``bench/timing.py``: ``--rounds`` interleaved rounds, 5 by default, every configuration
once per round) and the table gives the medians of the wall time, rows/s, the CPU time (user + system: the machine is
shared, so wall time depends on the load, printed before and after), the peak RSS, the verdict and the stop step.

The floors, run in the same rounds on the same Parquet file: a plain **pyarrow** pass (``iter_batches`` over the
two columns the audit reads, each batch's counts by race of the rows and of ``decile_score > 4``: what the audit
needs at its last check) and a **DuckDB** pass (``SELECT race, count(*), sum(decile_score > 4) ... GROUP BY race``).
Each row gives its time against both (wall / CPU).

Configurations are the list ``CONFIGS``: a name, the file format, the command (``fairaudit audit`` with extra
flags, or any argv built from the file's path) and the largest size it is run at. Add a column by adding one.

Run: ``nice -n 10 .venv/bin/python bench/scale.py [ROWS ...] [--rounds N]`` (default ``1e6 1e7 1e8``; 1e8 takes
minutes).

The same log and audit on a Dask ``LocalCluster`` (2 workers, the log split into Parquet files): ``bench/scale_dask.py``;
with ``Fair[...]`` (a model re-predicting every row): ``bench/scale_fair.py``; a live log (``--follow``) at a given
arrival rate: ``bench/live.py``. Results: ``bench/scale_results.md``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import Snippet, interleave, stamp  # noqa: E402

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2'
PRED = "decile_score > 4"
PIECE = 1_000_000  # rows generated (and written) at a time
CACHE = Path(os.environ.get("FAIRAUDIT_BENCH_CACHE", Path(tempfile.gettempdir()) / "fairaudit-scale-bench"))


def audit(*extra: str) -> Callable[[Path], list[str]]:
    """The argv of ``fairaudit audit`` on a log, with ``extra`` flags."""
    return lambda path: [sys.executable, "-m", "fairaudit", "audit", "--data", str(path), "--pred", PRED,
                         "--spec", SPEC, *extra]


@dataclass
class Config:
    name: str
    fmt: str  # "parquet" or "csv": the log it reads
    command: Callable[[Path], list[str]]
    max_rows: float = float("inf")  # not run beyond this size (memory)
    notes: dict = field(default_factory=dict)


PYARROW_FLOOR = Snippet("""import sys
sys.modules["pandas"] = None  # else pyarrow's to_numpy imports pandas (~0.5 s) that this pass does not need
import numpy as np, pyarrow.parquet as pq""", """
# one plain pass over the two columns the audit reads: per race, the rows and the rows with decile_score > 4
f = pq.ParquetFile(sys.argv[1])
n, s = np.zeros(64, np.int64), np.zeros(64, np.int64)
for b in f.iter_batches(batch_size=1 << 18, columns=["race", "decile_score"], use_threads=False):
    r = b.column(0)
    codes = r.indices.to_numpy(zero_copy_only=False) if hasattr(r, "indices") else None
    if codes is None:  # a plain string column: encode it
        codes = r.dictionary_encode().indices.to_numpy(zero_copy_only=False)
    pred = b.column(1).to_numpy(zero_copy_only=False) > 4
    n += np.bincount(codes, minlength=64)[:64]
    s += np.bincount(codes, weights=pred, minlength=64)[:64].astype(np.int64)
print("verdict: -")
print("stop step: -")
print(f"rows {int(n.sum())}")
""")
DUCKDB_FLOOR = Snippet("import sys, duckdb\ncon = duckdb.connect()\ncon.execute('SET enable_progress_bar = false')",
                       """
rows = con.execute("SELECT race, count(*), sum((decile_score > 4)::INTEGER) FROM read_parquet(?) GROUP BY race",
                   [sys.argv[1]]).fetchall()
print("verdict: -")
print("stop step: -")
print(f"rows {sum(r[1] for r in rows)}")
""")


def snippet(code: Snippet) -> Callable[[Path], Snippet]:
    """A floor's contender on a log: the snippet with the log's path as its argument."""
    return lambda path: Snippet(code.setup, code.body, (str(path),))


FLOORS = [
    Config("floor: one plain pyarrow pass (the two columns, counts by race)", "parquet", snippet(PYARROW_FLOOR)),
    Config("floor: DuckDB GROUP BY race", "parquet", snippet(DUCKDB_FLOOR)),
]

CONFIGS = [
    Config("in process (CSV, file order)", "csv", audit("--order", "given", "--out-of-core", "off"), 2e6),
    Config("in process (CSV, shuffled)", "csv", audit("--order", "shuffle", "--out-of-core", "off"), 2e6),
    Config("out of core (Parquet, file order)", "parquet", audit("--order", "given", "--out-of-core", "on")),
    Config("out of core (Parquet, shuffled)", "parquet", audit("--order", "shuffle", "--out-of-core", "on")),
    Config("out of core (CSV, file order)", "csv", audit("--order", "given", "--out-of-core", "on"), 1e7),
]

GEN = """
import sys, numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
n, out, piece = int(float(sys.argv[1])), sys.argv[2], int(sys.argv[3])
csv = len(sys.argv) > 4
rng = np.random.default_rng(1)
races = np.array(["African-American", "Caucasian", "Hispanic", "Other"])
writer = None
with open(out + ".csv.part", "w") if csv else open("/dev/null", "w") as text:
    for a in range(0, n, piece):
        m = min(piece, n - a)
        race = rng.choice(4, m, p=[.5, .34, .09, .07])
        df = pd.DataFrame({"sex": pd.Categorical.from_codes(rng.choice(2, m, p=[.8, .2]), ["Male", "Female"]),
                           "race": pd.Categorical.from_codes(race, races), "age": rng.integers(18, 70, m),
                           "decile_score": np.clip(rng.integers(1, 11, m) + (race == 0) * rng.integers(0, 2, m), 1, 10),
                           "two_year_recid": rng.integers(0, 2, m)})
        table = pa.Table.from_pandas(df, preserve_index=False)
        writer = writer or pq.ParquetWriter(out + ".parquet.part", table.schema)
        writer.write_table(table)
        if csv:
            df.to_csv(text, index=False, header=a == 0)
writer.close()
import os
os.replace(out + ".parquet.part", out + ".parquet")
if csv:
    os.replace(out + ".csv.part", out + ".csv")
"""


def log(n: float, fmt: str) -> Path:
    """The cached log of ``n`` rows in ``fmt`` (generated when missing)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    base = CACHE / f"log{int(n)}"
    path = base.with_suffix(f".{fmt}")
    if not path.exists():
        subprocess.run([sys.executable, "-c", GEN, str(int(n)), str(base), str(PIECE)] + (["csv"] if fmt == "csv"
                                                                                          else []), check=True)
    return path


def outcome(stdout: str) -> tuple[str, str]:
    """The verdict and the stop step a run printed."""
    lines = dict(line.split(":", 1) for line in stdout.splitlines() if ":" in line)
    return lines.get("verdict", "?").strip(), lines.get("stop step", "?").split("(")[0].strip()


TARGET = 5e6  # rows/s out of core (issue 30), on a 100 M-row log
ROUNDS = 5


def run_table(configs, sizes, rounds: int = ROUNDS, floors=FLOORS) -> None:
    """Run the ``floors`` and every configuration at every size (up to its ``max_rows``), interleaved over ``rounds``
    rounds in fresh processes, and print the load average and the table: each row's median time, against each floor
    (in wall and CPU seconds) and, for the out-of-core rows, whether they reach ``TARGET`` rows/s (in CPU seconds
    too: the machine is shared, so wall time also measures the other jobs)."""
    print(f"{stamp()}; {rounds} interleaved rounds, each run a fresh process; medians (wall: min–max)")
    print("| configuration | rows | seconds | rows/s | CPU seconds | peak RSS (MB) | × pyarrow (wall / CPU) | "
          f"× DuckDB (wall / CPU) | {TARGET / 1e6:g} M rows/s (wall / CPU) | verdict | stop step | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        runs = [c for c in list(floors) + list(configs) if n <= c.max_rows]
        res = interleave({c.name: c.command(log(n, c.fmt)) for c in runs}, rounds, ok=(0, 1, 3))
        med = {c.name: {f: res.stat(c.name, f) for f in ("wall", "cpu")} for c in runs}

        def versus(name, floor):
            if floor not in med or name == floor:
                return "–"
            return f"{med[name]['wall'] / med[floor]['wall']:.1f} / {med[name]['cpu'] / med[floor]['cpu']:.1f}"
        for c in runs:
            m = med[c.name]
            met = "–"
            if c.name.startswith("out of core"):
                met = " / ".join("met" if n / t >= TARGET else "NOT met" for t in (m["wall"], m["cpu"]))
            verdict, stop = outcome(res.runs[c.name][-1].stdout)
            print(f"| {c.name} | {int(n):,} | {m['wall']:.1f} ({res.stat(c.name, 'wall', min):.1f}–"
                  f"{res.stat(c.name, 'wall', max):.1f}) | {n / m['wall']:,.0f} | {m['cpu']:.1f} | "
                  f"{res.stat(c.name, 'rss', max):,.0f} | {versus(c.name, floors[0].name) if floors else '–'} | "
                  f"{versus(c.name, floors[1].name) if len(floors) > 1 else '–'} | {met} | {verdict} | {stop} | "
                  f"{res.load[0]:.1f}→{res.load[1]:.1f} |", flush=True)


def main(sizes, rounds: int = ROUNDS) -> None:
    run_table(CONFIGS, sizes, rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=float, default=[1e6, 1e7, 1e8])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (>= 5)")
    args = parser.parse_args()
    main(args.rows, args.rounds)
