"""Benchmark: ``Fair[...]`` on big decision logs — a saved model re-predicts every row with the attribute flipped,
in process and out of core (file order and shuffled), rows/s and peak memory.

The logs are ``bench/scale.py``'s (synthetic COMPAS-like, Parquet, cached). A decision tree (``fairaudit``'s
``tree`` model, depth-limited scikit-learn) is trained once on 20,000 rows of the smallest log and saved as
``.skops``; every configuration audits ``Fair[race] > 0.9 and E[pred | race == "African-American"] -
E[pred | race == "Caucasian"] < 0.2`` with ``--model m.skops --rows all`` (Δ = 0.05, a check every 5 rows, to the end
of the stream) in its own process under ``/usr/bin/time``. Race has 4 values, so each row is predicted 5 times.

Run: ``nice .venv/bin/python bench/scale_fair.py [ROWS ...]`` (default ``1e6 1e7``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import CACHE, child, log  # noqa: E402

SPEC = 'Fair[race] > 0.9 and E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2'
CONFIGS = [
    ("in process (CSV, file order)", ["--order", "given", "--out-of-core", "off"], 1e6),
    ("out of core (Parquet, file order)", ["--order", "given", "--out-of-core", "on"], float("inf")),
    ("out of core (Parquet, shuffled)", ["--order", "shuffle", "--out-of-core", "on"], float("inf")),
]


def model_file(sample: Path) -> Path:
    """A tree model trained on 20,000 rows of ``sample``, saved once next to the logs."""
    path = CACHE / "fair-tree.skops"
    if not path.exists():
        import pandas as pd

        from fairaudit import data, models

        csv = CACHE / "fair-sample.csv"
        pd.read_parquet(sample).iloc[:20_000].to_csv(csv, index=False)
        ds = data.from_csv(csv, label="two_year_recid", favourable=0)
        models.train(ds, "tree", seed=0).save(path)
    return path


def main(sizes) -> None:
    model = model_file(log(min(sizes), "parquet"))
    rows = []
    load = os.getloadavg()
    for n in sizes:
        for name, extra, largest in CONFIGS:
            if n > largest:
                continue
            if "off" in extra:  # in memory reads a CSV
                path = log(n, "csv")
            else:
                path = log(n, "parquet")
            cmd = [sys.executable, "-m", "fairaudit", "audit", "--data", str(path), "--model", str(model), "--rows",
                   "all", "--spec", SPEC, *extra]
            rows.append((name, n, child(cmd)))
    end = os.getloadavg()
    print(f"load average (1 min) {load[0]:.1f} at the start, {end[0]:.1f} at the end; {os.cpu_count()} cores")
    print("| configuration | rows | seconds | rows/s | CPU seconds | peak RSS (MB) | verdict | stop step |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, r in rows:
        print(f"| {name} | {int(n):,} | {r['wall']:.1f} | {n / r['wall']:,.0f} | {r['cpu']:.1f} | {r['peak']:,.0f} | "
              f"{r['verdict']} | {r['stop']} |")


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [1e6, 1e7])
