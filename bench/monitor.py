"""Benchmark: the vectorised monitor vs a naive per-observation AVOIR-style loop.

Full Adult stream (adult + adult_test = 48,842 rows, file order), a logistic regression trained on
adult.data, the 4-leaf spec below, Δ = 0.05, a check every 5 observations, optimised split.

Naive loop ("the AVOIR way"): one object per E-term, updated per observation (the model called on
each row, as a decorator would), every node re-evaluated at every check, and the full δ decision
(``Allocator.try_decide(optimize=True)``, i.e. the optimum searched, with SCIP unless the exact
screens prove the minimal split optimal) run at every check where δ = Δ per leaf decides, until the
spec is decided — the same decision rule as the engine, so verdict and stop step must agree.
"solver" counts optimiser calls (a screened-out or screen-settled check counts as one). It runs on the stream
up to its decision plus PREFIX_AFTER observations; its cost for the whole stream is extrapolated
(per-observation cost × remaining observations) and marked so in the table.

Run: ``.venv/bin/python bench/monitor.py``
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from fairaudit import data, models
from fairaudit.api import audit
from fairaudit.core.allocation import Allocator, LeafStats, equal_split
from fairaudit.bounds.rules import TRUE, UNKNOWN
from fairaudit.data.dataset import Dataset
from fairaudit.core.evaluate import compile_spec, evaluate
from fairaudit.spec import ast, parse

SPEC = ('(E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.4) & '
        '(E[pred | race == "White"] - E[pred | race != "White"] < 0.4)')
DELTA, BATCH = 0.05, 5
PREFIX_AFTER = 1000


def _ev(event, row, pred):
    """Scalar event evaluation for one row (dict)."""
    if isinstance(event, ast.Name):
        return bool(pred if event.name == "pred" else row[event.name])
    if isinstance(event, ast.Compare):
        get = lambda o: (pred if o.name == "pred" else row[o.name]) if isinstance(o, ast.Name) else o.value  # noqa
        a, b = get(event.left), get(event.right)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[event.op]
    if isinstance(event, ast.In):
        r = row[event.operand.name] in {v.value for v in event.values}
        return not r if event.negated else r
    if isinstance(event, ast.EvAnd):
        return _ev(event.left, row, pred) and _ev(event.right, row, pred)
    if isinstance(event, ast.EvOr):
        return _ev(event.left, row, pred) or _ev(event.right, row, pred)
    return not _ev(event.operand, row, pred)


class NaiveTerm:
    def __init__(self, node):
        self.node, self.s, self.n = node, 0, 0

    def observe(self, row, pred):
        if self.node.given is None or _ev(self.node.given, row, pred):
            self.n += 1
            self.s += _ev(self.node.event, row, pred)


def naive(dataset, model, spec, stop_after: int):
    cs = compile_spec(spec)
    terms = {k: NaiveTerm(cs.leaf_node[k].node) for k in cs.leaf_keys}
    alloc = Allocator(spec, DELTA)
    frame = dataset.frame
    decided, stop_step, verdict = False, None, None
    t_obs = t_check = 0.0
    solves = 0
    limit = len(frame)
    t0 = time.perf_counter()
    for i in range(len(frame)):
        a = time.perf_counter()
        one = frame.iloc[i:i + 1]
        pred = int(model.predict(one)[0])
        row = one.iloc[0].to_dict()
        for t in terms.values():
            t.observe(row, pred)
        b = time.perf_counter()
        t_obs += b - a
        if (i + 1) % BATCH == 0:
            stats = {k: LeafStats(np.array(float(t.s)), np.array(float(t.n))) for k, t in terms.items()}
            deltas = equal_split(cs.leaf_keys, DELTA)
            evaluate(spec, {k: v for k, v in _leaves(alloc, stats, deltas).items()})
            if not decided:
                best = alloc.root_verdict(stats, {k: DELTA for k in cs.leaf_keys})
                if int(best) != UNKNOWN:
                    target = bool(int(best) == TRUE)
                    before = alloc.stats.calls
                    found = alloc.try_decide(stats, target, optimize=True)  # the full decision, every check
                    solves += max(alloc.stats.calls - before, 1)
                    if found is not None:
                        decided, stop_step, verdict = True, i + 1, "true" if target else "false"
                        limit = min(len(frame), i + 1 + stop_after)
            t_check += time.perf_counter() - b
        if i + 1 >= limit:
            break
    processed = i + 1
    elapsed = time.perf_counter() - t0
    per_obs = t_obs / processed
    projected = elapsed + per_obs * (len(frame) - processed) + (t_check / processed) * 0  # checks after decision: no solves
    return dict(stop_step=stop_step, verdict=verdict, processed=processed, elapsed=elapsed, projected=projected,
                solves=solves, per_obs=per_obs, t_check=t_check)


def solve_every_check_cost(dataset, model, spec, samples: int = 25) -> float:
    """Seconds per SCIP solve when the optimiser runs unscreened, as AVOIR does at every check:
    the statistics of ``samples`` checks spread over the first 2,000 observations, each solved once
    per alternative (min Σδᵢ under the inferred constraints, feasible or not)."""
    cs = compile_spec(spec)
    alloc = Allocator(spec, DELTA)
    frame = dataset.frame.iloc[:2000]
    pred = model.predict(frame)
    records = frame.to_dict("records")
    stats_rows = []
    for stop in np.linspace(50, len(frame), samples).astype(int):
        stats = {}
        for k in cs.leaf_keys:
            t = NaiveTerm(cs.leaf_node[k].node)
            for row, p in zip(records[:stop], pred[:stop]):
                t.observe(row, int(p))
            stats[k] = LeafStats(np.array(float(t.s)), np.array(float(t.n)))
        stats_rows.append(stats)
    calls, t0 = 0, time.perf_counter()
    for stats in stats_rows:
        for alt in alloc.alternatives(True):
            alloc.solve(alt, stats, True)
            calls += 1
    return (time.perf_counter() - t0) / calls


def _leaves(alloc, stats, deltas):
    from fairaudit.core.allocation import leaf_values
    return leaf_values(stats, deltas, alloc.bound)


def main():
    a, b = data.load("adult"), data.load("adult_test")
    full = Dataset("adult+adult_test", pd.concat([a.frame, b.frame], ignore_index=True), a.schema)
    model = models.train(a, "logreg")
    spec = parse(SPEC)
    rows = []
    for split in ("equal", "optimized"):
        audit(full, spec, model=model, delta=DELTA, split=split, order="given", rows="all")  # warm-up (imports, caches)
        t = time.perf_counter()
        r = audit(full, spec, model=model, delta=DELTA, split=split, order="given", rows="all")
        dt = time.perf_counter() - t
        rows.append((f"vectorised ({split})", r.verdict, r.stop_step, r.info["solver_calls"], dt, len(full) / dt,
                     "measured, whole stream"))
    nv = naive(full, model, spec, PREFIX_AFTER)
    rows.append(("naive per-observation (optimized)", nv["verdict"], nv["stop_step"], nv["solves"], nv["projected"],
                 len(full) / nv["projected"],
                 f"measured on {nv['processed']} obs ({nv['elapsed']:.1f} s), rest extrapolated"))
    print(f"Adult full stream: {len(full)} rows, logreg, spec: {SPEC}")
    print(f"Δ = {DELTA}, batch = {BATCH}, {int(np.ceil(len(full) / BATCH))} checks\n")
    print(f"{'implementation':36} {'verdict':8} {'stop':>6} {'solver':>7} {'seconds':>9} {'obs/s':>10}  note")
    for name, v, s, c, dt, rate, note in rows:
        print(f"{name:36} {v:8} {str(s):>6} {c:>7} {dt:9.2f} {rate:10.0f}  {note}")
    per_solve = solve_every_check_cost(full, model, spec)
    checks = int(np.ceil(len(full) / BATCH))
    literal = nv["per_obs"] * len(full) + per_solve * checks
    print(f"{'naive, SCIP at every check (AVOIR)':36} {'':8} {'':>6} {checks:>7} {literal:9.2f} "
          f"{len(full) / literal:10.0f}  extrapolated: {per_solve * 1e3:.0f} ms per unscreened solve")
    print(f"\nspeed-up (naive / vectorised optimized): {nv['projected'] / rows[1][4]:.0f}x; "
          f"with a solve at every check: {literal / rows[1][4]:.0f}x")
    print(f"naive cost split: {nv['per_obs'] * 1e3:.2f} ms per observation (predict + term updates), "
          f"{nv['t_check']:.1f} s in checks ({nv['solves']} solver calls)")


if __name__ == "__main__":
    main()
