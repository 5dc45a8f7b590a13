"""A scan's regulatory report as a PDF: "NYC LL144 bias audit" or "EEOC four-fifths" (``fairaudit scan --pdf``).

    pdf = build_scan_pdf(result, template="ll144")      # bytes; result: a ScanResult (or its JSON)
    write_scan_pdf(result, "audit.pdf", template="eeoc")

One page (more when the tables are long): what was audited (the audit's date, data source, rows, decision, rate,
mode), the guarantee in one sentence and what it assumes, then one table per attribute and intersection with the
columns the rule names — categories, counts, the selection rate (a scoring model: the scoring rate, the share above
the full sample's median score) and the impact ratio, each with its interval — the individuals of unknown category
(LL144), the categories under the minimum share (left out of the ratios, still counted), and which cells are
certified below / above the threshold or undecided (with the rows a decision would need). The numbers are the
``ScanResult``'s; the titles, rules and column meanings are ``fairaudit.subgroups.regulatory``'s; the sentences
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


def facts(result: ScanResult, template: str) -> list[tuple[str, str]]:
    """The audit's date, data source, rows, decision, rate, mode and parameters, as (key, value) rows."""
    rate = (f"scoring rate: the share of a category whose score is above the median score of all "
            f"{result.rows:,} rows" if result.rate_kind == "scoring" else "selection rate: the share selected")
    rows = [("audit date", str(result.date or "")),
            ("data source", " · ".join(x for x in (result.data, result.source) if x) or "—"),
            ("rows", f"{result.rows:,}"),
            ("decision", result.decision or "—"),
            ("rate", rate),
            ("categories", ", ".join(result.attributes) + f" and their intersections up to depth {result.depth}"),
            ("mode", f"{result.mode} (every interval at once with probability at least {1 - result.delta:g}; "
                     f"threshold {result.threshold:g}; minimum share {100 * result.min_share:g}%)"
             if result.mode != "exact" else f"exact (threshold {result.threshold:g}; minimum share "
                                            f"{100 * result.min_share:g}%)"),
            ("rule", regulatory.template(template)["rule"])]
    return rows


def _flag_text(cell, result) -> str:
    text = FLAG_WORDS.get(cell.flag, cell.flag)
    if cell.flag == "undecided" and cell.more_rows:
        text += f" (~{cell.more_rows:,} more rows)" if cell.more_rows > 0 else " (beyond the projection)"
    if cell.is_reference:
        text += " · highest"
    return text


def _columns(result: ScanResult, template: str) -> list[tuple[str, float]]:
    """The header and relative width of each column of a table (the rule's columns, each number with its
    interval in the same cell so that nothing wraps)."""
    rate = rate_word(result)
    if template == "ll144":
        return [("category", 48), ("applicants", 22), ("selected", 19), (f"{rate} [interval]", 37),
                ("impact ratio [interval]", 37), ("flag", 44)]
    return [("group", 44), ("applicants", 22), ("selected", 19), (f"{rate} [interval]", 37),
            ("impact ratio [interval]", 37), ("below 4/5", 14), ("significant", 36)]


def _row(cell, result: ScanResult, template: str) -> list[tuple[str, tuple | None]]:
    colour = rgb(FLAG_COLOURS.get(cell.flag, "#222222"))
    ratio = with_interval(cell.impact_ratio) if cell.impact_ratio is not None else "excluded"
    first = [(cell.name, None), (f"{cell.rows:,}", None), (f"{cell.selected:,}", None),
             (with_interval(cell.rate), None), (ratio, None)]
    if template == "ll144":
        return first + [(_flag_text(cell, result), colour)]
    ratio_e = cell.impact_ratio
    below = "" if ratio_e is None or math.isnan(ratio_e.estimate) else (
        "yes" if ratio_e.estimate < result.threshold else "no")
    significant = {"certified_below": "yes", "certified_above": "no"}.get(
        cell.flag, "excluded" if cell.flag == "excluded" else "not established" + (
            f" (~{cell.more_rows:,} more rows)" if cell.more_rows and cell.more_rows > 0 else ""))
    if cell.is_reference:
        significant += " · highest"
    return first + [(below, None), (significant, colour)]


def _table(pdf: ReportPDF, result: ScanResult, table, template: str) -> None:
    columns = _columns(result, template)
    pdf.ensure(22 + 5 * min(len(table.cells), 4))
    pdf.heading(table.name, size=11, space=3)
    ref = result.cell(table.reference).name if table.reference else "none"
    pdf.para(f"{table.rows:,} rows of known category; most-selected category (the ratios' reference): {ref}.",
             size=8.5, colour=GREY)
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
        if template == "ll144":  # the individuals of unknown category: counted, in no rate
            r = grid.row()
            r.cell("Unknown", style=FontFace(color=GREY))
            r.cell(f"{table.unknown:,}")
            for _ in columns[2:]:
                r.cell("—", style=FontFace(color=GREY))
    excluded = [c.name for c in table.cells if c.flag == "excluded"]
    if excluded:
        pdf.ln(0.5)
        pdf.para(f"Excluded from the impact ratios (under {100 * result.min_share:g}% of the rows; counted and rated "
                 f"above): {', '.join(excluded)}.", size=8, colour=GREY)
    pdf.ln(1)


def _box(pdf: ReportPDF, head: str, text: str) -> None:
    """The guarantee: a shaded box, never a footnote."""
    pdf.set_font(SANS, "", 9.5)
    body = pdf.multi_cell(pdf.width - 8, 4.6, text, dry_run=True, output="HEIGHT", align="L")
    pdf.ensure(body + 12)
    y = pdf.get_y()
    pdf.set_fill_color(228, 233, 240)
    pdf.rect(pdf.l_margin, y, pdf.width, body + 10, style="F")
    pdf.set_xy(pdf.l_margin + 4, y + 2)
    pdf.set_font(SANS, "B", 9.5)
    pdf.cell(pdf.width - 8, 5, head, new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(pdf.l_margin + 4)
    pdf.set_font(SANS, "", 9.5)
    pdf.multi_cell(pdf.width - 8, 4.6, text, new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.set_fill_color(255, 255, 255)
    pdf.set_y(y + body + 12)


def summary_lines(result: ScanResult) -> list[str]:
    """Which categories are certified below / above the threshold, which are undecided (and how many more rows
    would decide them), which are excluded: the sentences under the tables (the dashboard shows the same)."""
    t = f"{result.threshold:g}"
    names = lambda cells: ", ".join(c.name if c.depth > 1 else f"{c.table[0]} = {c.name}" for c in cells)  # noqa: E731
    below, above, undecided = result.certified_below(), result.certified_above(), result.undecided()
    lines = [f"Certified below {t} (adverse impact, with the guarantee above): {names(below) or 'none'}.",
             f"Certified at or above {t}: {names(above) or 'none'}."]
    if undecided:
        lines.append(f"Undecided (the interval still contains {t}; more rows would decide): " + "; ".join(
            f"{c.name if c.depth > 1 else f'{c.table[0]} = {c.name}'} "
            + (f"(~{c.more_rows:,} more rows)" if c.more_rows and c.more_rows > 0 else "(beyond the projection)")
            for c in undecided) + ". Rows to decide are a projection that assumes the rates stay where they are.")
    return lines


def build_scan_pdf(result, template: str = "ll144", *, generated_at=None) -> bytes:
    """The regulatory report of a scan (``template``: "ll144" or "eeoc") as PDF bytes."""
    result = load_scan(result)
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
    pdf.para(f"{rate_word(result).capitalize()}s and impact ratios of every category and intersection · "
             f"audit of {result.date}", size=9.5, colour=GREY)
    pdf.ln(3)
    pdf.kv_table(facts(result, template), widths=(32, 148), size=8.5)
    pdf.ln(1)
    _box(pdf, "Guarantee", result.guarantee)
    pdf.para(f"What it assumes: {result.assumption}.", size=8.5, colour=GREY)
    pdf.ln(1)
    ratio = (f"The impact ratio is a category's {rate_word(result)} divided by that of the most-selected category "
             f"of its table (marked 'highest'); 'certified below' means the whole interval of the ratio is under "
             f"{result.threshold:g}, 'certified above' that it is at or over {result.threshold:g}, 'undecided' that "
             f"the interval still contains {result.threshold:g}.")
    pdf.para(ratio, size=8.5, colour=GREY)
    for table in result.tables:
        _table(pdf, result, table, template)
    pdf.heading("Findings", size=11, space=3)
    for line in summary_lines(result):
        pdf.para("• " + line, size=9, h=4.4)
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
