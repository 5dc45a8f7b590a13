"""The regulatory packs of a scan, as data: NYC Local Law 144's bias audit and the EEOC's four-fifths rule.

``TEMPLATES`` names each pack's title, the rule it follows and its columns (name, what it holds); ``rows(result,
template)`` gives the table as a list of dicts (one per cell, and for LL144 one "unknown" row per table) that the
CSV writer (``to_csv``), the PDF section and the dashboard all show; ``preamble(result, template, about)`` the lines
that say when, on what and with what guarantee; ``finding(result, template, about)`` the finding in a few lines
(page 1 of the PDF, the dashboard). ``About`` holds what only the auditor knows (historical or test data and why,
the tool's distribution date, the reason for leaving small categories out of the ratios).

NYC LL144 (6 RCNY §5-301/§5-302): for sex, race/ethnicity and every intersection, the number of individuals, the
selection rate (a scoring model: the scoring rate, the share above the full sample's median score) and the impact
ratio to the most-selected category; a category under 2 % of the data may be left out of the ratios (its count and
rate are still reported, with the reason); the number of individuals of unknown category; the audit's date, the
data's source and whether it is historical or test data (why, when test data), the tool's distribution date. LL144
sets no threshold: its pack states rates and ratios with their intervals, and no verdict.

EEOC (29 CFR 1607.4(D)): a selection rate below four-fifths of the highest group's is generally regarded as evidence
of adverse impact; smaller differences may count when statistically and practically significant, larger ones may
not when numbers are small. Its pack puts beside each ratio: whether the estimate is under 4/5, whether the scan's
interval is wholly under it ("certified below", with the scan's simultaneous guarantee), the two-sided Fisher exact
test against the most-selected group (``fisher_p``: per group, not adjusted for the number of groups) and the flip
count (``flips``: how many of the group's selections would have to change, the reference's counts held fixed, for
its ratio to cross 4/5 — a finding that one or two flips reverse is generally not regarded as practically
significant).

The CSV: the preamble as lines starting with ``# `` (the first one ``fairaudit.core.outputs.SCAN_TABLE_MARK``), then
the header and one line per row; ``pandas.read_csv(path, skiprows=<preamble lines>)`` reads it back.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from fractions import Fraction

from fairaudit.base.errors import FairauditError
from fairaudit.core.outputs import SCAN_TABLE_MARK

DATA_KINDS = ("historical", "test")
LL144_SMALL = 0.02  # 6 RCNY §5-301(d): a category under 2 % of the data may be left out of the impact ratios
PRACTICAL_FLIPS = 2  # a finding that this many flipped selections (or fewer) reverse is not practically significant


def default_exclusion_reason(min_share: float) -> str:
    return (f"fewer than {100 * min_share:g} % of the individuals assessed: too few for a stable impact ratio "
            "(6 RCNY §5-301(d) allows leaving such a category out of the impact-ratio calculation)")


@dataclass(frozen=True)
class About:
    """What the auditor states about the audit (LL144's summary fields the data cannot tell): ``data_kind``
    ("historical" or "test"; None: not stated), ``test_data_reason`` (why test data, and how it was made: required
    with test data), ``distribution_date`` (the tool's, as given), ``exclusion_reason`` (why the small categories
    are left out of the impact ratios; None: the default reason)."""

    data_kind: str | None = None
    test_data_reason: str | None = None
    distribution_date: str | None = None
    exclusion_reason: str | None = None

    def __post_init__(self):
        if self.data_kind is not None and self.data_kind not in DATA_KINDS:
            raise FairauditError(f"data kind must be one of: {', '.join(DATA_KINDS)}; got {self.data_kind!r}")
        if self.data_kind == "test" and not (self.test_data_reason or "").strip():
            raise FairauditError("test data: say why historical data was not used and how the test data was made "
                                 "(--test-data-reason TEXT), as 6 RCNY §5-302 asks")

    def data_line(self) -> str:
        if self.data_kind == "historical":
            return "historical data (the tool's decisions on real applicants)"
        if self.data_kind == "test":
            return f"test data — why: {self.test_data_reason.strip()}"
        return "not stated (historical or test data: give --data-kind historical|test)"


TEMPLATES = {
    "ll144": {
        "title": "NYC Local Law 144 bias audit",
        "rule": "6 RCNY §5-301/§5-302: selection (or scoring) rates and impact ratios for sex, race/ethnicity and "
                "their intersections, the number of individuals of unknown category; categories under 2% of the "
                "data may be left out of the impact ratios (their number and rate still reported, with the "
                "reason). LL144 sets no threshold: this pack reports rates and ratios, not a verdict",
        "columns": [
            ("category_type", "the attribute or intersection (sex; race; sex × race)"),
            ("category", "the category (Unknown: individuals of unknown category, counted only)"),
            ("applicants", "number of individuals in the category"),
            ("share", "the category's share of the individuals assessed"),
            ("selected", "number selected (scoring: above the median score)"),
            ("rate", "selection rate (scoring rate for a scoring model)"),
            ("rate_lo", "lower end of the rate's interval"),
            ("rate_hi", "upper end of the rate's interval"),
            ("impact_ratio", "rate / rate of the most-selected category of the table (that category: 1)"),
            ("impact_ratio_lo", "lower end of the impact ratio's interval"),
            ("impact_ratio_hi", "upper end of the impact ratio's interval"),
            ("most_selected", "yes: the most-selected category of the table (the ratios' reference)"),
            ("under_2_percent", "yes: under 2% of the individuals assessed"),
            ("excluded_under_min_share", "yes: left out of the impact ratios (see the reason in the preamble)"),
        ],
    },
    "eeoc": {
        "title": "EEOC four-fifths rule",
        "rule": "29 CFR 1607.4(D): a selection rate below four-fifths of the highest group's rate is generally "
                "regarded as evidence of adverse impact; smaller differences may count when statistically and "
                "practically significant, larger ones may not when numbers are small",
        "columns": [
            ("group_type", "the attribute or intersection"),
            ("group", "the group"),
            ("applicants", "number of applicants in the group"),
            ("selected", "number selected"),
            ("selection_rate", "selection rate"),
            ("selection_rate_lo", "lower end of its interval"),
            ("selection_rate_hi", "upper end of its interval"),
            ("highest_group", "the group with the highest selection rate in the table"),
            ("impact_ratio", "selection rate / highest group's selection rate (the highest group: 1)"),
            ("impact_ratio_lo", "lower end of its interval"),
            ("impact_ratio_hi", "upper end of its interval"),
            ("below_four_fifths", "yes / no: the impact ratio's estimate under the threshold (highest group: no)"),
            ("interval", "certified_below / certified_above (the whole interval under / at or over the threshold, "
                         "with the scan's simultaneous guarantee) / undecided / highest / excluded"),
            ("fisher_p", "statistical significance: two-sided Fisher exact test of the group's selections against "
                         "the highest group's (per group, not adjusted for the number of groups)"),
            ("flips", "practical significance: how many of the group's selections would have to change (the "
                      "highest group's counts held fixed) for its ratio to cross the threshold"),
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


# ------------------------------------------------------------------------------------------------ significance
def fisher_p(selected: int, rows: int, ref_selected: int, ref_rows: int) -> float:
    """Two-sided Fisher exact test of the 2×2 table [[selected, not], [reference selected, not]]
    (``scipy.stats.fisher_exact``); NaN when either group has no rows."""
    if rows <= 0 or ref_rows <= 0:
        return float("nan")
    from scipy.stats import fisher_exact

    table = [[int(selected), int(rows - selected)], [int(ref_selected), int(ref_rows - ref_selected)]]
    return float(fisher_exact(table, alternative="two-sided")[1])


def flips(selected: int, rows: int, ref_selected: int, ref_rows: int, threshold: float) -> int | None:
    """The flip count: how many of the group's decisions would have to change — non-selected to selected when its
    ratio is under ``threshold``, selected to non-selected when it is at or over — for its impact ratio
    ``(selected/rows) / (ref_selected/ref_rows)`` to cross ``threshold``, the reference's counts held fixed (exact
    arithmetic: 0.8 is 4/5). None without rows or with a reference rate of 0."""
    if rows <= 0 or ref_rows <= 0 or ref_selected <= 0:
        return None
    level = Fraction(str(threshold)) * Fraction(int(ref_selected), int(ref_rows)) * int(rows)  # selections at 4/5
    s = int(selected)
    if s < level:  # under: the fewest added selections to reach the level
        return int(math.ceil(level - s))
    return int(math.floor(s - level)) + 1  # at or over: the fewest removed to fall under it


def significance(result, cell) -> tuple[float, int | None]:
    """``(Fisher p, flips)`` of ``cell`` against its table's most-selected cell; (NaN, None) for that cell itself
    or a table without one."""
    if cell.reference is None or cell.is_reference:
        return float("nan"), None
    ref = result.cell(cell.reference)
    return (fisher_p(cell.selected, cell.rows, ref.selected, ref.rows),
            flips(cell.selected, cell.rows, ref.selected, ref.rows, result.threshold))


def p_text(p: float) -> str:
    if p is None or math.isnan(p):
        return "—"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


# ------------------------------------------------------------------------------------------------ the table
def rows(result, name: str) -> list[dict]:
    """The template's table: one dict per cell (in table order), keyed by the template's column names."""
    template(name)
    columns = [c for c, _ in TEMPLATES[name]["columns"]]
    out = []
    for table in result.tables:
        kind = table.name
        ref = result.cell(table.reference) if table.reference else None
        for cell in table.cells:
            ratio = cell.impact_ratio
            values = [_num(ratio.estimate), _num(ratio.lo), _num(ratio.hi)] if ratio else ["", "", ""]
            rate = [_num(cell.rate.estimate), _num(cell.rate.lo), _num(cell.rate.hi)]
            if name == "ll144":
                out.append(dict(zip(columns, [
                    kind, cell.name, cell.rows, _num(cell.share), cell.selected, *rate, *values,
                    "yes" if cell.is_reference else "no", "yes" if cell.share < LL144_SMALL else "no",
                    "yes" if cell.flag == "excluded" else "no"])))
            else:
                below = "" if ratio is None or math.isnan(ratio.estimate) else (
                    "yes" if ratio.estimate < result.threshold else "no")
                interval = "highest" if cell.is_reference else cell.flag
                p, flip = significance(result, cell)
                out.append(dict(zip(columns, [
                    kind, cell.name, cell.rows, cell.selected, *rate, ref.name if ref else "", *values, below,
                    interval, _num(p), "" if flip is None or cell.flag == "excluded" else flip])))
        if name == "ll144":
            blank = dict.fromkeys(columns, "")
            out.append({**blank, "category_type": kind, "category": "Unknown", "applicants": table.unknown})
    return out


def _named(cell) -> str:
    return cell.name if cell.depth > 1 else f"{cell.table[0]} = {cell.name}"


def _interval(e) -> str:
    if e is None:
        return "—"
    num = lambda x: "∞" if math.isinf(x) else f"{x:.3f}"  # noqa: E731
    if e.lo == e.hi:
        return num(e.estimate)
    return f"{num(e.estimate)} [{num(e.lo)}, {num(e.hi)}]"


def small_categories(result) -> list:
    """The cells under 2 % of the individuals assessed, or excluded from the ratios (a larger minimum share)."""
    return [c for t in result.tables for c in t.cells if c.share < LL144_SMALL or c.flag == "excluded"]


def preamble(result, name: str, about: About | None = None) -> list[str]:
    """The lines that say what the table is: the pack, date, data source and kind, rows, hash, decision, mode,
    guarantee, unknown counts and the small categories."""
    t = template(name)
    about = about or About()
    rate = "scoring rate (share above the full sample's median score)" if result.rate_kind == "scoring" \
        else "selection rate"
    excluded = result.excluded()
    level = (f"comparison level {result.threshold:g} (this scan's; LL144 sets none)" if name == "ll144"
             else f"threshold {result.threshold:g}")
    lines = [f"{SCAN_TABLE_MARK}: {t['title']} ({t['rule']})",
             f"audit date: {result.date}", f"data source: {source_line(result)}",
             f"data: {about.data_line()}"]
    if about.distribution_date:
        lines.append(f"distribution date of the tool: {about.distribution_date}")
    lines += [f"rows: {result.rows_line()}", f"data hash: {hash_line(result)}",
              f"decision: {result.decision or ''}", f"rate: {rate}",
              f"mode: {result.mode} (Δ = {result.delta:g}; {level}; minimum share {result.min_share:g})",
              f"guarantee: {result.guarantee}", f"assumes: {result.assumption}",
              "individuals of unknown category: " + "; ".join(f"{tb.name} {tb.unknown:,}" for tb in result.tables),
              f"excluded from the impact ratios (under {100 * result.min_share:g}% of the rows): "
              + (", ".join(c.id for c in excluded) or "none")]
    if excluded:
        lines.append(f"reason for the exclusion: {about.exclusion_reason or default_exclusion_reason(result.min_share)}")
    return lines


def source_line(result) -> str:
    parts = [x for x in dict.fromkeys((result.data, result.source)) if x]
    return " · ".join(parts) or "—"


def hash_line(result) -> str:
    if not result.data_hash:
        return "not recorded"
    return f"SHA-256 {result.data_hash}" + (f" (of {result.hash_of})" if result.hash_of else "")


def to_csv(result, name: str, about: About | None = None) -> str:
    """The template's table as CSV text: the preamble (``# `` lines), the header, the rows."""
    buffer = io.StringIO()
    for line in preamble(result, name, about):
        buffer.write(line if line.startswith("#") else f"# {line}")
        buffer.write("\n")
    writer = csv.DictWriter(buffer, fieldnames=[c for c, _ in TEMPLATES[name]["columns"]], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(result, name))
    return buffer.getvalue()


# ------------------------------------------------------------------------------------------------ the finding
def _listed(cells, say, most: int) -> str:
    shown = "; ".join(say(c) for c in cells[:most])
    more = len(cells) - most
    return shown + (f"; and {more} more (in the tables)" if more > 0 else "")


def finding(result, name: str, about: About | None = None, most: int = 6) -> tuple[str, list[str]]:
    """The finding in one box: ``(heading, lines)`` — which categories are certified below the threshold (with
    their intervals; EEOC: with Fisher's p and the flip count), which are undecided, the most-selected category of
    each table, the small and unknown ones. The LL144 pack's words carry no verdict (LL144 sets no threshold)."""
    template(name)
    about = about or About()
    t = f"{result.threshold:g}"
    below, undecided = result.certified_below(), result.undecided()
    refs = [result.cell(tb.reference) for tb in result.tables if tb.reference]
    ll144 = name == "ll144"

    def ratio(c) -> str:
        text = f"{_named(c)} {_interval(c.impact_ratio)}"
        if not ll144:
            p, flip = significance(result, c)
            text += f" (Fisher p {p_text(p)}" + (f", {flip} flip{'s' if flip != 1 else ''}" if flip is not None
                                                 else "") + ")"
        return text

    lines = []
    if ll144:
        head = (f"Finding: {'scoring' if result.rate_kind == 'scoring' else 'selection'} rates and impact ratios "
                "(LL144 sets no threshold; the level below is this scan's)")
        lines.append(f"Impact ratio certified below {t} (its whole interval under {t}): "
                     + (_listed(below, ratio, most) if below else "none") + ".")
        lines.append(f"Undecided (the interval still contains {t}): "
                     + (_listed(undecided, ratio, most) if undecided else "none") + ".")
        lowest = []
        for tb in result.tables:
            rated = [c for c in tb.cells if c.impact_ratio is not None and not c.is_reference
                     and not math.isnan(c.impact_ratio.estimate)]
            if rated:
                c = min(rated, key=lambda c: c.impact_ratio.estimate)
                lowest.append(f"{tb.name}: {c.name} {_interval(c.impact_ratio)}")
        if lowest:
            lines.append("Lowest impact ratio per table: " + "; ".join(lowest) + ".")
    else:
        head = f"Finding under the four-fifths rule (threshold {t}, 29 CFR 1607.4(D))"
        lines.append(f"Certified below {t} (the whole interval of the impact ratio under {t}, with the guarantee "
                     "below): " + (_listed(below, ratio, most) if below else "none") + ".")
        lines.append(f"Undecided (the interval still contains {t}): "
                     + (_listed(undecided, ratio, most) if undecided else "none") + ".")
        estimate_below = [c for c in result.cells if c.impact_ratio is not None and c.flag == "undecided"
                          and c.impact_ratio.estimate < result.threshold]
        if estimate_below:
            lines.append(f"Of the undecided, estimated under {t} but not established by the interval: "
                         + ", ".join(_named(c) for c in estimate_below[:most])
                         + (" …" if len(estimate_below) > most else "") + ".")
        above = [c for c in result.certified_above() if not c.is_reference]
        lines.append(f"Certified at or above {t}: {len(above)} categor{'y' if len(above) == 1 else 'ies'}.")
    lines.append("Most-selected category of each table (impact ratio 1 by definition): "
                 + ("; ".join(f"{c.table and ' × '.join(c.table)}: {c.name}" for c in refs) or "none") + ".")
    small = small_categories(result)
    if small:
        excluded = [c for c in small if c.flag == "excluded"]
        text = "Under 2 % of the data: " + "; ".join(
            f"{_named(c)} ({c.rows:,} individuals, rate {c.rate.estimate:.3f}"
            f"{', left out of the impact ratios' if c.flag == 'excluded' else ''})" for c in small[:most])
        text += f"; and {len(small) - most} more" if len(small) > most else ""
        if excluded:
            text += f". Reason for leaving them out: {about.exclusion_reason or default_exclusion_reason(result.min_share)}"
        lines.append(text + ".")
    lines.append("Individuals of unknown category: "
                 + "; ".join(f"{tb.name} {tb.unknown:,}" for tb in result.tables) + ".")
    return head, lines
