"""A scan's regulatory report as a PDF: "NYC LL144 bias audit" or "EEOC four-fifths" (``fairaudit scan --pdf``).

    pdf = build_scan_pdf(result, template="ll144")      # bytes; result: a ScanResult (or its JSON)
    write_scan_pdf(result, "audit.pdf", template="eeoc")

Page 1: under the title, what was audited and when ("audit of hiring.csv · 7 December 2026"); the finding in one box
(``regulatory.finding``: LL144, per table the impact ratios lowest first with their intervals, the reference, the
small and unknown categories, no comparison level; EEOC, the categories estimated under 4/5 with their intervals,
Fisher's p, the flips and what the interval says, then those certified below, then the undecided), then what was audited
(the audit's date, the data's source and kind, the tool's distribution date, which rows with the data's hash, the
decision, rate and mode) and the guarantee in one sentence; then one table per attribute and intersection with the
columns the rule names — categories, counts, the selection rate (a scoring model: the scoring rate) and the impact
ratio, each with its interval — the individuals of unknown category, the categories under 2 % (left out of the
ratios with the stated reason, still counted). The LL144 pack has no pass/fail words or colours (LL144 sets no
threshold); the EEOC pack's table marks the four-fifths comparison beside the significance. The numbers are the
``ScanResult``'s; the titles, rules, columns and the finding are ``fairaudit.subgroups.regulatory``'s; the sentences
``fairaudit.subgroups.wording``'s. Layout helpers: ``fairaudit.report.pdf.ReportPDF``.
"""
from __future__ import annotations

import datetime as _dt
import math

from fpdf.fonts import FontFace

from fairaudit.base.errors import FairauditError
from fairaudit.core.outputs import REPORT_CREATOR
from fairaudit.report.pdf import GREY, INK, SANS, ReportPDF, rgb
from fairaudit.subgroups import regulatory
from fairaudit.subgroups.result import ScanResult
from fairaudit.subgroups.wording import cell_words, simultaneous_note
from fairaudit.viz.palette import SCAN_FLAGS

__all__ = ["build_scan_pdf", "write_scan_pdf", "load_scan", "FLAG_WORDS", "FLAG_COLOURS"]

#: a cell's flag -> what the table says, and its colour (as the dashboard's heatmap: ``viz.palette.SCAN_FLAGS``)
FLAG_WORDS = {flag: word for flag, (word, _) in SCAN_FLAGS.items()}
FLAG_COLOURS = {flag: colour for flag, (_, colour) in SCAN_FLAGS.items()}


def load_scan(source) -> ScanResult:
    """A ``ScanResult`` from a result, its JSON text or dict; ``FairauditError`` (one line) when it is not one."""
    if isinstance(source, ScanResult):
        return source
    try:
        return ScanResult.from_json(source)
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise FairauditError(f"not a scan result (the JSON of `fairaudit scan --json`): {err}") from None


def number(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.{digits}f}"


def with_interval(e, digits: int = 3) -> str:
    """``0.058 [0.035, 0.088]``; exact mode (no interval): the number and its fraction."""
    if e is None:
        return "—"
    if e.lo == e.hi or e.exact is not None:
        return number(e.estimate, digits) + (f" (= {e.exact})" if e.exact else "")
    return f"{number(e.estimate, digits)} [{number(e.lo, digits)}, {number(e.hi, digits)}]"


def rate_word(result: ScanResult) -> str:
    return "scoring rate" if result.rate_kind == "scoring" else "selection rate"


def facts(result: ScanResult, template: str, about: regulatory.About | None = None) -> list[tuple[str, str]]:
    """The audit's date, data source and kind, distribution date, rows, hash, decision, rate, mode, as (key, value)
    rows."""
    about = about or regulatory.About()
    rate = (f"scoring rate: the share of a category whose score is above the median score of all "
            f"{result.rows:,} rows" if result.rate_kind == "scoring" else "selection rate: the share selected")
    level = "" if template == "ll144" else f"; threshold {result.threshold:g}"  # LL144 sets none: no level named
    when = date_words(result.date)
    rows = [("audit date", f"{when} ({result.date})" if when != str(result.date or "") else when),
            ("data source", regulatory.source_line(result)),
            ("historical or test", about.data_line())]
    if about.distribution_date:
        rows.append(("tool distributed", about.distribution_date))
    rows += [("rows", result.rows_line()),
             ("data hash", regulatory.hash_line(result)),
             ("decision", result.decision or "—"),
             ("rate", rate),
             ("categories", ", ".join(result.attributes) + f" and their intersections up to depth {result.depth}"),
             ("mode", f"{result.mode} (every interval at once with probability at least {1 - result.delta:g}"
                      f"{level}; minimum share {100 * result.min_share:g}%)"
              if result.mode != "exact" else f"exact (no interval{level}; minimum share {100 * result.min_share:g}%)"),
             ("rule", regulatory.template(template)["rule"])]
    return rows


def date_words(date) -> str:
    """An ISO date or timestamp as a reader writes the day: "2026-12-07T04:13:16+00:00" → "7 December 2026"; text
    that is not one: as it is."""
    text = str(date or "")
    try:
        day = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    return f"{day.day} {day.strftime('%B')} {day.year}"


def data_name(result: ScanResult) -> str:
    """What was audited, by name: the file's name ("hiring.csv"), else the dataset's."""
    import os

    if result.source and result.source != "built-in":
        return os.path.basename(str(result.source))
    return result.data or "the data"


def subtitle(result: ScanResult) -> str:
    """Page 1's line under the title: "Selection rates and impact ratios … · audit of hiring.csv · 7 December 2026"."""
    when = date_words(result.date)
    return (f"{rate_word(result).capitalize()}s and impact ratios of every category and intersection · audit of "
            f"{data_name(result)}" + (f" · {when}" if when else ""))


def _flag_text(cell, result) -> str:
    if cell.is_reference:
        return "highest (ratio 1)"
    text = FLAG_WORDS.get(cell.flag, cell.flag)
    if cell.flag == "undecided" and cell.more_rows:
        text += f" (~{cell.more_rows:,} more rows)" if cell.more_rows > 0 else " (beyond the projection)"
    return text


def _ll144_note(cell, result) -> str:
    """The LL144 table's last column: which category is the reference, which are left out — no verdict."""
    if cell.is_reference:
        return "most-selected (ratio 1)"
    if cell.flag == "excluded":
        return f"under {100 * result.min_share:g}%: left out of the ratios"
    return "under 2%" if cell.share < regulatory.LL144_SMALL else ""


def _columns(result: ScanResult, template: str) -> list[tuple[str, float]]:
    """The header and relative width of each column of a table (the rule's columns, each number with its
    interval in the same cell so that nothing wraps)."""
    rate = rate_word(result)
    if template == "ll144":
        return [("category", 40), ("applicants", 19), ("share", 13), ("selected", 16), (f"{rate} [interval]", 35),
                ("impact ratio [interval]", 35), ("note", 42)]
    return [("group", 33), ("applicants", 20), ("selected", 16), (f"{rate} [interval]", 33),
            ("impact ratio [interval]", 33), ("below 4/5", 13), ("interval vs 4/5", 28), ("Fisher p", 15),
            ("flips", 10)]


def _row(cell, result: ScanResult, template: str) -> list[tuple[str, tuple | None]]:
    ratio = with_interval(cell.impact_ratio) if cell.impact_ratio is not None else "excluded"
    if template == "ll144":
        return [(cell.name, None), (f"{cell.rows:,}", None), (f"{100 * cell.share:.1f}%", None),
                (f"{cell.selected:,}", None), (with_interval(cell.rate), None), (ratio, None),
                (_ll144_note(cell, result), None)]
    colour = None if cell.is_reference else rgb(FLAG_COLOURS.get(cell.flag, "#222222"))
    first = [(cell.name, None), (f"{cell.rows:,}", None), (f"{cell.selected:,}", None),
             (with_interval(cell.rate), None), (ratio, None)]
    ratio_e = cell.impact_ratio
    below = "" if ratio_e is None or math.isnan(ratio_e.estimate) else (
        "yes" if ratio_e.estimate < result.threshold else "no")
    p, flip = regulatory.significance(result, cell)
    return first + [(below, None), (_flag_text(cell, result), colour), (regulatory.p_text(p), None),
                    ("—" if flip is None or cell.flag == "excluded" else f"{flip:,}", None)]


def _table(pdf: ReportPDF, result: ScanResult, table, template: str, about) -> None:
    columns = _columns(result, template)
    pdf.ensure(22 + 5 * min(len(table.cells), 4))
    pdf.heading(table.name, size=11, space=3)
    ref = cell_words(result.cell(table.reference)) if table.reference else "none"
    pdf.para(f"{table.rows:,} individuals of known category, {table.unknown:,} of unknown category; most-selected "
             f"category (the ratios' reference, ratio 1): {ref}.", size=8.5, colour=GREY)
    pdf.ln(1)
    pdf.set_font(SANS, "", 7.2)
    with pdf.grid([w for _, w in columns], line_height=3.4, padding=(0.7, 1.0)) as grid:
        r = grid.row()
        for head, _ in columns:
            r.cell(head)
        for cell in table.cells:
            r = grid.row()
            for text, colour in _row(cell, result, template):
                r.cell(text, style=FontFace(color=colour, emphasis="BOLD") if colour else None)
        r = grid.row()  # the individuals of unknown category: counted, in no rate
        r.cell("Unknown", style=FontFace(color=GREY))
        r.cell(f"{table.unknown:,}")
        for _ in columns[2:]:
            r.cell("—", style=FontFace(color=GREY))
    excluded = [c for c in table.cells if c.flag == "excluded"]
    if excluded:
        pdf.ln(0.5)
        reason = about.exclusion_reason or regulatory.default_exclusion_reason(result.min_share)
        pdf.para(f"Left out of the impact ratios (under {100 * result.min_share:g}% of the rows; their number and "
                 f"rate are above): {'; '.join(cell_words(c) for c in excluded)}. Reason: {regulatory.sentence(reason)}",
                 size=8, colour=GREY)
    pdf.ln(1)


def _box(pdf: ReportPDF, head: str, text: str | list[str], fill=(228, 233, 240), size: float = 9.5) -> None:
    """A shaded box (the guarantee, the finding), never a footnote; ``text``: a paragraph or a list of bullets."""
    items = [text] if isinstance(text, str) else ["• " + line for line in text]
    h = size * 0.49
    pdf.set_font(SANS, "", size)
    body = sum(pdf.multi_cell(pdf.width - 8, h, item, dry_run=True, output="HEIGHT", align="L") + 0.8
               for item in items)
    pdf.ensure(body + 12)
    y = pdf.get_y()
    pdf.set_fill_color(*fill)
    pdf.rect(pdf.l_margin, y, pdf.width, body + 10, style="F")
    pdf.set_xy(pdf.l_margin + 4, y + 2)
    pdf.set_font(SANS, "B", size)
    pdf.cell(pdf.width - 8, 5, head, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font(SANS, "", size)
    for item in items:
        pdf.set_x(pdf.l_margin + 4)
        pdf.multi_cell(pdf.width - 8, h, item, new_x="LMARGIN", new_y="NEXT", align="L")
        pdf.ln(0.8)
    pdf.set_fill_color(255, 255, 255)
    pdf.set_y(y + body + 12)


def summary_lines(result: ScanResult, template: str = "eeoc") -> list[str]:
    """The finding's lines (``regulatory.finding``): the sentences under the tables and on the dashboard."""
    return regulatory.finding(result, template)[1]


def build_scan_pdf(result, template: str = "ll144", *, about: regulatory.About | None = None,
                   generated_at=None) -> bytes:
    """The regulatory pack of a scan (``template``: "ll144" or "eeoc") as PDF bytes; ``about``: what the auditor
    states (historical or test data, the tool's distribution date, the reason for the exclusions)."""
    result = load_scan(result)
    about = about or regulatory.About()
    spec = regulatory.template(template)
    moment = generated_at or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    title = spec["title"] + (" (scoring rate)" if result.rate_kind == "scoring" else "")
    footer = f"fairaudit scan · {spec['title']} · generated {moment.strftime('%Y-%m-%d %H:%M')}"
    pdf = ReportPDF(footer, title)
    pdf.set_title(title)
    pdf.set_author("fairaudit")
    pdf.set_subject(f"Subgroup scan: {', '.join(result.attributes)}")
    pdf.set_creator(REPORT_CREATOR)
    pdf.set_creation_date(moment)
    pdf.add_page()
    pdf.set_font(SANS, "B", 18)
    pdf.multi_cell(0, 8, title, new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.para(subtitle(result), size=9.5, colour=GREY)
    pdf.ln(2)
    head, lines = regulatory.finding(result, template, about)
    _box(pdf, head, lines, fill=(245, 240, 228), size=9)
    pdf.ln(1)
    pdf.kv_table(facts(result, template, about), widths=(32, 148), size=8.2)
    pdf.ln(1)
    _box(pdf, "Guarantee", result.guarantee)
    pdf.para(f"What it assumes: {result.assumption}.", size=8.5, colour=GREY)
    pdf.ln(1)
    if template == "ll144":
        ratio = (f"The impact ratio is a category's {rate_word(result)} divided by that of the most-selected "
                 "category of its table (whose ratio is therefore exactly 1). Each interval holds with the guarantee "
                 "above. LL144 sets no threshold: this report states rates and ratios, with no verdict.")
    else:
        ratio = (f"The impact ratio is a group's {rate_word(result)} divided by that of the highest group of its "
                 f"table (ratio 1). 'below 4/5': the estimate is under {result.threshold:g}; 'certified below' means "
                 f"the whole interval of the ratio is under {result.threshold:g}, 'certified above' that it is at or "
                 f"over {result.threshold:g}, 'undecided' that the interval still contains it (all with the "
                 "guarantee above). Statistical significance: 'Fisher p' is the two-sided Fisher exact test of the "
                 "group's selections against the highest group's (per group, not adjusted for the number of groups). "
                 "Practical significance: 'flips' is how many of the group's selections would have to change (the "
                 f"highest group's counts held fixed) for its ratio to cross {result.threshold:g}; a finding that "
                 f"{regulatory.PRACTICAL_FLIPS} or fewer flips reverse is generally not regarded as practically "
                 "significant.")
    note = simultaneous_note(len(result.cells), result.mode)
    pdf.para(ratio + (f" {note}" if note else ""), size=8.5, colour=GREY)
    for table in result.tables:
        _table(pdf, result, table, template, about)
    for warning in result.warnings:
        pdf.para("Warning: " + warning, size=9, style="B", h=4.4)
    pdf.heading("Columns of the CSV table (here each number and its interval share a column)", size=11, space=3)
    for name, meaning in spec["columns"]:
        pdf.set_font(SANS, "B", 8)
        pdf.write(3.9, f"{name}: ")
        pdf.set_font(SANS, "", 8)
        pdf.set_text_color(*GREY)
        pdf.write(3.9, meaning)
        pdf.set_text_color(*INK)
        pdf.ln(3.9)
    pdf.ln(1)
    pdf.para("The same table as CSV: fairaudit scan ... --csv TABLE.csv --template " + template
             + "; the whole result: --json RESULT.json.", size=8, colour=GREY)
    return bytes(pdf.output())


def write_scan_pdf(result, path, template: str = "ll144", *, inputs=(), force: bool = False, **kw):
    """Build the scan's PDF and write it to ``path`` (checked first as the CLI's outputs are: never onto an input,
    an existing file only when it is a fairaudit PDF, or with ``force``)."""
    from fairaudit.core.outputs import check_output, write_atomically

    path = check_output(path, "pdf", inputs=inputs, force=force, what="report")
    return write_atomically(path, build_scan_pdf(result, template, **kw), what="report")
