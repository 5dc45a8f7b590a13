"""Benchmark (issue 46, groundwork): the confidence sequences for a bounded quantity's mean — validity at the
boundary under continuous monitoring, and power against adaptive Hoeffding.

``fairaudit.bounds.bounded`` scales a quantity declared in ``[lo, hi]`` to ``[0, 1]`` and applies the Bernoulli
bounds to the real sum (the module doc has the proof that the beta-binomial mixture stays a supermartingale). Here
(``mixture``, ``hoeffding``, and the variance-adaptive ``bernstein``, which also reads the sum of squares) an amount in
``[0, 50,000]`` is drawn i.i.d. from five shapes inside its range (skewed; piled at the ends;
concentrated in the middle; uniform; heavy at both edges, Beta(0.2, 0.2)); every stream of ``STEPS`` rows is looked
at every ``EVERY`` rows (continuous monitoring: every look is a claim).

1. **Validity at the boundary** (``--runs``, default 400 per shape, δ = 0.05): the question "is the mean amount at
   most c?" with the true mean exactly c. A *wrong verdict* is "violated" (the interval's lower end above c) at any
   look; with the interval at level δ it must happen in at most δ/2 of the runs (the one side of a two-sided δ), and
   the table gives the rate of any miss of the true mean too (≤ δ).
2. **Power**: the same question with the true mean 2,000 below c (4 % of the range): rows until "certified" (upper
   end below c), median and 80th percentile over the runs, the three bounds on the same streams
   (a run that does not decide within ``STEPS`` rows counts as ``STEPS``).

Run: ``nice -n 10 .venv/bin/python bench/quantity_validity.py`` (≈ 5 min on 2 shared cores: ``bernstein``'s bisection dominates; ``--runs N``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fairaudit.bounds.bounded import bounded_mean_interval  # noqa: E402

LO, HI = 0.0, 50_000.0
STEPS, EVERY, DELTA, MARGIN = 20_000, 50, 0.05, 2_000.0
BOUNDS = ("mixture", "bernstein", "hoeffding")

SHAPES = {  # a draw in [0, 1] and its mean
    "skewed, Beta(0.3, 3)": (lambda rng, size: rng.beta(0.3, 3.0, size), 0.3 / 3.3),
    "piled at the ends (90 % at 0 or 1)": (
        lambda rng, size: np.where(rng.random(size) < 0.9, (rng.random(size) < 0.2) * 1.0, rng.random(size)),
        0.9 * 0.2 + 0.1 * 0.5),
    "concentrated, U(0.45, 0.55)": (lambda rng, size: rng.uniform(0.45, 0.55, size), 0.5),
    "uniform, U(0, 1)": (lambda rng, size: rng.random(size), 0.5),
    "heavy at both edges, Beta(0.2, 0.2)": (lambda rng, size: rng.beta(0.2, 0.2, size), 0.5),
}


def streams(shape: str, runs: int, shift: float, seed: int):
    """``runs`` streams of amounts in [LO, HI] whose mean is the shape's minus ``shift`` (moved toward LO by mixing
    in zeros, which keeps every value in range), summed at every look: (totals, rows, true mean)."""
    draw, mean01 = SHAPES[shape]
    rng = np.random.default_rng(seed)
    y = draw(rng, (runs, STEPS))
    keep = 1.0 - shift / (mean01 * (HI - LO)) if shift else 1.0  # a share of the rows set to LO: mean scaled down
    if shift:
        y = np.where(rng.random(y.shape) < keep, y, 0.0)
    amounts = LO + (HI - LO) * y
    totals = np.cumsum(amounts, axis=1)[:, EVERY - 1::EVERY]
    squares = np.cumsum(amounts * amounts, axis=1)[:, EVERY - 1::EVERY]
    rows = np.arange(EVERY, STEPS + 1, EVERY, dtype=float)
    return totals, squares, np.broadcast_to(rows, totals.shape), LO + (HI - LO) * mean01 * keep


def first(mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The rows at the first look where ``mask`` holds, per run (``STEPS`` when never)."""
    hit = mask.any(axis=1)
    return np.where(hit, rows[0][mask.argmax(axis=1)], STEPS)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=400)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    print(f"amounts in [{LO:,.0f}, {HI:,.0f}]; {args.runs} i.i.d. streams per shape, {STEPS:,} rows, a look every "
          f"{EVERY} rows; δ = {DELTA}\n")
    print("1. Validity at the boundary: \"mean ≤ c\" with the true mean exactly c (wrong verdict: violated at some "
          f"look; must be ≤ δ/2 = {DELTA / 2:g}; any miss of the mean: ≤ δ)\n")
    print("| shape | bound | wrong verdict, any look | interval misses the mean, any look | width at the last look |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for k, shape in enumerate(SHAPES):
        totals, squares, rows, mu = streams(shape, args.runs, 0.0, 100 + k)
        for bound in BOUNDS:
            lo, hi = bounded_mean_interval(totals, rows, DELTA, LO, HI, bound, total_sq=squares)
            wrong = float((lo > mu).any(axis=1).mean())
            miss = float(((lo > mu) | (hi < mu)).any(axis=1).mean())
            worst = max(worst, wrong)
            print(f"| {shape} | {bound} | {wrong:.4f} | {miss:.4f} | {np.median(hi[:, -1] - lo[:, -1]):,.0f} |")
    print(f"\nworst wrong-verdict rate {worst:.4f} (Monte Carlo error ±{2 * np.sqrt(0.025 * 0.975 / args.runs):.3f}"
          f" at 2 s.e.)\n")
    print(f"2. Power: \"mean ≤ c\" with the true mean {MARGIN:,.0f} below c: rows until certified (median / 80th "
          f"percentile; {STEPS:,} = not within the stream)\n")
    print("| shape | mixture | bernstein | hoeffding | hoeffding ÷ mixture (median) |")
    print("|---|---|---|---|---|")
    for k, shape in enumerate(SHAPES):
        totals, squares, rows, mu = streams(shape, args.runs, MARGIN, 200 + k)
        c = mu + MARGIN
        found = {}
        for bound in BOUNDS:
            lo, hi = bounded_mean_interval(totals, rows, DELTA, LO, HI, bound, total_sq=squares)
            found[bound] = first(hi < c, rows)
        cells = [f"{np.median(found[b]):,.0f} / {np.percentile(found[b], 80):,.0f}" for b in BOUNDS]
        print(f"| {shape} | {' | '.join(cells)} | {np.median(found['hoeffding']) / np.median(found['mixture']):.2f} |")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
