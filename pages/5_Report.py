"""Report: preview and download the audit as a PDF report, or as the JSON result."""
import datetime as dt

import streamlit as st

from fairaudit.report import build_pdf, content, first_page_png
from fairaudit.ui import compare, flows, live, selection, state, widgets
from fairaudit.ui.progress import progress_bar

widgets.page_setup("Report")
st.title("Report")

result = state.get(state.RESULT)
meta = state.get(state.RESULT_META) or {}
watching = live.report_choice(result is not None)  # a live log being watched: its audit so far, by default
if watching is not None:
    result, meta = live.snapshot(watching), live.result_meta(watching)
if result is None:
    st.info("Run an audit first (Audit page, or load the demo on the Overview page).")
    widgets.sidebar_status()
    st.stop()
widgets.sidebar_status()
widgets.verdict_line(result)
if watching is None:
    widgets.post_hoc_warning()

stamp = dt.datetime.fromtimestamp(meta.get("started", 0) or dt.datetime.now().timestamp()).strftime("%Y%m%d-%H%M%S")
# the nodes selected on the Audit page, if they belong to this result's tree
selected = selection.rebase_selection(state.get(state.SELECTED) or [], state.get(state.SELECTION_TREE), result.nodes)
key = (meta.get("started"), result.steps, result.verdict, tuple(selected), bool((result.info or {}).get("snapshot")))
# the session's dataset and model only if the run read them (not a population program or a log)
pdf_inputs = dict(dataset=state.get(state.DATASET) if flows.on_session_rows(meta) else None,
                  model=state.get(state.MODEL) if flows.used_session_model(meta) else None, selected_nodes=selected,
                  population=flows.audited_program() if meta.get("source") == flows.POPULATION else None)
comparison = compare.shown_comparison(result)
if comparison is not None and state.remembered_checkbox(
        f"Add the comparison of {', '.join(comparison.names)} (Compare page) to the PDF", "report_add_comparison",
        help="The Compare page's comparison asks this specification of the same data: it becomes a section of "
             "the report."):
    pdf_inputs["comparison"] = comparison
    key = key + (id(comparison),)
built = st.session_state.setdefault("report_pdf", {})  # {"last": (key, PDF bytes)}: shared by download and preview


def report_pdf(on_progress=None) -> bytes:
    """The PDF of this page's result, built only when asked (the download or the preview: rendering every chart
    takes seconds) and once per key. The download calls it on a thread of its own: no Streamlit call in here."""
    last = built.get("last")
    if last is None or last[0] != key:
        last = (key, build_pdf(result, **pdf_inputs, on_progress=on_progress))
        built["last"] = last  # one assignment: the download's thread and a rerun never see half of it
    return last[1]


left, right, _ = st.columns([1, 1, 2])
left.download_button("Download the report (PDF)", data=report_pdf, file_name=f"fairaudit-{stamp}.pdf",
                     mime="application/pdf", key="report_pdf_download", type="primary", on_click="ignore")
right.download_button("Download the audit result (JSON)", data=result.to_json(), file_name=f"fairaudit-{stamp}.json",
                      mime="application/json", key="report_json")
st.caption("The PDF is what you hand to a reviewer: the verdict and its guarantee, the data and model (with content "
           "hashes), the specification tree, every node's final values, the convergence plots (including the nodes "
           "selected on the Audit page), per-group statistics and a methods appendix. The JSON holds the full trace; "
           "`fairaudit report RESULT.json --pdf out.pdf` rebuilds the same PDF from it. The PDF is built when you "
           "download it or open its preview (a few seconds: every chart is rendered).")
preview = st.expander("Preview: page 1 of the PDF", key="report_preview", on_change="rerun")
if preview.open:
    with preview:
        with progress_bar("Building the PDF report (every chart is rendered)") as bar:
            pdf = report_pdf(on_progress=bar)
        png = first_page_png(pdf)
        if png:
            st.image(png)
        else:
            st.caption("A preview needs poppler's `pdftoppm`; the download above is the complete report.")
widgets.summary(result, meta, verdict=False)  # (the verdict and its lines are at the top of the page)
st.subheader("Parameters")
st.dataframe([{"option": name, "value": value, "meaning": meaning} for name, value, meaning in content.option_rows(result)],
             width="stretch", hide_index=True)
st.subheader("Final values per node")
st.caption("As in the PDF: a comparison shows its compared quantity beside the threshold; the margin is that "
           "value minus the threshold.")
table = [{"part": "\u2003" * min(r["depth"], 4) + r["label"], "kind": r["kind"], "estimate": r["estimate"],
          "interval": r["interval"], "margin": r.get("margin") or "",
          **({"δ": r["delta"]} if content.has_delta(result) else {}),
          "n": r["n"], "verdict": r["verdict_label"]} for r in content.node_rows(result)]
st.dataframe(table, width="stretch", hide_index=True)
