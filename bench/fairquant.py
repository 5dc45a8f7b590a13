"""FairQuant benchmark: every ``.nnet`` of the paper's evaluation, beside the paper's Table II.

    python bench/fairquant.py [--models DIR] [--only NAME ...] [--time-limit S] [--batch N] [--json PATH]
                              [--method paper|decided|linear] [--device auto|cpu|cuda]
    python bench/fairquant.py --markdown-decided RUN.json ...    # a decided run beside Table II
    python bench/fairquant.py --markdown-curve RUN.json ...      # its anytime curve: undecided % per doubling

For each network (protected attribute as in the paper: adult 8 = sex, bank 0 = age, german 11 = age, compas 3 =
race; ``example.nnet`` 1) the refinement of ``fairaudit.engines.fairquant.analysis`` runs with the paper's parameters
(maximum depth 20, counterexample search from depth 15 with 10 samples, the quasi-complete termination at 1e-5 of
the domain) over the integer grid between the file's input bounds, comparing the protected attribute's lowest and
highest value (the artifact's choice; for the bank networks the misaligned bounds make them 0 and 10, notes §B4.3).
It prints certified / unfair / undecided % (the undecided split into partitions with a counterexample and
partitions left by the depth limit), partitions popped, #cex as the paper counts it (individuals proven unfair +
partitions where a counterexample stopped the refinement), seconds, and ``cer@pt``: the certified % already
reached within the paper's time (the rates are anytime-sound), beside the paper's Table II (FairQuant, C +
OpenBLAS, 2 CPUs); rates are rounded down to 2 decimals, as the artifact prints them. Targets: compas-1..4 exact;
elsewhere certified % ≥ the paper's in no more time. Runs single-threaded (``OMP_NUM_THREADS=1``,
``torch.set_num_threads(1)``) unless ``--threads``.

``--method decided`` (issue 33) runs the engine's defaults instead of the paper's parameters: the symbolic
intervals, then back-substituted linear bounds on what they leave undecided (and the exact check that the
protected attribute cannot reach the output), counterexample partitions refined instead of stopped: a first round as the paper's (depth-first, depth ≤ 20, a
counterexample stops a partition), then what it left, breadth-first (the most left undecided first), with no depth
limit short of single individuals (each decided exactly), and the individuals the linear bounds prove fair inside
a partition still undecided counted one by one (``counting``), the hidden layers' bounds tightened where trials
say it pays per multiply-add (``tighten="auto"``); ``--method linear`` is the same without that counting. The table's last column then says whether undecided ≤ 20 % was reached. ``--device cuda`` computes the tensors on the GPU
(batches of 65,536 partitions unless ``--batch``); with ``--batch`` the same partitions as on the CPU (the rates agree except where a bound lies within float
rounding of a margin).

Differences from the artifact, by design: counterexamples are sampled uniformly inside the partition with a
seeded RNG (the artifact probes ⌊s·(lb+ub)/10⌋, points that may lie outside it), so the undecided mass differs on
german/bank/adult; ``--artifact`` uses the artifact's probes (and reproduces its partition and counterexample
counts), but a witness outside its partition only stops the refinement: fal% counts only witnesses inside their
partition, so it stays a sound lower bound. Partitions are analysed in batches (a batch of the DFS stack at once);
the result does not depend on it (only the quasi-complete termination is checked per batch, not per partition).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = Path("/work/shared/benchmarks/fairquant/models")
PROTECTED = {"adult": 8, "bank": 0, "german": 11, "compas": 3, "example": 1}

# Table II, FairQuant columns: name -> (#Cex, Cer%, Fal%, Und%, seconds)
PAPER = {
    "BM-1": (2820, 94.23, 0, 5.76, 4.82), "BM-2": (2479, 93.41, 0, 6.58, 3.23), "BM-3": (1864, 95.69, 0, 4.30, 1.21),
    "BM-4": (5135, 87.03, 0, 12.96, 71.12), "BM-5": (1474, 96.27, 0, 3.72, 1.03), "BM-6": (1426, 96.44, 0, 3.55, 0.44),
    "BM-7": (7017, 83.65, 0, 16.34, 12.26), "BM-8": (3074, 90.75, 0, 9.24, 18.99),
    "GC-1": (31585, 32.67, 0, 67.33, 9.73), "GC-2": (32655, 42.21, 0, 57.79, 31.72),
    "GC-3": (25963, 58.44, 0, 41.55, 6.77), "GC-4": (77, 99.65, 0, 0.34, 0.29), "GC-5": (9, 99.80, 0, 0.19, 1.24),
    "AC-1": (6151, 90.68, 0, 9.31, 3.23), "AC-2": (13008, 79.93, 0, 20.06, 30.04),
    "AC-3": (60494, 33.29, 0, 66.70, 37.12), "AC-4": (61324, 24.79, 0, 75.20, 480.0),
    "AC-5": (71012, 19.12, 0, 80.87, 240.0), "AC-6": (31593, 58.82, 0, 41.17, 10.20),
    "AC-7": (25588, 31.72, 0, 68.27, 240.0), "AC-8": (26179, 66.50, 0, 33.49, 11.18),
    "AC-9": (5470, 91.13, 0, 8.86, 3.50), "AC-10": (9033, 87.65, 0, 12.34, 5.01),
    "AC-11": (24516, 58.01, 0, 41.98, 36.44), "AC-12": (8824, 70.82, 0, 29.17, 0.91),
    "compas-1": (17, 97.27, 2.72, 0, 0.01), "compas-2": (15, 97.59, 2.40, 0, 0.01),
    "compas-3": (12, 98.07, 1.92, 0, 0.30), "compas-4": (14, 97.75, 2.24, 0, 0.01),
}
# the artifact's exact counts (notes §B5.3 / §B6.5): certified, falsified of G = 624
EXACT = {"compas-1": (607, 17), "compas-2": (609, 15), "compas-3": (612, 12), "compas-4": (610, 14)}


def networks(root: Path, only) -> list[tuple[str, str, Path]]:
    out = []
    for path in sorted(root.rglob("*.nnet"), key=lambda p: (p.parent.name, len(p.stem), p.stem)):
        group = path.parent.name if path.parent != root else path.stem
        if only and path.stem not in only:
            continue
        out.append((group, path.stem, path))
    order = {"compas": 0, "german": 1, "bank": 2, "adult": 3, "example": -1}
    return sorted(out, key=lambda t: (order.get(t[0], 9), len(t[1]), t[1]))


# the engine's refinement as issue 33 decided it, beside the paper's parameters
DECIDED = {"bounds": "linear", "refine_counterexamples": True, "max_depth": None, "first_depth": 20,
           "order": "depth-first", "count_inside": True, "tighten": "auto"}
METHODS = {"paper": None, "decided": DECIDED,
           "linear": {**DECIDED, "count_inside": False}}  # decided without counting inside partitions
UNDECIDED_TARGET = 20.0  # % undecided within 240 s on the CPU (issue 33)
CURVE_FIRST = 15.0  # seconds: the anytime curve is recorded at 15 s and every doubling after


def run_one(path: Path, protected: int, time_limit: float, batch: int | None, seed: int, order: str,
            paper_seconds: float | None, corners: bool = False, probes: str = "random", method: str = "paper",
            device: str = "cpu", max_partitions: int | None = None) -> dict:
    from fairaudit.engines.fairquant.analysis import FairQuant, nnet_domain
    from fairaudit.models.nnet import read_nnet

    net = read_nnet(path)
    domain = nnet_domain([f"x{i}" for i in range(net.input_size)], net.mins, net.maxs)
    params = {"max_depth": 20, "order": order}
    if METHODS[method] is not None:
        params = dict(METHODS[method])
    fq = FairQuant(net.layers, domain, protected, values="extremes", sample_depth=15, samples=10,
                   batch=batch, tolerance=1e-5, seed=seed, corners=corners, probes=probes, device=device, **params)
    start = time.perf_counter()
    at_paper = [0.0]  # the certified % reached within the paper's time (the anytime target)
    curve = []  # the anytime curve: (seconds, partitions, cer %, und %) at 15 s, 30 s, 60 s, ... (doublings)

    def on_step(a):
        now = time.perf_counter() - start
        if paper_seconds is not None and now <= paper_seconds:
            at_paper[0] = float(a.rates()["certified"]) * 100
        if now >= CURVE_FIRST * 2 ** len(curve):
            r = a.rates()
            curve.append((round(now, 1), a.pops, float(r["certified"]) * 100, float(r["undecided"]) * 100))

    if max_partitions:  # a budget in partitions, not seconds: the same work on every device
        while not fq.done and fq.pops < max_partitions and time.perf_counter() - start < time_limit:
            fq.step()
            on_step(fq)
        rates = fq.rates()
    else:
        rates = fq.run(time_limit=time_limit, on_step=on_step)
    seconds = time.perf_counter() - start
    s = fq.summary()
    return {"certified": float(rates["certified"]) * 100, "unfair": float(rates["unfair"]) * 100,
            "undecided": float(rates["undecided"]) * 100, "und_cex": float(rates["undecided_cex"]) * 100,
            "und_limit": float(rates["undecided_open"]) * 100, "partitions": fq.pops,
            "cex": fq.counts.falsified + fq.counts.cex_partitions,  # the paper's #Cex (num_adv + fals_volume)
            "cex_partitions": fq.counts.cex_partitions, "seconds": seconds,
            "stopped": s["stopped"], "certified_count": fq.counts.fair_proven, "unfair_count": fq.counts.unfair,
            "total": fq.counts.total, "values": [float(v) for v in fq.values], "cer_at_paper_time": at_paper[0],
            "method": method, "device": str(fq.device), "batch": fq.batch, "curve": curve}


def down(x: float) -> float:
    """Rounded down to 2 decimals, as the artifact prints its rates (so that rows compare digit for digit)."""
    return math.floor(x * 100 + 1e-9) / 100


def verdict(name: str, r: dict) -> str:
    if r.get("method") in ("decided", "linear") and name not in EXACT:
        base = verdict(name, {**r, "method": "paper"})
        und = "und≤20%" if r["undecided"] <= UNDECIDED_TARGET else "und>20%"
        return f"{base}, {und}" if base else und
    if name in EXACT:
        return "exact" if (r["certified_count"], r["unfair_count"]) == EXACT[name] else "NOT exact"
    if name not in PAPER:
        return ""
    _, cer, _, _, secs = PAPER[name]
    if r["certified"] + 0.005 >= cer and r["seconds"] <= secs:
        return "ok"
    if r["cer_at_paper_time"] + 0.005 >= cer:
        return "ok (anytime)"  # the paper's certified % was reached within the paper's time
    return "cer<" if r["certified"] + 0.005 < cer else "slower"


def markdown(artifact: list[dict], random: list[dict]) -> str:
    """Both runs (``--json`` of an ``--artifact`` run and of a default run) beside Table II, as a markdown table."""
    rows = {r["model"]: {"artifact": r} for r in artifact}
    for r in random:
        rows.setdefault(r["model"], {})["random"] = r
    out = ["| model | paper cer / fal / und | paper #cex, s | artifact probes: cer / fal / und | partitions, #cex, s "
           "| random probes: cer / fal / und (cex + limit) | partitions, s | cer at the paper's time | target |",
           "|---|---|---|---|---|---|---|---|---|"]
    for name, both in rows.items():
        p = PAPER.get(name)
        a, r = both.get("artifact"), both.get("random")
        cells = [name, f"{p[1]:.2f} / {p[2]:.2f} / {p[3]:.2f}" if p else "", f"{p[0]}, {p[4]:g}" if p else ""]
        if a:
            cells += [f"{down(a['certified']):.2f} / {down(a['unfair']):.2f} / {down(a['undecided']):.2f}",
                      f"{a['partitions']:,}, {a['cex']:,}, {a['seconds']:.2f}"
                      + ("" if a["stopped"] == "complete" else " (time limit)")]
        else:
            cells += ["", ""]
        if r:
            cells += [f"{down(r['certified']):.2f} / {down(r['unfair']):.2f} / {down(r['undecided']):.2f} "
                      f"({down(r['und_cex']):.2f} + {down(r['und_limit']):.2f})",
                      f"{r['partitions']:,}, {r['seconds']:.2f}" + ("" if r["stopped"] == "complete" else
                                                                    " (time limit)"),
                      f"{down(r['cer_at_paper_time']):.2f}" if p else ""]
        else:
            cells += ["", "", ""]
        cells.append(" / ".join(x for x in (a and a["target"], r and r["target"]) if x))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def markdown_decided(*runs: list[dict]) -> str:
    """``--method decided`` runs (``--json`` files, concatenated) beside Table II, as a markdown table."""
    out = ["| model | paper (Table II): cer / fal / und, s | decided: cer / fal / und | partitions, s "
           "| cer at the paper's time | target |", "|---|---|---|---|---|---|"]
    for r in (r for run in runs for r in run):
        p = PAPER.get(r["model"])
        paper = f"{p[1]:.2f} / {p[2]:.2f} / {p[3]:.2f}, {p[4]:g}" if p else ""
        out.append("| " + " | ".join([
            r["model"], paper, f"{down(r['certified']):.2f} / {down(r['unfair']):.2f} / {down(r['undecided']):.2f}",
            f"{r['partitions']:,}, {r['seconds']:.1f}" + ("" if r["stopped"] == "complete" else " (limit)"),
            f"{down(r['cer_at_paper_time']):.2f}" if p else "", r.get("target", "")]) + " |")
    return "\n".join(out)


def markdown_curve(*runs: list[dict]) -> str:
    """The anytime curves of runs (``--json`` files): undecided % and partitions analysed at 15 s and every
    doubling after, and the undecided points each doubling removed (last column: the mean over the last three)."""
    rows = [r for run in runs for r in run if r.get("curve")]
    if not rows:
        return "(no run with a recorded curve)"
    width = max(len(r["curve"]) for r in rows)
    heads = [f"{CURVE_FIRST * 2 ** i:g} s" for i in range(width)]
    out = ["| model | " + " | ".join(heads) + " | points per doubling (last three) |",
           "|---|" + "---|" * (width + 1)]
    for r in rows:
        cells = [f"{down(u):.2f} ({p:,})" for _, p, _, u in r["curve"]] + [""] * (width - len(r["curve"]))
        und = [u for *_, u in r["curve"]]
        drops = [a - b for a, b in zip(und, und[1:])][-3:]
        cells.append(f"{sum(drops) / len(drops):.2f}" if drops else "")
        out.append(f"| {r['model']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def compare(a: list[dict], b: list[dict]) -> str:
    """Two runs side by side (cer / fal / und, partitions, seconds, device) and whether the counts agree."""
    rows = {r["model"]: [r, None] for r in a}
    for r in b:
        rows.setdefault(r["model"], [None, None])[1] = r

    def cells(r):
        if r is None:
            return ["", ""]
        return [f"{down(r['certified']):.2f} / {down(r['unfair']):.2f} / {down(r['undecided']):.2f}",
                f"{r['partitions']:,}, {r['seconds']:.2f} s ({r.get('device', '?')}, batch {r.get('batch', '?')})"]

    out = ["| model | paper cer / fal / und, s | A: cer / fal / und | A: partitions, s | B: cer / fal / und | "
           "B: partitions, s | same counts |", "|---|---|---|---|---|---|---|"]
    for name, (ra, rb) in rows.items():
        p = PAPER.get(name)
        same = ""
        if ra and rb:
            key = ("partitions", "certified_count", "unfair_count")
            same = "yes" if all(ra[k] == rb[k] for k in key) else "no"
        paper = f"{p[1]:.2f} / {p[2]:.2f} / {p[3]:.2f}, {p[4]:g}" if p else ""
        out.append("| " + " | ".join([name, paper, *cells(ra), *cells(rb), same]) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=Path, default=MODELS)
    parser.add_argument("--only", nargs="*", default=None, help="model names (e.g. GC-3 compas-1)")
    parser.add_argument("--time-limit", type=float, default=1800.0, help="seconds per model (paper: 1800)")
    parser.add_argument("--batch", type=int, default=None,
                        help="partitions analysed at once (4096 on the CPU, 65536 on a GPU)")
    parser.add_argument("--method", choices=tuple(METHODS), default="paper",
                        help="the paper's parameters (intervals, depth 20, a counterexample stops a partition), "
                             "the engine's decided refinement (issue 33: linear bounds, counterexample partitions "
                             "refined, fair individuals counted inside undecided partitions), or linear: decided "
                             "without the counting")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    parser.add_argument("--max-partitions", type=int, default=None,
                        help="stop each network after this many partitions (batches are whole): the same work on "
                             "every device, so the rates must be identical")
    parser.add_argument("--markdown-decided", nargs="+", type=Path, metavar="RUN.json",
                        help="print a markdown table of earlier --method decided runs' --json beside Table II, and "
                             "exit")
    parser.add_argument("--markdown-curve", nargs="+", type=Path, metavar="RUN.json",
                        help="print the anytime curves (undecided %% and partitions at 15 s and every doubling) "
                             "of earlier runs' --json, and exit")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"),
                        help="print a markdown table of two earlier runs' --json side by side (e.g. GPU and CPU) "
                             "and whether their rates are identical, and exit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--order", choices=("depth-first", "breadth-first"), default="depth-first",
                        help="which partitions first: the artifact's LIFO, or the shallowest (largest) first")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corners", action="store_true",
                        help="also try the box corners where the output bounds are extreme in the counterexample "
                             "search (faster, fewer partitions, fewer certified)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--artifact", action="store_true",
                        help="the artifact's deterministic counterexample probes ⌊s·(lb+ub)/10⌋ (points possibly "
                             "outside the partition) instead of uniform samples inside it, to compare the partition "
                             "and counterexample counts with the artifact's re-run (notes §B5.3)")
    parser.add_argument("--markdown", nargs=2, type=Path, metavar=("ARTIFACT.json", "RANDOM.json"),
                        help="print the markdown table of two earlier runs' --json (an --artifact run and a default "
                             "one) beside Table II, and exit")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(*(json.loads(p.read_text()) for p in args.markdown)))
        return 0
    if args.markdown_decided:
        print(markdown_decided(*(json.loads(p.read_text()) for p in args.markdown_decided)))
        return 0
    if args.markdown_curve:
        print(markdown_curve(*(json.loads(p.read_text()) for p in args.markdown_curve)))
        return 0
    if args.compare:
        print(compare(*(json.loads(p.read_text()) for p in args.compare)))
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench/fairquant.py: --device cuda, but torch sees no CUDA GPU here", file=sys.stderr)
        return 2
    if args.batch is None:
        args.batch = 65536 if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) \
            else 4096
    rows = []
    head = (f"{'model':<9} {'PA':>2} {'cer%':>7} {'fal%':>6} {'und%':>6} {'(cex':>6} {'limit)':>6} "
            f"{'parts':>8} {'#cex':>6} {'secs':>7} {'cer@pt':>7} | {'paper cer':>9} {'fal':>5} {'und':>6} {'#cex':>6} "
            f"{'secs':>7} | target")
    print(f"# torch threads {torch.get_num_threads()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"batch {args.batch}, {args.order if args.method == 'paper' else 'decided (issue 33)'}, "
          f"device {args.device}{', corners' if args.corners else ''}"
          f"{', artifact probes' if args.artifact else ''}, time limit {args.time_limit:g}s, "
          f"seed {args.seed}")
    print(head)
    print("-" * len(head))
    for group, name, path in networks(args.models, args.only):
        pa = PROTECTED.get(group, PROTECTED.get(name))
        p = PAPER.get(name)
        r = run_one(path, pa, args.time_limit, args.batch, args.seed, args.order, p[4] if p else None,
                    args.corners, "artifact" if args.artifact else "random", args.method, args.device,
                    args.max_partitions)
        paper = (f"{p[1]:>9.2f} {p[2]:>5.2f} {p[3]:>6.2f} {p[0]:>6} {p[4]:>7.2f}" if p else f"{'':>9} {'':>5} "
                 f"{'':>6} {'':>6} {'':>7}")
        print(f"{name:<9} {pa:>2} {down(r['certified']):>7.2f} {down(r['unfair']):>6.2f} {down(r['undecided']):>6.2f} "
              f"{down(r['und_cex']):>6.2f} {down(r['und_limit']):>6.2f} {r['partitions']:>8} {r['cex']:>6} "
              f"{r['seconds']:>7.2f} {down(r['cer_at_paper_time']) if p else 0:>7.2f} | {paper} | {verdict(name, r)}"
              + ("" if r["stopped"] == "complete" else f" ({r['stopped']})"), flush=True)
        rows.append({"model": name, "group": group, "protected": pa, **r, "paper": p, "target": verdict(name, r)})
        if args.json:  # after every model: a run cut short keeps what it measured
            args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
