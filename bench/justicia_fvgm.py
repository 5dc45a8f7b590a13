"""Justicia and FVGM on the built-in datasets, side by side with the papers' reported values, and the justicia engine's
enumeration vs learning mode as the number of compound groups grows.

    .venv/bin/python bench/justicia_fvgm.py                       # everything (a few minutes)
    .venv/bin/python bench/justicia_fvgm.py --datasets ricci,german --no-scaling --fvgm-budget 30

Table 1: Adult, COMPAS, German, Ricci × decision tree / logistic regression × justicia / fvgm (fvgm audits linear
models only: "—" for a tree). Every run goes through ``fairaudit.api.audit(dataset, spec, engine=..., model=...)``
with the engine's default options (fvgm with a time budget); the model is trained once per (dataset, kind) and
passed to both engines (training time excluded). The spec asks ``E[pred | group] >= 0`` for every compound group of
the dataset's categorical protected attributes, so both engines report every group's rate; DI (lowest ÷ highest)
and SP (highest − lowest) are computed from those intervals (``fairaudit.core.findings.disparities``), the equalized
odds gaps come from the engine's findings when it gives them. Paper columns: Justicia (AAAI 2021) Table 2 runtimes
(protected attribute sex; Ricci: position) and Fig. 2 DI (Adult tree, race+sex, with correlation); FVGM (AAAI 2022)
§5 group rates (Adult LR sex 0.45 M / 0.30 F; COMPAS LR sex 0.61 M / 0.46 F) — from the notes' tables
(seed-fairsquare-justicia.md §B9, seed-fvgm-fairquant.md §A11); "n/a" where the paper gives nothing.
The papers' protected sets, folds and models differ from ours: compare orders of magnitude, not digits.

Table 2: Adult with a decision tree, the protected set grown from 2 to 40 compound groups (sex, age quartile, race
and their products, as in Justicia's Fig. 4), enumeration vs learning mode (``search=learn``): seconds of the whole
audit (both estimate the distribution of every cell, and the spec's leaves need every cell of the groups they name,
so learning saves only the search), then the core alone on the same distribution (every group's rate vs the two
branch-and-bound searches), the most / least favoured group each finds and the nodes branch and bound expanded.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fairaudit import api, data  # noqa: E402
from fairaudit.core.findings import GroupRate, disparities  # noqa: E402

DATASETS = ("adult", "compas", "german", "ricci")
# (justicia paper seconds DT, LR), justicia paper DI, fvgm paper (DI, SP) for LR
PAPER_J_TIME = {"ricci": (0.1, 0.2), "compas": (0.1, 0.2), "adult": (0.2, 1.0)}
PAPER_J_DI = {("adult", "tree"): "0.141 (race+sex, Fig. 2)"}
PAPER_FVGM = {"adult": (0.30 / 0.45, 0.15), "compas": (0.46 / 0.61, 0.15)}
PAPER_ENUM = {2: (0.181, 0.160), 4: (0.278, 0.151), 5: (0.432, 0.178), 8: (0.506, 0.154), 10: (0.711, 0.178),
              20: (1.267, 0.172), 40: (2.399, 0.172)}


def q(v) -> str:
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def group_spec(ds, protected) -> tuple[str, list[tuple]]:
    frame = ds.frame
    combos = frame[list(protected)].dropna().drop_duplicates().sort_values(list(protected))
    groups = [tuple(r) for r in combos.itertuples(index=False)]
    leaves = [f"E[pred | {' and '.join(f'{c} == {q(v)}' for c, v in zip(protected, g))}] >= 0" for g in groups]
    return " and ".join(leaves), groups


def categorical_protected(ds) -> list[str]:
    return [p for p in ds.schema.protected if ds.schema.column(p).kind == "categorical"]


def leaf_groups(result) -> list[GroupRate]:
    """Every group leaf's interval, without the groups absent from the audited rows (probability 0: [0, 1])."""
    return [GroupRate((("group", n["text"]),), n["final"]["lo"], n["final"]["hi"]) for n in result.nodes
            if n["kind"] == "expect" and not (n["final"]["lo"] == 0 and n["final"]["hi"] == 1)]


def metric(findings, start: str):
    if not findings:
        return None
    for m in findings.metrics:
        if m.name.startswith(start):
            return m
    return None


def fmt(lo, hi, digits=3) -> str:
    if lo is None:
        return "—"
    if abs(hi - lo) < 10 ** -digits / 2:
        return f"{lo:.{digits}f}"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def run_engine(ds, spec, engine, model, **options) -> dict:
    t0 = time.perf_counter()
    try:
        r = api.audit(ds, spec, engine=engine, model=model, **options)
    except Exception as err:  # noqa: BLE001 - a failing run is a row of the table
        return {"error": f"{type(err).__name__}: {err}"[:80], "seconds": time.perf_counter() - t0}
    seconds = time.perf_counter() - t0
    groups = leaf_groups(r)
    di, sp = disparities(groups) if len(groups) > 1 else (None, None)
    f = r.findings
    tpr, fpr = metric(f, "equalized odds: true"), metric(f, "equalized odds: false")
    most = least = "—"
    if f and f.groups:
        marks = f.group_rows()
        most, least = marks[0]["group"], marks[-1]["group"]
    return {"seconds": seconds, "di": di, "sp": sp, "tpr": tpr, "fpr": fpr, "most": most, "least": least,
            "guarantee": r.guarantee.kind, "complete": r.complete, "rounds": r.steps}


def table1(names, fvgm_budget: float) -> list[str]:
    from fairaudit.core.inputs import Inputs

    lines = ["| dataset | model | engine | s | guarantee | DI | SP | TPR gap | FPR gap | most favoured | least favoured "
             "| paper s | paper DI | paper SP |", "|" + "---|" * 14]
    for name in names:
        ds = data.load(name)
        prot = categorical_protected(ds)
        spec, groups = group_spec(ds, prot)
        for kind in ("tree", "logreg"):
            model = Inputs.build(ds, model=kind).model
            for engine in ("justicia", "fvgm"):
                paper_s = PAPER_J_TIME.get(name, (None, None))[kind == "logreg"] if engine == "justicia" else None
                paper_di, paper_sp = "n/a", "n/a"
                if engine == "justicia":
                    paper_di = PAPER_J_DI.get((name, kind), "n/a")
                elif kind == "logreg" and name in PAPER_FVGM:
                    paper_di, paper_sp = (f"{PAPER_FVGM[name][0]:.3f} (sex)", f"{PAPER_FVGM[name][1]:.2f} (sex)")
                if engine == "fvgm" and kind == "tree":
                    lines.append(f"| {name} | {kind} | fvgm | — | — | — | — | — | — | — | — | n/a | n/a | n/a |")
                    continue
                opts = {"time_budget": fvgm_budget} if engine == "fvgm" else {}
                row = run_engine(ds, spec, engine, model, **opts)
                if "error" in row:
                    lines.append(f"| {name} | {kind} | {engine} | {row['seconds']:.2f} | error: {row['error']} "
                                 f"| | | | | | | | | |")
                    continue
                g = row["guarantee"] + ("" if row["complete"] else " (budget)")
                lines.append(
                    f"| {name} | {kind} | {engine} | {row['seconds']:.2f} | {g} | "
                    f"{fmt(row['di'].lo, row['di'].hi) if row['di'] else '—'} | "
                    f"{fmt(row['sp'].lo, row['sp'].hi) if row['sp'] else '—'} | "
                    f"{fmt(row['tpr'].lo, row['tpr'].hi) if row['tpr'] else '—'} | "
                    f"{fmt(row['fpr'].lo, row['fpr'].hi) if row['fpr'] else '—'} | {row['most']} | {row['least']} | "
                    f"{'n/a' if paper_s is None else paper_s} | {paper_di} | {paper_sp} |")
                print(lines[-1], file=sys.stderr, flush=True)
    return lines


def table2() -> list[str]:
    import numpy as np

    from fairaudit.core.inputs import Inputs

    base = data.load("adult")
    frame = base.frame.copy()
    frame["age_q"] = np.asarray(["q1", "q2", "q3", "q4"])[
        np.searchsorted(np.quantile(frame["age"], [0.25, 0.5, 0.75]), frame["age"], side="right")]
    sets = [("sex",), ("age_q",), ("race",), ("sex", "age_q"), ("race", "sex"), ("race", "age_q"),
            ("race", "sex", "age_q")]
    lines = ["| protected | groups | enumerate s | learn s | enum ÷ learn | core enum s | core learn s | core ratio "
             "| nodes expanded | most (enum / learn) | least (enum / learn) | paper enum s | paper learn s |",
             "|" + "---|" * 13]
    csv = frame.to_csv(index=False).encode()
    model = None
    for prot in sets:
        ds = data.from_csv(csv, label=base.schema.label, protected=list(prot), favourable=base.schema.favourable,
                           name="adult_q.csv")
        if model is None:
            model = Inputs.build(ds, model="tree").model
        n = int(ds.frame[list(prot)].drop_duplicates().shape[0])
        spec = f"E[pred | {prot[0]} == {q(ds.frame[prot[0]].iloc[0])}] >= 0"
        out = {}
        for search in ("enumerate", "learn"):
            t0 = time.perf_counter()
            r = api.audit(ds, spec, engine="justicia", model=model, search=search)
            rows = r.findings.group_rows()
            out[search] = (time.perf_counter() - t0, rows[0]["group"], rows[-1]["group"], r.info.get("nodes expanded"))
        # the algorithmic core alone, on the same modelled distribution: every group's rate vs two searches
        from fairaudit.engines.justicia import rates as J
        from fairaudit.engines.justicia.engine import Justicia

        inputs = Inputs.build(ds, model=model)
        job = Justicia()._job(inputs, list(prot), True, 0, 0)
        t0 = time.perf_counter()
        J.group_rates(job.form, job.dist)
        core_e = time.perf_counter() - t0
        t0 = time.perf_counter()
        J.most_favoured(job.form, job.dist)
        J.most_favoured(job.form, job.dist, least=True)
        core_l = time.perf_counter() - t0
        e, l_ = out["enumerate"], out["learn"]
        paper = PAPER_ENUM.get(n, (None, None))
        lines.append(f"| {'+'.join(prot)} | {n} | {e[0]:.2f} | {l_[0]:.2f} | {e[0] / l_[0]:.2f} | {core_e:.3f} | "
                     f"{core_l:.3f} | {core_e / core_l:.1f} | {l_[3]} | "
                     f"{e[1]} / {l_[1]} | {e[2]} / {l_[2]} | {paper[0] or 'n/a'} | {paper[1] or 'n/a'} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--fvgm-budget", type=float, default=60.0, help="fvgm's time budget per run (s)")
    parser.add_argument("--no-scaling", action="store_true")
    parser.add_argument("--no-table", action="store_true")
    args = parser.parse_args(argv)
    out = []
    if not args.no_table:
        out += ["## Justicia vs FVGM (default options; model trained once, training excluded)", ""]
        out += table1(args.datasets.split(","), args.fvgm_budget) + [""]
    if not args.no_scaling:
        out += ["## Compound groups: enumeration vs learning (Adult, decision tree)", ""] + table2()
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
