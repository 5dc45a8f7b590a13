"""Benchmark: the ``dataset`` engine's one-look intervals (Clopper–Pearson, ``interval="one-look"``) — coverage
and width against Fairlearn's bootstrap.

1. Coverage: for each (p, n), many seeded samples ``s ~ Binomial(n, p)`` (vectorised), the fraction whose
   Clopper–Pearson interval at δ contains p; beside it the percentile bootstrap's coverage at the same level
   (1,000 resamples; the bootstrap distribution of a Bernoulli mean is Binomial(n, p̂)/n, drawn directly).
   Then the spec-level case the engine runs: two group rates, Δ = 0.05 split over the 2 leaves, joint coverage.
2. Width: the mean Clopper–Pearson width over Fairlearn's bootstrap width (``MetricFrame(n_boot=1000,
   ci_quantiles=[0.025, 0.975])`` on ``selection_rate`` by group), on samples of n rows per group; "leaf" compares
   at the same level (δ = 0.05 each), "spec" at the engine's split for a two-group comparison (δ = 0.025 per leaf
   against the bootstrap's 95 %). Fairlearn is used if installed (``pip install fairlearn``), else the numpy
   percentile bootstrap stands in (it agrees with Fairlearn's to the Monte Carlo error; both are printed).

Run: ``nice -n 10 .venv/bin/python bench/one_look.py --quick`` (≈ 15 min on 2 shared cores, mostly Fairlearn's
bootstrap; without ``--quick``: 100,000 samples and 10 Fairlearn seeds per row).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from fairaudit.bounds.fixed_sample import clopper_pearson

BOOT = 1000
SEED = 2026


def bootstrap_interval(s, n, rng, level=0.95, boot=BOOT):
    """Percentile bootstrap of a Bernoulli mean, vectorised over samples: resampled means ~ Binomial(n, p̂)/n."""
    s = np.atleast_1d(s)
    means = rng.binomial(n, (s / n)[:, None], size=(len(s), boot)) / n
    q = (1 - level) / 2
    return np.quantile(means, q, axis=1), np.quantile(means, 1 - q, axis=1)


def coverage_table(reps: int) -> None:
    rng = np.random.default_rng(SEED)
    print(f"\n1. Coverage over {reps:,} seeded samples per row (target ≥ 0.95)")
    print(f"{'p':>5} {'n':>6} {'Clopper–Pearson δ=0.05':>23} {'bootstrap 95 %':>15}")
    boot_reps = min(reps, 4000)
    for p in (0.05, 0.3, 0.5):
        for n in (50, 1000, 5000):
            s = rng.binomial(n, p, size=reps)
            lo, hi = clopper_pearson(s, n, 0.05)
            cp = np.mean((lo <= p) & (p <= hi))
            blo, bhi = bootstrap_interval(s[:boot_reps], n, rng)
            bc = np.mean((blo <= p) & (p <= bhi))
            print(f"{p:>5} {n:>6} {cp:>23.4f} {bc:>15.4f}")
    print("\n   spec level: two group rates, Δ = 0.05 split over the 2 leaves (δ = 0.025 each), joint coverage")
    print(f"{'p1, p2':>12} {'n1, n2':>12} {'joint coverage':>15}")
    for (p1, p2), (n1, n2) in (((0.42, 0.67), (3175, 2103)), ((0.3, 0.35), (1000, 1000)), ((0.1, 0.5), (200, 50))):
        s1, s2 = rng.binomial(n1, p1, size=reps), rng.binomial(n2, p2, size=reps)
        l1, h1 = clopper_pearson(s1, n1, 0.025)
        l2, h2 = clopper_pearson(s2, n2, 0.025)
        joint = np.mean((l1 <= p1) & (p1 <= h1) & (l2 <= p2) & (p2 <= h2))
        print(f"{f'{p1}, {p2}':>12} {f'{n1}, {n2}':>12} {joint:>15.4f}")


def fairlearn_widths(p: float, n: int, seeds: int):
    """Mean width of Fairlearn's bootstrap interval of one group's selection rate (two groups of n rows)."""
    from fairlearn.metrics import MetricFrame, selection_rate

    widths = []
    for seed in range(seeds):
        rng = np.random.default_rng(SEED + seed)
        y = np.concatenate([rng.random(n) < p, rng.random(n) < p]).astype(int)
        group = np.repeat(["a", "b"], n)
        mf = MetricFrame(metrics=selection_rate, y_true=y, y_pred=y, sensitive_features=group, n_boot=BOOT,
                         ci_quantiles=[0.025, 0.975], random_state=seed)
        lo, hi = mf.by_group_ci
        widths.extend((hi - lo).to_numpy().ravel().tolist())
    return float(np.mean(widths))


def width_table(reps: int, fl_seeds: int) -> None:
    try:
        import fairlearn  # noqa: F401
        have_fairlearn = True
    except ImportError:
        have_fairlearn = False
    rng = np.random.default_rng(SEED + 1)
    print(f"\n2. Width: Clopper–Pearson over the bootstrap (1,000 resamples), mean over samples "
          f"({'Fairlearn MetricFrame' if have_fairlearn else 'numpy bootstrap; Fairlearn not installed'})")
    print(f"{'p':>5} {'n':>6} {'CP δ=.05':>9} {'CP δ=.025':>10} {'boot np':>8} {'boot FL':>8} "
          f"{'leaf ratio':>11} {'spec ratio':>11}")
    for p in (0.05, 0.3, 0.5):
        for n in (1000, 2000, 5000):
            s = rng.binomial(n, p, size=reps)
            lo, hi = clopper_pearson(s, n, 0.05)
            cp = float(np.mean(hi - lo))
            lo2, hi2 = clopper_pearson(s, n, 0.025)
            cp2 = float(np.mean(hi2 - lo2))
            blo, bhi = bootstrap_interval(s[:2000], n, rng)
            bnp = float(np.mean(bhi - blo))
            bfl = fairlearn_widths(p, n, fl_seeds) if have_fairlearn else float("nan")
            ref = bfl if have_fairlearn else bnp
            print(f"{p:>5} {n:>6} {cp:>9.4f} {cp2:>10.4f} {bnp:>8.4f} {bfl:>8.4f} {cp / ref:>11.3f} {cp2 / ref:>11.3f}")


def main(argv=None) -> None:
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    t = time.perf_counter()
    coverage_table(reps=20_000 if quick else 100_000)
    width_table(reps=20_000, fl_seeds=3 if quick else 10)
    print(f"\n({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
