"""The words a repair is shown with, in one place: the legal caveat of group-specific thresholds, the status
icon of a verdict, the refusal sentence (``Refusal``, ``refusal_sentence``: built with the name the surface gives the
loss bound, ``OPTION_NAMES``), the name of the candidate shown (``SHOWN``: "repaired" only when one was adopted) and
how a change of accuracy is said (``change_words``: "given up", or "gained" when negative). The dashboard (Repair
page, threshold slider), the command line (``fairaudit repair`` output and ``--help``), the JSON and the report all
read them from here.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

# Title VII §703(l) and ECOA / Regulation B (``shared/notes/regulatory.md``, "Lawful remedies")
PER_GROUP_CAVEAT = (
    "Group-specific thresholds are unlawful in US employment decisions (Title VII, 42 U.S.C. §2000e-2(l), which "
    "forbids adjusting scores or using different cutoffs by race, color, religion, sex or national origin) and "
    "restricted in credit (ECOA / Regulation B); seek legal review before using them. One threshold for everyone is "
    "the default.")

ONE_THRESHOLD_NOTE = "One threshold for everyone: the same cutoff for every group (the default)."

# a verdict's status: the word, the colour (Streamlit box) and the icon; "Not certified" never wears the
# certified icon
STATUS = {
    "certified": ("Certified", "success", ":material/verified:"),
    "violated": ("Violated", "error", ":material/gpp_bad:"),
    "undecided": ("Not certified", "warning", ":material/help:"),
    "refused": ("No repair adopted", "warning", ":material/block:"),
}


def status(verdict: str) -> tuple[str, str, str]:
    """``(word, box kind, icon)`` of a repair's verdict (``STATUS``; an unknown verdict is "Not certified")."""
    return STATUS.get(verdict, STATUS["undecided"])


# ------------------------------------------------------------------------------------------------ a refused repair
MAX_LOSS_LABEL = "Largest loss allowed"  # the dashboard's slider (``fairaudit.ui.repair``)
# the option that bounds the loss, as each surface names it: the refusal sentence is built with it
OPTION_NAMES = {"dashboard": f"the '{MAX_LOSS_LABEL}' slider", "cli": "--max-loss", "library": "max_loss"}
SHOWN = {True: "repaired", False: "best candidate tried"}  # the candidate shown, adopted or not (table, chart)


def plural(count: int, one: str, many: str | None = None) -> str:
    """"1 candidate", "2 candidates" (``many`` when the plural is not ``one`` + "s")."""
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def bound_words(objective: str, max_loss: float) -> str:
    """What a useful candidate keeps: "keeps accuracy within 0.1 of the original" (or the share of favourable
    decisions)."""
    if objective == "accuracy":
        return f"keeps accuracy within {max_loss:g} of the original"
    return f"keeps the share of favourable decisions within {max_loss:g} of the original's"


def change_words(loss: float, what: str = "accuracy", *, points: bool = False, digits: int = 4) -> str:
    """A change of ``what`` on the search rows: "accuracy given up on the search rows: 0.0107", or "accuracy gained
    on the search rows: 0.0107" when ``loss`` (original − repaired) is negative; ``points``: in percentage points
    ("4.0 points")."""
    amount = abs(float(loss))
    value = f"{amount * 100:.1f} points" if points else f"{amount:.{digits}f}"
    verb = "given up" if loss > 0 else "gained" if loss < 0 else "changed"
    if loss == 0:
        return f"{what} unchanged on the search rows"
    return f"{what} {verb} on the search rows: {value}"


@dataclass(frozen=True)
class Refusal:
    """Why no repair was adopted (``fairaudit.repairs.repair``), to be said on any surface (``refusal_sentence``):
    the ``objective`` and its bound ``max_loss``; how many candidates were ``useful`` (not degenerate, within the
    bound), how many of those ``satisfying`` the specification on the search rows, how many were ``tried`` (certified
    together) on ``cert_rows`` certification rows; ``rows_needed``: the certification rows at which a useful
    candidate would be certifiable at the search rows' rates (None: none would be), ``best``: that candidate's
    objective on the search rows in words ("accuracy 0.755"); ``split``: the share of the rows that chose."""

    objective: str
    max_loss: float
    useful: int
    satisfying: int
    tried: int
    cert_rows: int
    split: float
    rows_needed: int | None = None
    best: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def refusal_sentence(refusal: Refusal, option: str) -> str:
    """One line: "No repair adopted: " and why, with the sample size that would make a useful repair certifiable, or
    the option (``option``: as the surface names it, ``OPTION_NAMES``) that would widen the search."""
    r = refusal
    bound = bound_words(r.objective, r.max_loss)
    allow = f"a larger loss allowed ({option})"
    larger = f"{allow} widens the search"
    if not r.useful:
        return (f"No repair adopted: no threshold that decides some rows favourably and some not {bound} on the "
                f"search rows; {larger}.")
    if not r.satisfying:
        return (f"No repair adopted: no threshold that {bound} satisfies the specification on the search rows "
                f"(thresholds deciding everyone or no one favourably are not considered), so no sample size would "
                f"make one certifiable; {larger}.")
    rows = f"the {r.cert_rows:,} certification rows"
    if r.tried == 1:
        why = f"the one candidate tried (it {bound}) was not certified on {rows}"
    else:
        why = f"none of the {plural(r.tried, 'candidate')} tried (each {bound}) was certified on {rows}"
    if r.rows_needed is None:
        size = f"at the search rows' rates none would be certifiable even with far more rows; {larger}"
    elif r.rows_needed <= r.cert_rows:  # the search rows promised a certificate the certification rows denied
        size = (f"at the search rows' rates a repair with {r.best} on the search rows would be certifiable on {rows} there are, but "
                f"their own rates did not bear it out; more audited rows, or {allow}, make a certificate likelier")
    else:
        audited = int(math.ceil(r.rows_needed / max(1.0 - r.split, 1e-9)))
        size = (f"a repair with {r.best} on the search rows would be certifiable with about {r.rows_needed:,} "
                f"certification rows (about {audited:,} audited rows at split {r.split:g}); there are {r.cert_rows:,}")
    return f"No repair adopted: {why}; {size}."


def refusal_text(refusal: Refusal, surface: str = "library") -> str:
    """``refusal_sentence`` with the option's name on ``surface`` ("dashboard", "cli" or "library")."""
    return refusal_sentence(refusal, OPTION_NAMES[surface])
