"""The regulatory report formats of a scan, as data: NYC Local Law 144's bias audit and the EEOC's four-fifths rule.

``TEMPLATES`` names each format's title, the rule it follows and its columns (name, what it holds); ``rows(result,
template)`` gives the table as a list of dicts (one per cell, and for LL144 one "unknown" row per table) that the
CSV writer (``to_csv``), the PDF section and the dashboard all show; ``preamble(result, template)`` the lines that
say when, on what and with what guarantee (the audit's date, data source, rows, decision, mode, the guarantee
sentence, the excluded categories).

NYC LL144 (6 RCNY §5-301): for sex, race/ethnicity and every intersection, the number of individuals, the selection
rate (a scoring model: the scoring rate, the share above the full sample's median score) and the impact ratio to the
most-selected category; a category under 2 % of the data may be left out of the ratios (its count and rate are still
reported), and the number of individuals of unknown category is reported. EEOC (29 CFR 1607.4(D)): a selection rate
below four-fifths of the highest group's is evidence of adverse impact; whether the difference is statistically
significant is asked where numbers are small — here, "certified below" is the answer with the scan's guarantee.

The CSV: the preamble as lines starting with ``# `` (the first one ``fairaudit.core.outputs.SCAN_TABLE_MARK``), then
the header and one line per row; ``pandas.read_csv(path, skiprows=<preamble lines>)`` reads it back.
"""
from __future__ import annotations

import csv
import io
import math

from fairaudit.base.errors import FairauditError
from fairaudit.core.outputs import SCAN_TABLE_MARK

_RATE = "selection_rate"

TEMPLATES = {
    "ll144": {
        "title": "NYC Local Law 144 bias audit",
        "rule": "6 RCNY §5-301: selection (or scoring) rates and impact ratios for sex, race/ethnicity and their "
                "intersections; categories under 2% of the data may be excluded from the impact ratios",
        "columns": [
            ("category_type", "the attribute or intersection (sex; race; sex × race)"),
            ("category", "the category (Unknown: individuals of unknown category, counted only)"),
            ("applicants", "number of individuals in the category"),
            ("selected", "number selected (scoring: above the median score)"),
            ("rate", "selection rate (scoring rate for a scoring model)"),
            ("rate_lo", "lower end of the rate's interval"),
            ("rate_hi", "upper end of the rate's interval"),
            ("impact_ratio", "rate / rate of the most-selected category of the table"),
            ("impact_ratio_lo", "lower end of the impact ratio's interval"),
            ("impact_ratio_hi", "upper end of the impact ratio's interval"),
            ("excluded_under_min_share", "yes: under the minimum share (2%), left out of the impact ratios"),
            ("flag", "certified_below / certified_above / undecided / excluded"),
        ],
    },
    "eeoc": {
        "title": "EEOC four-fifths rule",
        "rule": "29 CFR 1607.4(D): a selection rate below four-fifths of the highest group's rate is evidence of "
                "adverse impact; significance where numbers are small",
        "columns": [
            ("group_type", "the attribute or intersection"),
            ("group", "the group"),
            ("applicants", "number of applicants in the group"),
            ("selected", "number selected"),
            ("selection_rate", "selection rate"),
            ("selection_rate_lo", "lower end of its interval"),
            ("selection_rate_hi", "upper end of its interval"),
            ("highest_group", "the group with the highest selection rate in the table"),
            ("impact_ratio", "selection rate / highest group's selection rate"),
            ("impact_ratio_lo", "lower end of its interval"),
            ("impact_ratio_hi", "upper end of its interval"),
            ("below_four_fifths", "yes / no: the impact ratio's estimate against the threshold"),
            ("significant", "yes: certified below with the scan's guarantee; no: certified above; not established"),
        ],
    },
}


def template(name: str) -> dict:
    try:
        return TEMPLATES[name]
    except KeyError:
        raise FairauditError(f"unknown template {name!r}; choose one of: {', '.join(TEMPLATES)}") from None


def _num(x) -> str:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return ""
    return repr(float(x))


def rows(result, name: str) -> list[dict]:
    """The template's table: one dict per cell (in table order), keyed by the template's column names."""
    template(name)
    out = []
    for table in result.tables:
        kind = table.name
        ref = result.cell(table.reference) if table.reference else None
        for cell in table.cells:
            ratio = cell.impact_ratio
            values = [_num(ratio.estimate), _num(ratio.lo), _num(ratio.hi)] if ratio else ["", "", ""]
            if name == "ll144":
                out.append(dict(zip([c for c, _ in TEMPLATES[name]["columns"]],
                                    [kind, cell.name, cell.rows, cell.selected, _num(cell.rate.estimate),
                                     _num(cell.rate.lo), _num(cell.rate.hi), *values,
                                     "yes" if cell.flag == "excluded" else "no", cell.flag])))
            else:
                below = "" if ratio is None or math.isnan(ratio.estimate) else (
                    "yes" if ratio.estimate < result.threshold else "no")
                significant = {"certified_below": "yes", "certified_above": "no"}.get(
                    cell.flag, "excluded" if cell.flag == "excluded" else "not established")
                out.append(dict(zip([c for c, _ in TEMPLATES[name]["columns"]],
                                    [kind, cell.name, cell.rows, cell.selected, _num(cell.rate.estimate),
                                     _num(cell.rate.lo), _num(cell.rate.hi), ref.name if ref else "", *values,
                                     below, significant])))
        if name == "ll144":
            blank = dict.fromkeys([c for c, _ in TEMPLATES[name]["columns"]], "")
            out.append({**blank, "category_type": kind, "category": "Unknown", "applicants": table.unknown})
    return out


def preamble(result, name: str) -> list[str]:
    """The lines that say what the table is: the format, date, data source, rows, decision, mode and guarantee."""
    t = template(name)
    rate = "scoring rate (share above the full sample's median score)" if result.rate_kind == "scoring" \
        else "selection rate"
    excluded = ", ".join(c.id for c in result.excluded()) or "none"
    return [f"{SCAN_TABLE_MARK}: {t['title']} ({t['rule']})",
            f"date: {result.date}", f"data source: {result.data or ''} ({result.source or ''})",
            f"rows: {result.rows:,}", f"decision: {result.decision or ''}", f"rate: {rate}",
            f"mode: {result.mode} (Δ = {result.delta:g}; threshold {result.threshold:g}; minimum share "
            f"{result.min_share:g})",
            f"guarantee: {result.guarantee}", f"assumes: {result.assumption}",
            f"excluded from the impact ratios (under {100 * result.min_share:g}% of the rows): {excluded}"]


def to_csv(result, name: str) -> str:
    """The template's table as CSV text: the preamble (``# `` lines), the header, the rows."""
    buffer = io.StringIO()
    for line in preamble(result, name):
        buffer.write(line if line.startswith("#") else f"# {line}")
        buffer.write("\n")
    writer = csv.DictWriter(buffer, fieldnames=[c for c, _ in TEMPLATES[name]["columns"]], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(result, name))
    return buffer.getvalue()
