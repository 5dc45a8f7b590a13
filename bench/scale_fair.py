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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import CACHE, Config, log, run_table  # noqa: E402

SPEC = 'Fair[race] > 0.9 and E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2'


def audit(model: Path, *extra: str):
    """The argv of ``fairaudit audit`` on a log with the saved ``model``, with ``extra`` flags."""
    return lambda path: [sys.executable, "-m", "fairaudit", "audit", "--data", str(path), "--model", str(model),
                         "--rows", "all", "--spec", SPEC, *extra]


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
    run_table([Config("in process (CSV, file order)", "csv", audit(model, "--order", "given", "--out-of-core", "off"),
                      1e6),
               Config("out of core (Parquet, file order)", "parquet",
                      audit(model, "--order", "given", "--out-of-core", "on")),
               Config("out of core (Parquet, shuffled)", "parquet",
                      audit(model, "--order", "shuffle", "--out-of-core", "on"))], sizes)


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [1e6, 1e7])
