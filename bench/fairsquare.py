"""The 39 problems of FairSquare's Fig. 8, side by side: the paper, the fairsquare engine and the sampling monitor.

    .venv/bin/python bench/fairsquare.py                 # all 39 (ε = 0.15, 120 s each, as in the issue)
    .venv/bin/python bench/fairsquare.py ind_svm6 bn2_nn32 --timeout 60 --no-sampling

For each `bench/fairsquare/<name>.fr`: the engine's verdict (fair / unfair / unknown at the time budget), its
refinement rounds, wall-clock seconds (path enumeration included), the final bounds on the ratio
P[T | min] / P[T | ¬min] (the root comparison's left side), then the paper's result (✓ fair, ✗ unfair, TO, TO_q:
its quantifier elimination timed out; its SMT calls and sampling seconds), then the monitor sampling the same
program (`--engine monitor --population`, δ = 0.05, stopping at its decision): verdict and individuals drawn.
"disagree" flags two decided verdicts that contradict each other. Prints a markdown table and a summary; timing
figures depend on the machine's load (compare within one run).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent / "fairsquare"
sys.path.insert(0, str(HERE.parent.parent))

from fairaudit import audit  # noqa: E402

# Fig. 8 of the paper (notes §A9): (result, SMT calls, sampling seconds) per population model
PAPER = {
    "dt4": (("✓", 10, 1.3), ("✗", 12, 2.2), ("✗", 18, 6.6)),
    "dt14": (("✓", 20, 4.2), ("✓", 38, 52.3), ("✓", 73, 130.9)),
    "dt16": (("✓", 21, 7.7), ("✗", 22, 15.3), ("✗", 22, 38.2)),
    "dt16a": (("✓", 18, 5.1), ("✓", 34, 32.0), ("✓", 40, 91.0)),
    "dt44": (("✓", 55, 63.5), ("✗", 113, 178.9), ("✗", 406, 484.0)),
    "svm3": (("✓", 10, 2.6), ("✗", 10, 3.7), ("✗", 10, 10.8)),
    "svm4": (("✓", 10, 2.7), ("✗", 18, 13.3), ("✗", 14, 33.7)),
    "svm4a": (("✓", 10, 3.0), ("✓", 22, 15.7), ("✓", 14, 33.4)),
    "svm5": (("✓", 10, 8.5), ("✗", 10, 12.2), ("TO_q", None, None)),
    "svm6": (("TO [0.02, 35.3]", 634, None), ("TO [0.09, 3.03]", 434, None), ("TO_q", None, None)),
    "nn21": (("✓", 78, 21.6), ("✓", 466, 456.1), ("✓", 154, 132.9)),
    "nn22": (("✓", 62, 27.8), ("✓", 238, 236.5), ("✓", 174, 233.5)),
    "nn32": (("TO [0.03, 674.7]", 442, None), ("TO [0.00, 5.24]", 34, None), ("TO_q", None, None)),
}
MODELS = ("ind", "bn1", "bn2")
SYMBOL = {"true": "✓", "false": "✗"}


def ratio_bounds(result) -> tuple[float, float]:
    root = next(n for n in result.nodes if n["parent"] is None)
    left = next(n for n in result.nodes if n["parent"] == root["id"])
    return left["final"]["lo"], left["final"]["hi"]


def run_one(name: str, epsilon: float, timeout: float, sampling: bool, samples: int) -> dict:
    path = HERE / f"{name}.fr"
    t0 = time.perf_counter()
    r = audit(None, None, engine="fairsquare", population=str(path), epsilon=epsilon, time_budget=timeout)
    seconds = time.perf_counter() - t0
    lo, hi = ratio_bounds(r)
    row = {"name": name, "verdict": r.verdict, "rounds": r.steps, "seconds": seconds, "lo": lo, "hi": hi,
           "paths": r.info.get("paths"), "cells": r.info.get("cells")}
    if sampling:
        t0 = time.perf_counter()
        m = audit(None, None, engine="monitor", population=str(path), epsilon=epsilon, stop=True, samples=samples)
        row.update(monitor=m.verdict, drawn=m.stop_step if m.stop_step is not None else m.steps,
                   monitor_seconds=time.perf_counter() - t0)
    return row


def paper_cell(name: str) -> tuple[str, str, str]:
    model, program = name.split("_", 1)
    res, calls, secs = PAPER[program][MODELS.index(model)]
    return res, "–" if calls is None else str(calls), "TO" if secs is None else f"{secs:g}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="benchmarks (file stems, e.g. bn2_nn32); default: all 39")
    parser.add_argument("--epsilon", type=float, default=0.15)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per problem (default 120)")
    parser.add_argument("--no-sampling", action="store_true", help="skip the monitor")
    parser.add_argument("--samples", type=int, default=5_000_000, help="most individuals the monitor draws")
    args = parser.parse_args(argv)
    names = args.names or [f"{m}_{p}" for m in MODELS for p in PAPER]
    print(f"FairSquare Fig. 8 at ε = {args.epsilon} (threshold {1 - args.epsilon:g}), time budget "
          f"{args.timeout:g} s per problem\n")
    head = "| problem | fairsquare | rounds | s | ratio bounds | paper | paper # | paper s |"
    rule = "|---|---|---:|---:|---|---|---:|---:|"
    if not args.no_sampling:
        head += " monitor | individuals | monitor s | agree |"
        rule += "---|---:|---:|---|"
    print(head)
    print(rule)
    rows = []
    for name in names:
        row = run_one(name, args.epsilon, args.timeout, not args.no_sampling, args.samples)
        rows.append(row)
        paper = paper_cell(name)
        line = (f"| {name} | {SYMBOL.get(row['verdict'], 'unknown')} | {row['rounds']} | {row['seconds']:.1f} | "
                f"[{row['lo']:.4f}, {row['hi']:.4f}] | {paper[0]} | {paper[1]} | {paper[2]} |")
        if not args.no_sampling:
            decided = {row["verdict"], row["monitor"]} - {"unknown"}
            agree = "disagree" if len(decided) > 1 else "yes"
            line += (f" {SYMBOL.get(row['monitor'], 'unknown')} | {row['drawn']:,} | {row['monitor_seconds']:.1f} |"
                     f" {agree} |")
        print(line, flush=True)
    decided = [r for r in rows if r["verdict"] != "unknown"]
    paper_decided = [r for r in rows if paper_cell(r["name"])[0] in "✓✗"]
    matches = sum(SYMBOL.get(r["verdict"]) == paper_cell(r["name"])[0] for r in paper_decided)
    print(f"\ndecided: {len(decided)}/{len(rows)} (fair {sum(r['verdict'] == 'true' for r in rows)}, unfair "
          f"{sum(r['verdict'] == 'false' for r in rows)}); the paper's verdict reproduced: {matches}/"
          f"{len(paper_decided)}; slowest: {max(r['seconds'] for r in rows):.1f} s; total "
          f"{sum(r['seconds'] for r in rows):.1f} s")
    if not args.no_sampling:
        contradictions = [r["name"] for r in rows if len({r["verdict"], r["monitor"]} - {"unknown"}) > 1]
        print(f"monitor decided: {sum(r['monitor'] != 'unknown' for r in rows)}/{len(rows)}; contradictions: "
              f"{', '.join(contradictions) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
