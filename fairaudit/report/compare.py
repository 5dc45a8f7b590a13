"""A comparison of models as a PDF (``fairaudit compare --pdf``, the dashboard's Compare page).

    pdf = build_compare_pdf(result)       # bytes; result: a fairaudit.comparison.CompareResult

Page 1: the title, the headline (the strongest claim the comparison supports) in a box coloured by whether it is
decided, the guarantee (what every interval and difference verdict is worth and what it assumes) in a shaded box,
what was compared (data, rows, engine and its parameters), the models (each one's colour in the charts, its
description and content hash, or its decision expression) and the specification. Then the per-node table (each
model's value and interval, each pair's difference and its verdict), the sentences of the spec's comparisons and of
every decided difference, the warnings, and the charts of ``fairaudit.viz.compare``: every node's final interval per
model, and for each comparison of the specification the models' intervals over the rows read and the difference
against 0. The numbers and sentences are the ``CompareResult``'s (``fairaudit.comparison.wording``); the layout helpers
``fairaudit.report.pdf.ReportPDF``'s.
"""
from __future__ import annotations

import datetime as _dt

from fpdf.fonts import FontFace

from fairaudit.comparison.wording import facts
from fairaudit.core.outputs import REPORT_CREATOR
from fairaudit.report import charts
from fairaudit.report.pdf import GREY, INK, MONO, SANS, ReportPDF, rgb
from fairaudit.viz.palette import VERDICTS, model_colours

__all__ = ["build_compare_pdf", "comparison_section", "facts", "model_rows", "sentences"]

TITLE = "Model comparison"
DECIDED_FILL = (222, 235, 247)   # the headline box when a difference is certified
UNDECIDED_FILL = (253, 240, 214)  # ... when nothing is established yet
GUARANTEE_FILL = (228, 233, 240)
def model_rows(result) -> list[tuple[str, str, str]]:
    """Per model: its name, what it is (description or decision expression) and its content hash ("—" for logged
    decisions)."""
    out = []
    for m in result.models:
        prov = (m.get("provenance") or {}).get("model") or {}
        what = m.get("model") or f"logged decisions: pred = {m.get('pred')}"
        out.append((m["name"], what, prov.get("content_hash") or "—"))
    return out


def sentences(result) -> list[str]:
    """The sentences a signer reads: every comparison of the specification between every pair (decided or not),
    then every other decided difference; each node in words, each model by its phrase
    (``fairaudit.comparison.wording``)."""
    cmps = [d for d in result.questions() if d.kind == "cmp" and d.pairing != "same"]
    others = [d for d in result.questions() if d.kind != "cmp" and d.verdict in ("a_lower", "b_lower")]
    seen, out = set(), []
    for d in cmps + others:
        text = result.sentence(d)
        if text not in seen:  # a term that appears twice in the tree is said once
            seen.add(text)
            out.append(text)
    return out


def _box(pdf: ReportPDF, head: str, text: str, fill, size: float = 9.5, bold_text: bool = False) -> None:
    pdf.set_font(SANS, "B" if bold_text else "", size)
    body = pdf.multi_cell(pdf.width - 8, size * 0.5, text, dry_run=True, output="HEIGHT", align="L")
    pdf.ensure(body + 12)
    y = pdf.get_y()
    pdf.set_fill_color(*fill)
    pdf.rect(pdf.l_margin, y, pdf.width, body + 10, style="F")
    pdf.set_xy(pdf.l_margin + 4, y + 2)
    pdf.set_font(SANS, "B", 9)
    pdf.set_text_color(*GREY)
    pdf.cell(pdf.width - 8, 5, head, new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(*INK)
    pdf.set_x(pdf.l_margin + 4)
    pdf.set_font(SANS, "B" if bold_text else "", size)
    pdf.multi_cell(pdf.width - 8, size * 0.5, text, new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.set_fill_color(255, 255, 255)
    pdf.set_y(y + body + 12)


def _models(pdf: ReportPDF, result) -> None:
    colours = model_colours(result.names)
    pdf.set_font(SANS, "", 8.2)
    with pdf.grid((18, 112, 50), line_height=3.8, padding=(0.8, 1.2)) as grid:
        r = grid.row()
        for head in ("model", "what it is", "content hash (sha256)"):
            r.cell(head)
        for name, what, digest in model_rows(result):
            r = grid.row()
            r.cell(f"■ {name}", style=FontFace(color=rgb(colours[name]), emphasis="BOLD"))
            r.cell(what)
            r.cell(digest if digest == "—" else digest[:24] + "…", style=FontFace(family=MONO, size_pt=7))
    pdf.ln(1)


def _verdict_colour(word: str, result) -> tuple[int, int, int] | None:
    colours = model_colours(result.names)
    for name in result.names:
        if word == f"{name} lower":
            return rgb(colours[name])
    return rgb(VERDICTS["unknown"][1]) if word == "undecided" else None


def _node_table(pdf: ReportPDF, result) -> None:
    from fairaudit.viz.compare import node_table

    table = node_table(result)
    pairs = list(result.diff_series)
    models = list(result.names)
    shown_pairs = pairs if len(pairs) == 1 else []
    columns = ["node"] + models + [c for a, b in shown_pairs for c in (f"{a} − {b}", f"{a} vs {b}")]
    widths = [62] + [40] * len(models) + [c for _ in shown_pairs for c in (36, 20)]
    size = 7.2 if len(columns) <= 5 else 6.4
    pdf.set_font(SANS, "", size)
    colours = model_colours(result.names)
    with pdf.grid(widths, line_height=size * 0.46, padding=(0.7, 0.9)) as grid:
        r = grid.row()
        for c in columns:
            r.cell(c, style=FontFace(color=rgb(colours[c]), emphasis="BOLD") if c in colours else None)
        for _, row in table.iterrows():
            r = grid.row()
            r.cell(str(row['node']))
            for c in columns[1:]:
                text = str(row[c])
                colour = _verdict_colour(text, result) if " vs " in c else None
                r.cell(text, style=FontFace(color=colour, emphasis="BOLD") if colour else None)
    if len(pairs) > 1:  # several pairs: one table of differences per pair
        for a, b in pairs:
            pdf.ln(2)
            pdf.ensure(22)
            pdf.para(f"Differences {a} − {b}", size=9, style="B")
            pdf.set_font(SANS, "", 7.2)
            with pdf.grid((90, 60, 30), line_height=3.3, padding=(0.7, 0.9)) as grid:
                r = grid.row()
                for c in ("node", f"{a} − {b}", "verdict"):
                    r.cell(c)
                for _, row in table.iterrows():
                    if not row[f"{a} vs {b}"]:
                        continue
                    r = grid.row()
                    r.cell(str(row['node']))
                    r.cell(str(row[f"{a} − {b}"]))
                    colour = _verdict_colour(row[f"{a} vs {b}"], result)
                    r.cell(row[f"{a} vs {b}"], style=FontFace(color=colour, emphasis="BOLD") if colour else None)
    pdf.ln(1)
    pdf.para("Each model's value is its estimate and interval (a comparison l op r: its margin l − r, and its verdict; "
             "a boolean node: its verdict). A difference is the first model's value minus the second's; "
             "\"A lower\" means the whole difference interval is below 0 (A's value is certified lower), "
             "\"undecided\" that it still contains 0. Indentation (·) shows the node's depth in the tree.",
             size=7.8, colour=GREY)


def _charts(pdf: ReportPDF, result) -> None:
    from fairaudit.viz.compare import (RATIO_LIMIT, difference_convergence, final_values_chart, models_convergence,
                                       ratio_view)

    pdf.add_page()
    pdf.heading("Charts", space=0)
    pdf.para("One colour per model, the same in every chart. Comparisons are shown as their margin (left − right) "
             "against the dashed 0 line, except a ratio compared with a constant, shown as the ratio on a log scale "
             "(0.8 and 1.25 equally far from parity, 1) against its threshold; the x axis counts the rows read (log "
             "scale). Each y axis is limited to where the intervals are (a ratio's to "
             f"[1/{RATIO_LIMIT:g}, {RATIO_LIMIT:g}]): a bound past it is drawn to the edge and marked \"beyond\".",
             size=8.5, colour=GREY)
    pdf.ln(1)
    fig = charts._safe(lambda: final_values_chart(result, width=520),
                       "Every node's final interval per model (bar) and estimate (dot).")
    pdf.image_block(fig, max_height=110)
    pairs = list(result.diff_series)
    cmps = [tn.id for tn in result.tree.nodes if tn.kind == "cmp"]
    for nid in cmps:
        what = "ratio (log scale)" if ratio_view(result, nid) is not None else "margin"
        fig = charts._safe(lambda nid=nid: models_convergence(result, nid, width=620, height=200),
                           f"Each model's interval of this comparison's {what} over the rows read.")
        pdf.image_block(fig, max_height=85)
        for a, b in pairs:
            chart = difference_convergence(result, nid, a, b, width=620, height=150)
            if chart is None:
                continue
            d = result.difference(nid, a, b)
            lower = {"a_lower": a, "b_lower": b}.get(d.verdict)
            fig = charts._safe(lambda chart=chart: chart,
                               f"The paired difference {a} − {b} and its interval; the band is "
                               + (f"{lower}'s colour: {lower}'s margin is certified lower." if lower else
                                  "grey while the interval still contains 0 (undecided)."))
            pdf.image_block(fig, max_height=70)


def _body(pdf: ReportPDF, result, *, spec: bool) -> None:
    """Everything after the title: verdicts, headline, guarantee, what was compared, models, (``spec``: the
    specification), the node table, the sentences and the charts."""
    from fairaudit.viz.compare import spec_verdicts

    decided = any(d.verdict in ("a_lower", "b_lower") for d in result.differences if d.kind == "cmp")
    pdf.para("The specification, per model: " + spec_verdicts(result), size=10, style="B", h=5)
    pdf.ln(1)
    _box(pdf, "Headline", result.headline, DECIDED_FILL if decided else UNDECIDED_FILL, size=10.5, bold_text=True)
    pdf.ln(1)
    _box(pdf, "Guarantee", result.guarantee + (f" {result.share_note}" if result.share_note else ""), GUARANTEE_FILL,
         size=9)
    for warning in result.warnings:
        pdf.para("Warning: " + warning, size=9, style="B", h=4.4)
    pdf.ln(1)
    pdf.heading("What was compared", size=12, space=1)
    pdf.kv_table(facts(result), widths=(34, 146), size=8.3)
    pdf.heading("Models", size=12, space=1)
    _models(pdf, result)
    if spec:
        pdf.heading("Specification (as written)", size=12, space=1)
        pdf.set_fill_color(246, 246, 246)
        pdf.set_font(MONO, "", 8.5)
        pdf.multi_cell(0, 4.2, result.spec.strip(), new_x="LMARGIN", new_y="NEXT", fill=True, padding=2, align="L")
        pdf.set_fill_color(255, 255, 255)
    pdf.heading("Every node, per model", size=12, space=3)
    _node_table(pdf, result)
    pdf.heading("What the comparison says", size=12, space=3)
    for text in sentences(result):
        pdf.ensure(pdf.para_height("• " + text, size=9, h=4.4))  # a sentence is never split over two pages
        pdf.para("• " + text, size=9, h=4.4)
        pdf.ln(0.6)
    _charts(pdf, result)


def comparison_section(pdf: ReportPDF, result) -> None:
    """The comparison as a section of another report (the audit PDF of the same specification): a new page, its
    heading, then what ``build_compare_pdf`` shows after its title (the specification is the report's own)."""
    pdf.add_page()
    pdf.heading(f"Comparison with other models: {', '.join(result.names)}", space=0)
    pdf.para("The same specification, asked of several models on the same rows in the same order "
             "(fairaudit compare; the Compare page).", size=9, colour=GREY)
    pdf.ln(2)
    _body(pdf, result, spec=False)


def build_compare_pdf(result, *, generated_at=None) -> bytes:
    """The comparison's report as PDF bytes (``result``: a ``fairaudit.comparison.CompareResult``)."""
    moment = generated_at or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    names = ", ".join(result.names)
    title = f"{TITLE}: {names}"
    footer = f"fairaudit compare · {names} · generated {moment.strftime('%Y-%m-%d %H:%M')} UTC"
    pdf = ReportPDF(footer, title)
    pdf.set_title(title)
    pdf.set_author("fairaudit")
    pdf.set_subject(f"Paired comparison of {names} on {result.data or 'the data'}")
    pdf.set_creator(REPORT_CREATOR)
    pdf.set_creation_date(moment)
    pdf.add_page()
    pdf.set_font(SANS, "B", 18)
    pdf.multi_cell(0, 8, title, new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.para(f"{len(result.names)} models on the same rows, in the same order · generated "
             f"{moment.strftime('%Y-%m-%d %H:%M')} UTC", size=9.5, colour=GREY)
    pdf.ln(3)
    _body(pdf, result, spec=True)
    return bytes(pdf.output())
