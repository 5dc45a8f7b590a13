"""Convergence of a node's bounds over the audit's steps, and ``Fair[...]`` rates over steps.

Input is the trace as a tidy frame (``AuditResult.to_frame()`` or ``pd.DataFrame(result["trace"])``): one row per
(step, node) with ``estimate``, ``lo``, ``hi``, ``delta``, ``verdict`` and, on ``Fair`` nodes, ``certified``,
``unfair``, ``undecided``.

What is plotted for each node kind:

* a term (``E[...]``, ``Fair[...]``, arithmetic): its own estimate and ``[lo, hi]`` band;
* a comparison ``A op c`` (or ``c op A``) against a constant: A's estimate and band with a dashed threshold
  rule at ``c``, coloured by the comparison's own verdict;
* a comparison of two terms ``A op B``: the difference ``A − B`` with its interval (``fairaudit.bounds.rules``'
  ``CMP.difference``, what the evaluator stores on the comparison) and a threshold rule at 0;
* a boolean node (``and``/``or``/``not``): only its verdict over time;
* a comparison its engine tested as a whole (a trace with ``evalue`` / ``evalue_target`` on its rows, e.g. a
  joint e-process): under its interval plot, the e-value (log scale) against the dashed 1/β line it must reach — the
  comparison is decided when the e-value reaches it, even while its interval still straddles the threshold.

A thin strip under every plot shows the node's verdict at each step. Stacked panels of values share one y range;
the steps before a term has a value (a leaf no step has counted for yet) are not drawn. Infinite or huge bounds are clipped to a
display range (the natural range of the term where it is finite, e.g. [0, 1] for a probability, by the interval
rules of ``fairaudit.bounds.rules``). A run of a single step (an engine that computes its values at once) is drawn
as a point with its interval, not as a line. The x axis counts the result's own unit (``result.unit``, passed as
``unit=``); δ is shown only under a probabilistic guarantee (``guarantee=``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from fairaudit.bounds.rules import CMP, TERM_RULES, Interval
from fairaudit.base.numbers import count
from fairaudit.viz import _format
from fairaudit.viz.palette import RATES, VERDICTS, normalise_verdict, verdict_scale
from fairaudit.core.explain import clause_label, term_words
from fairaudit.viz.values import comparison_parts, const_value, shows_delta

BOOLEAN_KINDS = ("and", "or", "not")
DEFAULT_UNIT = "steps"  # what the x axis counts when the caller does not pass ``result.unit``


@dataclass
class Series:
    """What one convergence panel shows: a tidy frame and its annotations."""

    node: str
    title: str
    frame: pd.DataFrame  # step, estimate, lo, hi, lo_plot, hi_plot, verdict, verdict_label, clipped
    quantity: str  # what the y axis measures
    threshold: float | None = None
    domain: tuple[float, float] | None = None  # None for a verdict-only panel
    numeric: bool = True
    verdict_runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    decided_step: int | None = None  # this node's own first decided step (None for a term or never decided)
    evidence: pd.DataFrame | None = None  # step, evalue, target (1/β), evalue_plot: a comparison's joint test


# ---------------------------------------------------------------------------------------------------------
# tidy data


def _node_index(nodes: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Mapping[str, Any]], dict[str, list[str]]]:
    by_id = {str(n["id"]): n for n in nodes}
    kids: dict[str, list[str]] = {i: [] for i in by_id}
    for n in nodes:
        if n.get("parent") is not None and str(n["parent"]) in kids:
            kids[str(n["parent"])].append(str(n["id"]))
    return by_id, kids


def _interval(lo: float, hi: float) -> Interval:
    return Interval(np.float64(np.nan), np.float64(lo), np.float64(hi))


def natural_range(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The values a term can take: ``E``/``Fair`` in [0, 1] (the mean of an amount in its ``range``), constants at
    their ``value``, and the term rules of
    ``fairaudit.bounds.rules`` (the evaluator's own interval arithmetic) for the operators above them."""
    by_id, kids = _node_index(nodes)

    def rng(nid: str) -> Interval:
        n = by_id[nid]
        kind = n.get("kind")
        ch = kids[nid]
        if kind in ("expect", "fair"):  # a probability, or the mean of an amount in its range
            low, high = n.get("range") or (0.0, 1.0)
            return _interval(float(low), float(high))
        if kind == "const":
            v = const_value(n)
            return _interval(v, v) if v is not None else _interval(-math.inf, math.inf)
        rule = TERM_RULES.get(kind)
        if rule is not None and len(ch) == (1 if kind == "neg" else 2):
            return rule.interval(*(rng(c) for c in ch))
        return _interval(-math.inf, math.inf)

    out = rng(str(node_id))
    return float(out.lo), float(out.hi)


def _rows(trace: pd.DataFrame, node_id: str) -> pd.DataFrame:
    rows = trace[trace["node"].astype(str) == str(node_id)].sort_values("step")
    return rows.drop_duplicates("step", keep="last").reset_index(drop=True)


def _col(rows: pd.DataFrame, name: str) -> np.ndarray:
    if name not in rows:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows[name], errors="coerce").to_numpy(dtype=float)


def thin_steps(steps: np.ndarray, max_points: int, keep: Sequence[int] = ()) -> np.ndarray:
    """A boolean mask keeping at most about ``max_points`` evenly spaced steps, plus the first, last and ``keep``."""
    n = len(steps)
    if n <= max_points:
        return np.ones(n, dtype=bool)
    idx = np.unique(np.linspace(0, n - 1, max_points).round().astype(int))
    mask = np.zeros(n, dtype=bool)
    mask[idx] = True
    mask[[0, -1]] = True
    for k in keep:
        mask |= steps == k
    return mask


def verdict_runs(steps: np.ndarray, verdicts: Sequence[str]) -> pd.DataFrame:
    """Consecutive steps with the same verdict as ``[start, end)`` runs (the last run ends one step past the data;
    a single step is the run ``[step − ½, step + ½)``, centred on it)."""
    cols = ["start", "end", "verdict", "verdict_label", "steps"]
    if len(steps) == 0:
        return pd.DataFrame(columns=cols)
    steps = np.asarray(steps, dtype=float)
    if len(steps) == 1:
        v = verdicts[0]
        return pd.DataFrame([{"start": steps[0] - 0.5, "end": steps[0] + 0.5, "verdict": v,
                              "verdict_label": VERDICTS[v][0], "steps": f"{int(steps[0]):,}"}], columns=cols)
    gap = float(np.median(np.diff(steps))) if len(steps) > 1 else 1.0
    ends = np.append(steps[1:], steps[-1] + gap)
    out = []
    start = 0
    for i in range(1, len(steps) + 1):
        if i == len(steps) or verdicts[i] != verdicts[start]:
            v = verdicts[start]
            out.append({"start": steps[start], "end": ends[i - 1], "verdict": v, "verdict_label": VERDICTS[v][0],
                        "steps": f"{int(steps[start]):,}–{int(steps[i - 1]):,}"})
            start = i
    return pd.DataFrame(out, columns=cols)


def display_range(est: np.ndarray, lo: np.ndarray, hi: np.ndarray, natural: tuple[float, float],
                  threshold: float | None, margin: float = 0.04) -> tuple[float, float]:
    """A finite y range for the panel: the data's finite span inside the natural range, always showing the threshold
    (``margin``: the share of the span added on each side)."""
    finite = [a[np.isfinite(a)] for a in (est, lo, hi)]
    vals = np.concatenate(finite) if any(len(f) for f in finite) else np.array([])
    nat_lo, nat_hi = natural
    est_f = est[np.isfinite(est)]
    if len(est_f):
        # robust: ignore the most extreme 2% of estimates (early ratios of tiny counts)
        center_lo, center_hi = (float(v) for v in np.percentile(est_f, [2, 98]))
    elif threshold is not None:
        center_lo = center_hi = float(threshold)
    else:
        center_lo, center_hi = 0.0, 1.0
    if threshold is not None:
        center_lo, center_hi = min(center_lo, threshold), max(center_hi, threshold)
    spread = max(center_hi - center_lo, 0.05, 0.1 * max(abs(center_lo), abs(center_hi)))
    # never let a few enormous early bounds flatten the plot: at most 3 spreads beyond the estimates
    lo_cap, hi_cap = center_lo - 3 * spread, center_hi + 3 * spread
    d_lo = float(np.min(vals)) if len(vals) else center_lo - spread
    d_hi = float(np.max(vals)) if len(vals) else center_hi + spread
    d_lo, d_hi = max(d_lo, lo_cap), min(d_hi, hi_cap)
    if math.isfinite(nat_lo):
        d_lo = max(d_lo, nat_lo)
    if math.isfinite(nat_hi):
        d_hi = min(d_hi, nat_hi)
    if threshold is not None:
        d_lo, d_hi = min(d_lo, threshold), max(d_hi, threshold)
    if d_hi - d_lo < 1e-9:
        d_lo, d_hi = d_lo - 0.05, d_hi + 0.05
    pad = margin * (d_hi - d_lo)
    lo_out, hi_out = d_lo - pad, d_hi + pad
    if math.isfinite(nat_lo) and d_lo >= nat_lo:
        lo_out = max(lo_out, nat_lo - pad)
    if math.isfinite(nat_hi) and d_hi <= nat_hi:
        hi_out = min(hi_out, nat_hi + pad)
    return float(lo_out), float(hi_out)


def convergence_series(trace: pd.DataFrame, node_id: str, nodes: Sequence[Mapping[str, Any]],
                       threshold: float | None = None, max_points: int = 400,
                       keep_steps: Sequence[int] = (), domain: tuple[float, float] | None = None) -> Series:
    """The tidy data of one convergence panel (see the module docstring for what is plotted per kind).
    ``domain``: the y range to use (stacked panels share one, ``convergence_chart``) instead of the panel's own
    ``display_range``. The steps before the plotted term's first value (a leaf before any step counted for it: no
    estimate, the interval [0, 1]) have no rows: nothing is drawn there, not a 0."""
    by_id, kids = _node_index(nodes)
    node_id = str(node_id)
    if node_id not in by_id:
        raise KeyError(f"unknown node {node_id!r}")
    node = by_id[node_id]
    kind = node.get("kind")
    own = _rows(trace, node_id)
    if own.empty:
        raise ValueError(f"the trace has no rows for node {node_id!r}")
    steps = own["step"].to_numpy(dtype=float)
    verdicts = [normalise_verdict(v) for v in (own["verdict"] if "verdict" in own else [None] * len(own))]
    # the panel is named as a reader names the clause: its name and its words from the parsed specification
    # ("ratio: favourable rate of sex = Female ÷ that of sex = Male"), never its printed text or its id
    title = clause_label(node_id, nodes, threshold=False)
    quantity = title
    numeric = True
    plotted_id = node_id
    est, lo, hi = _col(own, "estimate"), _col(own, "lo"), _col(own, "hi")

    if kind == "cmp" and len(kids[node_id]) == 2:
        left, right = kids[node_id]
        parts = comparison_parts(node_id, nodes)  # a constant side (``0.1``, ``-0.1``): the other is plotted
        if parts is not None:
            term = str(parts[0]["id"])
            plotted_id = term
            if threshold is None:
                threshold = parts[2]
            quantity = title  # the compared term is what the title names; the threshold is the dashed line
            tr = _rows(trace, term).set_index("step").reindex(steps)
            est, lo, hi = _col(tr, "estimate"), _col(tr, "lo"), _col(tr, "hi")
        else:
            # the evaluator stores the interval of left − right on the cmp row itself; fall back to
            # interval arithmetic on the children's rows when it does not
            if not np.isfinite(est).any():
                lt = _rows(trace, left).set_index("step").reindex(steps)
                rt = _rows(trace, right).set_index("step").reindex(steps)
                diff = CMP.difference(Interval(_col(lt, "estimate"), _col(lt, "lo"), _col(lt, "hi")),
                                      Interval(_col(rt, "estimate"), _col(rt, "lo"), _col(rt, "hi")))
                est, lo, hi = diff.estimate, diff.lo, diff.hi
            plotted_id = None
            quantity = f"({term_words(by_id[left], nodes)}) − ({term_words(by_id[right], nodes)})"
            if threshold is None:
                threshold = 0.0
    elif kind in BOOLEAN_KINDS or (kind == "cmp"):
        numeric = bool(np.isfinite(est).any()) and kind == "cmp"
        if not numeric:
            quantity = "verdict"

    if plotted_id is not None and by_id.get(plotted_id, {}).get("kind") == "fair":
        # a Fair[...] node has no value between its certified share and its upper bound: no midpoint line (a point
        # only once the two meet); its rates are the rates plot's
        with np.errstate(invalid="ignore"):
            est = np.where(lo == hi, lo, np.nan)
    if plotted_id is not None:
        natural = natural_range(plotted_id, nodes)
    else:
        diff = CMP.difference(_interval(*natural_range(kids[node_id][0], nodes)),
                              _interval(*natural_range(kids[node_id][1], nodes)))
        natural = float(diff.lo), float(diff.hi)
    runs, decided = verdict_runs(steps, verdicts), first_decided_step(steps, verdicts)  # over every step
    valued = np.isfinite(est)
    if numeric and valued.any() and not valued[0]:  # no value yet at the first steps: nothing to draw
        first = int(np.argmax(valued))
        own, steps, verdicts = own.iloc[first:].reset_index(drop=True), steps[first:], verdicts[first:]
        est, lo, hi = est[first:], lo[first:], hi[first:]
    with np.errstate(invalid="ignore"):
        # a single point is kept off the plot's edges
        dom = (domain if domain is not None else display_range(est, lo, hi, natural, threshold,
                                                               0.04 if len(steps) > 1 else 0.15)) if numeric else None
    lo_plot = np.clip(np.where(np.isnan(lo), est, lo), dom[0], dom[1]) if dom else lo
    hi_plot = np.clip(np.where(np.isnan(hi), est, hi), dom[0], dom[1]) if dom else hi
    clipped = (~np.isfinite(lo) | ~np.isfinite(hi)) if dom is None else (
        (lo < dom[0]) | (hi > dom[1]) | np.isinf(lo) | np.isinf(hi))
    frame = pd.DataFrame({
        "step": steps, "estimate": est, "lo": lo, "hi": hi, "lo_plot": lo_plot, "hi_plot": hi_plot,
        "verdict": verdicts, "verdict_label": [VERDICTS[v][0] for v in verdicts], "clipped": clipped,
        "delta": _col(own, "delta"),
    })
    frame["estimate_s"] = [_format.num(v) for v in frame["estimate"]]
    frame["interval_s"] = [_format.interval(a, b) for a, b in zip(frame["lo"], frame["hi"])]
    frame["delta_s"] = [_format.num(v) for v in frame["delta"]]
    # beside a single point: its value, and its interval when that is wider than the printed digits
    frame["point_s"] = [e if _format.num(a) == _format.num(b) else f"{e} in {i}"
                        for e, i, a, b in zip(frame["estimate_s"], frame["interval_s"], frame["lo"], frame["hi"])]
    if dom is not None:
        frame["estimate_plot"] = np.clip(frame["estimate"], dom[0], dom[1])
    mask = thin_steps(steps, max_points, list(keep_steps) + ([decided] if decided is not None else []))
    evidence = evidence_frame(own)
    return Series(node=node_id, title=title, frame=frame[mask].reset_index(drop=True), quantity=quantity,
                  threshold=threshold, domain=dom, numeric=numeric, verdict_runs=runs, decided_step=decided,
                  evidence=None if evidence is None else evidence[mask].reset_index(drop=True))


EVALUE_SPAN = 1e6  # the e-value axis ends at this multiple of 1/β (far past the decision; larger values at its top)
EVALUE_FLOOR = 1e-2  # e-values below this are drawn at it (the log axis needs positive values; what matters is 1/β)


def evidence_frame(own: pd.DataFrame) -> pd.DataFrame | None:
    """A comparison's joint test over its rows (``step``, ``evalue``, ``target`` = 1/β, ``evalue_plot`` clipped for
    the log axis, printed forms), or None when its rows carry no e-value."""
    if "evalue" not in own or "evalue_target" not in own:
        return None
    e, target = _col(own, "evalue"), _col(own, "evalue_target")
    if not (np.isfinite(e) | np.isinf(e)).any():
        return None
    from fairaudit.core.guarantee import evalue_number

    finite = np.where(np.isinf(e), 1e300, e)
    frame = pd.DataFrame({"step": own["step"].to_numpy(dtype=float), "evalue": e, "target": target,
                          "evalue_plot": np.clip(np.nan_to_num(finite, nan=EVALUE_FLOOR), EVALUE_FLOOR, 1e300)})
    frame["evalue_s"] = [evalue_number(v) for v in e]
    frame["target_s"] = [evalue_number(v) for v in target]
    return frame


def first_decided_step(steps: Sequence[float], verdicts: Sequence[str]) -> int | None:
    """The first step at which a node's own verdict is decided (true or false); None if never (or a term)."""
    for step, v in zip(steps, verdicts):
        if v in ("true", "false"):
            return int(step)
    return None


def step_rules(decided_step: int | None, stop_step: int | None, x_domain: Sequence[float],
               unit: str = DEFAULT_UNIT) -> pd.DataFrame:
    """The vertical rules of a panel: the node's own decision (solid, "decided after N <unit>") and, when it is
    another step, the whole specification's (dashed, "spec decided after N <unit>"). ``at`` places the label at the
    top or bottom of the plot, ``align`` keeps it inside the plot near the right edge."""
    rows = []
    if decided_step is not None:
        rows.append({"step": decided_step, "label": f"decided after {count(decided_step, unit)}", "which": "node",
                     "at": "top"})
    if stop_step is not None and stop_step != decided_step:
        rows.append({"step": stop_step, "label": f"spec decided after {count(stop_step, unit)}", "which": "spec",
                     "at": "bottom"})
    frame = pd.DataFrame(rows, columns=["step", "label", "which", "at"])
    lo, hi = float(x_domain[0]), float(x_domain[1])
    frame["align"] = ["right" if hi > lo and (s - lo) / (hi - lo) > 0.6 else "left" for s in frame["step"]]
    frame["dx"] = [-4 if a == "right" else 4 for a in frame["align"]]
    return frame


def _rule_layers(rules: pd.DataFrame, x_scale: alt.Scale, height: int) -> list[alt.Chart]:
    layers: list[alt.Chart] = []
    styles = {"node": dict(color="#000000", strokeWidth=1.5), "spec": dict(color="#555555", strokeWidth=1.2,
                                                                           strokeDash=[3, 3])}
    for which, style in styles.items():
        part = rules[rules["which"] == which]
        if part.empty:
            continue
        layers.append(alt.Chart(part).mark_rule(**style).encode(x=alt.X("step:Q", scale=x_scale)))
        for align in ("left", "right"):
            sub = part[part["align"] == align]
            if sub.empty:
                continue
            top = sub["at"].iloc[0] == "top"
            text = dict(align=align, baseline="top" if top else "bottom", dx=4 if align == "left" else -4,
                        dy=2 if top else -2, fontSize=11, fontWeight="bold" if which == "node" else "normal")
            where = dict(x=alt.X("step:Q", scale=x_scale), y=alt.value(0 if top else height), text="label:N")
            # a white outline keeps the label readable on a band or a filled area
            layers.append(alt.Chart(sub).mark_text(color="white", stroke="white", strokeWidth=3,
                                                   strokeJoin="round", **text).encode(**where))
            layers.append(alt.Chart(sub).mark_text(color=style["color"], **text).encode(**where))
    return layers


# ---------------------------------------------------------------------------------------------------------
# charts


def _x_axis(x_scale: alt.Scale, title: str | None, single: float | None) -> alt.Axis:
    """The shared x axis (on the verdict strip): one tick at the step of a single-step run; otherwise whole steps
    only (a step counts something: 0.5 of a round or of a row is never a step)."""
    if single is not None:
        return alt.Axis(title=title, values=[single], format=",")
    whole = _whole_steps(x_scale)
    if whole is not None:
        return alt.Axis(title=title, values=whole, format=",d")
    return alt.Axis(title=title, tickMinStep=1, format=",d")


def _whole_steps(x_scale: alt.Scale) -> list[int] | None:
    """Every whole step of a short x range (a few refinement rounds, say), for its ticks and grid lines; None
    for a long one (the axis then picks its ticks)."""
    lo, hi = (float(v) for v in x_scale.domain)
    return list(range(math.ceil(lo), math.floor(hi) + 1)) if hi - lo <= 20 else None


def _panel(s: Series, x_scale: alt.Scale, width: int, height: int, stop_step: int | None,
           show_x_title: bool, unit: str = DEFAULT_UNIT, with_delta: bool = True,
           single: float | None = None) -> alt.VConcatChart:
    tooltip = [alt.Tooltip("step:Q", title=unit, format=","), alt.Tooltip("estimate_s:N", title="estimate"),
               alt.Tooltip("interval_s:N", title="interval"),
               *([alt.Tooltip("delta_s:N", title="δ")] if with_delta else []),
               alt.Tooltip("verdict_label:N", title="verdict")]
    layers: list[alt.Chart] = []
    base = alt.Chart(s.frame)
    notes = []
    if s.quantity != s.title:
        notes.append(f"plotted: {s.quantity}")
    if s.numeric and s.threshold is not None and math.isfinite(s.threshold):
        notes.append(f"dashed line: threshold {_format.num(s.threshold)}")
    if single is not None:
        notes.append(f"one value, after {count(single, unit)}")
    chars = max(40, int(width / 6.3))
    title = alt.TitleParams(_format.wrap(s.title, int(width / 7.2), 3).split("\n"),
                            subtitle=[_format.wrap(n, chars, 1) for n in notes] or "", anchor="start", fontSize=13,
                            subtitleFontSize=11)
    whole = _whole_steps(x_scale) if single is None else None
    X = alt.X("step:Q", scale=x_scale, axis=alt.Axis(title=None, labels=False, ticks=False, grid=single is None,
                                                     **({"values": whole} if whole is not None else {})))
    if s.numeric and s.domain is not None:
        y_scale = alt.Scale(domain=list(s.domain), nice=False, zero=False)
        Y_lo = alt.Y("lo_plot:Q", scale=y_scale, title="value")
        Y_est = alt.Y("estimate_plot:Q", scale=y_scale)
        if single is not None:  # one step: the value as a point, its interval as a bar (a line needs two)
            colour = "#0b3c5d"
            layers += [
                base.mark_rule(color=colour, strokeWidth=3, clip=True).encode(x=X, y=Y_lo, y2="hi_plot:Q",
                                                                              tooltip=tooltip),
                base.mark_tick(color=colour, thickness=2, size=22, orient="horizontal", clip=True).encode(
                    x=X, y=Y_lo, tooltip=tooltip),
                base.mark_tick(color=colour, thickness=2, size=22, orient="horizontal", clip=True).encode(
                    x=X, y=alt.Y("hi_plot:Q", scale=y_scale), tooltip=tooltip),
                base.mark_point(filled=True, size=110, color=colour, opacity=1, clip=True).encode(
                    x=X, y=Y_est, tooltip=tooltip),
                base.mark_text(align="left", dx=16, fontSize=12, color=colour).encode(
                    x=X, y=Y_est, text="point_s:N", tooltip=tooltip),
            ]
        else:
            band = base.mark_area(opacity=0.28, color="#56B4E9", clip=True).encode(
                x=X, y=Y_lo, y2="hi_plot:Q", tooltip=tooltip)
            line = base.mark_line(color="#0b3c5d", strokeWidth=2, clip=True).encode(x=X, y=Y_est, tooltip=tooltip)
            hover = base.mark_point(size=50, opacity=0, clip=True).encode(x=X, y=Y_est, tooltip=tooltip)
            layers += [band, line, hover]
        if s.threshold is not None and math.isfinite(s.threshold):
            thr = pd.DataFrame({"y": [s.threshold], "label": [f"threshold {_format.num(s.threshold)}"]})
            layers.append(alt.Chart(thr).mark_rule(color="#333333", strokeDash=[6, 4], strokeWidth=1.5).encode(
                y=alt.Y("y:Q", scale=y_scale)))
    else:
        height = max(60, height // 3)  # first: the verdict band is placed inside this height
        runs = alt.Chart(s.verdict_runs).mark_rect(opacity=0.9).encode(
            x=alt.X("start:Q", scale=x_scale, axis=alt.Axis(title=None, labels=False, ticks=False,
                                                            grid=single is None)), x2="end:Q",
            y=alt.value(height * 0.25), y2=alt.value(height * 0.75),
            color=alt.Color("verdict_label:N", scale=verdict_scale(), legend=None),
            tooltip=[alt.Tooltip("verdict_label:N", title="verdict"), alt.Tooltip("steps:N", title=unit)])
        layers.append(runs)
    if single is None:  # a single step needs no "decided after" rule: everything is decided there
        layers += _rule_layers(step_rules(s.decided_step, stop_step, x_scale.domain, unit), x_scale, height)
    main = alt.layer(*layers).properties(width=width, height=height, title=title)
    extra = [] if s.evidence is None or s.evidence.empty else [_evidence_panel(s, x_scale, width, height, unit)]
    strip = alt.Chart(s.verdict_runs).mark_rect().encode(
        x=alt.X("start:Q", scale=x_scale, axis=_x_axis(x_scale, unit if show_x_title else None, single)),
        x2="end:Q",
        color=alt.Color("verdict_label:N", scale=verdict_scale(),
                        legend=alt.Legend(title="verdict", orient="bottom", direction="horizontal")),
        tooltip=[alt.Tooltip("verdict_label:N", title="verdict"), alt.Tooltip("steps:N", title=unit)],
    ).properties(width=width, height=12)
    return alt.vconcat(main, *extra, strip, spacing=2)


def _evidence_panel(s: Series, x_scale: alt.Scale, width: int, height: int, unit: str) -> alt.LayerChart:
    """The joint test's e-value (log scale) against its 1/β line, under a comparison's interval plot."""
    ev = s.evidence
    cap = float(np.nanmax(ev["target"])) * EVALUE_SPAN if np.isfinite(ev["target"]).any() else 1e6
    top = float(min(max(np.nanmax(ev["evalue_plot"]), cap / EVALUE_SPAN * 10, 10.0), cap))
    y_scale = alt.Scale(type="log", domain=[EVALUE_FLOOR, top], nice=False, clamp=True)
    decades = list(range(int(math.log10(EVALUE_FLOOR)), int(math.floor(math.log10(top))) + 1))
    stride = max(1, math.ceil(len(decades) / 5))
    axis = alt.Axis(title="e-value (log)", values=[10.0 ** d for d in decades[::stride]],
                    labelExpr="datum.value >= 10000 ? format(datum.value, '.0e') : format(datum.value, '~g')")
    X = alt.X("step:Q", scale=x_scale, axis=alt.Axis(title=None, labels=False, ticks=False))
    tooltip = [alt.Tooltip("step:Q", title=unit, format=","), alt.Tooltip("evalue_s:N", title="e-value"),
               alt.Tooltip("target_s:N", title="1/β")]
    base = alt.Chart(ev)
    layers = [
        base.mark_line(color="#D55E00", strokeDash=[6, 4], strokeWidth=1.5, interpolate="step-after", clip=True)
        .encode(x=X, y=alt.Y("target:Q", scale=y_scale), tooltip=tooltip),
        base.mark_line(color="#0b3c5d", strokeWidth=2, clip=True).encode(
            x=X, y=alt.Y("evalue_plot:Q", scale=y_scale, axis=axis), tooltip=tooltip),
        base.mark_point(size=50, opacity=0, clip=True).encode(x=X, y=alt.Y("evalue_plot:Q", scale=y_scale),
                                                               tooltip=tooltip),
    ]
    title = alt.TitleParams("joint test: e-value (largest so far) against 1/β (dashed); decided when it reaches it"
                            + (" (drawn up to 10⁶ × 1/β)" if top >= cap else ""),
                            anchor="start", fontSize=11, fontWeight="normal")
    return alt.layer(*layers).properties(width=width, height=max(70, int(height * 0.45)), title=title)


def convergence_chart(trace_frame: pd.DataFrame, node_ids: str | Sequence[str], nodes: Sequence[Mapping[str, Any]],
                      stop_step: int | None = None, threshold: float | None = None, *, width: int = 820,
                      height: int = 260, max_points: int = 400, unit: str = DEFAULT_UNIT,
                      guarantee: Any = None) -> alt.VConcatChart:
    """Estimate line and ``[lo, hi]`` band over steps for one node, or stacked panels (shared x, and one y range
    for the panels of values) for several.

    ``threshold`` overrides the threshold rule of a single-node chart (otherwise it is taken from a comparison
    against a constant). Each panel marks the step at which *its own node* was first decided (solid rule);
    ``stop_step``, the step at which the whole specification was decided, is a separate dashed rule labelled
    "spec decided" when it is another step. ``unit`` (``result.unit``) names what a step counts (the x axis);
    ``guarantee`` (``result.guarantee``) decides whether tooltips show δ: only for a probabilistic guarantee
    (without it: when some δ is above 0). A trace of a single step is drawn as points with their intervals.
    """
    ids = [node_ids] if isinstance(node_ids, str) else list(node_ids)
    if not ids:
        raise ValueError("convergence_chart needs at least one node id")
    keep = [stop_step] if stop_step is not None else []
    series = [convergence_series(trace_frame, nid, nodes, threshold if len(ids) == 1 else None, max_points, keep)
              for nid in ids]
    steps = trace_frame["step"].to_numpy(dtype=float)
    x_max = float(max(np.max(steps), stop_step or 0)) if len(steps) else 1.0
    x_min = float(np.min(steps)) if len(steps) else 0.0
    single = x_min if len(steps) and x_min == x_max else None
    if single is not None:
        x_scale = alt.Scale(domain=[single - 0.5, single + 0.5], nice=False, zero=False)
    else:
        x_scale = alt.Scale(domain=[x_min, x_max + max(1.0, 0.01 * (x_max - x_min))], nice=False, zero=False)
    numeric = [s for s in series if s.numeric and s.domain is not None]
    if len(numeric) > 1:  # stacked plots share one y range (their values compare at a glance)
        shared = (min(s.domain[0] for s in numeric), max(s.domain[1] for s in numeric))
        series = [convergence_series(trace_frame, s.node, nodes, None, max_points, keep, domain=shared)
                  if s.numeric and s.domain is not None else s for s in series]
    with_delta = shows_delta(guarantee, np.concatenate([s.frame["delta"].to_numpy() for s in series]))
    panels = [_panel(s, x_scale, width, height if len(ids) == 1 else int(height * 0.8), stop_step,
                     show_x_title=(i == len(series) - 1), unit=unit, with_delta=with_delta, single=single)
              for i, s in enumerate(series)]
    chart = alt.vconcat(*panels, spacing=18).resolve_scale(x="shared", color="shared")
    return chart


def has_rates(trace_frame: pd.DataFrame, node_id: str) -> bool:
    """True when the trace carries certified / unfair / undecided rates for this node."""
    if not all(c in trace_frame for c in RATES):
        return False
    rows = _rows(trace_frame, node_id)
    return bool(len(rows)) and bool(np.isfinite(_col(rows, "certified")).any())


def rates_frame(trace_frame: pd.DataFrame, node_id: str, max_points: int = 400) -> pd.DataFrame:
    rows = _rows(trace_frame, node_id)
    if rows.empty or not has_rates(trace_frame, node_id):
        raise ValueError(f"the trace has no certified/unfair/undecided rates for node {node_id!r}")
    rows = rows[thin_steps(rows["step"].to_numpy(), max_points)]
    out = []
    for name in RATES:
        vals = np.clip(np.nan_to_num(_col(rows, name), nan=0.0), 0.0, 1.0)
        out.append(pd.DataFrame({"step": rows["step"].to_numpy(dtype=float), "rate": name, "value": vals,
                                 "value_s": [_format.num(v) for v in vals]}))
    frame = pd.concat(out, ignore_index=True)
    frame["order"] = frame["rate"].map({k: i for i, k in enumerate(RATES)})
    return frame


def rates_chart(trace_frame: pd.DataFrame, node_id: str, *, width: int = 820, height: int = 220,
                title: str | None = None, stop_step: int | None = None,
                unit: str = DEFAULT_UNIT) -> alt.LayerChart:
    """Stacked area of the certified / unfair / undecided fractions of a ``Fair[...]`` node over steps (``unit``:
    ``result.unit``, what a step counts); a single step is one stacked bar."""
    frame = rates_frame(trace_frame, node_id)
    colour = alt.Color("rate:N", scale=alt.Scale(domain=list(RATES), range=list(RATES.values())),
                       legend=alt.Legend(title=None, orient="top"))
    steps = frame["step"].to_numpy(dtype=float)
    tooltip = [alt.Tooltip("step:Q", title=unit, format=","), alt.Tooltip("rate:N"),
               alt.Tooltip("value_s:N", title="fraction")]
    if steps.min() == steps.max():  # one step: an area needs two; one bar of the three fractions
        frame = frame.assign(at=f"after {count(steps[0], unit)}")
        bar = alt.Chart(frame).mark_bar(size=max(12, min(48, height // 3))).encode(
            x=alt.X("value:Q", stack="zero", title="fraction", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("at:N", title=None),
            color=colour, order=alt.Order("order:Q"), tooltip=tooltip)
        layers = [bar]
    else:
        x = alt.X("step:Q", title=unit, scale=alt.Scale(nice=False, zero=False))
        area = alt.Chart(frame).mark_area().encode(
            x=x,
            y=alt.Y("value:Q", stack="zero", title="fraction", scale=alt.Scale(domain=[0, 1])),
            color=colour, order=alt.Order("order:Q"), tooltip=tooltip,
        )
        layers = [area]
        if stop_step is not None:
            x_scale = alt.Scale(domain=[float(steps.min()), float(max(steps.max(), stop_step))], nice=False,
                                zero=False)
            area = area.encode(x=alt.X("step:Q", title=unit, scale=x_scale))
            layers = [area] + _rule_layers(step_rules(None, stop_step, x_scale.domain, unit), x_scale, height)
    # the declared width and height are the plot's own: Streamlit's default "fit" autosize would squeeze the
    # title, the legend on top and the axes into ``height`` and leave the plotted area with no height at all
    return alt.layer(*layers).properties(width=width, height=height, title=title or f"{node_id}: rates",
                                         autosize=alt.AutoSizeParams(type="pad", contains="padding"))
