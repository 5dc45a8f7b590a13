"""What a repair returns: ``RepairResult`` (the chosen thresholds, the curve, the rows that chose and certified, the
monitor's certificate) and its JSON (``to_dict``, ``fairaudit repair --json``).

The names are a contract the dashboard and the CLI read: ``thresholds``, ``global_threshold``, ``kind``, ``chosen``,
``original``, ``curve``, ``search``, ``certification``, ``certificate``, ``verdict``, ``headline``, ``model``,
``tried`` (the candidates certified together), ``refusal``, ``caveat``, ``to_dict()``, ``save_model(path)``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

FORMAT = "fairaudit-repair/1"  # the JSON's "format" (``fairaudit.core.outputs.REPAIR_FORMAT`` is its prefix)
VERDICTS = {"true": "certified", "false": "violated", "unknown": "undecided"}
EXIT_CODES = {"certified": 0, "violated": 1, "undecided": 3}


@dataclass(frozen=True)
class Point:
    """One set of thresholds and what it gives on the search rows: ``margin`` (the specification's robustness
    margin: how far inside the satisfied side, negative when violated), ``accuracy`` (None without labels),
    ``favourable`` (the share of favourable decisions), ``thresholds`` (group → threshold; ``default`` for the
    rows of no group), ``kind`` ("group", "global" or "original")."""

    margin: float
    accuracy: float | None
    favourable: float
    thresholds: dict
    default: float
    kind: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "margin": _number(self.margin), "accuracy": _number(self.accuracy),
                "favourable": _number(self.favourable),
                "thresholds": {k: _number(v) for k, v in self.thresholds.items()}, "default": _number(self.default)}


@dataclass(frozen=True)
class Rows:
    """A part of the audited rows: ``count`` rows, ``share`` of them, drawn at random with ``seed``; ``text`` says
    it in words."""

    count: int
    share: float
    seed: int
    text: str

    def to_dict(self) -> dict:
        return {"count": self.count, "share": self.share, "seed": self.seed, "text": self.text}


@dataclass(frozen=True)
class Candidate:
    """One candidate certified together with others: its ``point`` (search rows), the monitor's ``certificate`` on
    the certification rows at level ``delta`` (Δ/k), the predicted ``odds`` of that certificate (None: not
    predicted) and the repaired model's ``accuracy`` on the certification rows (None without labels)."""

    point: Point
    certificate: Any
    delta: float
    odds: float | None
    accuracy: float | None

    @property
    def verdict(self) -> str:
        return VERDICTS.get(self.certificate.verdict, "undecided")

    def to_dict(self) -> dict:
        return {**self.point.to_dict(), "delta": self.delta, "odds": _number(self.odds), "verdict": self.verdict,
                "accuracy_on_certification_rows": _number(self.accuracy)}


@dataclass
class RepairResult:
    """A threshold repair and its certificate (module doc). ``required_margin`` is the margin each comparison had
    to reach at the chosen point on the search rows (node id → margin; ``margin_rule`` says how it was set),
    ``method`` how each search ran (exhaustive / coordinate ascent), ``feasible`` whether the chosen point reached the
    required margin, ``notes`` what the user should know (rows of no group, no feasible point ...)."""

    spec: str
    group_by: list
    objective: str
    thresholds: dict
    global_threshold: float | None
    original_threshold: float
    kind: str
    chosen: Point
    original: Point
    curve: list
    search: Rows
    certification: Rows
    certificate: Any  # the monitor's AuditResult on the certification rows
    model: Any  # the repaired model (``fairaudit.models.thresholds.ThresholdModel``)
    delta: float
    required_margin: dict
    margin_rule: str
    method: str
    feasible: bool
    candidates: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    thresholds_mode: str = "global"  # what was searched: global (one threshold for everyone), group or both
    max_loss: float | None = None  # the most of the objective a repair could give up on the search rows
    tried: list = field(default_factory=list)  # the ``Candidate``s certified together, each at Δ/k
    together: int = 1  # k: how many were certified together (each at Δ/k)
    expected: float | None = None  # the plan's expected objective of the certified repair
    refusal: str | None = None  # one line when no useful repair is certified (with the rows that would do)
    rows_needed: int | None = None  # certification rows at which a useful repair would be certifiable

    @property
    def per_group(self) -> bool:
        """Whether per-group thresholds were offered (searched): the legal caveat goes with the result."""
        return self.thresholds_mode in ("group", "both")

    @property
    def caveat(self) -> str | None:
        """``wording.PER_GROUP_CAVEAT`` when per-group thresholds were offered, else None."""
        from fairaudit.repairs.wording import PER_GROUP_CAVEAT

        return PER_GROUP_CAVEAT if self.per_group else None

    @property
    def adopted(self):
        """The ``Candidate`` shown (the certified one adopted, else the safest tried); None when none was tried."""
        for c in self.tried:
            if c.point == self.chosen:
                return c
        return None

    @property
    def certified_accuracy(self) -> float | None:
        """The repaired model's accuracy on the certification rows (None without labels or a candidate)."""
        return None if self.adopted is None else self.adopted.accuracy

    @property
    def verdict(self) -> str:
        """"certified", "violated" or "undecided": the monitor's verdict on the certification rows ("undecided" when
        no useful candidate could be certified at all)."""
        if self.certificate is None:
            return "undecided"
        return VERDICTS.get(self.certificate.verdict, "undecided")

    @property
    def exit_code(self) -> int:
        """As ``fairaudit audit``: 0 certified, 1 violated, 3 undecided."""
        return EXIT_CODES[self.verdict]

    @property
    def accuracy_loss(self) -> float | None:
        """The original accuracy minus the repaired one on the search rows (None without labels)."""
        if self.chosen.accuracy is None or self.original.accuracy is None:
            return None
        return self.original.accuracy - self.chosen.accuracy

    @property
    def headline(self) -> str:
        """One sentence for a signer: what is certified, about which population, at what level, and that the
        thresholds were chosen on other rows."""
        what = (f"a single threshold {self.chosen.default:.3g} on the score" if self.kind == "global"
                else "thresholds on the score by " + ", ".join(self.group_by) + " ("
                + "; ".join(f"{g} ≥ {t:.3g}" for g, t in sorted(self.thresholds.items())) + ")")
        level = f"{(1 - self.delta) * 100:g}%"
        if self.certificate is None:
            return f"Not certified: {self.refusal or 'no useful repair was found'}"
        together = ("" if self.together <= 1 else
                    f" ({self.together} candidates were certified together, each with failure probability "
                    f"{self.delta / self.together:.3g}, so that all hold at this level)")
        about = (f"the population the {self.certification.count:,} certification rows were drawn from "
                 f"(assumed in random order)")
        chosen_on = (f"the thresholds were chosen on {self.search.count:,} other rows (seed {self.search.seed}), "
                     "which play no part in this certificate")
        if self.verdict == "certified":
            return (f"Certified with probability ≥ {level}{together}: with {what}, the model satisfies {self.spec} on "
                    f"{about}; {chosen_on}.")
        if self.verdict == "violated":
            return (f"Violated with probability ≥ {level}: with {what}, the model does not satisfy {self.spec} on "
                    f"{about}; {chosen_on}.")
        return (f"Not certified: with {what}, the monitor could not decide {self.spec} at level {level} on the "
                f"{self.certification.count:,} certification rows (more rows, or a larger margin, are needed); "
                f"{chosen_on}.")

    @property
    def status(self) -> tuple[str, str, str]:
        """``(word, box kind, icon)`` of the verdict (``wording.status``): "Not certified" never wears the
        certified icon."""
        from fairaudit.repairs.wording import status

        return status(self.verdict)

    def to_dict(self) -> dict:
        cert = self.certificate
        return {
            "format": FORMAT, "spec": self.spec, "group_by": list(self.group_by), "objective": self.objective,
            "kind": self.kind, "thresholds": {k: _number(v) for k, v in self.thresholds.items()},
            "global_threshold": _number(self.global_threshold), "original_threshold": _number(self.original_threshold),
            "chosen": self.chosen.to_dict(), "original": self.original.to_dict(),
            "accuracy_loss": _number(self.accuracy_loss),
            "curve": [p.to_dict() for p in self.curve], "search": self.search.to_dict(),
            "certification": self.certification.to_dict(), "method": self.method, "feasible": self.feasible,
            "required_margin": {k: _number(v) for k, v in self.required_margin.items()},
            "margin_rule": self.margin_rule,
            "candidates": dict(self.candidates), "delta": self.delta, "verdict": self.verdict,
            "headline": self.headline, "notes": list(self.notes), "model": self.model.describe(),
            "thresholds_mode": self.thresholds_mode, "per_group": self.per_group, "caveat": self.caveat,
            "max_loss": self.max_loss, "certified_together": self.together,
            "tried": [c.to_dict() for c in self.tried], "expected_objective": _number(self.expected),
            "accuracy_on_certification_rows": _number(self.certified_accuracy),
            "refusal": self.refusal, "rows_needed": self.rows_needed,
            "certificate": None if cert is None else json.loads(cert.to_json()),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)

    def save_model(self, path, *, force: bool = False) -> list:
        """Save the repaired model (JSON over the base model's file: ``fairaudit.models.thresholds``; a base model
        with no file is saved beside it first: ``fairaudit.repairs.model.save``); the paths written."""
        from fairaudit.repairs.model import save

        return save(self.model, path, force=force)


def _number(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None
