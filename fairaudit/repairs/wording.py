"""The words a repair is shown with, in one place: the legal caveat of group-specific thresholds and the status
icon of a verdict. The dashboard (Repair page, threshold slider), the command line (``fairaudit repair`` output and
``--help``), the JSON and the report all read them from here.
"""
from __future__ import annotations

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
}


def status(verdict: str) -> tuple[str, str, str]:
    """``(word, box kind, icon)`` of a repair's verdict (``STATUS``; an unknown verdict is "Not certified")."""
    return STATUS.get(verdict, STATUS["undecided"])
