"""Benchmark (issue 30): how long the same group-rate question takes, fairaudit against the references, on Adult
and on COMPAS.

The question, per dataset (``fairaudit.data.load("adult")``: 32,561 rows; ``"compas"``: 6,172 rows): a logistic
regression (``fairaudit.models.train(ds, "logreg", seed=0)``) and the spec ``spec_text(ds)`` — demographic parity
and equal opportunity over sex and race, two-sided, each group against the most frequent one (Adult: 20 comparisons
of 14 distinct ``E[...]`` leaves, 2 sexes and 5 races, and the same on the rows with ``label == 1``; COMPAS: 24 of 16,
6 races).

Every measurement is a fresh process (``bench/timing.py``), and the contenders are interleaved (A, B, C, A, B, C, …,
``--rounds`` ≥ 5 each); the table gives medians. Each process loads the dataset, trains the model and prepares its
inputs (untimed setup), then calls its contender once on objects nothing has touched (timed: "work", the wall and CPU
seconds of that one call). The imports a contender makes lazily on its first call (scipy for fairaudit, fairlearn's
own) are made in the setup by one call on a deep copy of the rows — a different object, so no cache of the timed
objects is warmed. The total wall / CPU / peak RSS of the process (interpreter, imports, loading and training
included) are in the table too. Rows, from two starting points, each against references that start from the same
point:

* **from the dataset and the model** (what ``fairaudit audit --data adult --model ...`` starts from):
  ``fairaudit monitor`` — ``fairaudit.audit(ds, SPEC, model=model, engine="monitor")`` (the default options: the
  held-out rows, shuffled, a check every 5 rows, the directed split with the joint tests); ``fairaudit dataset`` —
  the same with ``engine="dataset"``. fairaudit picks the held-out rows and calls the model, so its references here
  pay for ``model.predict`` on the same rows too: ``fairlearn + predict``, ``aequitas + predict``;
* **from the rows and their decisions** (what aequitas and fairlearn are handed: the held-out rows with the
  decisions computed in the setup, as a ``decision`` column): ``fairaudit monitor, decisions given`` /
  ``fairaudit dataset, decisions given`` — ``fairaudit.audit(rows, SPEC, pred="decision == 1", rows="all", ...)``
  (the ``--pred`` route of logged decisions: no model call) — against ``fairlearn MetricFrame``
  (``MetricFrame(metrics={selection_rate, true_positive_rate}, ...)`` by sex and by race: the same rates) and
  ``aequitas Group`` (``aequitas.group.Group().get_crosstabs`` by sex and race);
* ``pandas groupby`` — the same rates with a plain ``DataFrame.groupby`` (always run: the floor).

Both starting points audit the same rows with the same decisions, so they give the same verdicts and the same
estimates (checked in this process, outside the timing, below each table).

fairlearn and aequitas are optional (not project dependencies): a missing one is left out of the table.

Targets (issue 30): the monitor ≤ fairlearn MetricFrame's time; the dataset engine ≤ 2 × aequitas's (2 × pandas
groupby's when aequitas is not installed) — each against the reference from the same starting point, on the work's
CPU seconds (``--clock wall``: its wall seconds).

Run: ``nice -n 10 .venv/bin/python bench/throughput.py`` (``--rounds N``, default 5 — ``--repeats`` is the same;
``--datasets adult compas``; ``--clock cpu|wall``; ``--profile`` prints cProfile's top 15 by tottime for the two
fairaudit rows from the dataset and the model, in this process). Results: ``bench/throughput_results.md``.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import Snippet, interleave, stamp, table  # noqa: E402

BENCH = str(Path(__file__).resolve().parent)
REPEATS = 5
DATASETS = ("adult", "compas")


def groups(ds, col: str) -> list[str]:
    """The categories of ``col``, most frequent first (the first is the reference of the comparisons)."""
    return [str(v) for v in ds.frame[col].value_counts().index]


def spec_text(ds) -> str:
    """Demographic parity and equal opportunity over sex and race, two-sided, each group against the most frequent
    (on Adult: the spec of issue 30, 20 comparisons of 14 leaves)."""
    parts = []
    for suffix in ("", " and label == 1"):
        for col in ("sex", "race"):
            first, *rest = groups(ds, col)
            ref = f'E[pred | {col} == "{first}"{suffix}]'
            for g in rest:
                other = f'E[pred | {col} == "{g}"{suffix}]'
                parts += [f"{ref} - {other} < 0.2", f"{other} - {ref} < 0.2"]
    return "\n  and ".join(parts)


def setup(name: str):
    from fairaudit import data, models
    from fairaudit.spec import parse

    ds = data.load(name)
    model = models.train(ds, "logreg", seed=0)
    return ds, model, parse(spec_text(ds))


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


def copy_of(ds):
    """A deep copy of ``ds`` as another ``Dataset`` object (to warm imports without touching ``ds``)."""
    from fairaudit.data.dataset import Dataset

    return Dataset(ds.name + " (copy)", ds.frame.copy(deep=True), ds.schema, "bench")


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

    def run():
        frame = frame_of(df if before is None else before())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xtab, _ = Group().get_crosstabs(frame, attr_cols=["sex", "race"])
        return xtab
    return run


# contender key -> (row label, the reference of its target, the target's factor)
ROWS = {
    "monitor": ("fairaudit monitor", "fairlearn + predict", 1),
    "dataset": ("fairaudit dataset", "aequitas + predict", 2),
    "monitor given": ("fairaudit monitor, decisions given", "fairlearn", 1),
    "dataset given": ("fairaudit dataset, decisions given", "aequitas", 2),
    "fairlearn + predict": ("fairlearn MetricFrame + predict", None, None),
    "aequitas + predict": ("aequitas Group + predict", None, None),
    "fairlearn": ("fairlearn MetricFrame", None, None),
    "aequitas": ("aequitas Group", None, None),
    "pandas": ("pandas groupby (floor)", None, None),
}


def prepare(name: str, key: str):
    """In the child: the untimed setup of contender ``key`` on dataset ``name``; returns the call to time. Lazy
    imports are made by one call on a deep copy (another object); the returned call uses objects nothing touched."""
    from fairaudit.api import audit

    ds, model, spec = setup(name)
    engine = key.split()[0]
    if key in ("monitor", "dataset"):
        audit(copy_of(ds), spec, model=model, engine=engine)
        return lambda: audit(ds, spec, model=model, engine=engine)
    df, sub = audited_frame(ds, model)
    if key in ("monitor given", "dataset given"):
        audit(decisions_dataset(ds, sub.copy(deep=True), df["pred"]), spec, pred="decision == 1", rows="all",
              engine=engine)
        given = decisions_dataset(ds, sub, df["pred"])
        return lambda: audit(given, spec, pred="decision == 1", rows="all", engine=engine)
    if key == "pandas":
        pandas_rates(df.copy(deep=True))
        return lambda: pandas_rates(df)
    make = fairlearn_fn if key.startswith("fairlearn") else aequitas_fn
    if key.endswith("+ predict"):
        warm = sub.copy(deep=True)
        make(None, lambda: decided_frame(ds, warm, model.predict(warm)))()
        return make(None, lambda: decided_frame(ds, sub, model.predict(sub)))
    make(df.copy(deep=True))()
    return make(df)


def contender(name: str, key: str) -> Snippet:
    return Snippet(f"import sys\nsys.path.insert(0, {BENCH!r})\nimport throughput\n"
                   f"fn = throughput.prepare({name!r}, {key!r})", "fn()")


def installed(module: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            __import__(module)
        return True
    except Exception:  # noqa: BLE001
        return False


def check_same_rates(result, df) -> float:
    """The largest difference between fairaudit's estimates of the leaves and the pandas rates."""
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


def checks(name: str) -> str:
    """In this process, outside the timing: the same verdicts from both starting points, the estimates vs pandas."""
    from fairaudit.api import audit

    ds, model, spec = setup(name)
    df, sub = audited_frame(ds, model)
    given = decisions_dataset(ds, sub, df["pred"])
    r = {e: audit(ds, spec, model=model, engine=e) for e in ("monitor", "dataset")}
    g = {e: audit(given, spec, pred="decision == 1", rows="all", engine=e) for e in ("monitor", "dataset")}
    same = all(r[e].verdict == g[e].verdict and r[e].stop_step == g[e].stop_step for e in r)
    return (f"audited rows: {len(df):,}; verdicts: monitor {r['monitor'].verdict} "
            f"(stop step {r['monitor'].stop_step}), "
            f"dataset {r['dataset'].verdict}; the same from the decisions: {'yes' if same else 'NO'}; dataset "
            f"estimates vs pandas rates: max |diff| = {check_same_rates(r['dataset'], df):.2g} (decisions given: "
            f"{check_same_rates(g['dataset'], df):.2g})")


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
    ap.add_argument("--rounds", "--repeats", dest="rounds", type=int, default=REPEATS,
                    help="interleaved rounds (>= 5), each contender in a fresh process per round")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="the figure of the targets: the timed call's CPU seconds (default: what a shared machine's "
                         "load disturbs least) or its wall seconds")
    args = ap.parse_args(argv)
    have = {"fairlearn": installed("fairlearn.metrics"), "aequitas": installed("aequitas.group")}
    keys = [k for k in ROWS if k.split()[0] not in have or have[k.split()[0]]]
    for name in args.datasets:
        print(f"\n### {name}\n\n{stamp()}; not installed: "
              f"{', '.join(k for k, v in have.items() if not v) or 'none'}\n")
        res = interleave({ROWS[k][0]: contender(name, k) for k in keys}, args.rounds)
        targets = {}
        for k in keys:
            label, ref, factor = ROWS[k]
            if ref is None:
                continue
            if ref not in keys:  # aequitas not installed: the dataset engine against pandas (from the decisions)
                ref = "pandas" if ref == "aequitas" else None
            if ref is not None:
                targets[label] = (factor, ROWS[ref][0])
        print(table(res, floor=ROWS["pandas"][0], targets=targets, on="work_" + args.clock))
        print(f"\n{checks(name)}")
        if "aequitas + predict" not in keys:
            print("(aequitas not installed: fairaudit dataset from the model has no reference)")
        if args.profile:
            from fairaudit.api import audit

            ds, model, spec = setup(name)
            for engine in ("monitor", "dataset"):
                print(f"\n---- cProfile {engine} on {name} (tottime) ----")
                print(profile(lambda: audit(ds, spec, model=model, engine=engine)))


if __name__ == "__main__":
    main()
