"""What a repair returns: ``RepairResult`` (the chosen thresholds, the curve, the rows that chose and certified, the
one-look certificate) and its JSON (``to_dict``, ``fairaudit repair --json``).

The names are a contract the dashboard and the CLI read: ``thresholds``, ``global_threshold``, ``kind``, ``chosen``,
``original``, ``curve``, ``search``, ``certification``, ``certificate``, ``verdict``, ``headline``, ``model``,
``tried`` (the candidates certified together), ``refusal``, ``caveat``, ``to_dict()``, ``save_model(path)``.

Every sentence is built from the parsed specification, never from its text: the certificate's comparison that matters
is said by the audit's own headline machinery (``fairaudit.core.claim.summary_sentence``: groups in words, the rule
that chose the comparison), the specification by its clauses' names ("ratio and gap"). A refused repair
(``refused``: ``wording.Refusal``) leads with one line, "No repair adopted: …", said with the name each surface gives
the loss bound (``refusal_for``); its candidates are "tried", never "repaired", "chosen" or "adopted"
(``is_adopted``, ``shown_name``).
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
    """One candidate certified together with others: its ``point`` (search rows), the one-look ``certificate`` on
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
    certificate: Any  # the one-look AuditResult on the certification rows
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
    refused: Any = None  # ``wording.Refusal`` when no useful repair is certified (``refusal``: its one line)
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
    def shown(self):
        """The ``Candidate`` shown: the certified one adopted, else the best (safest) tried; None when none was
        tried."""
        for c in self.tried:
            if c.point == self.chosen:
                return c
        return None

    @property
    def is_adopted(self) -> bool:
        """Whether a repair was adopted: a candidate was certified (no refusal)."""
        return self.refused is None and self.verdict == "certified"

    @property
    def adopted(self):
        """The ``Candidate`` adopted (certified); None when the repair was refused."""
        return self.shown if self.is_adopted else None

    @property
    def shown_name(self) -> str:
        """What the candidate shown is called (tables, chart, CLI): "repaired" when adopted, else "best candidate
        tried" (``wording.SHOWN``)."""
        from fairaudit.repairs.wording import SHOWN

        return SHOWN[self.is_adopted]

    @property
    def refusal(self) -> str | None:
        """The refusal's one line as the library says it ("No repair adopted: …", the bound named ``max_loss``);
        None when a repair was adopted."""
        return self.refusal_for("library")

    def refusal_for(self, surface: str) -> str | None:
        """The refusal's one line on ``surface`` ("dashboard", "cli" or "library": ``wording.OPTION_NAMES``)."""
        from fairaudit.repairs.wording import refusal_text

        return None if self.refused is None else refusal_text(self.refused, surface)

    @property
    def certified_accuracy(self) -> float | None:
        """The accuracy of the candidate shown on the certification rows (None without labels or a candidate)."""
        return None if self.shown is None else self.shown.accuracy

    @property
    def verdict(self) -> str:
        """"certified", "violated" or "undecided": the certificate's verdict on the certification rows ("undecided" when
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
        """The original accuracy minus the shown candidate's on the search rows (None without labels)."""
        if self.chosen.accuracy is None or self.original.accuracy is None:
            return None
        return self.original.accuracy - self.chosen.accuracy

    def accuracy_change(self, *, points: bool = False) -> str | None:
        """"accuracy given up on the search rows: 0.0107" (or "gained" when the repair is more accurate):
        ``wording.change_words``; None without labels."""
        from fairaudit.repairs.wording import change_words

        loss = self.accuracy_loss
        return None if loss is None else change_words(loss, points=points)

    def thresholds_words(self, point=None) -> str:
        """The thresholds of ``point`` (default: the one shown) in words: "a single threshold 0.521 on the score" or
        "thresholds on the score by sex (Female ≥ 0.4; Male ≥ 0.6)"."""
        p = self.chosen if point is None else point
        if not p.thresholds:
            return f"a single threshold {p.default:.3g} on the score"
        return ("thresholds on the score by " + ", ".join(self.group_by) + " ("
                + "; ".join(f"{g} ≥ {t:.3g}" for g, t in sorted(p.thresholds.items())) + ")")

    @property
    def headline(self) -> str:
        """One line for a signer. Adopted: what is certified, about which population, at what level, that the
        thresholds were chosen on other rows, then the comparison that matters in words (the audit's
        ``summary_sentence``). Refused: the refusal's one line (``refusal``)."""
        if self.refused is not None or self.certificate is None or self.verdict != "certified":
            return self.refusal or "No repair adopted: no useful repair was certified."
        level = f"{(1 - self.delta) * 100:g}%"
        together = ("" if self.together <= 1 else
                    f" ({self.together} candidates were certified together, each with failure probability "
                    f"{self.delta / self.together:.3g}, so that all hold at this level)")
        about = (f"the population the {self.certification.count:,} certification rows were drawn from "
                 f"(assumed an independent sample of it, looked at once)")
        chosen_on = (f"the thresholds were chosen on {self.search.count:,} other rows (seed {self.search.seed}), "
                     "which play no part in this certificate")
        return (f"Certified with probability ≥ {level}{together}: with {self.thresholds_words()}, the model satisfies "
                f"{spec_words(self.certificate)} on {about}; {chosen_on}. {comparison_words(self.certificate)}")

    def candidate_sentence(self, candidate) -> str:
        """What a candidate's certificate says, in words: its thresholds, its verdict on the certification rows at its
        failure probability, and the comparison that matters (``summary_sentence``)."""
        c = candidate
        rows = f"on the {self.certification.count:,} certification rows"
        what = self.thresholds_words(c.point)
        what = what[:1].upper() + what[1:]
        if c.verdict == "certified":
            said = f"certified {rows} (failure probability {c.delta:.3g})"
        elif c.verdict == "violated":
            said = f"violated {rows}"
        else:
            said = f"not decided {rows} at failure probability {c.delta:.3g} (more rows are needed)"
        return f"{what}: {said}. {comparison_words(c.certificate)}"

    @property
    def status(self) -> tuple[str, str, str]:
        """``(word, box kind, icon)`` of the result (``wording.status``): "No repair adopted" for a refused repair,
        else its verdict's; "Not certified" never wears the certified icon."""
        from fairaudit.repairs.wording import status

        return status("refused" if self.refused is not None else self.verdict)

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
            "refusal": self.refusal, "rows_needed": self.rows_needed, "adopted": self.is_adopted,
            "refused": None if self.refused is None else self.refused.to_dict(),
            "certificate": None if cert is None else json.loads(cert.to_json()),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)

    def save_model(self, path, *, force: bool = False) -> list:
        """Save the repaired model (JSON over the base model's file: ``fairaudit.models.thresholds``; a base model
        with no file is saved beside it first: ``fairaudit.repairs.model.save``); the paths written."""
        from fairaudit.repairs.model import save

        return save(self.model, path, force=force)


def spec_words(result) -> str:
    """The specification by its clauses' names, from an audit result's nodes: "the specification (ratio and gap)",
    "the specification (ratio and 1 unnamed comparison)", or "the specification" when no comparison is named."""
    cmps = [n for n in getattr(result, "nodes", []) or [] if n.get("kind") == "cmp"]
    names = [str(n["name"]) for n in cmps if n.get("name")]
    if not names:
        return "the specification"
    unnamed = len(cmps) - len(names)
    if unnamed:
        names.append(f"{unnamed} unnamed comparison" + ("s" if unnamed > 1 else ""))
    said = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"the specification ({said})"


def comparison_words(result) -> str:
    """The comparison that matters in an audit result, in words (``fairaudit.core.claim.summary_sentence``: groups
    named from the syntax tree, never from the specification's text)."""
    from fairaudit.core.claim import summary_sentence

    return summary_sentence(result)


def _number(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None
