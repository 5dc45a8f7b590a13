"""Benchmark (issue 32): rows a comparison needs to decide "B's gap is smaller than A's" — paired (``fairaudit
compare``) against two unpaired monitors — on Adult and COMPAS, and its wrong-claim rate at the boundary.

The population: each case's held-out rows (the rows neither model trained on) with both models' decisions; a stream
draws rows i.i.d. with replacement from it (seeded), so the true difference of every node is its exact value on those
rows. Each stream is compared with ``fairaudit.compare`` (monitor engine, Δ = 0.05, the looks every row up to 64
then +2 %) twice: paired (the default) and ``paired=False`` (every leaf unpaired: each model's own KT intervals,
subtracted, all of Δ to them — what two separate monitors of the two models conclude). The table shows the median
and mean rows at which the gap node's difference is first decided (undecided streams count as the stream length,
and are counted), and the ratio unpaired / paired.

Validity at the boundary: model B is replaced by a copy of A's decisions re-drawn within each group so that B's
group rates equal A's exactly (true difference 0 at every node) while B decides many individuals differently; the
share of streams with any a_lower / b_lower claim must be ≤ Δ.

Run: ``nice .venv/bin/python bench/compare_power.py`` (about 2 minutes); the table is printed and saved to
``docs/benchmarks/results/compare.md``.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from fairaudit.comparison import compare  # noqa: E402
from fairaudit.data import resolve as load_data  # noqa: E402
from fairaudit.data.dataset import Column, Dataset, Schema  # noqa: E402
from fairaudit import models  # noqa: E402
from fairaudit.models import held_out_positions  # noqa: E402
from fairaudit.models.features import default_features  # noqa: E402

STREAMS = 20
LENGTH = 400_000
DELTA = 0.05
BOUNDARY_STREAMS = 100
CASES = [  # name, attribute, privileged, other, model A (kind, with protected attributes), model B
    ("adult", "sex", "Male", "Female", ("logreg", True), ("tree", False)),
    ("compas", "race", "Caucasian", "African-American", ("decile_score <= 4", None), ("logreg", False)),
]


def population(name, attr, kind_a, kind_b):
    ds = load_data(name)
    ma, mb = (models.from_expression(kind[0], ds) if kind[1] is None else
              models.train(ds, kind[0], seed=0, features=default_features(ds, include_protected=kind[1]))
              for kind in (kind_a, kind_b))
    rows = np.arange(len(ds))
    for m in (ma, mb):
        held = held_out_positions(m, ds) if m.kind != "expression" else None
        rows = rows if held is None else np.intersect1d(rows, held)
    frame = ds.frame.iloc[rows]
    return pd.DataFrame({attr: frame[attr].astype(str).to_numpy(), "da": ma.predict(frame).astype(np.int64),
                         "db": mb.predict(frame).astype(np.int64)})


def label(kind) -> str:
    return f"`{kind[0]}`" if kind[1] is None else kind[0] + ("+protected" if kind[1] else "")


def as_dataset(frame, attr, name):
    groups = tuple(sorted(frame[attr].unique()))
    schema = Schema((Column(attr, "categorical", groups), Column("da", "numeric"), Column("db", "numeric")),
                    protected=(attr,))
    return Dataset(name, frame.reset_index(drop=True), schema, source="bench")


def rows_to_decide(pop, attr, spec, seed, paired):
    rng = np.random.default_rng(seed)
    stream = pop.iloc[rng.integers(0, len(pop), LENGTH)]
    r = compare(as_dataset(stream, attr, "stream"), spec, preds=["da == 1", "db == 1"], order="given",
                delta=DELTA, stop="decided", paired=paired)
    gap = r.tree.nodes[0].children[0]  # the gap term of ``gap < c``
    d = r.difference(gap)
    return (d.decided_at or LENGTH), d.verdict


def boundary_copy(pop, attr, seed):
    """B := decisions with exactly A's rate in each group, mostly on other individuals (true difference 0)."""
    rng = np.random.default_rng(seed)
    out = pop.copy()
    for g, rows in out.groupby(attr).groups.items():
        idx = np.asarray(rows)
        k = int(out.loc[idx, "da"].sum())
        db = np.zeros(len(idx), dtype=int)
        db[rng.permutation(len(idx))[:k]] = 1
        out.loc[idx, "db"] = db
    return out


def main() -> None:
    lines = ["| case | true gap A | true gap B | B − A | paired: median rows (mean) | unpaired: median rows (mean) "
             "| unpaired / paired (median) | undecided paired / unpaired | boundary: wrong claims |",
             "|---|---|---|---|---|---|---|---|---|"]
    t0 = time.time()
    for name, attr, g1, g2, ka, kb in CASES:
        pop = population(name, attr, ka, kb)
        spec = f'E[pred | {attr} == "{g1}"] - E[pred | {attr} == "{g2}"] < 0.05'
        rate = pop.groupby(attr)[["da", "db"]].mean()
        gap_a, gap_b = rate.loc[g1, "da"] - rate.loc[g2, "da"], rate.loc[g1, "db"] - rate.loc[g2, "db"]
        res = {True: [], False: []}
        undecided = {True: 0, False: 0}
        for seed in range(STREAMS):
            for paired in (True, False):
                n, verdict = rows_to_decide(pop, attr, spec, seed, paired)
                res[paired].append(n)
                undecided[paired] += verdict == "undecided"
        wrong = 0
        for seed in range(BOUNDARY_STREAMS):
            b = boundary_copy(pop, attr, seed)
            rng = np.random.default_rng(10_000 + seed)
            stream = b.iloc[rng.integers(0, len(b), 20_000)]
            r = compare(as_dataset(stream, attr, "boundary"), spec, preds=["da == 1", "db == 1"], order="given",
                        delta=DELTA)
            wrong += any(d.verdict in ("a_lower", "b_lower") for d in r.differences)
        p, u = np.array(res[True]), np.array(res[False])
        lines.append(f"| {name} ({label(ka)} vs {label(kb)}; {len(pop):,} held-out rows) | "
                     f"{gap_a:.4f} | {gap_b:.4f} | {gap_b - gap_a:+.4f} | {np.median(p):,.0f} ({p.mean():,.0f}) | "
                     f"{np.median(u):,.0f} ({u.mean():,.0f}) | {np.median(u) / np.median(p):.2f}× | "
                     f"{undecided[True]}/{STREAMS} · {undecided[False]}/{STREAMS} | "
                     f"{wrong}/{BOUNDARY_STREAMS} (Δ = {DELTA}) |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    header = (f"Rows to decide \"B's gap is smaller than A's\" (Δ = {DELTA}, {STREAMS} streams of up to {LENGTH:,} "
              f"rows drawn from the held-out rows; `bench/compare_power.py`, {time.time() - t0:.0f} s)\n\n")
    out = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "results" / "compare.md"
    out.write_text("# Paired comparison: power and validity\n\n" + header + text + "\n")
    print(text)


if __name__ == "__main__":
    main()
