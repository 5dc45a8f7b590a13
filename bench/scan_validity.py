"""Benchmark: the subgroup scan's family-wise validity and its power (issue 31), beside uncorrected and Bonferroni
intervals.

Populations: attributes A (3 categories) and B (4 categories), drawn independently with the shares given, and a
selection rate per A × B cell; the scan is run at depth 2 (tables A, B, A × B: 19 cells) over a stream of rows drawn
from the population, looked at on a geometric grid of ``LOOKS`` prefixes (every look is a claim).

1. **Validity** (``--null``): every A × B cell exactly at 4/5 of the best cell's rate (the boundary of the
   four-fifths rule). Over ``--seeds`` seeded populations (different category shares and base rates per seed), the
   share of runs with a *wrong claim* — at some look, some rate or impact-ratio interval misses its true value
   (family-wise over cells, tables and looks) — and with a *false violation* — some cell certified below 4/5 while
   its true ratio is ≥ 4/5. Methods:
     scan anytime          the scan (``fairaudit.subgroups``: the monitor's mixture CS, Δ split by row counts)
     uncorrected anytime   the same confidence sequences, each at Δ (no split): what a per-cell tool does
     uncorrected one-look  Clopper–Pearson at Δ per cell (fairlearn-style per-group intervals), checked at every look
     Bonferroni one-look   Clopper–Pearson at Δ/19 per cell (plain Bonferroni over every cell), checked at every look
     point estimate        the four-fifths rule on the estimates (fairlearn's ``demographic_parity_ratio`` < 0.8)
   The one-look methods are valid at one look only: the "final look" columns check them at the last look alone.
2. **Power** (``--power``): one planted cell (A=a0, B=b0) with 1 %, 2 % or 5 % of the rows at impact ratio 0.5,
   every other cell at the same rate, so that no single attribute shows it (A's and B's margins stay at ratio
   ≥ 0.83);
   the rows each method needs before it certifies the planted cell below 4/5 (median and 80th percentile of the
   first look that does, over the seeds; min share 0.5 % so that a 1 % cell has a ratio). For the one-look methods
   the same "first look" is peeking (not valid); their valid use is one look at a number of rows fixed in advance,
   reported as the smallest grid size where ≥ 80 % of the seeds certify at that single look.

3. **Scale** (``--scale``): a whole scan of 1,000,000 rows at depth 3, loaded from a Parquet file in a fresh
   process per run (``bench/timing.py``: nothing warmed by an earlier run, ≥ 5 interleaved rounds, medians of wall,
   CPU and peak RSS), beside pandas reading the same file and running ``groupby`` over every table (the floor);
   target: exact ≤ 1.5× pandas in CPU. ``--rounds N`` (default 5).

Run: ``nice -n 10 .venv/bin/python bench/scan_validity.py`` (≈ 11 min on 2 shared cores: 200 seeded populations
for validity, 50 per power row, then the scale table); ``--seeds N`` / ``--power-seeds N`` to change them,
``--quick`` for 50 and 10, ``--scale`` for the scale table alone.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from fairaudit.subgroups import cells as cells_mod
from fairaudit.subgroups.scan import Scanner, look_points, settings

DELTA = 0.05
THRESHOLD = 0.8
LOOKS = 40


def population(seed: int, planted_share: float | None = None, n_a: int = 3, n_b: int = 4) -> dict:
    """Category shares of A and B and the rate of every A × B cell (``rates[a, b]``). Null (``planted_share``
    None): one best cell at rate q, every other at 0.8 q. Planted: every cell at q, the cell (0, 0) at 0.5 q, with
    ``planted_share`` of the rows."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.2, 0.6)
    if planted_share is None:
        pa = rng.dirichlet(np.full(n_a, 4.0))
        pb = rng.dirichlet(np.full(n_b, 4.0))
        rates = np.full((n_a, n_b), 0.8 * q)
        rates[rng.integers(n_a), rng.integers(n_b)] = q
    else:
        pa = np.full(n_a, 1.0 / n_a)
        pb0 = planted_share * n_a
        pb = np.concatenate([[pb0], np.full(n_b - 1, (1 - pb0) / (n_b - 1))])
        rates = np.full((n_a, n_b), q)
        rates[0, 0] = 0.5 * q
    return {"pa": pa, "pb": pb, "rates": rates}


def draw(pop: dict, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, decisions)`` of ``n`` rows drawn from ``pop`` (codes: A and B per row)."""
    rng = np.random.default_rng(seed + 10_000_019)
    a = rng.choice(len(pop["pa"]), size=n, p=pop["pa"])
    b = rng.choice(len(pop["pb"]), size=n, p=pop["pb"])
    d = (rng.random(n) < pop["rates"][a, b]).astype(np.int8)
    return np.stack([a, b], axis=1).astype(np.int64), d


def true_rates(pop: dict, table: tuple[int, ...], keys: np.ndarray) -> np.ndarray:
    """The population rate of each cell ``keys`` of ``table`` (a mixture of the A × B cells it contains)."""
    joint = pop["pa"][:, None] * pop["pb"][None, :]
    out = np.empty(len(keys))
    for i, key in enumerate(keys.tolist()):
        mask = np.ones_like(joint, dtype=bool)
        for attr, code in zip(table, key):
            if attr == 0:
                mask[np.arange(joint.shape[0]) != code, :] = False
            else:
                mask[:, np.arange(joint.shape[1]) != code] = False
        out[i] = (joint[mask] * pop["rates"][mask]).sum() / joint[mask].sum()
    return out


def scanner(method: str, n_a: int, n_b: int, delta: float, min_share: float) -> Scanner:
    mode = "anytime" if "anytime" in method else "one-look"
    attrs = [cells_mod.Attribute("A", list(range(n_a))), cells_mod.Attribute("B", list(range(n_b)))]
    sc = Scanner(attrs, settings(2, delta, mode, "mixture", THRESHOLD, min_share, "selection", "decisive"), False)
    if method.startswith("uncorrected") or method == "point estimate":
        sc.allocation.deltas = lambda table, keys, metric: np.full(len(keys), delta)  # no split
    if method == "bonferroni one-look":  # plain Bonferroni over every cell of every table (all occur here)
        cells = n_a + n_b + n_a * n_b
        sc.allocation.deltas = lambda table, keys, metric: np.full(len(keys), delta / cells)
    return sc


METHODS = ("scan anytime", "uncorrected anytime", "uncorrected one-look", "bonferroni one-look", "point estimate")


def run(pop: dict, n: int, seed: int, method: str, delta: float = DELTA, min_share: float = 0.02,
        looks: int = LOOKS, watch: tuple | None = None) -> dict:
    """One stream through one method: whether some look made a wrong claim / a false violation (and at the last
    look alone), and the first look at which the cell ``watch`` (table index, key) is certified below."""
    codes, d = draw(pop, n, seed)
    sc = scanner(method, len(pop["pa"]), len(pop["pb"]), delta, min_share)
    sc.add(codes, d)
    sc.allocate()  # from the final row counts (group labels only), as ``scan`` does
    width = len(cells_mod.FIELDS)
    running = [cells_mod.TableCounts(np.zeros((0, len(t)), np.int64), np.zeros((0, width), np.int64))
               for t in sc.tables]
    out = {"wrong": False, "false_below": False, "wrong_last": False, "false_below_last": False, "found": None,
           "below_at": []}
    start = 0
    points = look_points(n, looks)
    for step, t in enumerate(points):
        last = step == len(points) - 1
        for i, table in enumerate(sc.tables):
            running[i] = running[i].add(cells_mod.count(codes[start:t], table, d[start:t]))
            v = sc.table_values(i, running[i], int(t))
            truth = true_rates(pop, table, v["keys"])
            ref = v["reference"]
            # the ratio to the table's reference (its most-selected cell at this look), as the scan defines it
            true_ratio = truth / truth[v["best"]] if v["best"] >= 0 else np.full(len(truth), np.nan)
            if method == "point estimate":
                below = ref & (v["r_est"] < THRESHOLD)
                wrong = below & (true_ratio >= THRESHOLD)
                miss = wrong
            else:
                below = ref & (v["flags"] == "certified_below")
                wrong = below & (true_ratio >= THRESHOLD - 1e-12)
                miss = (truth < v["lo"]) | (truth > v["hi"])
                miss |= ref & ((true_ratio < v["r_lo"] - 1e-12) | (true_ratio > v["r_hi"] + 1e-12))
            out["wrong"] |= bool(miss.any())
            out["false_below"] |= bool(wrong.any())
            if last:
                out["wrong_last"] |= bool(miss.any())
                out["false_below_last"] |= bool(wrong.any())
            if watch is not None and i == watch[0]:
                hit = [j for j, k in enumerate(v["keys"].tolist()) if tuple(k) == watch[1]]
                out["below_at"].append(bool(hit and below[hit[0]]))
                if hit and below[hit[0]] and out["found"] is None:
                    out["found"] = int(t)
        start = int(t)
    return out


def validity(seeds: int, n: int = 4000, delta: float = DELTA) -> None:
    print(f"\n1. Validity: every A × B cell exactly at 4/5 of the best; {seeds} seeded populations, {n:,} rows, "
          f"{LOOKS} looks, Δ = {delta:g} (19 cells in 3 tables)")
    print("| method | wrong claim, any look | false violation, any look | wrong claim, last look | "
          "false violation, last look | seconds |")
    print("|---|---|---|---|---|---|")
    for method in METHODS:
        t0 = time.perf_counter()
        rs = [run(population(s), n, s, method, delta) for s in range(seeds)]
        share = {k: np.mean([r[k] for r in rs]) for k in ("wrong", "false_below", "wrong_last", "false_below_last")}
        print(f"| {method} | {share['wrong']:.3f} | {share['false_below']:.3f} | {share['wrong_last']:.3f} | "
              f"{share['false_below_last']:.3f} | {time.perf_counter() - t0:.1f} |")
        sys.stdout.flush()


def power(seeds: int, n: int = 200_000, delta: float = DELTA) -> None:
    print(f"\n2. Power: one planted cell at impact ratio 0.5 that no single attribute shows; {seeds} seeds, streams "
          f"of up to {n:,} rows, {LOOKS} looks, Δ = {delta:g}, min share 0.5 %")
    print("| planted share | method | found (share of seeds) | rows to find: median | 80th percentile | "
          "one look at N fixed in advance: N for 80 % power |")
    print("|---|---|---|---|---|---|")
    table = 2  # A × B
    points = look_points(n, LOOKS)
    for share in (0.01, 0.02, 0.05):
        pops = [population(s, planted_share=share) for s in range(seeds)]
        for method in ("scan anytime", "bonferroni one-look", "uncorrected one-look"):
            rs = [run(p, n, s, method, delta, min_share=0.005, watch=(table, (0, 0))) for s, p in enumerate(pops)]
            found = [r["found"] for r in rs if r["found"] is not None]
            med = f"{int(np.median(found)):,}" if found else "—"
            p80 = f"{int(np.quantile(found, 0.8)):,}" if len(found) >= 0.8 * seeds else "—"
            fixed = "(valid at every look)" if "anytime" in method else _fixed_n(rs, points, seeds)
            print(f"| {100 * share:g} % | {method} | {len(found) / seeds:.2f} | {med} | {p80} | {fixed} |")
            sys.stdout.flush()


def _fixed_n(rs, points, seeds) -> str:
    """Smallest N on the grid at which ≥ 80 % of the seeds certify the planted cell at that single look."""
    at = np.array([r["below_at"] for r in rs], dtype=bool)  # seeds × looks
    for j, t in enumerate(points):
        if at[:, j].mean() >= 0.8:
            return f"{int(t):,}"
    return "—"


def scale(n: int = 1_000_000, rounds: int = 5) -> None:
    """A whole scan (depth 3, 4 attributes) over ``n`` rows read from a Parquet file, beside pandas reading the same
    file and counting every table with ``groupby`` (the floor). Every run is a fresh process (``bench/timing.py``):
    the data is loaded there, as the command line loads it, so no hash, column or import is warmed by an earlier
    run; the contenders are interleaved over ``rounds`` rounds and the table gives medians."""
    import tempfile
    from pathlib import Path

    import pandas as pd

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from timing import Snippet, interleave, stamp, table

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(list("pq"), n), "b": rng.choice(list("uvwxy"), n),
                          "c": rng.choice(list("ijkl"), n), "age": rng.integers(18, 80, n),
                          "sel": rng.integers(0, 2, n)})
    with tempfile.TemporaryDirectory(prefix="fairaudit-scan-validity-") as tmp:
        path = str(Path(tmp) / "rows.parquet")
        frame.to_parquet(path, index=False)
        del frame
        floor = "pandas read_parquet + qcut + groupby, every table (floor)"
        contenders = {floor: Snippet("import itertools, pandas as pd", f"""
df = pd.read_parquet({path!r})
df = df.assign(age=pd.qcut(df["age"], 4))
for k in (1, 2, 3):
    for combo in itertools.combinations(["a", "b", "c", "age"], k):
        df.groupby(list(combo), observed=True)["sel"].agg(["sum", "count"])""")}
        for mode, looks in (("exact", 0), ("anytime", 0), ("anytime", LOOKS)):
            contenders[f"scan, {mode}, {looks} looks (load + scan)"] = Snippet(
                "import fairaudit\nfrom fairaudit.data import resolve",
                f"ds = resolve({path!r}, protected=['a', 'b', 'c'])\n"
                f"r = fairaudit.scan(ds, pred='sel == 1', depth=3, bins={{'age': 4}}, mode={mode!r}, looks={looks})\n"
                "print(len(r.tables), len(r.cells))")
        contenders["fairaudit scan --mode exact (the command line)"] = [
            sys.executable, "-m", "fairaudit", "scan", "--data", path, "--protected", "a", "b", "c", "--bins", "age=4",
            "--pred", "sel == 1", "--depth", "3", "--mode", "exact"]
        print(f"\n3. Scale: {n:,} rows (a Parquet file), attributes a (2), b (5), c (4) and age (4 quantile bins), "
              f"depth 3; {stamp()}\n")
        res = interleave(contenders, rounds, ok=(0, 1, 3))
    exact = "scan, exact, 0 looks (load + scan)"
    print(table(res, floor=floor, targets={exact: 1.5}, on="work_cpu"))
    print("\n(work: the snippet's own time after its imports; the target — exact ≤ 1.5× pandas — is on that CPU "
          "time; the command line row pays the interpreter and its imports too)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200, help="seeded populations of the validity table (200)")
    parser.add_argument("--power-seeds", type=int, default=50, dest="power_seeds",
                        help="seeded populations per row of the power table (50)")
    parser.add_argument("--quick", action="store_true", help="50 and 10 seeds")
    parser.add_argument("--null", action="store_true", help="only the validity table")
    parser.add_argument("--power", action="store_true", help="only the power table")
    parser.add_argument("--scale", action="store_true", help="only the scale table (1,000,000 rows)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the scale table (>= 5)")
    args = parser.parse_args(argv)
    seeds, power_seeds = (50, 10) if args.quick else (args.seeds, args.power_seeds)
    t0 = time.perf_counter()
    if args.scale:
        scale(rounds=args.rounds)
    else:
        if not args.power:
            validity(seeds)
        if not args.null:
            power(power_seeds)
        scale(rounds=args.rounds)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
