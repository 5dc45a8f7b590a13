"""Is a certified repair worth adopting? The simulation of issue 44 (item 4), with the population known.

Two groups, ``a`` (60 % of the population) and ``b`` (40 %); each person's score ``s`` is drawn from a Beta law of
their group (a: Beta(A_A, B_A), b: Beta(A_B, B_B)) and their label is 1 with probability ``s`` — so the score is the
Bayes-optimal one, and the population's accuracy, favourable rates and gap of any thresholds are known exactly
(incomplete beta functions). The model decides ``s > 0.5`` (the Bayes classifier); the specification is
demographic parity within 0.1, ``|E[pred | g == "a"] - E[pred | g == "b"]| < 0.1``, written as two comparisons.

Each run draws ``ROWS`` = 4,000 rows and calls ``fairaudit.repair`` at Δ = 0.05 with its defaults (split 0.5, the
automatic plan, ``max_loss`` 0.10) except the split (``--split``, default the library's 0.3), once with one threshold for everyone (the default) and once with per-group
thresholds (``thresholds="both"``, the explicit choice). Printed per mode, over the runs:

* certified: the share of runs whose repair is certified;
* accuracy: the mean population accuracy of the certified repairs (and its standard error);
* wrong: the share of runs with a certified repair whose population gap is ≥ 0.1 in size (the certificate's error,
  to be ≤ Δ), and "any wrong": the share of runs where any of the candidates certified together is wrong (the
  Bonferroni guarantee is about that family);
* and, for comparison, always-favourable (everyone hired) and the best thresholds with a population gap under 0.1
  (found on a fine grid of each group's favourable rate: per group, and one for everyone).

Run: ``.venv/bin/python bench/repair_harness.py --runs 200 [--jobs 2] [--markdown]``; ``--runs 50`` is the fast mode
(≈ 2 minutes on 2 shared cores). Not a test.
"""
from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
from scipy import stats

ROWS = 4_000
DELTA = 0.05
TOL = 0.1
SHARE_A = 0.6
A_A, B_A = 1.6, 0.9   # group a's scores: mean 0.64
A_B, B_B = 0.9, 1.3   # group b's scores: mean 0.41
SPEC = (f'E[pred | g == "a"] - E[pred | g == "b"] > -{TOL:g} and '
        f'E[pred | g == "a"] - E[pred | g == "b"] < {TOL:g}')
MODES = {"one threshold (default)": "global", "per group (explicit)": "both"}
OPTIONS: dict = {}  # fairaudit.repair options from the command line (--split, --max-loss)


def population(ta, tb) -> tuple[np.ndarray, np.ndarray]:
    """``(accuracy, gap)`` in the population of deciding ``s ≥ ta`` in group a and ``s ≥ tb`` in group b."""
    def parts(a, b, t):
        t = np.clip(np.asarray(t, float), 0.0, 1.0)
        mean = a / (a + b)
        fav = 1.0 - stats.beta.cdf(t, a, b)
        correct = mean * (1.0 - stats.beta.cdf(t, a + 1, b)) + (1.0 - mean) * stats.beta.cdf(t, a, b + 1)
        return fav, correct

    fa, ca = parts(A_A, B_A, ta)
    fb, cb = parts(A_B, B_B, tb)
    return SHARE_A * ca + (1 - SHARE_A) * cb, fa - fb


def baselines() -> dict:
    """Always-favourable, the Bayes classifier, and the best thresholds with |population gap| < 0.1."""
    grid = np.linspace(0.0, 1.0, 2001)
    acc, gap = population(grid[:, None], grid[None, :])
    per_group = float(acc[np.abs(gap) < TOL].max())
    acc1, gap1 = population(grid, grid)
    single = float(acc1[np.abs(gap1) < TOL].max())
    bayes, bayes_gap = population(0.5, 0.5)
    return {"always favourable": float(population(0.0, 0.0)[0]), "Bayes classifier (s > 0.5)": float(bayes),
            "Bayes gap": float(bayes_gap), "best feasible, per group": per_group,
            "best feasible, one threshold": single}


def one_run(run: int) -> list[dict]:
    """Draw the rows of run ``run`` and repair them in each mode: the population figures of what was certified."""
    import fairaudit
    from fairaudit.data import from_csv
    from fairaudit.models.base import Model

    class Known(Model):
        """The Bayes-optimal score: the column ``s``."""

        kind = "score"
        params: dict = {}
        feature_names = ["s"]
        metrics: dict = {}

        def score(self, frame):
            return frame["s"].to_numpy(dtype=float)

        @property
        def content_hash(self) -> str:
            return "0" * 64

    rng = np.random.default_rng(10_000 + run)
    g = np.where(rng.uniform(size=ROWS) < SHARE_A, "a", "b")
    s = np.where(g == "a", rng.beta(A_A, B_A, ROWS), rng.beta(A_B, B_B, ROWS))
    y = (rng.uniform(size=ROWS) < s).astype(int)
    frame = pd.DataFrame({"g": g, "s": s, "y": y})
    ds = from_csv(frame.to_csv(index=False).encode(), label="y", protected="g", favourable=1, name=f"run{run}.csv")
    out = []
    for label, mode in MODES.items():
        t0 = time.perf_counter()
        r = fairaudit.repair(ds, SPEC, Known(), rows="all", thresholds=mode, seed=run, delta=DELTA, **OPTIONS)
        seconds = time.perf_counter() - t0

        def thresholds(p):
            return (p.thresholds.get("a", p.default), p.thresholds.get("b", p.default))

        acc, gap = population(*thresholds(r.chosen))
        wrong_any = any(abs(float(population(*thresholds(c.point))[1])) >= TOL
                        for c in r.tried if c.verdict == "certified")
        out.append({"mode": label, "run": run, "certified": r.verdict == "certified", "accuracy": float(acc),
                    "gap": float(gap), "wrong": r.verdict == "certified" and abs(float(gap)) >= TOL,
                    "wrong_any": wrong_any, "k": r.together, "favourable": r.chosen.favourable,
                    "refused": r.refusal is not None, "seconds": seconds})
    return out


def table(rows: list[dict], base: dict) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    out = []
    for label in MODES:
        f = frame[frame["mode"] == label]
        cert = f[f["certified"]]
        se = cert["accuracy"].std(ddof=1) / np.sqrt(len(cert)) if len(cert) > 1 else float("nan")
        out.append({"method": f"fairaudit repair, {label}", "runs": len(f),
                    "certified": f"{f['certified'].mean():.1%}",
                    "population accuracy of certified repairs": (f"{cert['accuracy'].mean():.3f} ± {se:.3f}"
                                                                 if len(cert) else "—"),
                    "wrong certificates": f"{f['wrong'].mean():.1%}",
                    "any of the k wrong": f"{f['wrong_any'].mean():.1%}",
                    "mean k": f"{f['k'].mean():.2f}", "s per repair": f"{f['seconds'].mean():.2f}"})
    for name in ("always favourable", "best feasible, per group", "best feasible, one threshold",
                 "Bayes classifier (s > 0.5)"):
        extra = f" (population gap {base['Bayes gap']:+.3f})" if name.startswith("Bayes") else ""
        out.append({"method": name + extra, "runs": "—", "certified": "—",
                    "population accuracy of certified repairs": f"{base[name]:.3f}", "wrong certificates": "—",
                    "any of the k wrong": "—", "mean k": "—", "s per repair": "—"})
    return pd.DataFrame(out)


def markdown(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--split", type=float, help="fairaudit.repair's split (default: the library's)")
    parser.add_argument("--max-loss", type=float, help="fairaudit.repair's max_loss (default: the library's)")
    args = parser.parse_args()
    OPTIONS.update({k: v for k, v in (("split", args.split), ("max_loss", args.max_loss)) if v is not None})
    base = baselines()
    t0 = time.perf_counter()
    rows = []
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            for part in pool.map(one_run, range(args.runs)):
                rows += part
    else:
        for run in range(args.runs):
            rows += one_run(run)
    frame = table(rows, base)
    print(f"{args.runs} runs of {ROWS:,} rows (groups a {SHARE_A:.0%} / b {1 - SHARE_A:.0%}; scores Beta({A_A:g}, "
          f"{B_A:g}) and Beta({A_B:g}, {B_B:g}), labels drawn from them), spec |gap| < {TOL:g}, Δ = {DELTA:g}; "
          f"{time.perf_counter() - t0:.0f} s")
    if args.markdown:
        print(markdown(frame))
    else:
        pd.set_option("display.width", 250)
        print(frame.to_string(index=False))


if __name__ == "__main__":
    main()
