"""Benchmark: inputs that cannot hurt the server (issue 27) — each bomb of the issue through the real command line,
in its own process: seconds, peak RSS, exit code and the first line said.

Cases: a skops model of 1 MB inflating to 1 GiB, a ``.csv.gz`` of 1 MB inflating to 1 GiB, a ``.nnet`` header
claiming 3,000,000 layers (7.5 MB), specs of 200,000 and 12,000 set members (``fairaudit check``), and a fairsquare run and a
monitor run over large population programs with a time budget (``--timeout`` / ``--time-budget``, default 5 s:
the row says how far past it the process ended). Every case must end in one line with exit 2 (a refusal) or a
result cut at its budget; nothing may inflate or parse the body first.

Run: ``nice .venv/bin/python bench/limits.py [BUDGET_SECONDS]``. The bombs are built in memory in a fraction of a
second (``tests/bombs.py``, ``tests/engines/test_time_budget.py``); nothing is downloaded.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.bombs import gzip_zeros, skops_bomb  # noqa: E402
from tests.engines.test_time_budget import RATIO, branching_program, drawing_program  # noqa: E402

GIB = 1 << 30


def cases(folder: Path, budget: float) -> list[tuple[str, list[str]]]:
    (folder / "bomb.skops").write_bytes(skops_bomb(GIB))
    (folder / "bomb.csv.gz").write_bytes(gzip_zeros(GIB, prefix=b"a,b\n1,2\n"))
    n = 3_000_000
    (folder / "bomb.nnet").write_text(f"{n},3,1,3,\n" + "3," * (n + 1) + "\n" + "0,\n" * 500_000)
    members = ", ".join(str(i) for i in range(200_000))
    (folder / "big.fs").write_text(f"E[pred | age in {{{members}}}] > 0.1\n")
    (folder / "many.fs").write_text(f"E[pred | age in {{{', '.join(str(i) for i in range(12_000))}}}] > 0.1\n")
    (folder / "branches.fr").write_text(branching_program())
    (folder / "draws.fr").write_text(drawing_program())
    fa = [sys.executable, "-m", "fairaudit"]
    spec = ["--spec", "E[pred] > 0.5"]
    return [
        ("skops zip, 1 MB -> 1 GiB", [*fa, "audit", "--data", "german", "--model", str(folder / "bomb.skops"), *spec]),
        (".csv.gz, 1 MB -> 1 GiB", [*fa, "audit", "--data", str(folder / "bomb.csv.gz"), "--pred", "a > 0", *spec]),
        (".nnet claiming 3,000,000 layers", [*fa, "audit", "--engine", "fairquant", "--model",
                                             str(folder / "bomb.nnet"), "--spec", "Fair[x0] > 0.5"]),
        ("spec of 200,000 set members (1.5 MB)", [*fa, "check", f"@{folder / 'big.fs'}", "--data", "adult"]),
        ("spec of 12,000 set members (66 KB)", [*fa, "check", f"@{folder / 'many.fs'}", "--data", "adult"]),
        (f"fairsquare, 24 KB program, --timeout {budget:g}",
         [*fa, "audit", "--engine", "fairsquare", "--population", str(folder / "branches.fr"), "--spec", RATIO,
          "--timeout", f"{budget:g}"]),
        (f"monitor sampling, 60 KB program, --time-budget {budget:g}",
         [*fa, "audit", "--engine", "monitor", "--population", str(folder / "draws.fr"), "--spec", RATIO,
          "--time-budget", f"{budget:g}"]),
    ]


CHILD = """
import resource, runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_module("fairaudit", run_name="__main__")
finally:
    print(f"PEAK_MB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}", file=sys.stderr)
"""


def run(argv: list[str], limit: float = 300) -> tuple[float, str, int, str]:
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, *argv[2:]], cwd=ROOT, capture_output=True, text=True,
                              timeout=limit, env={**os.environ, "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        return limit, "?", -1, f"killed at {limit:g} s"
    seconds = time.perf_counter() - started
    peak = next((line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK_MB")), "?")
    said = [line for line in (done.stderr + done.stdout).splitlines() if line.strip() and "PEAK_MB" not in line]
    first = next((line for line in said if "error" in line or line.startswith("verdict")), said[0] if said else "")
    return seconds, peak, done.returncode, first


def main(budget: float = 5.0) -> None:
    print(f"load average (1 min) {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    print("| case | seconds | peak RSS (MB) | exit | first line |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in cases(Path(tmp), budget):
            seconds, peak, code, first = run(argv)
            print(f"| {name} | {seconds:.1f} | {peak} | {code} | {first.replace(tmp, '…')[:150]} |")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)
