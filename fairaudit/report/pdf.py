"""The PDF layout (fpdf2, A4 portrait, DejaVu fonts shipped in ``fairaudit/report/fonts``).

Pages, in order: summary (verdict, what was audited, the engine and its parameters) · the population program, when
the audit's individuals came from one · specification and its tree · results per node · convergence of every
comparison (and selected nodes) · Fair[...] rates · their counterexamples (``result.counterexamples``) · the
groups the engine found (``result.findings``: per-group rates, metrics, influences, the modelled graph; only when present) · per-group statistics of the data (not for a
population program: it has no rows) · methods appendix and software versions. Every page has a footer with the spec
hash, the generation time and "page X of Y".
"""
from __future__ import annotations

import io
from pathlib import Path

from fpdf import FPDF
from fpdf.fonts import FontFace

from fairaudit.base import numbers
from fairaudit.core.outputs import REPORT_CREATOR as CREATOR  # how an existing file is known as a report (--pdf)
from fairaudit.core.explain import JOINT_TEST_HELP, verdict_word
from fairaudit.report import charts, content, methods

FONT_DIR = Path(__file__).with_name("fonts")
SANS, MONO = "DejaVu", "DejaVuMono"
MARGIN = 15.0
INK = (34, 34, 34)
GREY = (110, 110, 110)
RULE = (200, 200, 200)
HEAD_FILL = (228, 233, 240)
ZEBRA = (247, 248, 250)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _text_on(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    """Black or white, whichever reads better on ``colour`` (relative luminance)."""
    r, g, b = (c / 255 for c in colour)
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return (0, 0, 0) if lum > 0.45 else (255, 255, 255)


class ReportPDF(FPDF):
    def __init__(self, footer_text: str, header_text: str):
        super().__init__(orientation="P", unit="mm", format="A4")
        self.footer_text = footer_text
        self.header_text = header_text
        self.set_margins(MARGIN, MARGIN, MARGIN)
        self.set_auto_page_break(True, margin=18)
        self.add_font(SANS, "", str(FONT_DIR / "DejaVuSans.ttf"))
        self.add_font(SANS, "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
        self.add_font(SANS, "I", str(FONT_DIR / "DejaVuSans-Oblique.ttf"))
        self.add_font(MONO, "", str(FONT_DIR / "DejaVuSansMono.ttf"))
        self.set_text_color(*INK)
        self.set_draw_color(*RULE)

    @property
    def width(self) -> float:
        return self.w - self.l_margin - self.r_margin

    def header(self):
        if self.page_no() > 1:
            self.set_font(SANS, "", 7.5)
            self.set_text_color(*GREY)
            self.set_y(7)
            self.cell(0, 4, self.header_text, align="L")
            self.set_y(MARGIN)
            self.set_text_color(*INK)

    def footer(self):
        self.set_y(-12)
        self.set_draw_color(*RULE)
        self.line(self.l_margin, self.get_y() - 1, self.w - self.r_margin, self.get_y() - 1)
        self.set_font(SANS, "", 7.5)
        self.set_text_color(*GREY)
        self.cell(self.width * 0.8, 5, self.footer_text, align="L")
        self.cell(self.width * 0.2, 5, f"page {self.page_no()} of {{nb}}", align="R")
        self.set_text_color(*INK)

    # -------------------------------------------------------------- text helpers
    def heading(self, text: str, size: float = 14, space: float = 3):
        self.ensure(size * 0.6 + 12)
        self.ln(space)
        self.set_font(SANS, "B", size)
        self.multi_cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
        self.ln(1.5)

    def para(self, text: str, size: float = 9.5, style: str = "", colour=INK, h: float | None = None,
             family: str = SANS, align: str = "L"):
        self.set_font(family, style, size)
        self.set_text_color(*colour)
        self.multi_cell(0, h or size * 0.48, text, new_x="LMARGIN", new_y="NEXT", align=align)
        self.set_text_color(*INK)

    def para_height(self, text: str, size: float = 9.5, style: str = "", h: float | None = None,
                    family: str = SANS) -> float:
        """The height ``para`` would take for ``text`` at the current width (0 for no text)."""
        if not text:
            return 0.0
        self.set_font(family, style, size)
        return float(self.multi_cell(0, h or size * 0.48, text, dry_run=True, output="HEIGHT", align="L"))

    def ensure(self, height: float):
        """Start a new page unless ``height`` mm fit above the bottom margin."""
        if self.get_y() + height > self.page_break_trigger:
            self.add_page()

    def fit(self, fig: charts.Figure, width: float | None = None, max_height: float | None = None):
        """(width, height) in mm of ``fig`` at ``width`` (default: the text width), shrunk to ``max_height``."""
        pw, ph = fig.size
        width = width or self.width
        height = width * ph / pw
        room = self.page_break_trigger - MARGIN - 2
        limit = min(max_height or room, room)
        if height > limit:
            width, height = width * limit / height, limit
        return width, height

    def figure_height(self, fig: charts.Figure, max_height: float | None = None) -> float:
        return self.fit(fig, max_height=max_height)[1] if fig.png else 10.0

    def image_block(self, fig: charts.Figure, width: float | None = None, max_height: float | None = None):
        if fig.png is None:
            self.para(f"(figure not available: {fig.error})", size=8.5, style="I", colour=GREY)
            return
        width, height = self.fit(fig, width, max_height)
        self.ensure(height + 2 + self.para_height(fig.caption, size=8, style="I"))  # the caption stays with it
        x = self.l_margin + (self.width - width) / 2
        self.image(io.BytesIO(fig.png), x=x, y=self.get_y(), w=width, h=height)
        self.set_y(self.get_y() + height + 1)
        if fig.caption:
            self.para(fig.caption, size=8, style="I", colour=GREY)

    def grid(self, widths, *, headings: bool = True, line_height: float = 3.9, padding=(0.8, 1.0)):
        """A table over the full text width: horizontal rules, light zebra rows, bold shaded headings."""
        scale = self.width / sum(widths)
        return self.table(col_widths=[w * scale for w in widths], first_row_as_headings=headings,
                          borders_layout="HORIZONTAL_LINES", line_height=line_height, padding=padding,
                          text_align="LEFT", width=self.width, cell_fill_color=ZEBRA, cell_fill_mode="ROWS",
                          headings_style=FontFace(emphasis="BOLD", fill_color=HEAD_FILL))

    def kv_table(self, rows, widths=(45, 135), size: float = 8.8, mono_keys=("content hash",)):
        self.set_font(SANS, "", size)
        with self.grid(widths, headings=False, line_height=size * 0.47, padding=(0.8, 1.5)) as table:
            for key, value in rows:
                row = table.row()
                row.cell(key, style=FontFace(emphasis="BOLD", color=INK))
                if key in mono_keys:
                    row.cell(value, style=FontFace(family=MONO, size_pt=size - 1))
                else:
                    row.cell(value)
        self.ln(1)


# ------------------------------------------------------------------------------------------------------------
# sections


def _summary(pdf: ReportPDF, title: str, moment, result, data_facts, model_facts_, program=None):
    pdf.add_page()
    pdf.set_font(SANS, "B", 20)
    pdf.multi_cell(0, 9, title, new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.para(f"Fairness audit report · generated {content.when(moment)}", size=9.5, colour=GREY)
    pdf.ln(4)

    head = content.headline(result)
    colour = rgb(head["colour"])
    fg = _text_on(colour)
    pdf.set_font(SANS, "B", 12)
    sentence_h = pdf.multi_cell(pdf.width - 12, 6, head["summary"], dry_run=True, output="HEIGHT",
                                  align="L")
    box_h = 4 + 5 + 13 + sentence_h + 4
    pdf.ensure(box_h + 4)
    y = pdf.get_y()
    pdf.set_fill_color(*colour)
    pdf.rect(pdf.l_margin, y, pdf.width, box_h, style="F")
    pdf.set_xy(pdf.l_margin + 6, y + 4)
    pdf.set_text_color(*fg)
    pdf.set_font(SANS, "", 10)
    pdf.cell(pdf.width - 12, 5, "Overall verdict of the specification", new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(pdf.l_margin + 6)
    pdf.set_font(SANS, "B", 28)
    pdf.cell(pdf.width - 12, 13, head["word"], new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(pdf.l_margin + 6)
    pdf.set_font(SANS, "B", 12)
    pdf.multi_cell(pdf.width - 12, 6, head["summary"], new_x="LMARGIN", new_y="NEXT", align="L")
    bottom = y + box_h
    pdf.set_text_color(*INK)
    pdf.set_fill_color(255, 255, 255)
    pdf.set_y(bottom + 3)
    pdf.para(head["sentence"], size=10.5, style="B", h=5)
    if head["second"]:
        pdf.para(head["second"], size=10, h=5)
    pdf.para(f"{head['explanation']} {content.progress_line(result)}", size=10, h=5)
    for line in (content.not_backed_line(result), content.partial_line(result)):
        if line:
            pdf.ln(1)
            pdf.para(line, size=10, style="B", h=5)
    worst = content.worst_line(result)
    if worst:
        pdf.ln(1)
        pdf.para(worst, size=9.5, h=4.8)
    suggestions = content.suggestion_lines(result)
    if suggestions:
        pdf.ln(1)
        pdf.para("Refinement suggestions (undecided comparisons)", size=9.5, style="B", h=4.8)
        for line in suggestions:
            pdf.para(line.strip(), size=8.5 if line.startswith("  ") else 9, h=4.3,
                     style="I" if line == suggestions[-1] else "")
    for label, text in content.audit_context(result):
        pdf.ln(1)
        pdf.set_font(SANS, "B", 9.5)
        pdf.write(4.8, f"{label}: ")
        pdf.set_font(SANS, "", 9.5)
        pdf.write(4.8, text)
        pdf.ln(4.8)
    warnings = content.result_warnings(result)
    if warnings:
        pdf.ln(2)
        _warning_box(pdf, warnings)
    pdf.ln(2)

    if program is not None:  # the individuals (and, unless generated from a model, the decisions) are the program's
        pdf.heading("Population program", size=12, space=2)
        pdf.kv_table(content.population_lines(program))
    if program is None or content.generated_from_data(result):
        pdf.heading("Dataset" if program is None else "Dataset the program was generated from", size=12, space=2)
        pdf.kv_table(content.dataset_lines(data_facts))
        pdf.heading("Decisions audited", size=12, space=2)
        pdf.kv_table(content.model_lines(model_facts_))
    pdf.heading("Engine and parameters", size=12, space=2)
    rows = content.option_rows(result)
    pdf.set_font(SANS, "", 8.5)
    with pdf.grid((32, 42, 106), line_height=3.9, padding=(0.7, 1.5)) as table:
        r = table.row()
        for h in ("parameter", "value", "meaning"):
            r.cell(h)
        for key, value, meaning in rows:
            r = table.row()
            r.cell(key)
            r.cell(value, style=FontFace(family=MONO, size_pt=8))
            r.cell(meaning, style=FontFace(color=GREY))


WARN_FILL = (255, 243, 205)
WARN_INK = (102, 77, 3)


def _warning_box(pdf: ReportPDF, warnings: list[str]):
    """The result's warnings in a shaded box on the first page (what may make the verdict or its guarantee
    wrong): never left to an appendix."""
    text = "\n".join(f"• {w}" for w in warnings)
    pdf.set_font(SANS, "B", 9.5)
    head_h = 5.0
    pdf.set_font(SANS, "", 9)
    body_h = pdf.multi_cell(pdf.width - 8, 4.5, text, dry_run=True, output="HEIGHT", align="L")
    pdf.ensure(head_h + body_h + 6)
    y = pdf.get_y()
    pdf.set_fill_color(*WARN_FILL)
    pdf.rect(pdf.l_margin, y, pdf.width, head_h + body_h + 5, style="F")
    pdf.set_xy(pdf.l_margin + 4, y + 2)
    pdf.set_text_color(*WARN_INK)
    pdf.set_font(SANS, "B", 9.5)
    pdf.cell(pdf.width - 8, head_h, "Warnings" if len(warnings) > 1 else "Warning", new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(pdf.l_margin + 4)
    pdf.set_font(SANS, "", 9)
    pdf.multi_cell(pdf.width - 8, 4.5, text, new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.set_text_color(*INK)
    pdf.set_fill_color(255, 255, 255)
    pdf.set_y(y + head_h + body_h + 6)


PROGRAM_HELP = (
    "The program that was audited, in the .fr format of population programs: popModel() draws one individual of "
    "the population (gaussian(mean, variance), step([(lo, hi, probability), ...])) and marks the sensitive group "
    "(sensitiveAttribute) and, when it says so, who is qualified (qualified); F() is the decision, and "
    "fairnessTarget names the favourable outcome.")

SPEC_HELP = {
    "rows": ("The fairness requirement that was audited, in fairaudit's specification language. "
             "E[event | condition] is the probability of the event among the rows satisfying the condition, and "
             "E[amount | condition] the average of an amount whose range is declared; pred is the decision "
             "(1 = favourable; for a decision among several classes, its class), label the true outcome."),
    "generated": ("The fairness requirement that was audited, in fairaudit's specification language, over the "
                  "dataset's columns. E[event | condition] is the probability of the event for an individual of the "
                  "population program generated from the dataset, given the condition (each column is a variable "
                  "of the program); pred is the model's decision (1 = favourable)."),
    "program": ("The fairness requirement that was audited, in fairaudit's specification language. "
                "E[event | condition] is the probability of the event for an individual of the population program, "
                "given the condition; pred is the program's decision (its fairnessTarget: 1 = favourable), "
                "sensitive the group its sensitiveAttribute marks, qualified its qualified(...) condition (true for "
                "everyone when it has none); the program's other variables are read by name."),
}


def _program(pdf: ReportPDF, program: dict):
    """The audited population program: its text (cut after ``content.MAX_PROGRAM_LINES`` lines, with a note), or
    why it is not printed."""
    pdf.add_page()
    pdf.heading(f"Population program {program.get('name') or ''}".rstrip(), space=0)
    pdf.para(PROGRAM_HELP, size=9, colour=GREY)
    pdf.ln(1)
    if program.get("sha256"):
        pdf.para(f"sha256 {program['sha256']}", size=8, colour=GREY, family=MONO)
    if program.get("origin"):
        pdf.para(content.as_sentence(f"Below: {program['origin']}"), size=8.5, colour=GREY)
    pdf.ln(2)
    if not program.get("text"):
        pdf.para(program.get("note") or "The program's text was not recorded.", size=9.5)
        return
    text, cut = content.program_listing(program["text"])
    pdf.set_fill_color(246, 246, 246)
    pdf.set_font(MONO, "", 8)
    pdf.multi_cell(0, 3.9, text, new_x="LMARGIN", new_y="NEXT", fill=True, padding=2.5, align="L")
    pdf.set_fill_color(255, 255, 255)
    if cut:
        pdf.ln(1)
        pdf.para(cut, size=8.5, style="I", colour=GREY)


def _specification(pdf: ReportPDF, result, tree: charts.Figure):
    pdf.add_page()
    pdf.heading("Specification", space=0)
    kind = ("generated" if content.generated_from_data(result) else "program") if content.is_population(result) \
        else "rows"
    pdf.para(SPEC_HELP[kind], size=9, colour=GREY)
    pdf.ln(2)
    pdf.set_fill_color(246, 246, 246)
    pdf.set_font(MONO, "", 9.5)
    pdf.multi_cell(0, 5, result.spec, new_x="LMARGIN", new_y="NEXT", fill=True, padding=2.5, align="L")
    pdf.set_fill_color(255, 255, 255)
    named = [(i.name, i.id, i.text) for i in result.node_info if i.name]
    if named:
        pdf.ln(1)
        pdf.para("Named parts: " + "; ".join(f"{name} = {text}" for name, nid, text in named),
                 size=8.5, colour=GREY)
    pdf.ln(4)
    pdf.heading("The specification as a tree", size=12, space=2)
    pdf.image_block(tree, max_height=150)


def _nodes(pdf: ReportPDF, result):
    pdf.add_page()
    pdf.heading("Results per node", space=0)
    rows = content.node_rows(result)
    show_delta = content.has_delta(result)
    show_n = any(row["n"] for row in rows)
    text = ("Every sub-expression of the specification at the end of the audit: its estimate, the interval that "
            "contains its true value")
    text += ", the failure probability δ of that interval" if show_delta else ""
    text += (", and its verdict (comparisons and and/or/not only; numbers have none). For a comparison against a "
             "threshold, the estimate and interval are those of the compared quantity, with the threshold beside "
             "the estimate: a < 0.1 holds when the whole interval is below 0.1 and is violated when it is above. A "
             "comparison of two quantities a < b shows their difference a − b against 0. A Fair[…] node has no "
             "estimate: its certified share (the lower bound), 1 − its unfair share (the upper bound) and the "
             "undecided share between them are shown instead.")
    text += " " + content.as_sentence(f"Every interval: {result.guarantee.interval_meaning}")
    if show_n:
        text += f" n is {content.count_meaning(result).rstrip('.')}."
    pdf.para(text, size=9, colour=GREY)
    pdf.ln(2)
    columns = [("expression", 53, "expression"), ("kind", 21, "kind"), ("estimate", 26, "estimate"),
               ("interval", 31, "interval")]
    if show_delta:
        columns.append(("δ", 14, "delta"))
    if show_n:
        columns.append(("n", 17, "n"))
    columns.append(("verdict", 20, "verdict"))
    pdf.set_font(SANS, "", 8)
    with pdf.grid(tuple(w for _, w, _ in columns)) as table:
        r = table.row()
        for h, _, _ in columns:
            r.cell(h)
        for row in rows:
            r = table.row()
            for _, _, key in columns:
                if key == "id":
                    r.cell(row["id"], style=FontFace(color=GREY))
                elif key == "expression":
                    r.cell("   " * min(row["depth"], 4) + row["expression"], style=FontFace(family=MONO, size_pt=7.5))
                elif key == "verdict":
                    if row["verdict"] == "term":
                        r.cell("—", style=FontFace(color=GREY))
                    else:
                        r.cell(row["verdict_label"], style=FontFace(emphasis="BOLD", color=rgb(content.verdict_colour(
                            row["verdict"]))))
                else:
                    r.cell(row[key])
    fair = [row for row in rows if row["raw_kind"] == "fair" and row["certified"] is not None]
    if fair:
        pdf.ln(2)
        pdf.para("Fair[…] nodes: " + "; ".join(
            f"{row['expression']}: certified {content.num(row['certified'], 3)}, unfair "
            f"{content.num(row['unfair'], 3)}, undecided {content.num(row['undecided'], 3)}" for row in fair), size=8.5)
    joint = [(info.id, result.evidence_text(info.id)) for info in result.node_info if info.kind == "cmp"]
    joint = [(nid, text) for nid, text in joint if text]
    if joint:
        pdf.ln(2)
        pdf.para("Comparisons decided by their joint test while their interval still contains the threshold "
                 "(the interval is interval arithmetic on the two probabilities; the joint test is sharper, and "
                 "its verdict holds at the level β shown): " + "; ".join(
                     f"{content.node_label(result, nid)}: {text}" for nid, text in joint)
                 + ".", size=8.5)
    if len(result.trace_table) <= 1:
        pdf.ln(2)
        pdf.para(f"The audit recorded its values at a single step (after "
                 f"{numbers.count(result.steps, result.unit)}), so there is no convergence over steps to plot.", size=9, colour=GREY)


CONVERGENCE_HELP = (
    "How each comparison's bounds evolved over the audit. x axis: step (the number of {unit} processed). "
    "Blue line: the estimate; shaded band: the interval that contains the true value at that step; "
    "dashed line: the threshold of the comparison (for a comparison of two quantities, the plot shows their "
    "difference and the threshold is 0). The comparison is decided once the whole band lies on one side of the "
    "threshold. The coloured strip under each plot is the comparison's verdict at each step; the solid vertical "
    "line marks the step at which that comparison was first decided, and a dashed line labelled 'spec decided' "
    "the step at which the whole specification was decided, when that is another step.")
JOINT_HELP = " " + JOINT_TEST_HELP


def _convergence(pdf: ReportPDF, result, figures):
    if not figures:
        return
    pdf.add_page()
    pdf.heading("Convergence of every comparison", space=0)
    joint = any(result.has_evalue(node_id) for node_id, _ in figures if result.node(node_id).kind == "cmp")
    pdf.para(CONVERGENCE_HELP.format(unit=result.unit) + (JOINT_HELP if joint else ""), size=9, colour=GREY)
    pdf.ln(2)
    for node_id, fig in figures:
        info = result.node(node_id)
        final = result.final_values(node_id)
        v = content.normalise_verdict(final.get("verdict"))
        label = "" if v == "term" else f" — {content.VERDICTS[v][0]}"
        pdf.ensure(8 + pdf.figure_height(fig, max_height=95))
        pdf.set_font(SANS, "B", 10)
        pdf.set_text_color(*rgb(content.verdict_colour(v)) if v != "term" else INK)
        named = f"{info.name} · " if info.name else ""
        kind = content.kind_label({"kind": info.kind, "range": info.range})
        pdf.multi_cell(0, 5, f"{named}{kind}{label}",
                       new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(*INK)
        note = result.evidence_text(node_id) if info.kind == "cmp" else None
        if note:
            pdf.para(content.as_sentence(note), size=8.5)
        pdf.image_block(fig, max_height=95)
        pdf.ln(2)


def _rates(pdf: ReportPDF, result, figures):
    """Each Fair[...] node's rates over steps (how the undecided share shrank) and, when the run recorded it,
    where its undecided individuals are (``figures``: ``(node id, rates figure, where figure or None)``)."""
    from fairaudit.core.undecided_view import SHRINK

    if not figures:
        return
    pdf.ensure(40 + pdf.figure_height(figures[0][1], max_height=90))
    pdf.heading("Individual fairness: certified / unfair / undecided", space=6)
    pdf.para("For each Fair[attribute] node: the fraction of individuals whose decision provably does not change "
             "when only the attribute changes (certified, blue), provably changes (unfair, red-orange), or is not "
             f"settled yet (undecided, grey), as the audit progressed (x axis: step, the number of {result.unit} "
             "processed). The dashed vertical line marks the step at which the whole specification was decided. "
             + SHRINK, size=9, colour=GREY)
    pdf.ln(2)
    for _node_id, fig, where in figures:
        pdf.image_block(fig, max_height=90)
        pdf.ln(3)
        if where is not None:
            pdf.ensure(20 + pdf.figure_height(where, max_height=80))
            pdf.image_block(where, max_height=80)  # with its caption: the dashboard's sentence
            pdf.ln(3)


PDF_COUNTEREXAMPLES = 5  # rows of each Fair leaf's counterexample table
PDF_FEATURES = 6  # the individual's features shown (the JSON has them all)


def _counterexamples(pdf: ReportPDF, counterexamples):
    """Each Fair[...] leaf's counterexamples (``result.counterexamples``): how many were found and where, and the
    first few as a table (the decisions at each compared value, then the individual's first features)."""
    from fairaudit.core import counterexamples_view as cv

    if not counterexamples:
        return
    pdf.ensure(60)
    pdf.heading("Counterexamples: individuals whose decision changes with the attribute alone", space=6)
    for found in counterexamples.leaves:
        rows = cv.table(found, PDF_COUNTEREXAMPLES)
        pdf.heading(f"{found.leaf}: {cv.headline(found, len(rows))}", size=11, space=2)
        if not rows:
            continue
        pdf.para(cv.caption(found), size=9, colour=GREY)
        pdf.ln(1)
        fixed = ([cv.ROW] if cv.ROW in rows[0] else []) + [cv.value_column(found, v) for v in found.values]
        features = [c for c in rows[0] if c not in fixed]
        shown = fixed + features[:PDF_FEATURES]
        if len(features) > PDF_FEATURES:
            pdf.para(f"The first {PDF_FEATURES} of the individual's {len(features)} other features are shown; the "
                     "JSON result has them all.", size=8.5, colour=GREY)
        _table(pdf, [{c: r[c] for c in shown} for r in rows],
               {c: (10 if c == cv.ROW else 26 if c in fixed else 18) for c in shown}, size=7)


MARK_COLOURS = {"most favoured": "#0072B2", "least favoured": "#D55E00"}  # as in fairaudit.viz.palette.FAVOURED


def _table(pdf: ReportPDF, rows: list[dict], widths: dict, size: float = 8, colour_mark: bool = False):
    """``rows`` (dicts with the same keys) as a grid; ``widths`` by column (relative); the mark column coloured."""
    if not rows:
        return
    cols = list(rows[0])
    pdf.set_font(SANS, "", size)
    with pdf.grid([widths.get(c, 20) for c in cols]) as table:
        r = table.row()
        for c in cols:
            r.cell(c)
        for rec in rows:
            r = table.row()
            for c in cols:
                text = str(rec.get(c, ""))
                colour = MARK_COLOURS.get(text) if colour_mark and c == "mark" else None
                r.cell(text, style=FontFace(color=rgb(colour), emphasis="BOLD") if colour else None)
    pdf.ln(2)


def _findings(pdf: ReportPDF, findings, figures: dict):
    """What the run's engine found besides the specification (``result.findings``): every group's favourable rate
    with the most and least favoured marked, the group metrics, each feature's influence, the graph as its edges.
    Only what the findings carry."""
    from fairaudit.core import findings_view as fv

    if not findings:
        return
    pdf.ensure(70)
    pdf.heading("Groups", space=6)
    if findings.groups:
        pdf.heading("Favourable rate in each group", size=11, space=2)
        text = fv.groups_caption(findings)
        if text:
            pdf.para(text, size=9, colour=GREY)
            pdf.ln(1)
        _table(pdf, fv.group_table(findings),
               {"group": 52, "favourable rate": 24, "share": 13, "confidence interval": 24,
                "on the audited rows": 28, "mark": 22},
               colour_mark=True)
        if "groups" in figures:
            pdf.image_block(figures["groups"], max_height=150)
            pdf.ln(2)
    if findings.metrics:
        pdf.ensure(30)
        pdf.heading("Group metrics", size=11, space=2)
        _table(pdf, fv.metric_table(findings), {"metric": 32, "value": 26, "confidence interval": 26, "about": 70})
    if findings.influence:
        pdf.ensure(120 if "influence" in figures else 40)  # the heading stays with its chart
        pdf.heading("Influence of each feature", size=11, space=2)
        if findings.influence_about:
            pdf.para(fv.caption(findings.influence_about), size=9, colour=GREY)
            pdf.ln(1)
        if "influence" in figures:
            pdf.image_block(figures["influence"], max_height=130)
        _table(pdf, fv.influence_table(findings), {"feature": 60, "influence": 40})
    if findings.edges:
        pdf.ensure(30)
        pdf.heading("Dependencies modelled", size=11, space=2)
        if findings.graph_about:
            pdf.para(fv.caption(findings.graph_about) + " Each row is one edge, parent → child.", size=9,
                     colour=GREY)
            pdf.ln(1)
        _table(pdf, [{"edge": f"{a} → {b}"} for a, b in findings.edges], {"edge": 100})
    for note in findings.notes:
        pdf.para(fv.caption(note), size=8.5, style="I", colour=GREY)


def _groups(pdf: ReportPDF, stats, fig, note: str | None, data_facts: dict):
    if pdf.get_y() > pdf.h / 2:
        pdf.add_page()
        pdf.heading("Groups in the data", space=0)
    else:
        pdf.heading("Groups in the data", space=8)
    if stats is None:
        pdf.para(note or "No dataset was given to the report, so per-group statistics are not shown. "
                 "Pass the dataset (fairaudit report RESULT.json --data NAME) to include them.", size=9.5)
        return
    label = data_facts.get("label")
    has_sel = "sel" in stats
    text = (f"Row counts per group of each protected attribute over the whole dataset "
            f"({content.count(data_facts.get('rows'))} rows)")
    if label:
        text += (f", and the base rate: the share of rows whose label '{label}' is the favourable value "
                 f"({content._plain(data_facts.get('favourable'))})")
    if has_sel:
        text += (", and the selection rate: the share of rows the audited decisions favour (all rows, including "
                 "any the model was trained on)")
    text += (". Intervals are 95% Wilson confidence intervals. Groups with fewer than 30 rows are marked 'small': "
             "their rates are uncertain.")
    if note:
        text += " " + note
    pdf.para(text, size=9, colour=GREY)
    pdf.ln(2)
    cols = ["attribute", "group", "rows", "share"]
    widths = [26, 40, 18, 16]
    if label:
        cols += ["base rate", "95% interval"]
        widths += [18, 28]
    if has_sel:
        cols += ["selection rate", "95% interval"]
        widths += [18, 28]
    pdf.set_font(SANS, "", 8)
    with pdf.grid(widths) as table:
        r = table.row()
        for h in cols:
            r.cell(h)
        for rec in stats.to_dict("records"):
            r = table.row()
            r.cell(str(rec["attribute"]))
            r.cell(str(rec["group"]) + ("  (small)" if rec.get("small") else ""),
                   style=FontFace(color=(170, 60, 0)) if rec.get("small") else None)
            r.cell(content.count(rec["n"]))
            r.cell(f"{100 * rec['share']:.1f}%")
            if label:
                r.cell(content.num(rec.get("rate"), 3))
                r.cell(content.interval(rec.get("lo"), rec.get("hi"), 3))
            if has_sel:
                r.cell(content.num(rec.get("sel"), 3))
                r.cell(content.interval(rec.get("sel_lo"), rec.get("sel_hi"), 3))
    if fig is not None:
        pdf.ln(3)
        pdf.image_block(fig, max_height=120)


def _methods(pdf: ReportPDF, result, spec_sha: str, moment):
    pdf.add_page()
    pdf.heading("Methods", space=0)
    for title, paragraphs in methods.blocks(result):
        pdf.heading(title, size=11, space=2)
        for p in paragraphs:
            if p.startswith("= "):
                pdf.set_x(pdf.l_margin + 8)
                pdf.set_font(SANS, "", 9.5)
                pdf.multi_cell(pdf.width - 8, 5.2, p[2:], new_x="LMARGIN", new_y="NEXT", align="L")
                pdf.ln(0.8)
            elif p.startswith("• "):
                pdf.set_x(pdf.l_margin + 3)
                pdf.set_font(SANS, "", 9)
                pdf.multi_cell(pdf.width - 3, 4.4, p, new_x="LMARGIN", new_y="NEXT", align="L")
            else:
                pdf.para(p, size=9, h=4.4)
                pdf.ln(0.8)
    pdf.heading("Identification and software (versions when this report was generated)", size=11, space=2)
    rows = [("specification hash", f"sha256 {spec_sha}")]
    if content.is_population(result):
        program = content.population_facts(result)
        if program.get("sha256"):
            rows.append(("program hash", f"sha256 {program['sha256']}"))
    rows += [("report generated", content.when(moment))]
    rows += [(name, version) for name, version in content.versions()]
    pdf.kv_table(rows, widths=(45, 135), size=8.5, mono_keys=("specification hash", "program hash"))
    rebuild = "fairaudit report RESULT.json --pdf REPORT.pdf"
    if content.is_population(result):
        rebuild += " --population FILE.fr (the program, to print it)"
    pdf.para(f"To rebuild this report from the saved audit result: {rebuild}", size=8.5, colour=GREY)


# ------------------------------------------------------------------------------------------------------------


def layout(result, *, title, moment, data_facts, model_facts_, tree, convergence, rates, stats, group_fig,
           group_note, program=None, findings_figures=None, sections=()) -> bytes:
    """The PDF bytes. ``program``: ``content.population_facts`` of an audit of a population program (its own
    section instead of the dataset and the model, and no per-group statistics: there are no rows). ``sections``:
    callables that each add a section (``section(pdf)``) after the findings, e.g. a comparison of models."""
    spec_sha = content.spec_hash(result)
    footer = f"fairaudit · spec sha256 {spec_sha[:16]} · generated {moment.strftime('%Y-%m-%d %H:%M')}"
    pdf = ReportPDF(footer, title)
    pdf.set_title(title)
    pdf.set_author("fairaudit")
    pdf.set_subject(f"Fairness audit: {verdict_word(result.claim.key)}")
    pdf.set_creator(CREATOR)
    pdf.set_creation_date(moment)
    _summary(pdf, title, moment, result, data_facts, model_facts_, program)
    if program is not None:
        _program(pdf, program)
    _specification(pdf, result, tree)
    _nodes(pdf, result)
    _convergence(pdf, result, convergence)
    _rates(pdf, result, rates)
    _counterexamples(pdf, getattr(result, "counterexamples", None))
    _findings(pdf, getattr(result, "findings", None), findings_figures or {})
    for section in sections:
        section(pdf)
    if program is None or content.generated_from_data(result):
        _groups(pdf, stats, group_fig, group_note, data_facts)
    _methods(pdf, result, spec_sha, moment)
    return bytes(pdf.output())
