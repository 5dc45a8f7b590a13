"""A synthetic decision log written both as Parquet partitions (the Dask route's input) and as one CSV (the
in-process path's), for the Dask tests."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

N = 24_000
ROOT = Path(__file__).resolve().parents[2]
PRED = "decile_score <= 4"
SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05'


def frame(n: int = N, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    race = rng.choice(np.array(["African-American", "Caucasian", "Hispanic"]), n, p=[.5, .4, .1])
    return pd.DataFrame({"race": race, "sex": rng.choice(np.array(["Male", "Female"]), n, p=[.7, .3]),
                         "age": rng.integers(18, 70, n),
                         "decile_score": np.clip(rng.integers(1, 11, n) + (race == "African-American"), 1, 10),
                         "two_year_recid": rng.integers(0, 2, n)})


def write_log(df: pd.DataFrame, folder, parts: int = 12, seed: int = 5) -> None:
    """``df`` as ``part-0.parquet`` … ``part-{parts-1}.parquet`` (natural order = row order; uneven sizes; one file
    with several row groups) and as ``log.csv`` beside the folder (the in-process path's input)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    rng = np.random.default_rng(seed)
    cuts = np.r_[0, np.sort(rng.choice(np.arange(1, len(df)), parts - 1, replace=False)), len(df)]
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        table = pa.Table.from_pandas(df.iloc[a:b], preserve_index=False)
        pq.write_table(table, folder / f"part-{i}.parquet", row_group_size=max(1, (b - a) // 3) if i == 1 else None)
    df.to_csv(folder.parent / f"{folder.name}.csv", index=False)


def cli(*args, timeout: float = 120):
    """``fairaudit audit ARGS`` in a subprocess (this checkout's package), its output and exit code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "fairaudit", "audit", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)
