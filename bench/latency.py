"""Benchmark (issue 30): how long the ``fairaudit`` command takes to start, against ``python -c "import pandas"``.

Users run the command in pipelines, where start-up is paid on every call. Each row runs a command and the reference
(``python -c "import pandas"``, what any command that reads data pays anyway) in turn — reference, command,
reference, command, … ``--repeat`` times each — so that the load of the machine falls on both alike; the table shows
the median wall time of each and the ratio of the medians, with the issue's target and whether it is met. Every
command runs in a fresh interpreter (``sys.executable``, the package on ``sys.path`` as this checkout), as
``python -m fairaudit …`` (the console script does the same import).

Bytecode: by default the commands read their modules' compiled bytecode, as an installed package does (pip compiles
it at install): the runs use a temporary ``PYTHONPYCACHEPREFIX`` and one untimed run of each command fills it
first. ``--no-bytecode`` runs them as they are in this environment instead (with ``PYTHONDONTWRITEBYTECODE=1``, as in
some containers, every module of the package is compiled from source on every call: ~0.1 s more).

The Adult audit trains a logistic regression on every call: the model cache (``fairaudit.models.cache``) stores
only fits slower than reading a model file back (``MIN_FIT_SECONDS``), and this one (~0.2 CPU s: fairaudit's own
Newton fit, ``fairaudit.models.logistic``, with no scikit-learn import) is not — reading it back through skops would
cost more (~3 CPU s of imports). Every run uses a cache folder of its own under the
temporary folder (``FAIRAUDIT_CACHE_DIR``), empty, never the user's.

Run: ``.venv/bin/python bench/latency.py`` (a few minutes; ``--repeat 9`` for a steadier table, ``--skip-audit``
without the Adult audits, which train a model: most of their time). Results: docs/benchmarks/index.md ("Start-up").
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

REFERENCE = ("python -c 'import pandas'", [PY, "-c", "import pandas"])


AUDIT = ["audit", "--data", "adult", "--model", "logreg", "--spec", "@specs/demographic_parity.spec", "--json"]
VERDICTS = frozenset({0, 1, 3})  # a verdict's exit code: true, violated, undecided


def rows(json_path: str) -> list[tuple[str, list[str], float, frozenset, bool]]:
    """(label, argv, target ratio, the exit codes that mean it ran, whether each run starts with an empty model
    cache)."""
    fa = [PY, "-m", "fairaudit"]
    return [
        ("fairaudit --help", fa + ["--help"], 1.3, frozenset({0}), False),
        ("fairaudit check specs/demographic_parity.spec", fa + ["check", "specs/demographic_parity.spec"], 1.3,
         frozenset({0}), False),
        ("fairaudit audit --help", fa + ["audit", "--help"], 1.3, frozenset({0}), False),
        ("python -c 'import fairaudit.api'", [PY, "-c", "import fairaudit.api"], 1.3, frozenset({0}), False),
        ("Adult audit --model logreg --json (trains the model)", fa + AUDIT + [json_path], 2.0, VERDICTS, True),
    ]


def wall(argv: list[str], env: dict, ok: frozenset = frozenset({0})) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if done.returncode not in ok:
        sys.exit(f"{' '.join(argv)}: exit code {done.returncode}\n{done.stderr.decode(errors='replace')[-2000:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each command and of the reference (≥ 5)")
    parser.add_argument("--no-bytecode", action="store_true", help="the environment as it is (see the module doc)")
    parser.add_argument("--skip-audit", action="store_true", help="leave out the Adult audit (it trains a model)")
    parser.add_argument("--only", metavar="TEXT", help="only the rows whose command contains TEXT")
    args = parser.parse_args()
    if args.repeat < 5:
        parser.error("--repeat must be at least 5")

    with tempfile.TemporaryDirectory(prefix="fairaudit-latency-") as tmp:
        env = dict(os.environ)
        env["FAIRAUDIT_CACHE_DIR"] = str(Path(tmp) / "cache")  # the model cache, never the user's
        env.pop("FAIRAUDIT_CACHE", None)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                            if p and Path(p).resolve() != ROOT])
        if not args.no_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        todo = rows(str(Path(tmp) / "audit.json"))
        if args.skip_audit:
            todo = [r for r in todo if "--model" not in r[1]]
        if args.only:
            todo = [r for r in todo if args.only in r[0]]
        for _, argv, _, ok, _ in [(None, REFERENCE[1], None, frozenset({0}), False)] + todo:  # fills the bytecode
            wall(argv, env, ok)  # cache

        def fresh_cache() -> dict:
            """``env`` with an empty model cache folder of its own (a cold row's run)."""
            return {**env, "FAIRAUDIT_CACHE_DIR": tempfile.mkdtemp(prefix="cache-", dir=tmp)}

        lines = [f"{'command':<60} {'median s':>9} {'pandas s':>9} {'ratio':>6} {'target':>7}  met",
                 "-" * 102]
        all_met = True
        for label, argv, target, ok, cold in todo:
            ref, cmd = [], []
            for _ in range(args.repeat):
                ref.append(wall(REFERENCE[1], env))
                cmd.append(wall(argv, fresh_cache() if cold else env, ok))
            r, c = statistics.median(ref), statistics.median(cmd)
            met = c / r <= target
            all_met &= met
            shown = label if len(label) <= 60 else label[:57] + "..."
            lines.append(f"{shown:<60} {c:>9.3f} {r:>9.3f} {c / r:>5.2f}× {target:>6.1f}×  {'yes' if met else 'NO'}")
            print(lines[-1] if len(lines) > 3 else "\n".join(lines), flush=True)
    print(f"\nmedian of {args.repeat} interleaved runs each; python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, bytecode {'as the environment has it' if args.no_bytecode else 'compiled'}; "
          f"{'every target met' if all_met else 'NOT every target met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
