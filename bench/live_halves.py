"""The halves order test on a live log (``fairaudit.engines.monitor.halves.SequentialHalves``): false alarms on exchangeable
streams and the row at which drift is found, against the at-rest halves test that knows the length up front.

Each stream is one leaf (a Bernoulli rate) of ``--rows`` rows with a check every 5 rows; the engine is fed each
stream's counts at its epochs (the only checks it looks at). Null: i.i.d. streams at several rates (false alarms,
with ``m`` = 1 and 4 epochs per doubling). Drift: the rate steps from 0.3 to 0.4 at a given row; the fraction of
streams warned by the end, the median row of the warning, and the at-rest test on the whole stream (its halves
known) for comparison.

    nice python bench/live_halves.py                     # 50,000 null streams per rate, 5,000 drifting ones
    nice python bench/live_halves.py --null 5000 --drift 1000
"""
from __future__ import annotations

import argparse

import numpy as np

from fairaudit.core.allocation import LeafStats
from fairaudit.bounds.concentration import fixed_n_radius
from fairaudit.engines.monitor.halves import SequentialHalves, epoch_rows, first_epoch


def epochs(m: int, rows: int, batch: int = 5) -> np.ndarray:
    t0, out, j = first_epoch(batch, m), [], 0
    while (t := epoch_rows(t0, m, j)) <= rows:
        out.append(t)
        j += 1
    return np.array(out)


def counts_at(rng, t, streams, rate_before, rate_after=None, change=None):
    """Successes at the rows ``t`` (and at the row ``change`` and the end): binomial increments."""
    points = np.unique(np.r_[t, [change] if change else []]).astype(int)
    seg = np.diff(np.r_[0, points])
    rates = [rate_before if change is None or p <= change else rate_after for p in points]
    s = np.cumsum(np.stack([rng.binomial(L, r, size=streams) for L, r in zip(seg, rates)], axis=1), axis=1)
    return s[:, np.searchsorted(points, t)]


def run(t, s, m, delta):
    fired = np.full(len(s), -1)
    for i in range(len(s)):
        test = SequentialHalves(["E[y]"], delta, 5, per_doubling=m)
        test.observe(t, {"E[y]": LeafStats(s[i].astype(float), t.astype(float))})
        fired[i] = test.fired.get("E[y]", -1)
    return fired


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--null", type=int, default=50_000, help="null streams per rate")
    ap.add_argument("--drift", type=int, default=5_000, help="drifting streams per change row")
    ap.add_argument("--rows", type=int, default=25_600)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print("| streams | rate | Δ | m | false alarms | (≤ Δ) |\n|---|---|---|---|---|---|")
    for m in (1, 4):
        t = epochs(m, args.rows)
        for delta in (0.05, 0.5):
            for rate in (0.5, 0.1):
                s = counts_at(rng, t, args.null, rate)
                fired = run(t, s, m, delta)
                print(f"| {args.null:,} | {rate} | {delta} | {m} | {np.mean(fired >= 0):.5f} | {delta} |")
    print(f"\n| change at row | m | warned by row {args.rows:,} | median warning row | at rest (halves of "
          f"{args.rows:,}) |\n|---|---|---|---|---|")
    delta, level = 0.05, 0.05 / 2
    for change in (1000, 5000, 15000):
        for m in (1, 4):
            t = epochs(m, args.rows)
            h, L = args.rows // 2, args.rows
            points = np.unique(np.r_[t, h, L])  # the epochs and the at-rest test's half and end
            s_all = counts_at(rng, points, args.drift, 0.3, 0.4, change)
            s = s_all[:, np.searchsorted(points, t)]
            fired = run(t, s, m, delta)
            sh, sl = s_all[:, np.searchsorted(points, h)], s_all[:, np.searchsorted(points, L)]
            gap = np.abs(sh / h - (sl - sh) / (L - h))
            rest = np.mean(gap > fixed_n_radius(level, h) + fixed_n_radius(level, L - h))
            hit = fired[fired >= 0]
            med = f"{int(np.median(hit)):,}" if len(hit) else "—"
            print(f"| {change:,} | {m} | {np.mean(fired >= 0):.3f} | {med} | {rest:.3f} |")


if __name__ == "__main__":
    main()
