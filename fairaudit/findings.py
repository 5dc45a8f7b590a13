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
    ci_about: str = ""
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
        """``{group label: "most favoured" | "least favoured"}`` by estimate (ties: every tied group)."""
        if len(self.groups) < 2:
            return {}
        top = max(g.estimate for g in self.groups)
        bottom = min(g.estimate for g in self.groups)
        if top == bottom:
            return {}
        out = {g.label: MOST for g in self.groups if g.estimate == top}
        out.update({g.label: LEAST for g in self.groups if g.estimate == bottom})
        return out

    def group_rows(self) -> list[dict]:
        """One dict per group, most favoured first: group, lo, hi, estimate, share, ci_lo, ci_hi, mark."""
        marks = self.marks()
        rows = [{"group": g.label, "lo": g.lo, "hi": g.hi, "estimate": g.estimate, "share": g.share,
                 "ci_lo": g.ci_lo, "ci_hi": g.ci_hi, "mark": marks.get(g.label, "")} for g in self.groups]
        return sorted(rows, key=lambda r: -r["estimate"])

    def dot(self) -> str:
        """The graph in Graphviz DOT (protected attributes are whatever the engine put first in ``nodes``)."""
        def q(s):
            return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines = ["digraph {", "  rankdir=LR;", '  node [shape=box, style="rounded", fontname="Helvetica"];']
        lines += [f"  {q(n)};" for n in self.nodes]
        lines += [f"  {q(a)} -> {q(b)};" for a, b in self.edges]
        return "\n".join(lines + ["}"])

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        d = asdict(self)
        d["groups"] = [{"group": [list(p) for p in g.group], **{k: _num(getattr(g, k)) for k in
                        ("lo", "hi", "share", "ci_lo", "ci_hi")}} for g in self.groups]
        d["edges"] = [list(e) for e in self.edges]
        return d

    @classmethod
    def from_dict(cls, data: dict | None) -> "Findings":
        if not data:
            return cls()
        groups = tuple(GroupRate(tuple((str(c), str(v)) for c, v in g["group"]), float(g["lo"]), float(g["hi"]),
                                 g.get("share"), g.get("ci_lo"), g.get("ci_hi")) for g in data.get("groups", ()))
        return cls(groups=groups, groups_about=data.get("groups_about", ""), ci_about=data.get("ci_about", ""),
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
    min lo ÷ max hi and at most min(1, min hi ÷ max lo) (1 when the highest rate may be 0)."""
    groups = list(groups)
    if len(groups) < 2:
        return ()
    lo_max, hi_max = max(g.lo for g in groups), max(g.hi for g in groups)
    lo_min, hi_min = min(g.lo for g in groups), min(g.hi for g in groups)
    sp = Metric("statistical parity", max(0.0, lo_max - hi_min), hi_max - lo_min,
                f"highest minus lowest favourable rate {about}")
    di_lo = lo_min / hi_max if hi_max > 0 else 1.0
    di_hi = min(1.0, hi_min / lo_max) if lo_max > 0 else 1.0
    di = Metric("disparate impact", di_lo, di_hi, f"lowest favourable rate divided by the highest {about}")
    return di, sp
