"""Benchmark: ``fairaudit audit`` on big decision logs — rows/s and peak memory, in process and out of core.

Generates synthetic COMPAS-like logs (``sex, race, age, decile_score, two_year_recid``) of the requested sizes,
Parquet (and CSV for the configurations that read it), written in pieces of 1 M rows so that generating 100 M rows
needs little memory, and cached in ``$TMPDIR/fairaudit-scale-bench`` (delete it to regenerate). Each configuration
audits ``E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2`` with ``--pred 'decile_score >
4'`` (Δ = 0.05, a check every 5 rows up to 1 M rows, then 0.01 % of the stream apart; the monitor runs to the end of the stream, it does not stop at the decision) in
its own process under ``/usr/bin/time`` and the table gives the wall time, rows/s, the CPU time (user + system:
the machine is shared, so wall time depends on the load, which is printed with ``uptime``), the peak RSS, the
verdict and the stop step.

Configurations are the list ``CONFIGS``: a name, the file format, the command (``fairaudit audit`` with extra
flags, or any argv built from the file's path) and the largest size it is run at. Add a column by adding one.

Run: ``nice .venv/bin/python bench/scale.py [ROWS ...]`` (default ``1e6 1e7 1e8``; 1e8 takes minutes).

The same log and audit on a Dask ``LocalCluster`` (2 workers, the log split into Parquet files): ``bench/scale_dask.py``;
with ``Fair[...]`` (a model re-predicting every row): ``bench/scale_fair.py``; a live log (``--follow``) at a given
arrival rate: ``bench/live.py``. Results: ``bench/scale_results.md``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

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


FLOOR = """
import sys, numpy as np, pyarrow.parquet as pq
# the reading floor: one plain pyarrow + numpy pass over the columns the audit reads, computing the counts the
# monitor needs (each leaf's running successes and observations at every check, every 5 rows)
f = pq.ParquetFile(sys.argv[1])
race = f.schema_arrow.field("race").type
rows, at, s_tot, n_tot = 0, 0, np.zeros(2, np.int64), np.zeros(2, np.int64)
for b in f.iter_batches(batch_size=1 << 18, columns=["race", "decile_score"], use_threads=False):
    r = b.column(0)
    names = r.dictionary.to_pylist()
    codes = r.indices.to_numpy(zero_copy_only=False)
    pred = b.column(1).to_numpy(zero_copy_only=False) > 4
    checks = np.arange((-(rows + 1)) % 5, len(codes), 5)
    for j, value in enumerate(("African-American", "Caucasian")):
        m = codes == names.index(value)
        s = np.cumsum(pred & m) + s_tot[j]
        n = np.cumsum(m) + n_tot[j]
        at += len(s[checks]) + len(n[checks])
        s_tot[j], n_tot[j] = s[-1], n[-1]
    rows += len(codes)
print("verdict: -")
print("stop step: -")
print(f"rows {rows}, successes {s_tot.tolist()} of {n_tot.tolist()}")
"""

CONFIGS = [
    Config("reference: one pyarrow + numpy pass computing the counts (the reading floor)", "parquet",
           lambda path: [sys.executable, "-c", FLOOR, str(path)]),
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


def child(cmd) -> dict:
    """Wall and CPU seconds, peak RSS (MB) and the verdict / stop step of ``cmd`` (``/usr/bin/time``)."""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%U %S %M"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if out.returncode not in (0, 1, 3):
        raise SystemExit(out.stdout + out.stderr)
    user, system, peak = out.stderr.strip().splitlines()[-1].split()
    lines = dict(line.split(":", 1) for line in out.stdout.splitlines() if ":" in line)
    return {"wall": wall, "cpu": float(user) + float(system), "peak": int(peak) / 1024,
            "verdict": lines.get("verdict", "?").strip(), "stop": lines.get("stop step", "?").split("(")[0].strip()}


TARGET = 5e6  # rows/s out of core (issue 30), on a 100 M-row log


def run_table(configs, sizes) -> None:
    """Run every configuration at every size (up to its ``max_rows``) and print the load average and the table:
    each row's time against the reference row (the first configuration, measured at the same size in the same
    run) in wall and CPU seconds, and, for the out-of-core rows, whether they reach ``TARGET`` rows/s (in CPU
    seconds too: the machine is shared, so wall time also measures the other jobs)."""
    rows = []
    load = os.getloadavg()
    for n in sizes:
        for config in configs:
            if n > config.max_rows:
                continue
            rows.append((config.name, n, child(config.command(log(n, config.fmt)))))
    load = (load, os.getloadavg())
    floor = {n: r for name, n, r in rows if name == configs[0].name}
    print(f"load average (1 min) {load[0][0]:.1f} at the start, {load[1][0]:.1f} at the end; {os.cpu_count()} cores")
    print("| configuration | rows | seconds | rows/s | CPU seconds | peak RSS (MB) | × floor (wall / CPU) | "
          f"{TARGET / 1e6:g} M rows/s (wall / CPU) | verdict | stop step |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n, r in rows:
        ref = floor.get(n)
        ratio = f"{r['wall'] / ref['wall']:.1f} / {r['cpu'] / ref['cpu']:.1f}" if ref else "–"
        met = "–"
        if name.startswith("out of core"):
            met = " / ".join("met" if n / t >= TARGET else "NOT met" for t in (r["wall"], r["cpu"]))
        print(f"| {name} | {int(n):,} | {r['wall']:.1f} | {n / r['wall']:,.0f} | {r['cpu']:.1f} | {r['peak']:,.0f} | "
              f"{ratio} | {met} | {r['verdict']} | {r['stop']} |")


def main(sizes) -> None:
    run_table(CONFIGS, sizes)


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [1e6, 1e7, 1e8])
