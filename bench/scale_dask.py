"""Benchmark: the monitor on a big Parquet decision log on a Dask ``LocalCluster`` (2 workers), end to end.

The log of ``bench/scale.py`` (``sex, race, age, decile_score, two_year_recid``, same generator and seed), written as a
folder of Parquet files of ``PART_ROWS`` rows each (250,000: 4 files at 1 M rows, 40 at 10 M); the audit of
``bench/scale.py`` (``E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2``, ``pred =
decile_score > 4``, Δ = 0.05, a check every 5 rows, file order), run as a user runs it, in its own process:

    fairaudit audit --data FOLDER --pred 'decile_score > 4' --spec SPEC --order given --dask --dask-workers 2 --json OUT

(cluster start and shutdown included). Peak memory is sampled (every 0.1 s, psutil) over the whole process tree — the
client plus the two worker processes and their nannies — and given for the client alone too. For reference, up to 2 M
rows the in-process CLI runs on the same rows (a CSV, as in ``bench/scale.py``): the verdict and stop step must be
the same. Prints one table row per configuration and size, in ``bench/scale.py``'s columns plus the client's peak
and the stop step.

Run: ``nice .venv/bin/python bench/scale_dask.py [ROWS ...]`` (default 1e6 1e7).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import GEN, PIECE, PRED, SPEC  # noqa: E402  (the same log and audit as bench/scale.py)

SPLIT = """
import sys, pyarrow.parquet as pq, pathlib
src, out, rows = sys.argv[1], pathlib.Path(sys.argv[2]), int(float(sys.argv[3]))
out.mkdir()
f = pq.ParquetFile(src)
writer, i, written = None, 0, 0
for batch in f.iter_batches(batch_size=rows):
    pq.write_table(__import__("pyarrow").Table.from_batches([batch]), out / f"part-{i}.parquet")
    i += 1
"""


def measured(cmd) -> tuple[float, float, float, str]:
    """Wall seconds, peak RSS of the process tree and of the top process (MB, sampled), and stdout of ``cmd``."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    top = psutil.Process(proc.pid)
    tree_peak = top_peak = 0
    while proc.poll() is None:
        try:
            procs = [top] + top.children(recursive=True)
            rss = {p.pid: p.memory_info().rss for p in procs if p.is_running()}
        except psutil.Error:
            rss = {}
        tree_peak = max(tree_peak, sum(rss.values()))
        top_peak = max(top_peak, rss.get(proc.pid, 0))
        time.sleep(0.1)
    out, err = proc.communicate()
    seconds = time.perf_counter() - t
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(out + err)
    return seconds, tree_peak / 2 ** 20, top_peak / 2 ** 20, out


PART_ROWS = 250_000


def main(sizes, part_rows: float = PART_ROWS) -> None:
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            base = str(Path(tmp) / f"log{int(n)}")
            in_process = n <= 2e6
            subprocess.run([py, "-c", GEN, str(n), base, str(PIECE)] + (["csv"] if in_process else []), check=True)
            subprocess.run([py, "-c", SPLIT, base + ".parquet", base + "_parts", str(part_rows)], check=True)
            parts = len(list(Path(base + "_parts").glob("*.parquet")))
            seconds, tree, top, out = measured([py, "-m", "fairaudit", "audit", "--data", base + "_parts", "--pred",
                                               PRED, "--spec", SPEC, "--order", "given", "--dask", "--dask-workers",
                                               "2", "--json", base + ".json"])
            result = json.loads(Path(base + ".json").read_text())
            rows.append((f"Dask LocalCluster, 2 workers ({parts} Parquet files)", n, seconds, tree, top,
                         result["verdict"], result["stop_step"]))
            if in_process:
                seconds, tree, top, out = measured([py, "-m", "fairaudit", "audit", "--data", base + ".csv", "--pred",
                                                   PRED, "--spec", SPEC, "--order", "given", "--json",
                                                   base + "_local.json"])
                local = json.loads(Path(base + "_local.json").read_text())
                rows.append(("in process (CSV, --json)", n, seconds, tree, top, local["verdict"],
                             local["stop_step"]))
    print("| configuration | rows | seconds | rows/s | peak RSS (MB) | client peak (MB) | verdict | stop step |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, seconds, tree, top, verdict, stop in rows:
        print(f"| {name} | {int(n):,} | {seconds:.1f} | {n / seconds:,.0f} | {tree:,.0f} | {top:,.0f} | {verdict} | "
              f"{stop if stop is None else f'{stop:,}'} |")


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [1e6, 1e7])
