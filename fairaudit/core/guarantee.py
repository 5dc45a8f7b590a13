"""What a verdict is worth: the kind of guarantee behind it, and every sentence the user reads about it.

An engine returns a ``Guarantee``; the CLI, the dashboard and the PDF word the verdict only through it
(``verdict_sentence``, ``Guarantee.phrase``, ``Guarantee.caption``), so a sound bound is never described as
"with probability ≥ 0.95" and an exact count on a finite table never as a statement about a population.

* ``probabilistic`` — the verdict is wrong with probability at most ``delta`` (the monitor's confidence
  sequences); ``assumes`` says what that rests on (e.g. the rows arrive in random order);
* ``sound`` — the bounds provably contain the true value (a verifier's interval arithmetic); the verdict
  is never wrong, but may be undecided;
* ``exact`` — the value itself, computed exactly, but only for what was computed on (``scope``: e.g. these
  rows, not the population they were drawn from).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from fairaudit.base.numbers import count

KINDS = ("probabilistic", "sound", "exact")


@dataclass(frozen=True)
class Guarantee:
    kind: str
    delta: float = 0.0
    note: str | None = None  # why it is weaker than asked for (e.g. a data-chosen δ split), or None
    assumes: str | None = None  # what it rests on, in one sentence (row order, held-out rows ...)
    # what it is a statement about, when that is narrower than the population; on a probabilistic guarantee, how it
    # may be used ("one look, not for monitoring": a fixed-sample interval, not a confidence sequence)
    scope: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown guarantee kind {self.kind!r}; one of {', '.join(KINDS)}")
        if self.kind != "probabilistic" and self.delta:
            raise ValueError(f"a {self.kind} guarantee has no failure probability (delta = 0), got {self.delta!r}")
        if self.kind == "probabilistic" and not 0 <= self.delta <= 1:
            raise ValueError(f"delta must be in [0, 1], got {self.delta!r}")

    @property
    def confidence(self) -> float:
        """The probability that a decided verdict is right (1 for sound and exact guarantees)."""
        return max(0.0, 1.0 - self.delta) if self.kind == "probabilistic" else 1.0

    @property
    def phrase(self) -> str:
        """How a decided verdict holds: "with probability ≥ 0.95" / "with certainty (sound bounds)" /
        "exactly on these 8,141 rows (not the population they were drawn from)"."""
        if self.kind == "probabilistic":
            return f"with probability ≥ {_at_most(self.confidence)}" + (f" ({self.scope})" if self.scope else "")
        if self.kind == "sound":
            return "with certainty (sound bounds)" + (f" {self.scope}" if self.scope else "")
        return "exactly " + (self.scope or "on the inputs given")

    @property
    def caption(self) -> str:
        """A short label for a badge or a chart caption: "probability ≥ 0.95", "sound bounds", "exact, on these 8,141 rows"."""
        if self.kind == "probabilistic":
            return f"probability ≥ {_at_most(self.confidence)}" + (f", {self.scope}" if self.scope else "")
        if self.kind == "sound":
            return "sound bounds"
        return "exact, " + (self.scope or "on the inputs given").split(" (")[0]

    @property
    def interval_meaning(self) -> str:
        """What an interval shown under this guarantee means, in one sentence."""
        if self.kind == "probabilistic" and self.scope:  # a fixed-sample interval (one look)
            return ("each interval contains the true value with probability at least 1 − its δ, for a number of "
                    f"rows fixed in advance ({self.scope}: not valid if re-checked as rows arrive)")
        if self.kind == "probabilistic":
            return ("each interval contains the true value with probability at least 1 − its δ, at every step at "
                    "once (an anytime-valid confidence sequence)")
        if self.kind == "sound":
            return "each interval provably contains the true value (sound bounds: no probability of error)"
        return "each value is computed exactly, so its interval is a single point"

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict | None) -> "Guarantee | None":
        if not data:
            return None
        return cls(**{k: data.get(k) for k in ("kind", "delta", "note", "assumes", "scope") if k in data})


def _at_most(p: float) -> str:
    """``p`` written with ``:g``'s six significant digits, cut down (not rounded up) when rounding would raise it: a
    lower bound on a probability must not read higher than it is (1 − 0.05/3 is "0.966666", not "0.966667" or
    "0.9666666666666667"). Close to 1, the digits reach two past the nines, so that the miss probability still
    shows (1 − 1e-9 is "0.999999999", never "1" or "0.999999")."""
    if not math.isfinite(p):
        return f"{p:g}"
    digits = max(6, int(math.floor(-math.log10(1 - p))) + 2) if 0 < p < 1 else 6
    for shown in range(6, digits + 1):  # exactly, in as few digits as that takes
        if float(f"{p:.{shown}g}") == p:
            return f"{p:.{shown}g}"
    if float(f"{p:.6g}") <= p:  # rounded, when that does not raise it
        return f"{p:.6g}"
    from decimal import ROUND_FLOOR, Decimal

    exact = Decimal(p)
    cut = exact.quantize(Decimal(1).scaleb(exact.adjusted() - digits + 1), rounding=ROUND_FLOOR)
    return f"{cut.normalize():f}"


def verdict_sentence(verdict: str, guarantee: Guarantee, *, at: int | None, steps: int, unit: str,
                     reason: str = "", with_note: bool = True) -> str:
    """The one sentence stating a verdict and its guarantee, e.g. "certified true with probability ≥ 0.95 after
    870 observations" or "undecided after 2,000 observations: <why>". ``at`` is the step the reported verdict was
    reached (``verdict_step``); ``reason`` (": ...") says why an undecided verdict is undecided."""
    if verdict in ("true", "false"):
        word = "certified true" if verdict == "true" else "violated"
        step = steps if at is None else at
        text = f"{word} {guarantee.phrase}" + (f" after {count(step, unit)}" if guarantee.kind != "exact" else "")
        if with_note and guarantee.note:
            text += f" ({guarantee.note})"
        return text
    return f"undecided after {count(steps, unit)}{reason}"


def format_interval(lo: float, hi: float, digits: int = 4) -> str:
    """``[lo, hi]`` with the one number rule (``fairaudit.base.numbers``); a point interval is shown as its value."""
    from fairaudit.base.numbers import clean

    def fmt(x) -> str:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return "nan"
        value = clean(x)
        text = f"{value:.{digits}g}"
        if "e+" in text and abs(value) < 1e15:  # an amount (dollars, days): its digits, never 1.898e+04
            return f"{float(text):.0f}"
        return text

    low, high = fmt(lo), fmt(hi)
    try:
        apart = float(hi) - float(lo) > 1e-9 * max(1.0, abs(float(lo)), abs(float(hi)))
    except (TypeError, ValueError):
        apart = False
    if low == high and apart and digits < 12:  # two bounds that only look alike at this precision: more digits
        return format_interval(lo, hi, digits + 2)
    return low if low == high else f"[{low}, {high}]"  # a point (an exact value, up to rounding) is one number


def evalue_number(x) -> str:
    """An e-value or its target as the sentences print it: 41, 2.5, 1.2e+06, "∞"."""
    x = float(x)
    if math.isinf(x):
        return "∞"
    if math.isnan(x):
        return "—"
    return f"{x:.3g}" if x < 1e4 else f"{x:.2g}"


def joint_test_text(evalue, target) -> str:
    """Why a comparison is decided although its interval still straddles its threshold (the one wording: CLI,
    dashboard, PDF): "decided by the joint test: e-value 41 ≥ 1/β = 20"."""
    return f"decided by the joint test: e-value {evalue_number(evalue)} ≥ 1/β = {evalue_number(target)}"


def evidence_note(final, op: str | None) -> str | None:
    """``joint_test_text`` for a comparison (its ``final`` values: verdict, lo/hi of left − right, evalue,
    evalue_target) that its joint test decided while its interval does not decide it; None otherwise (no test, not
    decided, or the interval decides it too). The one test of when the dashboard, the PDF and the CLI say it."""
    verdict = final.get("verdict")
    e, target = final.get("evalue"), final.get("evalue_target")
    if verdict not in ("true", "false") or e is None or target is None or op not in ("<", "<=", ">", ">="):
        return None
    e, target = float(e), float(target)
    if math.isnan(e) or math.isnan(target) or e < target:
        return None
    lo, hi = final.get("lo"), final.get("hi")
    lo = -math.inf if lo is None or math.isnan(float(lo)) else float(lo)
    hi = math.inf if hi is None or math.isnan(float(hi)) else float(hi)
    below = op in ("<", "<=")
    holds = (hi < 0 or (op == "<=" and hi <= 0)) if below else (lo > 0 or (op == ">=" and lo >= 0))
    fails = (lo > 0 or (op == "<" and lo >= 0)) if below else (hi < 0 or (op == ">" and hi <= 0))
    if (verdict == "true" and holds) or (verdict == "false" and fails):
        return None
    return joint_test_text(e, target)
