"""Peak memory of reading an uploaded CSV (``fairaudit.data.from_csv`` on the upload's bytes) against its size.

Writes synthetic Adult-like CSV files of a few sizes (numeric and text columns, a few missing values, a 0/1
label), then parses each one in a fresh subprocess, as the dashboard does with an upload: the bytes are in
memory, ``from_csv(bytes)`` builds the Dataset, the bytes are dropped. The child parses a tiny file first (lazy
imports such as pyarrow's compute functions are not counted: a running server has them already), then reads its
peak resident set size (``VmHWM`` in ``/proc/self/status``, reset just before parsing; ``ru_maxrss`` would
include the parent's memory from before the ``exec``). "peak" is that peak counted from the RSS before the
upload's bytes were read, so it includes them; "kept" is the RSS that stays once the bytes are dropped.
Target: peak <= 4 x the file's size.

    python bench/upload_memory.py              # 20, 50, 100 MB
    python bench/upload_memory.py 10 200       # other sizes (MB)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SIZES_MB = (20, 50, 100)
TARGET = 4.0

WORK = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov", "Without-pay"]
EDUCATION = ["Bachelors", "HS-grad", "11th", "Masters", "9th", "Some-college", "Assoc-acdm", "Doctorate"]
MARITAL = ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed"]
OCCUPATION = ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
              "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving"]
RACE = ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]
SEX = ["Female", "Male"]
COUNTRY = ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany", "India", "Japan", "Mexico"]


def write_csv(path: Path, target_mb: float, seed: int = 0) -> int:
    """An Adult-like CSV of about ``target_mb`` MB (written in blocks); returns its size in bytes."""
    rng = np.random.default_rng(seed)
    target = int(target_mb * 1e6)
    header = ("age,workclass,fnlwgt,education,education_num,marital_status,occupation,race,sex,capital_gain,"
              "hours_per_week,native_country,score,income\n")
    with path.open("w", encoding="utf-8") as fh:
        fh.write(header)
        written = len(header)
        while written < target:
            n = 20_000
            cols = [
                rng.integers(17, 90, n).astype(str),
                _pick(rng, WORK, n, missing=0.02),
                rng.integers(10_000, 1_000_000, n).astype(str),
                _pick(rng, EDUCATION, n),
                rng.integers(1, 16, n).astype(str),
                _pick(rng, MARITAL, n),
                _pick(rng, OCCUPATION, n, missing=0.02),
                _pick(rng, RACE, n),
                _pick(rng, SEX, n),
                np.where(rng.random(n) < 0.9, "0", rng.integers(1, 99_999, n).astype(str)),
                rng.integers(1, 99, n).astype(str),
                _pick(rng, COUNTRY, n, missing=0.01),
                np.char.mod("%.4f", rng.random(n)),
                (rng.random(n) < 0.24).astype(int).astype(str),
            ]
            block = "\n".join(",".join(row) for row in zip(*cols)) + "\n"
            fh.write(block)
            written += len(block)
    return path.stat().st_size


def _pick(rng, values, n, missing=0.0):
    out = np.asarray(values, dtype=object)[rng.integers(0, len(values), n)]
    if missing:
        out[rng.random(n) < missing] = ""
    return out


CHILD = r"""
import gc, json, sys, time
from fairaudit.data import from_csv
def status(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # the peak RSS (VmHWM) starts again from the current RSS
    except OSError:
        pass
path = sys.argv[1]
from_csv(b"a,b,c\nx,1,y \n,2.5,z\n", name="warm-up.csv")  # lazy imports (pyarrow compute), as in a running server
data = open(path, "rb").read()          # the upload's bytes, as Streamlit holds them
gc.collect()
reset_peak()
base_rss = status("VmRSS")
base_peak = status("VmHWM")
t0 = time.perf_counter()
ds = from_csv(data, name="bench.csv")
seconds = time.perf_counter() - t0
peak = status("VmHWM")
del data
gc.collect()
print(json.dumps({"base_peak": base_peak, "base_rss": base_rss, "peak": peak, "kept_rss": status("VmRSS"),
                  "rows": len(ds), "seconds": seconds,
                  "frame_mb": ds.frame.memory_usage(deep=True).sum() / 2**20}))
"""


def measure(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(sizes=SIZES_MB) -> int:
    rows = []
    with tempfile.TemporaryDirectory(prefix="fairaudit-bench-") as tmp:
        for mb in sizes:
            path = Path(tmp) / f"synthetic_{mb}mb.csv"
            t0 = time.perf_counter()
            size = write_csv(path, mb) / 2**20
            m = measure(path)
            path.unlink()
            # base_rss includes the bytes already read: peak and kept are counted from the RSS without them
            before = m["base_rss"] - size
            peak, kept = m["peak"] - before, m["kept_rss"] - before
            rows.append((size, m["rows"], peak, peak / size, kept, m["frame_mb"], m["seconds"]))
    print(f"{'file MB':>8} {'rows':>10} {'peak MB':>9} {'ratio':>6} {'kept MB':>8} {'frame MB':>9} {'parse s':>8}")
    for size, n, peak, ratio, kept, frame, seconds in rows:
        print(f"{size:8.1f} {n:10,} {peak:9.0f} {ratio:6.2f} {kept:8.0f} {frame:9.0f} {seconds:8.1f}")
    print(f"peak: the process's peak RSS while parsing, counted from before the upload's bytes were read (so it "
          f"includes them); kept: RSS once the bytes are dropped (the Dataset, plus what the allocator keeps); "
          f"frame: the DataFrame's own size (pandas, deep). Target: ratio <= {TARGET:g}.")
    return 0 if all(r[3] <= TARGET for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(tuple(float(a) for a in sys.argv[1:]) or SIZES_MB))
