"""Live-log latency: from a row's arrival in a growing CSV log to the verdict that counts it (issue 18).

A writer thread appends generated decision rows to a CSV file at a given rate (a burst every 10 ms) and notes when
each burst is on disk; the live audit (``fairaudit.engines.monitor.livelog``: the CSV tail, the incremental monitor, the shared
driver — what ``fairaudit audit --follow PATH --watch`` runs, without the printing) follows the file and notes when
each partial result is ready and how many rows it covers. A row's latency is the time from its burst's write to
the first result covering it. The specification stays undecided for most of the run, so every update does the
full work (a decided run only intersects).

    nice python bench/live.py                    # 10,000 and 50,000 rows/s, 10 s each, poll 0.2 s and 0.05 s
    nice python bench/live.py --rates 100000 --batches 5 50 --polls 0.2

Prints a Markdown table: rate, poll, the monitor's batch, rows, median and p95 latency, the rows per update, the verdict at the end.
"""
from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

SPEC = ('E[pred | race == "A"] - E[pred | race == "B"] >= -0.02 and '
        'E[pred | sex == "F"] - E[pred | sex == "M"] >= -0.02')
PRED = "risk <= 4"
BURST = 0.01  # seconds between the writer's bursts


def rows(n: int, seed: int) -> list[str]:
    """``n`` CSV lines of a decision log: race, sex, risk (the decision is risk <= 4), a bit of noise."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C"], n)
    sex = rng.choice(["F", "M"], n)
    score = rng.integers(1, 11, n)
    age = rng.integers(18, 80, n)
    return [f"{r},{s},{c},{a}\n" for r, s, c, a in zip(race, sex, score, age)]


def measure(rate: int, seconds: float, poll: float, batch: int = 5, seed: int = 0) -> dict:
    from fairaudit import engines
    from fairaudit.engines.monitor.livelog import live_audit, prepare
    from fairaudit.sources.live import CsvTail, follow
    from fairaudit.spec import parse

    total = int(rate * seconds)
    lines = rows(total, seed)
    per = max(1, int(round(rate * BURST)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.csv"
        path.write_text("race,sex,risk,age\n" + "".join(lines[:per]))
        written = [(per, time.perf_counter())]  # (rows on disk, when)
        stop = threading.Event()

        def write():
            start = time.perf_counter()
            k = per
            with open(path, "a") as fh:
                while k < total and not stop.is_set():
                    due = start + (k // per) * BURST
                    pause = due - time.perf_counter()
                    if pause > 0:
                        time.sleep(pause)
                    fh.write("".join(lines[k:k + per]))
                    fh.flush()
                    k = min(total, k + per)
                    written.append((k, time.perf_counter()))

        spec = parse(SPEC)
        source = CsvTail(path)
        first, model, where, warnings, _ = prepare(spec, source, pred=PRED, name="log.csv", poll=poll)
        options = engines.get("monitor").resolve_options({"order": "given", "stop": False, "batch": batch})
        updates = []  # (rows covered, when)
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        frames = follow(source, poll=poll, idle_timeout=max(1.0, 5 * poll), first=first)
        result = None
        for result in live_audit(spec, frames, decide=model.predict, options=options, warnings=warnings):
            updates.append((int(result.info.get("stream_length", 0)), time.perf_counter()))
        stop.set()
        writer.join()
        source.close()
    covered = np.array([u[0] for u in updates])
    at = np.array([u[1] for u in updates])
    latencies = []
    for k, when in written:
        i = int(np.searchsorted(covered, k))  # the first update covering the burst's last row
        if i < len(at):
            latencies.append(max(0.0, at[i] - when))
    lat = np.array(latencies)
    return {"rate": rate, "poll": poll, "batch": batch, "rows": int(covered[-1]) if len(covered) else 0,
            "median": float(np.median(lat)), "p95": float(np.percentile(lat, 95)),
            "per_update": float(np.median(np.diff(np.r_[0, covered]))) if len(covered) else 0.0,
            "verdict": result.verdict if result is not None else "—", "stop": result.stop_step if result else None}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--polls", type=float, nargs="+", default=[0.2, 0.05])
    parser.add_argument("--batches", type=int, nargs="+", default=[5],
                        help="the monitor's --batch (a check every this many rows)")
    args = parser.parse_args(argv)
    print("| arrival rate (rows/s) | poll (s) | batch | rows | latency median (s) | latency p95 (s) | "
          "rows per update | verdict (decided at) |")
    print("|---|---|---|---|---|---|---|---|")
    for rate in args.rates:
        for batch in args.batches:
            for poll in args.polls:
                m = measure(rate, args.seconds, poll, batch)
                at = f" ({m['stop']:,})" if m["stop"] is not None else ""
                print(f"| {rate:,} | {poll:g} | {batch} | {m['rows']:,} | {m['median']:.3f} | {m['p95']:.3f} | "
                      f"{m['per_update']:,.0f} | {m['verdict']}{at} |", flush=True)


if __name__ == "__main__":
    main()
