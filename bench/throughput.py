"""Benchmark (issue 30): how long the same group-rate question takes in process, fairaudit against the references.

The question: Adult (``fairaudit.data.load("adult")``, 32,561 rows), a logistic regression
(``fairaudit.models.train(ds, "logreg", seed=0)``), and ``SPEC`` below — demographic parity and equal opportunity
over sex and race, two-sided, 20 comparisons of 14 distinct ``E[...]`` leaves (the selection rate of each of 2 sexes
and 5 races, and the same on the rows with ``label == 1``).

Rows timed (warm: every row is run once untimed first; each time is the median of ``REPEATS`` calls):

* ``fairaudit monitor`` — ``fairaudit.audit(ds, SPEC, model=model, engine="monitor")`` (the default options: the
  held-out rows, shuffled, a check every 5 rows, the directed split with the joint tests);
* ``fairaudit dataset`` — the same with ``engine="dataset"``;
* ``fairlearn MetricFrame`` — ``MetricFrame(metrics={selection_rate, true_positive_rate}, ...)`` by sex and by race
  on the same rows and decisions (the same 14 rates);
* ``aequitas Group`` — ``aequitas.group.Group().get_crosstabs`` on the same rows (``pp / k`` is the selection rate,
  ``tpr`` the rate on label 1), by sex and race;
* ``pandas groupby`` — the 14 rates with a plain ``DataFrame.groupby`` (always run: the floor).

Model predictions: ``fairaudit.audit`` calls ``model.predict`` on the audited rows at every call (it caches no
predictions across calls), and that cost is inside its rows; the references are given the decisions, computed once
outside the timing (``model.predict`` on the same rows) — so the fairaudit rows pay for prediction and the
references do not. The prediction time is printed on its own line so that it can be subtracted.

fairlearn and aequitas are optional (not project dependencies): a missing one prints "not installed".

Targets (issue 30): the monitor ≤ fairlearn MetricFrame's time; the dataset engine ≤ 2 × aequitas's (2 × pandas
groupby's when aequitas is not installed).

Run: ``.venv/bin/python bench/throughput.py`` (``--repeats N``, ``--profile`` prints cProfile's top 15 by tottime
for the two fairaudit rows).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
import warnings

import numpy as np
import pandas as pd

RACES = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
SEXES = ["Male", "Female"]
REPEATS = 5


def make_spec() -> str:
    parts = []
    for suffix in ("", " and label == 1"):
        m, f = (f'E[pred | sex == "{s}"{suffix}]' for s in SEXES)
        parts += [f"{m} - {f} < 0.2", f"{f} - {m} < 0.2"]
        w = f'E[pred | race == "White"{suffix}]'
        for r in RACES[1:]:
            g = f'E[pred | race == "{r}"{suffix}]'
            parts += [f"{w} - {g} < 0.2", f"{g} - {w} < 0.2"]
    return "\n  and ".join(parts)


SPEC = make_spec()


def timed(fn, repeats: int) -> tuple[float, object]:
    out = fn()  # warm
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def setup():
    from fairaudit import data, models
    from fairaudit.spec import parse

    ds = data.load("adult")
    model = models.train(ds, "logreg", seed=0)
    spec = parse(SPEC)
    return ds, model, spec


def audited_frame(ds, model):
    """The rows the audit reads (the held-out rows, as ``fairaudit.audit`` picks them) with ``pred`` and ``label``."""
    from fairaudit.core.inputs import audited_rows

    idx, _ = audited_rows(ds, model, None)
    sub = ds.frame if idx is None else ds.frame.iloc[idx]
    pred = np.asarray(model.predict(sub)).astype(int)
    label = (sub[ds.schema.label] == ds.schema.favourable).to_numpy().astype(int)
    out = pd.DataFrame({"sex": sub["sex"].to_numpy(), "race": sub["race"].to_numpy(), "pred": pred, "label": label})
    return out, sub


def pandas_rates(df: pd.DataFrame) -> dict:
    out = {}
    pos = df[df["label"] == 1]
    for col in ("sex", "race"):
        out[("sel", col)] = df.groupby(col, observed=True)["pred"].mean()
        out[("tpr", col)] = pos.groupby(col, observed=True)["pred"].mean()
    return out


def fairlearn_fn(df):
    try:
        from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate
    except ImportError:
        return None

    def run():
        return [MetricFrame(metrics={"selection_rate": selection_rate, "tpr": true_positive_rate},
                            y_true=df["label"], y_pred=df["pred"], sensitive_features=df[col]).by_group
                for col in ("sex", "race")]
    return run


def aequitas_fn(df):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from aequitas.group import Group
    except Exception:  # noqa: BLE001 — not installed or not importable here
        return None
    frame = pd.DataFrame({"score": df["pred"], "label_value": df["label"], "sex": df["sex"].astype(str).astype(object),
                          "race": df["race"].astype(str).astype(object)})  # aequitas wants object columns

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xtab, _ = Group().get_crosstabs(frame, attr_cols=["sex", "race"])
        return xtab
    return run


def check_same_rates(result, df) -> float:
    """The largest difference between fairaudit's estimates of the 14 leaves and the pandas rates."""
    rates = pandas_rates(df)
    worst = 0.0
    for info in result.node_info:
        if info.kind != "expect":
            continue
        text = result.tree.node(info.id).text
        col = "sex" if "sex ==" in text else "race"
        group = text.split('"')[1]
        kind = "tpr" if "label == 1" in text else "sel"
        est = float(result.final_values(info.id)["estimate"])
        worst = max(worst, abs(est - float(rates[(kind, col)][group])))
    return worst


def profile(fn, top: int = 15) -> str:
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(top)
    return s.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=REPEATS)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    from fairaudit.api import audit

    ds, model, spec = setup()
    print(f"spec: {len(spec.nodes)} nodes, {len({tn.text for tn in spec.leaves})} distinct leaves; "
          f"repeats {args.repeats} (median, warm)")
    df, sub = audited_frame(ds, model)
    t_pred, _ = timed(lambda: model.predict(sub), args.repeats)
    print(f"audited rows: {len(df)}; model.predict on them: {t_pred * 1e3:.1f} ms (inside the fairaudit rows)")

    rows = []
    t_mon, r_mon = timed(lambda: audit(ds, spec, model=model, engine="monitor"), args.repeats)
    t_ds, r_ds = timed(lambda: audit(ds, spec, model=model, engine="dataset"), args.repeats)
    t_pd, _ = timed(lambda: pandas_rates(df), args.repeats)
    fl, aq = fairlearn_fn(df), aequitas_fn(df)
    t_fl = timed(fl, args.repeats)[0] if fl else None
    t_aq = timed(aq, args.repeats)[0] if aq else None
    ref_name, t_ref = ("aequitas Group", t_aq) if t_aq is not None else ("pandas groupby", t_pd)

    def target(t, ref, factor, name):
        if ref is None:
            return f"≤ {factor:g}× {name}: reference not installed", ""
        ok = t <= factor * ref
        return f"≤ {factor:g}× {name}", ("met" if ok else "NOT met")

    rows.append(("fairaudit monitor", t_mon, *target(t_mon, t_fl, 1, "fairlearn")))
    rows.append(("fairaudit dataset", t_ds, *target(t_ds, t_ref, 2, ref_name.split()[0])))
    rows.append(("fairlearn MetricFrame", t_fl, "", ""))
    rows.append(("aequitas Group", t_aq, "", ""))
    rows.append(("pandas groupby", t_pd, "", ""))

    print()
    print(f"{'row':24s} {'time':>10s} {'÷ fairlearn':>12s} {'÷ ' + ref_name.split()[0]:>12s}  target")
    for name, t, tgt, met in rows:
        if t is None:
            print(f"{name:24s} {'not installed':>10s}")
            continue
        r1 = f"{t / t_fl:.2f}" if t_fl else "-"
        r2 = f"{t / t_ref:.2f}" if t_ref else "-"
        print(f"{name:24s} {t * 1e3:8.1f}ms {r1:>12s} {r2:>12s}  {tgt} {met}")
    print()
    print(f"verdicts: monitor {r_mon.verdict} (stop step {r_mon.stop_step}), dataset {r_ds.verdict}; "
          f"dataset estimates vs pandas rates: max |diff| = {check_same_rates(r_ds, df):.2g}")

    if args.profile:
        for name, fn in (("monitor", lambda: audit(ds, spec, model=model, engine="monitor")),
                         ("dataset", lambda: audit(ds, spec, model=model, engine="dataset"))):
            print(f"\n---- cProfile {name} (tottime) ----")
            print(profile(fn))


if __name__ == "__main__":
    main()
