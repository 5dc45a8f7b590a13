"""The regulatory packs of a scan, as data: NYC Local Law 144's bias audit and the EEOC's four-fifths rule.

``TEMPLATES`` names each pack's title, the rule it follows and its columns (name, what it holds); ``rows(result,
template)`` gives the table as a list of dicts (one per cell, and for LL144 one "unknown" row per table) that the
CSV writer (``to_csv``), the PDF section and the dashboard all show; ``preamble(result, template, about)`` the lines
that say when, on what and with what guarantee; ``finding(result, template, about)`` the finding in a few lines
(page 1 of the PDF, the dashboard), each category named as a sentence names it ("sex = Female and race = Black",
``wording.cell_words``). ``About`` holds what only the auditor knows (historical or test data and why,
the tool's distribution date, the reason for leaving small categories out of the ratios).

NYC LL144 (6 RCNY §5-301/§5-302): for sex, race/ethnicity and every intersection, the number of individuals, the
selection rate (a scoring model: the scoring rate, the share above the full sample's median score) and the impact
ratio to the most-selected category; a category under 2 % of the data may be left out of the ratios (its count and
rate are still reported, with the reason); the number of individuals of unknown category; the audit's date, the
data's source and whether it is historical or test data (why, when test data), the tool's distribution date. LL144
sets no threshold: its pack states rates and ratios with their intervals — per table the ratios lowest first, the
reference, the small and the unknown categories — with no comparison level and no verdict.

EEOC (29 CFR 1607.4(D)): a selection rate below four-fifths of the highest group's is generally regarded as evidence
of adverse impact; smaller differences may count when statistically and practically significant, larger ones may
not when numbers are small. Its pack puts beside each ratio: whether the estimate is under 4/5, whether the scan's
interval is wholly under it ("certified below", with the scan's simultaneous guarantee), the two-sided Fisher exact
test against the most-selected group (``fisher_p``: per group, not adjusted for the number of groups) and the flip
count (``flips``: how many of the group's selections would have to change, the reference's counts held fixed, for
its ratio to cross 4/5 — a finding that one or two flips reverse is generally not regarded as practically
significant). Its finding leads with the categories whose estimate is under 4/5 (each with its interval, Fisher's p,
the flips and what the interval says), then those the interval certifies below, then the undecided ones, and says
what each of these establishes.

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
from fairaudit.base.numbers import count
from fairaudit.core.outputs import SCAN_TABLE_MARK
from fairaudit.subgroups.wording import cell_words

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
    """The cell as a sentence names it (``wording.cell_words``)."""
    return cell_words(cell)


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
    level = "" if name == "ll144" else f"; threshold {result.threshold:g}"  # LL144 sets none: no level named
    lines = [f"{SCAN_TABLE_MARK}: {t['title']} ({t['rule']})",
             f"audit date: {result.date}", f"data source: {source_line(result)}",
             f"data: {about.data_line()}"]
    if about.distribution_date:
        lines.append(f"distribution date of the tool: {about.distribution_date}")
    lines += [f"rows: {result.rows_line()}", f"data hash: {hash_line(result)}",
              f"decision: {result.decision or ''}", f"rate: {rate}",
              f"mode: {result.mode} (Δ = {result.delta:g}{level}; minimum share {result.min_share:g})",
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
def sentence(text: str) -> str:
    """``text`` with one full stop at its end (none added after a stop, an ellipsis, "!" or "?")."""
    text = text.rstrip()
    return text if text.endswith((".", "…", "!", "?")) else text + "."


def _listed(cells, say, most: int, where: str = "in the tables") -> str:
    """The first ``most`` of ``cells`` said with ``say``, joined with "; ", then "and N more (in the tables)"; no
    stop at its end (``sentence`` adds one)."""
    shown = "; ".join(say(c) for c in cells[:most])
    more = len(cells) - most
    return shown + (f"; and {more} more ({where})" if more > 0 else "")


def _categories(n: int) -> str:
    return f"{n:,} categor{'y' if n == 1 else 'ies'}"


def _by_ratio(cells) -> list:
    return sorted(cells, key=lambda c: (c.impact_ratio.estimate, c.impact_ratio.hi, c.rank))


def _rated(cells) -> list:
    """The cells with an impact ratio of their own (not the reference, not excluded, not NaN)."""
    return [c for c in cells if c.impact_ratio is not None and not c.is_reference
            and not math.isnan(c.impact_ratio.estimate)]


INTERVAL_WORDS = {"certified_below": "interval: certified below {t}",
                  "certified_above": "interval: certified at or above {t}",
                  "undecided": "interval: undecided, it contains {t}"}


def finding(result, name: str, about: About | None = None, most: int = 6) -> tuple[str, list[str]]:
    """The finding in one box: ``(heading, lines)``, every category named as a sentence names it (``cell_words``).

    EEOC: first the categories whose impact-ratio estimate is under the threshold (the Guidelines' rule of thumb),
    lowest first, each with its interval, Fisher's p, the flip count and whether the interval certifies it below;
    then those certified below; then the undecided ones; then what each of these establishes. LL144: per table the
    impact ratios, lowest first, with their intervals, the reference, the categories under 2 % and the unknown
    count — no comparison level and no verdict (LL144 sets no threshold). Both: the reason for leaving small
    categories out of the ratios when some are."""
    template(name)
    about = about or About()
    if name == "ll144":
        head, lines = _ll144_finding(result, most)
    else:
        head, lines = _eeoc_finding(result, most)
    excluded = result.excluded()
    if excluded:
        lines.append(sentence("Reason for leaving the categories under "
                              f"{100 * result.min_share:g} % out of the impact ratios: "
                              + (about.exclusion_reason or default_exclusion_reason(result.min_share))))
    return head, [sentence(line) for line in lines]


def _small(result, cells, most: int) -> str:
    return _listed(cells, lambda c: f"{cell_words(c)} ({c.rows:,} individuals, rate {c.rate.estimate:.3f}"
                   f"{', left out of the impact ratios' if c.flag == 'excluded' else ''})", most)


def _ll144_finding(result, most: int) -> tuple[str, list[str]]:
    rate = "scoring" if result.rate_kind == "scoring" else "selection"
    head = f"Finding: {rate} rates and impact ratios per category (6 RCNY §5-301)"
    lines = []
    for tb in result.tables:
        ref = result.cell(tb.reference) if tb.reference else None
        rated = _by_ratio(_rated(tb.cells))
        text = f"{tb.name} — impact ratios, lowest first: " + (
            _listed(rated, lambda c: f"{cell_words(c)} {_interval(c.impact_ratio)}", most, "in the table")
            if rated else "none")
        text += (f". Reference (the most-selected category, impact ratio 1): {cell_words(ref)}, {rate} rate "
                 f"{_interval(ref.rate)}" if ref else ". No reference (no category with a rate)")
        lines.append(text)
    small = small_categories(result)
    lines.append("Under 2 % of the data: " + (_small(result, small, most) if small else "none"))
    lines.append("Individuals of unknown category: "
                 + "; ".join(f"{tb.name} {tb.unknown:,}" for tb in result.tables))
    return head, lines


def _eeoc_finding(result, most: int) -> tuple[str, list[str]]:
    t = f"{result.threshold:g}"
    rule = "4/5" if abs(result.threshold - 0.8) < 1e-12 else f"the threshold {t}"
    head = f"Finding under the four-fifths rule (29 CFR 1607.4(D)), threshold {t}"

    def detailed(c) -> str:
        p, flip = significance(result, c)
        where = INTERVAL_WORDS.get(c.flag, c.flag).format(t=t)
        text = f"{cell_words(c)} {_interval(c.impact_ratio)} ({where}; Fisher p {p_text(p)}"
        return text + (f"; {count(flip, 'flips')})" if flip is not None else ")")

    def short(c) -> str:
        return f"{cell_words(c)} {_interval(c.impact_ratio)}"

    rated = _rated(result.cells)
    estimate_below = _by_ratio([c for c in rated if c.impact_ratio.estimate < result.threshold])
    below = _by_ratio(result.certified_below())
    undecided = _by_ratio([c for c in result.undecided() if c.impact_ratio is not None])
    lines = [f"Impact ratio estimated below {rule} ({t}) — evidence of adverse impact under the Guidelines' rule of "
             f"thumb: " + (f"{_categories(len(estimate_below))}, lowest first: "
                           + _listed(estimate_below, detailed, most) if estimate_below else "none"),
             f"Certified below {t} by the interval (its whole interval under {t}, with the guarantee below): "
             + (_listed(below, short, most) if below else "none"),
             f"Undecided (the interval still contains {t}): " + (_listed(undecided, short, most) if undecided
                                                                  else "none"),
             f"What each establishes: the estimate under {rule} is the Guidelines' rule of thumb; the interval is this "
             "tool's guarantee (all intervals at once); Fisher p is statistical significance (two-sided, per "
             "category against the most-selected one, not adjusted; under 0.05: significant); flips is practical "
             f"significance (how many selections would have to change for the ratio to cross {t}; "
             f"{PRACTICAL_FLIPS} or fewer: generally not practically significant)"]
    above = [c for c in result.certified_above() if not c.is_reference]
    lines.append(f"Certified at or above {t}: {_categories(len(above))}")
    refs = [result.cell(tb.reference) for tb in result.tables if tb.reference]
    lines.append("Most-selected category of each table (impact ratio 1 by definition): "
                 + ("; ".join(cell_words(c) for c in refs) or "none"))
    small = small_categories(result)
    if small:
        lines.append("Under 2 % of the data: " + _small(result, small, most))
    lines.append("Individuals of unknown category: "
                 + "; ".join(f"{tb.name} {tb.unknown:,}" for tb in result.tables))
    return head, lines
