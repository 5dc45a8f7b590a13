"""Benchmark: the monitor on big decision logs, in process (the file loaded whole) and out of core (read in chunks).

Generates synthetic logs (``sex, race, age, decile_score, two_year_recid``; CSV and Parquet) of 1 M, 2 M and
10 M rows in a temporary folder; audits ``E[pred | race == "African-American"] - E[pred | race == "Caucasian"] <
0.2`` with ``pred = decile_score > 4`` (Δ = 0.05, a check every 5 rows, file order), each configuration in its own
process, and prints rows/s and peak memory (the child's max RSS). In process = ``fairaudit audit --data log.csv
--order given --json``; out of core = ``fairaudit.engines.stream.file_observations`` over the Parquet file (chunks of
65,536 rows) through the monitor (``run_monitor``). Dask and ``--follow`` are not implemented yet.

Run: ``.venv/bin/python bench/scale.py [ROWS ...]`` (default 1e6 2e6 1e7).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2'
PRED = "decile_score > 4"

GEN = """
import sys, numpy as np, pandas as pd
n, out = int(float(sys.argv[1])), sys.argv[2]
rng = np.random.default_rng(1)
race = rng.choice(np.array(["African-American", "Caucasian", "Hispanic", "Other"]), n, p=[.5, .34, .09, .07])
df = pd.DataFrame({"sex": rng.choice(np.array(["Male", "Female"]), n, p=[.8, .2]), "race": race,
                   "age": rng.integers(18, 70, n),
                   "decile_score": np.clip(rng.integers(1, 11, n) + (race == "African-American") * rng.integers(0, 2, n), 1, 10),
                   "two_year_recid": rng.integers(0, 2, n)})
df.to_parquet(out + ".parquet", index=False)
if len(sys.argv) > 3: df.to_csv(out + ".csv", index=False)
"""

OUT_OF_CORE = """
import json, sys, time
from fairaudit.spec import parse
from fairaudit.engines.monitor import run_monitor
from fairaudit.engines.stream import file_observations
t = time.perf_counter()
spec = parse(sys.argv[2])
r = run_monitor(spec, file_observations(spec, sys.argv[1], sys.argv[3]), batch=5, delta=0.05)
print(json.dumps({"verdict": r.verdict, "stop": r.stop_step, "seconds": time.perf_counter() - t}))
"""


def child(cmd) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB, ``/usr/bin/time -f %M``) and stdout of ``cmd``."""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if out.returncode not in (0, 1, 3):
        raise SystemExit(out.stdout + out.stderr)
    return seconds, int(out.stderr.strip().splitlines()[-1]) / 1024, out.stdout


def main(sizes) -> None:
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            base = str(Path(tmp) / f"log{int(n)}")
            in_process = n <= 2e6
            subprocess.run([py, "-c", GEN, str(n), base] + (["csv"] if in_process else []), check=True)
            seconds, peak, out = child([py, "-c", OUT_OF_CORE, base + ".parquet", SPEC, PRED])
            rows.append(("out of core (Parquet)", n, seconds, peak, json.loads(out)["verdict"]))
            if in_process:
                seconds, peak, out = child([py, "-m", "fairaudit", "audit", "--data", base + ".csv", "--pred", PRED,
                                            "--spec", SPEC, "--order", "given", "--json", base + ".json"])
                rows.append(("in process (CSV, --json)", n, seconds, peak, out.split()[1]))
    print("| configuration | rows | seconds | rows/s | peak RSS (MB) | verdict |")
    print("|---|---|---|---|---|---|")
    for name, n, seconds, peak, verdict in rows:
        print(f"| {name} | {int(n):,} | {seconds:.1f} | {n / seconds:,.0f} | {peak:,.0f} | {verdict} |")


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [1e6, 2e6, 1e7])
