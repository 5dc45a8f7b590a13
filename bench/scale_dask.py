"""Benchmark: the monitor on a big Parquet decision log on Dask (2 local workers), against the out-of-core route.

The log of ``bench/scale.py`` (``sex, race, age, decile_score, two_year_recid``, same generator and seed, taken from
its cache ``$TMPDIR/fairaudit-scale-bench``, generated there when missing), split into a temporary folder of Parquet
files of ``PART_ROWS`` rows each (250,000: 4 files at 1 M rows, 40 at 10 M, 400 at 100 M; deleted after the run);
the audit of ``bench/scale.py`` (``E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2``,
``pred = decile_score > 4``, Δ = 0.05, file order by default), run as a user runs it, in its own process:

* **Dask, running cluster**: ``fairaudit audit --data FOLDER --pred ... --scheduler ADDRESS --json OUT`` against a
  ``LocalCluster`` (2 worker processes × 1 thread, as ``--dask`` starts) that is already running. A fresh cluster is
  started before every round (outside the timing: no worker has seen the data or run an audit before; fairaudit is
  imported on its workers, as on a cluster in use) and its **start-up** — from launching the process to 2 workers
  connected, and to fairaudit imported on them — is timed apart and reported in its own table;
  the run's CPU seconds are the client's plus the cluster's during the run (its processes' user + system, psutil),
  its peak RSS the client's, and the workers' peak (sampled every 0.05 s, summed) is a column of its own;
* **Dask, cluster started by the run**: the same with ``--dask --dask-workers 2`` (start and shutdown included);
* **out of core**: the same rows as one Parquet file, ``--out-of-core on`` (the reference of the target);
* up to 2 M rows, **in process** (a CSV, as in ``bench/scale.py``).

Every run is a fresh process, the configurations are interleaved over ``--rounds`` rounds (5 by default,
``bench/timing.py``) and the table gives medians. Target (issue 30): Dask against a running cluster within 2× of out
of core on the same 10 M rows (wall seconds; the CPU ratio is printed beside it). The verdict and stop step of every
route must be the same.

Run: ``nice -n 10 .venv/bin/python bench/scale_dask.py [ROWS ...] [--order given|shuffle|both] [--rounds N]``
(default 1e6 1e7, given; 1e8 takes minutes).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import PRED, SPEC, log  # noqa: E402  (the same log and audit as bench/scale.py)
from timing import interleave, stamp  # noqa: E402

SPLIT = """
import sys, pyarrow as pa, pyarrow.parquet as pq, pathlib
src, out, rows = sys.argv[1], pathlib.Path(sys.argv[2]), int(float(sys.argv[3]))
out.mkdir()
for i, batch in enumerate(pq.ParquetFile(src).iter_batches(batch_size=rows)):
    pq.write_table(pa.Table.from_batches([batch]), out / f"part-{i}.parquet")
"""

CLUSTER = """
import logging, sys, time, warnings
warnings.filterwarnings("ignore", message="Port .* is already in use")
from distributed import Client, LocalCluster
workers = int(sys.argv[1])
cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                       silence_logs=logging.CRITICAL)
with Client(cluster) as client:
    client.wait_for_workers(workers)
    print(cluster.scheduler_address, flush=True)
    # a running cluster has the package loaded: import it on the workers (no data, no audit)
    client.run(lambda: [__import__(m) for m in sys.argv[2:]])
print("ready", flush=True)
sys.stdin.read()  # until the bench closes stdin
cluster.close()
"""

PART_ROWS = 250_000
WORKERS = 2
DASK_TARGET = 2.0  # issue 30: Dask (2 local workers) within 2× of out of core on the same 10 M rows (wall seconds)


def tree_cpu(proc: psutil.Process) -> float:
    """User + system seconds of ``proc`` and its live descendants."""
    total = 0.0
    for p in [proc] + proc.children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


class Cluster:
    """A running ``LocalCluster`` in a process of its own; ``restart()`` closes it and starts a fresh one, timing
    the start-up: wall seconds from launch to the workers connected, then to fairaudit imported on them, and the
    CPU seconds of its processes by then."""

    def __init__(self, imports=("fairaudit.engines.monitor.distributed", "fairaudit.spec", "pyarrow.parquet")) -> None:
        self.imports = tuple(imports)  # the modules a cluster in use has loaded on its workers
        self.proc = self.ps = self.address = None
        self.startups: list[tuple[float, float, float]] = []

    def restart(self, _round: int = 0) -> None:
        self.close()
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-c", CLUSTER, str(WORKERS), *self.imports], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.address = self.proc.stdout.readline().strip()
        connected = time.perf_counter() - t0
        if not self.address.startswith("tcp://") or self.proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"the cluster did not start: {self.address!r}")
        self.ps = psutil.Process(self.proc.pid)
        self.startups.append((connected, time.perf_counter() - t0, tree_cpu(self.ps)))

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


class OnCluster:
    """The contender ``fairaudit audit ... --scheduler ADDRESS`` on the cluster of the round (``bench/timing.py``
    calls ``start()`` / ``stop()`` around it: the cluster's CPU during the run and its workers' peak RSS)."""

    def __init__(self, cluster: Cluster, argv: list[str]) -> None:
        self.cluster, self.base = cluster, argv

    def argv(self) -> list[str]:
        return self.base + ["--scheduler", self.cluster.address]

    def start(self) -> None:
        self.cpu0, self.peak, self.running = tree_cpu(self.cluster.ps), 0, True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while self.running:
            rss = 0
            for p in self.cluster.ps.children(recursive=True):
                try:
                    rss += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, rss)
            time.sleep(0.05)

    def stop(self) -> tuple[float, float]:
        self.running = False
        self.thread.join()
        return tree_cpu(self.cluster.ps) - self.cpu0, self.peak / 2 ** 20


def main(sizes, orders=("given",), part_rows: float = PART_ROWS, rounds: int = 5) -> None:
    py = sys.executable
    print(f"{stamp()}; {rounds} interleaved rounds, each run a fresh process, a fresh cluster per round; medians "
          "(wall: min–max)\n")
    startup_rows, rows = [], []
    for n in sizes:
        in_process = n <= 2e6
        with tempfile.TemporaryDirectory(prefix="fairaudit-scale-dask-") as tmp:
            parts_dir = str(Path(tmp) / "parts")
            subprocess.run([py, "-c", SPLIT, str(log(n, "parquet")), parts_dir, str(part_rows)], check=True)
            parts = len(list(Path(parts_dir).glob("*.parquet")))
            cluster = Cluster()
            contenders, outs = {}, {}
            for order in orders:
                def audit(data, *extra, key):
                    outs[key] = Path(tmp) / f"result-{len(outs)}.json"
                    return [py, "-m", "fairaudit", "audit", "--data", data, "--pred", PRED, "--spec", SPEC, "--order",
                            order, *extra, "--json", str(outs[key])]
                files = f"{parts:,} Parquet file{'s' if parts > 1 else ''}"
                ooc = f"out of core (the same rows, one Parquet file, {order} order)"
                contenders[ooc] = audit(str(log(n, "parquet")), "--out-of-core", "on", key=ooc)
                name = f"Dask, running cluster, {WORKERS} workers ({files}, {order} order)"
                contenders[name] = OnCluster(cluster, audit(parts_dir, key=name))
                name = f"Dask, cluster started by the run, {WORKERS} workers ({files}, {order} order)"
                contenders[name] = audit(parts_dir, "--dask", "--dask-workers", str(WORKERS), key=name)
                if in_process:
                    name = f"in process (CSV, --json, {order} order)"
                    contenders[name] = audit(str(log(n, "csv")), key=name)
            try:
                res = interleave(contenders, rounds, ok=(0, 1, 3), before_round=cluster.restart)
            finally:
                cluster.close()
            startup_rows.append((n, cluster.startups))
            for name in contenders:
                result = json.loads(outs[name].read_text())
                rows.append((name, n, res, result["verdict"], result["stop_step"]))
    print("Cluster start-up (a LocalCluster of 2 worker processes: from launching its process to the workers "
          "connected, and to fairaudit imported on them; not in the runs' times):\n")
    print("| rows | start-ups | workers connected, wall s median (min–max) | fairaudit imported on them, wall s | "
          "CPU s by then |")
    print("|---|---|---|---|---|")
    for n, ups in startup_rows:
        med = [sorted(u[i] for u in ups) for i in range(3)]
        print(f"| {int(n):,} | {len(ups)} | {med[0][len(ups) // 2]:.1f} ({med[0][0]:.1f}–{med[0][-1]:.1f}) | "
              f"{med[1][len(ups) // 2]:.1f} ({med[1][0]:.1f}–{med[1][-1]:.1f}) | {med[2][len(ups) // 2]:.1f} |")
    print()
    print("| configuration | rows | seconds | rows/s | CPU seconds | peak RSS (MB) | cluster workers peak (MB) | "
          f"× out of core, wall / CPU (target ≤ {DASK_TARGET:g} wall) | verdict | stop step | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, n, res, verdict, stop in rows:
        order = name.rsplit(", ", 1)[1]
        base = f"out of core (the same rows, one Parquet file, {order}"
        wall, cpu = res.stat(name, "wall"), res.stat(name, "cpu")
        ratio = "–"
        if not name.startswith("out of core"):
            bw, bc = res.stat(base, "wall"), res.stat(base, "cpu")
            ratio = f"{wall / bw:.2f} / {cpu / bc:.2f}"
            if name.startswith("Dask, running"):
                ratio += f" ({'met' if wall <= DASK_TARGET * bw else 'NOT met'})"
        workers = res.stat(name, "extra_rss", max)
        span = f"{res.stat(name, 'wall', min):.1f}–{res.stat(name, 'wall', max):.1f}"
        print(f"| {name} | {int(n):,} | {wall:.1f} ({span})"
              f" | {n / wall:,.0f} | {cpu:.1f} | {res.stat(name, 'rss', max):,.0f} | "
              f"{'–' if workers is None else f'{workers:,.0f}'} | {ratio} | {verdict} | "
              f"{stop if stop is None else f'{stop:,}'} | {res.load[0]:.1f}→{res.load[1]:.1f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=float, default=[1e6, 1e7])
    parser.add_argument("--order", choices=("given", "shuffle", "both"), default="given")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 5)")
    args = parser.parse_args()
    main(args.rows, ("given", "shuffle") if args.order == "both" else (args.order,), rounds=args.rounds)
