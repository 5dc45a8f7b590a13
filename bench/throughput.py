"""Benchmark (issue 30): how long the same group-rate question takes in process, fairaudit against the references.

The question: Adult (``fairaudit.data.load("adult")``, 32,561 rows), a logistic regression
(``fairaudit.models.train(ds, "logreg", seed=0)``), and ``SPEC`` below — demographic parity and equal opportunity
over sex and race, two-sided, 20 comparisons of 14 distinct ``E[...]`` leaves (the selection rate of each of 2 sexes
and 5 races, and the same on the rows with ``label == 1``).

Rows timed (warm: every row is run once untimed first; each time is the median of ``REPEATS`` calls, in CPU time of
the process by default — ``--clock wall`` for wall-clock time —, as issue 30 measured them), from two
starting points, each against references that start from the same point:

* **from the dataset and the model** (what ``fairaudit audit --data adult --model ...`` starts from):
  ``fairaudit monitor`` — ``fairaudit.audit(ds, SPEC, model=model, engine="monitor")`` (the default options: the
  held-out rows, shuffled, a check every 5 rows, the directed split with the joint tests); ``fairaudit dataset`` —
  the same with ``engine="dataset"``. fairaudit picks the held-out rows and calls the model on every call (it caches
  no predictions across calls), so its references here pay for ``model.predict`` on the same rows too:
  ``fairlearn + predict``, ``aequitas + predict``;
* **from the rows and their decisions** (what aequitas and fairlearn are handed: the held-out rows with the
  decisions computed once, outside the timing, as a ``decision`` column): ``fairaudit monitor, decisions given`` /
  ``fairaudit dataset, decisions given`` — ``fairaudit.audit(rows, SPEC, pred="decision == 1", rows="all", ...)``
  (the ``--pred`` route of logged decisions: no model call) — against ``fairlearn MetricFrame``
  (``MetricFrame(metrics={selection_rate, true_positive_rate}, ...)`` by sex and by race: the same 14 rates) and
  ``aequitas Group`` (``aequitas.group.Group().get_crosstabs`` by sex and race: ``pp / k`` is the selection rate,
  ``tpr`` the rate on label 1);
* ``pandas groupby`` — the 14 rates with a plain ``DataFrame.groupby`` (always run: the floor).

Both starting points audit the same rows with the same decisions, so they give the same verdicts and the same
estimates (checked below the table).

fairlearn and aequitas are optional (not project dependencies): a missing one prints "not installed".

Targets (issue 30): the monitor ≤ fairlearn MetricFrame's time; the dataset engine ≤ 2 × aequitas's (2 × pandas
groupby's when aequitas is not installed) — each against the reference from the same starting point. Each row
prints its ratio to its reference and whether its target is met.

Run: ``.venv/bin/python bench/throughput.py`` (``--repeats N``; ``--clock cpu|wall``; ``--profile`` prints cProfile's top 15 by tottime
for the two fairaudit rows from the dataset and the model).
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


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def timed(fn, repeats: int) -> tuple[float, object]:
    out = fn()  # warm
    times = []
    for _ in range(repeats):
        t0 = clock()
        out = fn()
        times.append(clock() - t0)
    return statistics.median(times), out


def setup():
    from fairaudit import data, models
    from fairaudit.spec import parse

    ds = data.load("adult")
    model = models.train(ds, "logreg", seed=0)
    spec = parse(SPEC)
    return ds, model, spec


def audited_frame(ds, model):
    """The rows the audit reads (the held-out rows, as ``fairaudit.audit`` picks them, in file order): ``(the rows
    with ``pred`` and ``label`` only, the rows as they are)``."""
    from fairaudit.core.inputs import audited_rows

    idx, _ = audited_rows(ds, model, None)
    sub = ds.frame if idx is None else ds.frame.iloc[idx]
    return decided_frame(ds, sub, model.predict(sub)), sub


def decided_frame(ds, sub, pred) -> pd.DataFrame:
    """What the references read: ``sex``, ``race``, the decision ``pred`` and the 0/1 ``label`` of the rows ``sub``."""
    label = (sub[ds.schema.label] == ds.schema.favourable).to_numpy().astype(int)
    return pd.DataFrame({"sex": sub["sex"].to_numpy(), "race": sub["race"].to_numpy(),
                         "pred": np.asarray(pred).astype(int), "label": label})


def decisions_dataset(ds, sub, pred):
    """The audited rows ``sub`` with the decisions as a column ``decision`` (1 = favourable), as a dataset: the
    starting point of the references, for ``fairaudit.audit(..., pred="decision == 1", rows="all")``."""
    import dataclasses

    from fairaudit.data.dataset import Column, Dataset

    frame = sub.reset_index(drop=True).assign(decision=np.asarray(pred).astype(np.int8))
    schema = dataclasses.replace(ds.schema, columns=ds.schema.columns + (Column("decision", "numeric"),))
    return Dataset(f"{ds.name} (held-out rows, decisions given)", frame, schema, "bench")


def pandas_rates(df: pd.DataFrame) -> dict:
    out = {}
    pos = df[df["label"] == 1]
    for col in ("sex", "race"):
        out[("sel", col)] = df.groupby(col, observed=True)["pred"].mean()
        out[("tpr", col)] = pos.groupby(col, observed=True)["pred"].mean()
    return out


def fairlearn_fn(df, before=None):
    """fairlearn's MetricFrame on ``df``; ``before()``, when given, is called first in each run and returns the frame
    to use (the reference from the rows and the model: predict, then the frame)."""
    try:
        from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate
    except ImportError:
        return None

    def run():
        frame = df if before is None else before()
        return [MetricFrame(metrics={"selection_rate": selection_rate, "tpr": true_positive_rate},
                            y_true=frame["label"], y_pred=frame["pred"], sensitive_features=frame[col]).by_group
                for col in ("sex", "race")]
    return run


def aequitas_fn(df, before=None):
    """aequitas's crosstabs on ``df`` (``before`` as for ``fairlearn_fn``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from aequitas.group import Group
    except Exception:  # noqa: BLE001 — not installed or not importable here
        return None

    def frame_of(d):  # aequitas wants object columns
        return pd.DataFrame({"score": d["pred"], "label_value": d["label"], "sex": d["sex"].astype(str).astype(object),
                             "race": d["race"].astype(str).astype(object)})
    given = frame_of(df)

    def run():
        frame = given if before is None else frame_of(before())
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
    ap.add_argument("--clock", choices=tuple(CLOCKS), default="cpu",
                    help="cpu: the process's CPU time (default: what a shared machine's load disturbs least); wall")
    args = ap.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    from fairaudit.api import audit

    ds, model, spec = setup()
    print(f"spec: {len(spec.nodes)} nodes, {len({tn.text for tn in spec.leaves})} distinct leaves; "
          f"repeats {args.repeats} (median, warm, {args.clock} time)")
    df, sub = audited_frame(ds, model)
    t_pred, _ = timed(lambda: model.predict(sub), args.repeats)
    print(f"audited rows: {len(df)}; model.predict on them: {t_pred * 1e3:.1f} ms")
    given = decisions_dataset(ds, sub, df["pred"])

    def with_model(engine):
        return lambda: audit(ds, spec, model=model, engine=engine)

    def from_decisions(engine):
        return lambda: audit(given, spec, pred="decision == 1", rows="all", engine=engine)

    predicted = (lambda: decided_frame(ds, sub, model.predict(sub)))  # noqa: E731 — the references' own prediction
    t = {}
    r = {}
    for name, fn in (("monitor", with_model("monitor")), ("dataset", with_model("dataset")),
                     ("monitor given", from_decisions("monitor")), ("dataset given", from_decisions("dataset"))):
        t[name], r[name] = timed(fn, args.repeats)
    t["pandas"] = timed(lambda: pandas_rates(df), args.repeats)[0]
    for name, make in (("fairlearn", fairlearn_fn), ("aequitas", aequitas_fn)):
        for suffix, before in (("", None), (" + predict", predicted)):
            fn = make(df, before)
            t[name + suffix] = timed(fn, args.repeats)[0] if fn else None
    cheap = "aequitas" if t["aequitas"] is not None else "pandas"  # the dataset engine's reference
    cheap_predict = "aequitas + predict" if t["aequitas"] is not None else None

    rows = [  # (row, its time, its reference, the factor of the target)
        ("fairaudit monitor", "monitor", "fairlearn + predict", 1),
        ("fairaudit dataset", "dataset", cheap_predict, 2),
        ("fairaudit monitor, decisions given", "monitor given", "fairlearn", 1),
        ("fairaudit dataset, decisions given", "dataset given", cheap, 2),
        ("fairlearn MetricFrame + predict", "fairlearn + predict", None, None),
        ("aequitas Group + predict", "aequitas + predict", None, None),
        ("fairlearn MetricFrame", "fairlearn", None, None),
        ("aequitas Group", "aequitas", None, None),
        ("pandas groupby", "pandas", None, None),
    ]
    print()
    print(f"{'row':36s} {'time':>10s}  {'reference':22s} {'ratio':>7s}  target")
    for label, key, ref, factor in rows:
        if t[key] is None:
            print(f"{label:36s} {'not installed':>10s}")
            continue
        line = f"{label:36s} {t[key] * 1e3:8.1f}ms"
        if ref is None and factor is not None:
            line += "  (reference not installed)"
        elif ref is not None and t.get(ref) is None:
            line += f"  {ref:22s} {'-':>7s}  ≤ {factor:g}× {ref}: reference not installed"
        elif ref is not None:
            ratio = t[key] / t[ref]
            met = "met" if ratio <= factor else "NOT met"
            line += f"  {ref:22s} {ratio:6.2f}×  ≤ {factor:g}×: {met}"
        print(line)
    print()
    same = all(r[a].verdict == r[b].verdict and r[a].stop_step == r[b].stop_step
               for a, b in (("monitor", "monitor given"), ("dataset", "dataset given")))
    print(f"verdicts: monitor {r['monitor'].verdict} (stop step {r['monitor'].stop_step}), dataset "
          f"{r['dataset'].verdict}; the same from the decisions: {'yes' if same else 'NO'}; dataset estimates vs "
          f"pandas rates: max |diff| = {check_same_rates(r['dataset'], df):.2g} (decisions given: "
          f"{check_same_rates(r['dataset given'], df):.2g})")

    if args.profile:
        for name, fn in (("monitor", lambda: audit(ds, spec, model=model, engine="monitor")),
                         ("dataset", lambda: audit(ds, spec, model=model, engine="dataset"))):
            print(f"\n---- cProfile {name} (tottime) ----")
            print(profile(fn))


if __name__ == "__main__":
    main()
