"""Benchmark: the monitor on a big Parquet decision log on a Dask ``LocalCluster`` (2 workers), end to end.

The log of ``bench/scale.py`` (``sex, race, age, decile_score, two_year_recid``, same generator and seed, taken from
its cache ``$TMPDIR/fairaudit-scale-bench``, generated there when missing), split into a temporary folder of Parquet
files of ``PART_ROWS`` rows each (250,000: 4 files at 1 M rows, 40 at 10 M, 400 at 100 M; deleted after the run);
the audit of ``bench/scale.py`` (``E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2``,
``pred = decile_score > 4``, Δ = 0.05, a check every 5 rows, file order by default), run as a user runs it, in its
own process:

    fairaudit audit --data FOLDER --pred 'decile_score > 4' --spec SPEC --order given --dask --dask-workers 2 --json OUT

(cluster start and shutdown included). Peak memory is sampled (every 0.1 s, psutil) over the whole process tree and
given for the client alone (the top process: the CLI, the monitor, the scheduler and the nannies) and for the
worker processes summed; CPU seconds (user + system over the tree) say what the run costs when the shared machine's
load makes wall time vary. Each size also runs the out-of-core route on the same rows (one Parquet file, the same
order), and each Dask row gives its wall time against it (issue 30's target: within 2×). For reference, up to 2 M rows the in-process CLI runs on the same rows (a CSV, as in
``bench/scale.py``): the verdict and stop step must be the same. Prints the load average (the machine is shared)
and one table row per configuration and size.

Run: ``nice .venv/bin/python bench/scale_dask.py [ROWS ...] [--order given|shuffle|both]`` (default 1e6 1e7, given;
1e8 takes minutes).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import PRED, SPEC, log  # noqa: E402  (the same log and audit as bench/scale.py)

SPLIT = """
import sys, pyarrow as pa, pyarrow.parquet as pq, pathlib
src, out, rows = sys.argv[1], pathlib.Path(sys.argv[2]), int(float(sys.argv[3]))
out.mkdir()
for i, batch in enumerate(pq.ParquetFile(src).iter_batches(batch_size=rows)):
    pq.write_table(pa.Table.from_batches([batch]), out / f"part-{i}.parquet")
"""


def measured(cmd) -> tuple[float, float, float, float, float, str]:
    """Wall seconds, CPU seconds (user + system, summed over the process tree, as last sampled), peak RSS (MB,
    sampled) of the process tree, of the top process and of its descendants summed, and stdout of ``cmd``."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    top = psutil.Process(proc.pid)
    tree_peak = top_peak = rest_peak = 0
    cpu: dict = {}
    while proc.poll() is None:
        try:
            procs = [top] + top.children(recursive=True)
            rss = {p.pid: p.memory_info().rss for p in procs if p.is_running()}
            for p in procs:
                times = p.cpu_times()
                cpu[p.pid] = times.user + times.system  # a process's own: its children are in the tree
        except psutil.Error:
            rss = {}
        tree_peak = max(tree_peak, sum(rss.values()))
        top_peak = max(top_peak, rss.get(proc.pid, 0))
        rest_peak = max(rest_peak, sum(v for pid, v in rss.items() if pid != proc.pid))
        time.sleep(0.1)
    out, err = proc.communicate()
    seconds = time.perf_counter() - t
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(out + err)
    return seconds, sum(cpu.values()), tree_peak / 2 ** 20, top_peak / 2 ** 20, rest_peak / 2 ** 20, out


PART_ROWS = 250_000
DASK_TARGET = 2.0  # issue 30: Dask (2 local workers) within 2× of out of core on the same 10 M rows (wall seconds)


def main(sizes, orders=("given",), part_rows: float = PART_ROWS) -> None:
    py = sys.executable
    rows = []
    load = os.getloadavg()
    for n in sizes:
        in_process = n <= 2e6
        with tempfile.TemporaryDirectory(prefix="fairaudit-scale-dask-") as tmp:
            parts_dir = str(Path(tmp) / "parts")
            subprocess.run([py, "-c", SPLIT, str(log(n, "parquet")), parts_dir, str(part_rows)], check=True)
            parts = len(list(Path(parts_dir).glob("*.parquet")))
            for order in orders:
                runs = [(f"out of core (the same rows, one Parquet file, {order} order)", str(log(n, "parquet")),
                         ["--out-of-core", "on"]),
                        (f"Dask LocalCluster, 2 workers ({parts:,} Parquet file{'s' if parts > 1 else ''}, {order} "
                         "order)", parts_dir, ["--dask", "--dask-workers", "2"])]
                if in_process:
                    runs.append((f"in process (CSV, --json, {order} order)", str(log(n, "csv")), []))
                for i, (name, data, extra) in enumerate(runs):
                    out_json = Path(tmp) / f"result-{order}-{i}.json"
                    seconds, cpu, tree, top, rest, _ = measured([py, "-m", "fairaudit", "audit", "--data", data,
                                                                 "--pred", PRED, "--spec", SPEC, "--order", order,
                                                                 *extra, "--json", str(out_json)])
                    result = json.loads(out_json.read_text())
                    rows.append((name, n, seconds, cpu, tree, top, rest, result["verdict"], result["stop_step"]))
    load = (load, os.getloadavg())
    print(f"load average (1 min) {load[0][0]:.1f} at the start, {load[1][0]:.1f} at the end; {os.cpu_count()} cores")
    ref = {(n, name.rsplit(", ", 1)[1]): seconds for name, n, seconds, *_ in rows if name.startswith("out of core")}
    print("| configuration | rows | seconds | rows/s | CPU seconds | peak RSS (MB) | client peak (MB) | workers peak "
          f"(MB) | × out of core (target ≤ {DASK_TARGET:g}) | verdict | stop step |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, n, seconds, cpu, tree, top, rest, verdict, stop in rows:
        base = ref.get((n, name.rsplit(", ", 1)[1]))
        ratio = "–" if base is None or name.startswith("out of core") else \
            f"{seconds / base:.2f} ({'met' if seconds <= DASK_TARGET * base else 'NOT met'})"
        print(f"| {name} | {int(n):,} | {seconds:.1f} | {n / seconds:,.0f} | {cpu:.1f} | {tree:,.0f} | {top:,.0f} | "
              f"{rest:,.0f} | {ratio} | {verdict} | {stop if stop is None else f'{stop:,}'} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=float, default=[1e6, 1e7])
    parser.add_argument("--order", choices=("given", "shuffle", "both"), default="given")
    args = parser.parse_args()
    main(args.rows, ("given", "shuffle") if args.order == "both" else (args.order,))
