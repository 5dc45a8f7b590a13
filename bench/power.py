"""Benchmark (issue 17): observations the monitor needs to decide, per method, and its wrong-verdict rate at the
boundary.

Power: for each case, STREAMS i.i.d. streams are drawn with replacement from the case's rows (seeded); each method
decides at the first check (every BATCH observations) where its rule gives TRUE or FALSE. The table shows the
median and mean observations to a decision (undecided streams count as the stream length, and are counted).
The directed methods use the engine's own rule (``fairaudit.engines.monitor.engine.decisions``; "mixture directed" is the
default: with the joint e-process per comparison of two disjoint groups); the last column runs every stream THROUGH
THE ENGINE (``run_monitor`` with its default options and ``stop=True``), so it measures the engine's default as a
user gets it.
Validity: the boundary cases of ``tests/monitor/test_directed_boundary.py`` and ``test_joint_engine_boundary.py``
(true rates exactly at the threshold; the latter with disjoint groups, where the joint test applies) with
BOUNDARY_STREAMS streams each; the worst fraction of streams ever given a wrong verdict, per method (the engine
column: its rule, ``decisions``, which ``test_joint_engine_agreement.py`` checks against the engine).
AVOIR-OB (``--split optimized``) is not in the table: it calls a solver per check (minutes per stream) and is valid
only at k·Δ; its Adult figure in file order is 870 (tests/monitor/test_case_studies.py).

Run: ``nice .venv/bin/python bench/power.py`` (about 2 minutes, 8 on a loaded machine; the engine column runs every stream through the
engine); the table is saved to
``bench/power_results.md``.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "tests" / "monitor")]

from boundary_harness import leaf_stats, wrong_rate  # noqa: E402

from fairaudit import data  # noqa: E402
from fairaudit.core.allocation import LeafStats, equal_split, leaf_values  # noqa: E402
from fairaudit.bounds.concentration import get_bound  # noqa: E402
from fairaudit.bounds.rules import UNKNOWN  # noqa: E402
from fairaudit.engines.monitor.engine import check_points, decisions, run_monitor  # noqa: E402
from fairaudit.core.observations import observe  # noqa: E402
from fairaudit.core.evaluate import compile_spec, root_verdict  # noqa: E402
from fairaudit.spec import parse  # noqa: E402

STREAMS, BOUNDARY_STREAMS, SEED = 200, 2000, 17
METHODS = [("hoeffding", "equal"), ("hoeffding", "directed"), ("mixture", "equal"), ("mixture", "directed-intervals"),
           ("mixture", "directed")]  # the last: the engine's default (the joint e-process where it applies)
ENGINE = ("engine default", "(run_monitor)")

ADULT_SPEC = ('(E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.55) & '
              '(E[pred | race == "White"] - E[pred | race != "White"] < 0.5)')
COMPAS_A = 'E[pred | race == "African-American" and two_year_recid == 0]'
COMPAS_C = 'E[pred | race == "Caucasian" and two_year_recid == 0]'
DP_SPEC = ('E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1 and '
           'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1')


def cases():
    adult, compas = data.load("adult").frame, data.load("compas").frame
    fed = adult[adult["workclass"] == "Federal-gov"].reset_index(drop=True)
    return [
        ("Adult, federal-gov rows (AVOIR §3.2), threshold 0.55", ADULT_SPEC, fed,
         (fed["income"] == ">50K").to_numpy(), 0.15, 5, 4000),
        ("COMPAS C / A > 0.9 (AVOIR G.3)", f"{COMPAS_C} / {COMPAS_A} > 0.9", compas,
         (compas["decile_score"] > 4).to_numpy(), 0.1, 5, 8000),
        ("COMPAS A / C < 1.1 (AVOIR G.3)", f"{COMPAS_A} / {COMPAS_C} < 1.1", compas,
         (compas["decile_score"] > 4).to_numpy(), 0.1, 5, 8000),
        ("demographic parity demo (Adult, sex, 0.1)", DP_SPEC, adult, (adult["income"] == ">50K").to_numpy(),
         0.05, 5, 8000),
    ]


def verdicts(spec, stats, delta, bound, split):
    if split.startswith("directed"):
        return decisions(spec, stats, delta, split, bound)
    deltas = equal_split(compile_spec(spec).leaf_keys, delta)
    return root_verdict(spec, leaf_values(stats, deltas, get_bound(bound)))


def power(spec_text, frame, pred, delta, batch, length):
    spec = parse(spec_text)
    obs = observe(spec, frame, pred=pred.astype(int))
    rows = np.random.default_rng(SEED).integers(0, len(frame), (STREAMS, length))
    idx = check_points(length, batch)
    stats = {}
    for k in compile_spec(spec).leaf_keys:
        v, m = np.asarray(obs.values[k])[rows], np.asarray(obs.masks[k])[rows]
        stats[k] = LeafStats(np.cumsum(v & m, axis=1)[:, idx].astype(float), np.cumsum(m, axis=1)[:, idx].astype(float))
    out = {}
    for bound, split in METHODS:
        v = verdicts(spec, stats, delta, bound, split)
        decided = v != UNKNOWN
        first = np.where(decided.any(axis=1), np.argmax(decided, axis=1), len(idx) - 1)
        steps = idx[first] + 1
        out[(bound, split)] = (float(np.median(steps)), float(steps.mean()), int((~decided.any(axis=1)).sum()))
    steps, undecided = [], 0
    for s in range(STREAMS):  # through the engine, with its default options
        r = run_monitor(spec, obs.take(rows[s]), delta=delta, batch=batch, stop=True)
        steps.append(r.stop_step if r.stop_step is not None else length)
        undecided += r.stop_step is None
    out[ENGINE] = (float(np.median(steps)), float(np.mean(steps)), undecided)
    return out


def boundary():
    from test_directed_boundary import CASES, ROWS, BATCH
    import test_joint_engine_boundary as joint
    delta = 0.1
    worst = {m: 0.0 for m in METHODS}
    cases = [(parse(t), leaf_stats(rates, shares, BOUNDARY_STREAMS, ROWS, BATCH, seed=SEED), truth)
             for t, rates, shares, truth in CASES.values()]
    for t, rates, truth in joint.CASES.values():
        spec = parse(t)
        cases.append((spec, joint.stats_of(joint.simulate(spec, rates, BOUNDARY_STREAMS, joint.ROWS, SEED),
                                           joint.ROWS, joint.BATCH), truth))
    for spec, stats, truth in cases:
        for m in METHODS:
            worst[m] = max(worst[m], wrong_rate(verdicts(spec, stats, delta, *m), truth))
    worst[ENGINE] = worst[("mixture", "directed")]
    return worst, len(cases), delta


def main():
    t0 = time.perf_counter()
    columns = METHODS + [ENGINE]
    lines = ["| case | Δ | " + " | ".join(f"{b} {s}" for b, s in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for name, spec, frame, pred, delta, batch, length in cases():
        res = power(spec, frame, pred, delta, batch, length)
        cells = [f"{md:,.0f} / {mn:,.0f}" + (f" ({u} undecided)" if u else "") for md, mn, u in
                 (res[m] for m in columns)]
        lines.append(f"| {name} | {delta:g} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    worst, n_cases, bdelta = boundary()
    lines.append(f"| wrong verdicts at the boundary (worst of {n_cases} cases, {BOUNDARY_STREAMS:,} streams each) "
                 f"| {bdelta:g} | " + " | ".join(f"{worst[m]:.3f}" for m in columns) + " |")
    head = (f"Median / mean observations to a decision over {STREAMS} i.i.d. streams (seed {SEED}), a check every 5; "
            f"every method here is valid at Δ. Default: mixture directed (with the joint e-process), measured through "
            f"the engine in the last column. ({time.perf_counter() - t0:.0f} s)")
    text = head + "\n\n" + "\n".join(lines) + "\n"
    print(text)
    (Path(__file__).with_name("power_results.md")).write_text("# bench/power.py\n\n" + text)


if __name__ == "__main__":
    main()
