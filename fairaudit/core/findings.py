"""What an engine found about the modelled population besides the specification's nodes: the favourable rate in
every compound group (with the most and least favoured marked), group metrics computed from them, each feature's
influence on a fairness metric, and the dependency graph the engine modelled.

Engines that compute these facts put a ``Findings`` in ``LeafBatch.findings`` (the last one given wins); the driver
copies it to ``AuditResult.findings`` and the JSON; the dashboard, the PDF and the CLI draw it without knowing which
engine made it. Every number is an interval ``[lo, hi]`` carrying the run's guarantee (a point when ``lo == hi``);
``ci_lo``/``ci_hi`` optionally add a second, probabilistic interval (what the rate may be for the true distribution
the modelled one was estimated from, with probability at least ``1 − ci_delta``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

MOST, LEAST = "most favoured", "least favoured"


def _num(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


@dataclass(frozen=True)
class GroupRate:
    """``Pr[pred | group]``: ``group`` is ``((column, value), ...)``; ``share`` the group's probability."""

    group: tuple[tuple[str, str], ...]
    lo: float
    hi: float
    share: float | None = None
    ci_lo: float | None = None
    ci_hi: float | None = None
    observed: float | None = None  # the model's favourable rate on the audited rows of the group
    rows: int | None = None  # how many audited rows the group has

    @property
    def label(self) -> str:
        return ", ".join(f"{c} = {v}" for c, v in self.group) or "everyone"

    @property
    def estimate(self) -> float:
        return (self.lo + self.hi) / 2


@dataclass(frozen=True)
class Metric:
    """A named group metric (disparate impact, statistical parity, equalized odds …) as an interval."""

    name: str
    lo: float
    hi: float
    about: str = ""
    ci_lo: float | None = None
    ci_hi: float | None = None


@dataclass(frozen=True)
class Influence:
    """How much one feature contributes to a fairness metric (``about`` in ``Findings.influence_about``)."""

    feature: str
    lo: float
    hi: float

    @property
    def estimate(self) -> float:
        return (self.lo + self.hi) / 2


@dataclass
class Findings:
    groups: tuple[GroupRate, ...] = ()
    groups_about: str = ""
    ci_about: str = ""  # what the second interval means, in plain words
    ci_method: str = ""  # how it is computed (the formula: the report's methods, not the table's caption)
    metrics: tuple[Metric, ...] = ()
    influence: tuple[Influence, ...] = ()
    influence_about: str = ""
    edges: tuple[tuple[str, str], ...] = ()
    nodes: tuple[str, ...] = ()
    graph_about: str = ""
    complete_groups: bool = True  # False: only some groups are listed (e.g. the extremes a search found)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return bool(self.groups or self.metrics or self.influence or self.edges)

    # ------------------------------------------------------------------ views
    def marks(self) -> dict[str, str]:
        """``{group label: "most favoured" | "least favoured"}`` by estimate (ties: every tied group), among the
        groups that have audited rows (``rows`` None: not known, counted; 0: a group only the model of the
        population has, never marked)."""
        candidates = [g for g in self.groups if g.rows != 0]
        if len(candidates) < 2:
            return {}
        top = max(g.estimate for g in candidates)
        bottom = min(g.estimate for g in candidates)
        if top == bottom:
            return {}
        most = [g for g in candidates if g.estimate == top]
        least = [g for g in candidates if g.estimate == bottom]
        if not self.marks_established(most, least):
            return {}
        out = {g.label: MOST for g in most}
        out.update({g.label: LEAST for g in least})
        return out

    @staticmethod
    def marks_established(most, least) -> bool:
        """Whether the rates' second (estimation) intervals, where the groups have them, separate the most from the
        least favoured groups: a mark is a claim, and a group whose rate may lie anywhere in [0, 1] is not shown to
        be the least favoured."""
        have = [g for g in (*most, *least) if g.ci_lo is not None and g.ci_hi is not None]
        if not have:
            return True
        low = max((g.ci_hi for g in least if g.ci_hi is not None), default=None)
        high = min((g.ci_lo for g in most if g.ci_lo is not None), default=None)
        return low is not None and high is not None and low < high

    def unmarked_note(self) -> str | None:
        """Why no group is marked when the rates alone would mark some (their estimation intervals overlap)."""
        candidates = [g for g in self.groups if g.rows != 0]
        if len(candidates) < 2 or self.marks():
            return None
        top = max(g.estimate for g in candidates)
        bottom = min(g.estimate for g in candidates)
        if top == bottom:
            return None
        return ("no group is marked most or least favoured: the estimation intervals of the highest and the lowest "
                "rate overlap, so the audited rows cannot tell which group the model favours")

    def group_rows(self) -> list[dict]:
        """One dict per group, most favoured first: group, lo, hi, estimate, share, ci_lo, ci_hi, mark."""
        marks = self.marks()
        rows = [{"group": g.label, "lo": g.lo, "hi": g.hi, "estimate": g.estimate, "share": g.share,
                 "ci_lo": g.ci_lo, "ci_hi": g.ci_hi, "observed": g.observed, "rows": g.rows,
                 "mark": marks.get(g.label, "")} for g in self.groups]
        return sorted(rows, key=lambda r: -r["estimate"])

    def dot(self) -> str:
        """The graph in Graphviz DOT: the variables with at least one edge (those without any are counted in the
        graph's label, so that a sparse network is not a tall column of lone boxes)."""
        def q(s):
            return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'
        linked = {n for e in self.edges for n in e}
        alone = [n for n in self.nodes if n not in linked]
        lines = ["digraph {", "  rankdir=LR;", '  node [shape=box, style="rounded", fontname="Helvetica"];']
        if alone:
            lines.append(f"  label={q(f'{len(alone)} variable(s) with no edge: ' + ', '.join(alone))};")
        lines += [f"  {q(n)};" for n in self.nodes if n in linked]
        lines += [f"  {q(a)} -> {q(b)};" for a, b in self.edges]
        return "\n".join(lines + ["}"])

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        d = asdict(self)
        d["groups"] = [{"group": [list(p) for p in g.group], **{k: _num(getattr(g, k)) for k in
                        ("lo", "hi", "share", "ci_lo", "ci_hi", "observed")},
                        "rows": None if g.rows is None else int(g.rows)} for g in self.groups]
        d["edges"] = [list(e) for e in self.edges]
        return d

    @classmethod
    def from_dict(cls, data: dict | None) -> "Findings":
        if not data:
            return cls()
        groups = tuple(GroupRate(tuple((str(c), str(v)) for c, v in g["group"]), float(g["lo"]), float(g["hi"]),
                                 g.get("share"), g.get("ci_lo"), g.get("ci_hi"), g.get("observed"), g.get("rows"))
                       for g in data.get("groups", ()))
        return cls(groups=groups, groups_about=data.get("groups_about", ""), ci_about=data.get("ci_about", ""),
                   ci_method=data.get("ci_method", ""),
                   metrics=tuple(Metric(**m) for m in data.get("metrics", ())),
                   influence=tuple(Influence(**i) for i in data.get("influence", ())),
                   influence_about=data.get("influence_about", ""),
                   edges=tuple(tuple(e) for e in data.get("edges", ())), nodes=tuple(data.get("nodes", ())),
                   graph_about=data.get("graph_about", ""), complete_groups=bool(data.get("complete_groups", True)),
                   notes=tuple(data.get("notes", ())))


def disparities(groups, about: str = "over the groups listed") -> tuple[Metric, ...]:
    """Disparate impact (lowest rate ÷ highest rate) and statistical parity (highest − lowest) as intervals that
    contain the true values whenever every group's rate lies in its ``[lo, hi]``.

    SP = max_g r_g − min_g r_g: at least max over pairs of (lo_i − hi_j) (≥ 0), at most max hi − min lo.
    DI = min_g r_g ÷ max_g r_g: min_g r_g ∈ [min lo, min hi] and max_g r_g ∈ [max lo, max hi], so DI is at least
    min lo ÷ max hi and at most min(1, min hi ÷ max lo); where every rate may be 0 that end is undefined (0/0)
    and the interval is widened to it: [0, …] or […, 1]."""
    groups = list(groups)
    if len(groups) < 2:
        return ()
    lo_max, hi_max = max(g.lo for g in groups), max(g.hi for g in groups)
    lo_min, hi_min = min(g.lo for g in groups), min(g.hi for g in groups)
    sp = Metric("statistical parity", max(0.0, lo_max - hi_min), hi_max - lo_min,
                f"highest minus lowest favourable rate {about}")
    # every rate possibly 0 makes the ratio 0/0 at that end: the interval is then all of [0, 1] (unknown), never
    # a "perfectly fair" 1
    di_lo = lo_min / hi_max if hi_max > 0 else 0.0
    di_hi = min(1.0, hi_min / lo_max) if lo_max > 0 else 1.0
    di = Metric("disparate impact", di_lo, di_hi, f"lowest favourable rate divided by the highest {about}")
    return di, sp


def observed_rates(columns, frame, predictions) -> dict:
    """The model's favourable rate on the audited rows of every compound group of ``columns``:
    ``{((column, value as text), ...): (rate, rows)}`` (missing values read "missing")."""
    import numpy as np

    pred = np.asarray(predictions, dtype=float)
    acc: dict = {}
    values = [frame[c].astype(object).to_numpy() for c in columns]
    for i, y in enumerate(pred):
        key = tuple((c, "missing" if _is_missing(v[i]) else str(v[i])) for c, v in zip(columns, values))
        a = acc.setdefault(key, [0.0, 0])
        a[0] += y
        a[1] += 1
    return {g: (a[0] / a[1], a[1]) for g, a in acc.items()}


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v) in ("nan", "<NA>", "None")


def modelling_gap(groups, observed: dict, model_name: str, advice: str):
    """Compare every group's modelled rate with the model's rate on its audited rows (``observed_rates``): the
    groups with ``observed``/``rows`` filled in, a note saying what that column is, and warnings. A group is called different
    when its observed rate lies farther from the modelled interval than max(0.02, 3 binomial standard errors) —
    the standard error from (k + 1)/(n + 2), so that a group whose rows all agree still has one. A warning also
    says when the most and the least favoured group are the other way round on the rows (by more than the two
    standard errors combined): the modelled population then tells a different story than the data."""
    out, notes, worst = [], [], []
    for g in groups:
        got = observed.get(tuple(g.group))
        if got is None:  # no audited row: a group of the modelled population only
            out.append(GroupRate(g.group, g.lo, g.hi, g.share, g.ci_lo, g.ci_hi, None, 0) if observed else g)
            continue
        rate, n = got
        gap = max(0.0, g.lo - rate, rate - g.hi)
        p = (rate * n + 1) / (n + 2)
        se = (p * (1 - p) / n) ** 0.5
        if gap > max(0.02, 3 * se):
            worst.append((gap, g.label))
        out.append(GroupRate(g.group, g.lo, g.hi, g.share, g.ci_lo, g.ci_hi, float(rate), int(n)))
    if any(g.observed is not None for g in out):
        notes.append(f"on the audited rows: the model's favourable rate on the group's own rows, beside the rate "
                     f"{model_name} gives; a warning says when they differ by more than max(0.02, 3 binomial "
                     f"standard errors)")
    empty = [g.label for g in out if g.rows == 0]
    if empty:
        notes.append(f"{len(empty)} group(s) with no audited row, {model_name}'s alone, not marked most or least "
                     f"favoured: {'; '.join(empty[:6])}{' …' if len(empty) > 6 else ''}")
    warnings = []
    if worst:
        worst.sort(reverse=True)
        names = "; ".join(f"{label} (gap {gap:.3f})" for gap, label in worst[:4])
        warnings.append(f"{model_name}'s group rates differ from the model's rates on the audited rows for "
                        f"{len(worst)} group(s): {names} — {advice}")
    seen = [g for g in out if g.observed is not None and g.rows]
    if len(seen) >= 2:
        hi = max(seen, key=lambda g: g.estimate)
        lo = min(seen, key=lambda g: g.estimate)
        if hi is not lo:
            se = sum((((x.observed * x.rows + 1) / (x.rows + 2)) * (1 - (x.observed * x.rows + 1) / (x.rows + 2))
                      / x.rows) ** 0.5 for x in (hi, lo))
            if lo.observed - hi.observed > 2 * se:
                warnings.append(f"{model_name} makes {hi.label} the most favoured group and {lo.label} the least, "
                                f"but on the audited rows the model favours {lo.label} ({lo.observed:.3f} vs "
                                f"{hi.observed:.3f}) — {advice}")
            elif lo.observed > hi.observed:
                notes.append(f"on the audited rows the most and least favoured groups are the other way round "
                             f"({lo.label} {lo.observed:.3f}, {hi.label} {hi.observed:.3f}), a difference within "
                             f"sampling error ({2 * se:.3f}): the rows cannot tell which group the model favours, "
                             f"the marks are {model_name}'s")
    return tuple(out), notes, warnings
