"""The dashboard's "Groups" page (issue 31): every intersection of the protected attributes at once.

``page()`` draws it: the scan's choices (protected attributes, optional binned numeric ones, depth, the failure
probability, mode), a run on the session's dataset and decisions (those the Audit page uses: ``state.DATASET`` / ``state.MODEL``), the
guarantee and what "undecided" means in plain sentences, the heatmap of impact ratios by intersection
(``fairaudit.viz.scan``: a click selects a cell; a select box beside it selects the same cell), the selected cell's
convergence plot and its one-click specification (``ScanResult.spec_for``, appended to the specification the Audit
page audits), a sortable table, and the LL144 / EEOC packs as CSV and PDF (with what the auditor states: historical
or test data and why, the tool's distribution date, the reason for leaving small categories out of the ratios).

Pure helpers (no Streamlit, unit-tested): ``scan_key`` (the cache key: every input of the scan), ``spec_line`` (the
named line that goes into the specification) and ``append_spec``. Scans are cached in the session by ``scan_key``
(``SCANS``: a scan result never passes from one browser session to another, as ``state.trained_model``).
"""
from __future__ import annotations

import re
from typing import Any

CELL_STATE = "groups_cell"      # the selected cell's id (the heatmap's click and the select box share it)
SCANS = "groups_scans"          # {scan_key: ScanResult}: this session's scans, oldest first
CURRENT = "groups_current"      # the scan_key of the scan shown
CACHE_SIZE = 8
MODES = {"anytime": "anytime (valid at every look as rows arrive)",
         "one-look": "one look (fixed-sample intervals for these rows)",
         "exact": "exact (these rows' own rates: no claim beyond them)"}
DELTAS = (0.01, 0.05, 0.1)
UNDECIDED_HELP = ("**Undecided** means the cell's impact-ratio interval still contains the threshold: the rows so far "
                  "cannot say on which side its true ratio lies. It is never a pass or a fail. The rows it would need "
                  "are a projection that assumes the rates stay where they are.")


# ------------------------------------------------------------------------------------------------ pure helpers
def scan_key(dataset_key: Any, decisions: Any, protected, bins: dict, depth: int, delta: float, mode: str,
             rate: str) -> tuple:
    """Every input of a scan, hashable: the dataset (rows and roles), the decisions, and every choice."""
    return (dataset_key, decisions, tuple(protected), tuple(sorted((k, v) for k, v in (bins or {}).items())),
            int(depth), float(delta), mode, rate)


def spec_name(cell) -> str:
    """A name for the cell's specification line: ``scan_female_black``."""
    words = [re.sub(r"[^0-9a-z]+", "_", str(cell.groups[a]).lower()).strip("_") or "x" for a in cell.table]
    return "scan_" + "_".join(words)


def spec_line(result, cell) -> str | None:
    """``scan_female_black: E[pred | ...] / E[pred | ...] >= 0.8``, or None for a cell without one (the reference
    of its table, an excluded cell)."""
    text = result.spec_for(cell)
    return None if text is None else f"{spec_name(cell)}: {text}"


def append_spec(spec_text: str, line: str) -> str | None:
    """``spec_text`` with ``line`` added as its last line; None when its expression is already there."""
    expression = line.split(": ", 1)[1]
    if expression in spec_text:
        return None
    body = spec_text.rstrip("\n")
    return f"{body}\n{line}\n" if body else f"{line}\n"


def first_cell(result) -> str:
    """The cell shown first: the lowest impact ratio (its estimate) among the cells certified below, else among all
    cells with a ratio — never a table's reference when another cell has a ratio; ties by rank."""
    def lowest(cells):
        return min(cells, key=lambda c: (c.is_reference or c.impact_ratio is None,
                                         c.impact_ratio.estimate if c.impact_ratio is not None else 0.0, c.rank))

    below = result.certified_below()
    return lowest(below).id if below else lowest(result.cells).id


def cell_title(result, cell_id: str) -> str:
    """The cell as every sentence names it: "sex = Female and race = Black" (``subgroups.wording.cell_words``)."""
    from fairaudit.subgroups.wording import cell_words

    return cell_words(result.cell(cell_id))


EVERY_PAIR = "(every pair: whichever is the most-selected)"


def session_decisions(dataset):
    """The session model's 0/1 decisions on ``dataset``'s rows (None without a model, or when it cannot predict
    them): what the 80 % rule template reads to name the most-selected group."""
    from fairaudit.ui import state

    model = state.get(state.MODEL)
    if model is None or dataset is None:
        return None
    try:
        import numpy as np

        return np.asarray(model.predict(dataset.frame)).astype(float).ravel()
    except Exception:  # noqa: BLE001 - a model that cannot predict these rows: no most-selected group to offer
        return None


def most_selected_group(dataset, attribute, groups, key: str, help_text: str = ""):
    """The Specification page's "most-selected group" choice for the 80 % rule template: the group of ``groups``
    with the highest rate of the session model's favourable decisions, preselected (each other group is compared
    with it); ``EVERY_PAIR`` (or no model) renders every ratio in both directions instead. Returns the group or
    None."""
    import streamlit as st

    from fairaudit.spec.templates import most_selected

    groups = list(groups or [])
    if len(groups) < 2 or dataset is None or not isinstance(attribute, str):
        return None
    decisions = session_decisions(dataset)
    best = most_selected(groups, attribute, dataset.frame, decisions) if decisions is not None else None
    options = ([best] if best is not None else []) + [EVERY_PAIR] + [g for g in groups if g != best]
    chosen = st.selectbox("Most-selected group (the reference)", options, index=0,
                          key=f"{key}_{attribute}_{'|'.join(map(str, groups))}",
                          help=help_text + (" — preselected: the highest rate of the model's favourable decisions "
                                            "on these rows" if best is not None else
                                            " — choose a model (Model page) to preselect it from its decisions"))
    return None if chosen == EVERY_PAIR else chosen


# ------------------------------------------------------------------------------------------------ the page
def _decisions_key() -> Any:
    from fairaudit.ui import state

    info = state.get(state.MODEL_INFO) or {}
    return (info.get("describe"), id(state.get(state.MODEL)))


def _run_scan(dataset, protected, bins, depth, delta, mode, rate):
    from fairaudit.subgroups.scan import scan
    from fairaudit.ui import flows

    return scan(dataset, protected, depth=depth, bins=bins or None, delta=delta, mode=mode, rate=rate,
                **flows._decisions())


def cached_scan(key: tuple, run) -> Any:
    """The scan of ``key`` from this session's cache, or ``run()`` once and kept (the last ``CACHE_SIZE``)."""
    from fairaudit.ui.state import session_cached

    return session_cached(SCANS, key, run, CACHE_SIZE)


def page() -> None:
    import streamlit as st

    from fairaudit.base.errors import FairauditError
    from fairaudit.ui import state, widgets

    widgets.page_setup("Groups")
    st.title("Groups")
    st.caption("Every group and every intersection of the protected attributes at once: each one's selection rate "
               "and its impact ratio to the most-selected group of its table, with intervals that all hold "
               "together — the numbers NYC Local Law 144 and the EEOC's four-fifths rule ask for.")
    dataset, model = state.get(state.DATASET), state.get(state.MODEL)
    widgets.sidebar_status()
    if dataset is None or model is None:
        st.info("To scan the groups, choose a dataset (Data page) and a model (Model page) — or load the demo on "
                "the Overview page.")
        st.stop()

    frame = dataset.frame
    columns = list(frame.columns)
    defaults = [c for c in dataset.schema.protected if c in columns]
    numeric = [c for c in columns if str(frame[c].dtype).startswith(("int", "float")) and c != dataset.schema.label]
    with st.container(border=True):
        c1, c2 = st.columns([3, 2])
        state.seed("groups_protected", defaults)
        protected = c1.multiselect("Protected attributes", columns, key="groups_protected")
        state.keep("groups_protected", protected)
        state.seed("groups_binned", [])
        binned = c2.multiselect("Also a numeric attribute, cut into quantile bins (optional)", numeric,
                                key="groups_binned")
        state.keep("groups_binned", binned)
        c3, c4, c5, c6 = st.columns([1, 1, 2, 1])
        state.seed("groups_nbins", 4)
        n_bins = c3.number_input("Bins", min_value=2, max_value=10, key="groups_nbins", disabled=not binned)
        state.keep("groups_nbins", n_bins)
        state.seed("groups_depth", 2)
        depth = c4.number_input("Depth", min_value=1, max_value=4, key="groups_depth",
                                help="intersections of up to this many attributes")
        state.keep("groups_depth", depth)
        state.seed("groups_mode", "anytime")
        mode = c5.selectbox("Mode", list(MODES), format_func=MODES.get, key="groups_mode")
        state.keep("groups_mode", mode)
        state.seed("groups_delta", 0.05)
        delta = c6.selectbox("Failure probability", DELTAS, key="groups_delta",
                             help="every interval holds at once with probability at least 1 minus this",
                             disabled=mode == "exact")
        state.keep("groups_delta", delta)
        bins = {name: int(n_bins) for name in binned}
        key = scan_key(state.get(state.DATASET_KEY), _decisions_key(), protected, bins, depth, delta, mode,
                       "selection")
        cached = key in st.session_state.get(SCANS, {})
        run = st.button("Run the scan", type="primary", key="groups_run", icon=":material/grid_view:",
                        disabled=not (protected or binned))
    if run or cached:
        try:
            with st.spinner("Scanning every group…"):
                result = cached_scan(key, lambda: _run_scan(dataset, protected, bins, int(depth), float(delta), mode,
                                                            "selection"))
        except FairauditError as err:
            st.error(str(err))
            st.stop()
        st.session_state[CURRENT] = key
    elif st.session_state.get(CURRENT) in st.session_state.get(SCANS, {}):
        result = st.session_state[SCANS][st.session_state[CURRENT]]
        st.caption("Showing the last scan (its choices differ from those above: press **Run the scan** for theirs).")
    else:
        st.info("Choose the attributes and press **Run the scan**.")
        st.stop()
    _show(result)


def _show(result) -> None:
    import streamlit as st

    from fairaudit.subgroups import regulatory
    from fairaudit.subgroups.wording import simultaneous_note
    from fairaudit.ui import selection
    from fairaudit.viz.scan import CELL, scan_frame, scan_heatmap

    head, lines = regulatory.finding(result, "eeoc")
    with st.container(border=True, key="groups_finding"):
        st.markdown(f"**{head}**")
        for line in lines:
            st.markdown(f"- {line}")
    st.info(f"**Guarantee.** {result.guarantee}", icon=":material/verified:")
    note = simultaneous_note(len(result.cells), result.mode)
    if note:
        st.caption(note)
    st.caption(f"What it assumes: {result.assumption}. Rows: {result.rows_line()}; data "
               f"{regulatory.hash_line(result)}; decision: {result.decision or '—'}.")
    if result.undecided():
        st.caption(UNDECIDED_HELP)
    for warning in result.warnings:
        st.warning(warning)

    ids = [c.id for t in result.tables for c in t.cells]
    chosen = st.session_state.get(CELL_STATE)
    if chosen not in ids:
        chosen = first_cell(result)
    left, right = st.columns([5, 4])
    with left:
        st.subheader("Impact ratios by intersection")
        st.caption("Click a cell to see its convergence and add it to the specification. Colour: certified below "
                   f"{result.threshold:g} (vermillion), undecided (orange), certified above (blue), excluded: under "
                   f"{100 * result.min_share:g}% of the rows, rate only (grey). Hover for the intervals.")
        event = st.altair_chart(scan_heatmap(result, selected=chosen), on_select="rerun", selection_mode=[CELL],
                                key=f"groups_heatmap_{hash(st.session_state.get(CURRENT)) & 0xFFFFFFF}",
                                width="content")
        clicked = selection.event_ids(event, CELL)
        if clicked and clicked[-1] in ids and clicked[-1] != st.session_state.get("groups_clicked"):
            chosen = clicked[-1]  # a new click wins over the select box
            st.session_state["groups_clicked"] = chosen
            st.session_state["groups_cell_box"] = chosen
    with right:
        if st.session_state.get("groups_cell_box") not in ids:
            st.session_state["groups_cell_box"] = chosen
        chosen = st.selectbox("Cell", ids, key="groups_cell_box", format_func=lambda i: cell_title(result, i))
        st.session_state[CELL_STATE] = chosen
        _cell_panel(result, result.cell(chosen))

    st.subheader("Every cell")
    table = scan_frame(result).sort_values("rank")[["rank", "table", "name", "rows", "share", "selected",
                                                    "rate_text", "ratio_text", "flag_label"]]
    st.dataframe(table.rename(columns={"rate_text": "rate [interval]", "ratio_text": "impact ratio [interval]",
                                       "flag_label": "flag"}), hide_index=True, width="stretch",
                 column_config={"share": st.column_config.NumberColumn(format="percent")})
    _downloads(result)


def _cell_panel(result, cell) -> None:
    import streamlit as st

    from fairaudit.base.errors import FairauditError
    from fairaudit.ui import flows, state
    from fairaudit.viz.scan import cell_convergence, flag_label, interval_text

    with st.container(border=True, key="groups_cell_panel"):
        st.markdown(f"**{cell_title(result, cell.id)}** — {flag_label(cell)}")
        st.markdown(f"{cell.rows:,} rows ({100 * cell.share:.1f}%), {cell.selected:,} selected · rate "
                    f"{interval_text(cell.rate)} · impact ratio {interval_text(cell.impact_ratio)}")
        chart = cell_convergence(result, cell.id, width=420, height=200)
        if chart is not None:
            st.altair_chart(chart, width="content")
        elif result.mode == "one-look":
            st.caption("One-look mode keeps no history over the rows: there is no convergence to plot.")
        line = spec_line(result, cell)
        if line is None:
            st.caption("This cell has no specification of its own: it is its table's most-selected cell (the "
                       "reference of the ratios)" if cell.is_reference else
                       "This cell has no impact ratio (under the minimum share): no specification to add.")
            return
        st.code(line, language=None, wrap_lines=True)
        if st.button("Add to specification", key="groups_add_spec", icon=":material/playlist_add:",
                     help="Appends this line to the specification the Audit page audits (a new version)."):
            text = append_spec(state.get(state.SPEC_TEXT), line)
            if text is None:
                st.session_state["groups_added"] = ("already", line)
            else:
                try:
                    spec, problems = flows.check_spec(text, state.get(state.DATASET))
                    if spec is None:
                        raise FairauditError("; ".join(str(m) for _, m in problems) or "it does not parse")
                    flows.use_spec(text)
                    st.session_state["groups_added"] = ("added", line)
                except FairauditError as err:
                    st.session_state["groups_added"] = ("error", str(err))
        added = st.session_state.get("groups_added")
        if added and added[0] == "added" and added[1] == line:
            st.success("Added to the specification: the Audit page audits it on its next Run.",
                       icon=":material/check:")
        elif added and added[0] == "already" and added[1] == line:
            st.caption("This line is already in the specification.")
        elif added and added[0] == "error":
            st.error(f"Could not add it: {added[1]}")


def _downloads(result) -> None:
    import streamlit as st

    from fairaudit.report.scan import build_scan_pdf
    from fairaudit.subgroups import regulatory

    from fairaudit.base.errors import FairauditError

    st.subheader("Regulatory packs")
    st.caption("NYC Local Law 144's bias audit (rates and impact ratios with their intervals, the unknown and the "
               "small categories — LL144 sets no threshold) and the EEOC's four-fifths rule (with Fisher's exact "
               "test and the flip count): the finding on page 1, the guarantee, the audit's date, data source, rows "
               "and the data's hash.")
    c1, c2, c3 = st.columns([2, 3, 2])
    kind = c1.selectbox("Historical or test data", ["not stated", "historical", "test"], key="groups_data_kind",
                        help="LL144 (6 RCNY §5-302): historical data by default; test data only when historical "
                             "data is insufficient, and then the summary says why and how it was made")
    reason = c2.text_input("Why test data, and how it was made", key="groups_test_reason",
                           disabled=kind != "test")
    distributed = c3.text_input("Tool's distribution date (optional)", key="groups_distribution_date")
    excluded_why = ""
    if result.excluded():
        excluded_why = st.text_input(
            "Reason for leaving the small categories out of the impact ratios", key="groups_exclusion_reason",
            placeholder=regulatory.default_exclusion_reason(result.min_share))
    try:
        about = regulatory.About(data_kind=None if kind == "not stated" else kind,
                                 test_data_reason=reason if kind == "test" else None,
                                 distribution_date=distributed.strip() or None,
                                 exclusion_reason=excluded_why.strip() or None)
    except FairauditError as err:
        st.warning(str(err))
        return
    cols = st.columns(4)
    for i, (template, short) in enumerate((("ll144", "LL144"), ("eeoc", "EEOC"))):
        cols[2 * i].download_button(f"{short} table (CSV)", regulatory.to_csv(result, template, about),
                                    file_name=f"fairaudit-scan-{template}.csv", mime="text/csv",
                                    key=f"groups_csv_{template}")
        pdfs = st.session_state.setdefault("groups_pdfs", {})
        pdf_key = (st.session_state.get(CURRENT), template, about)
        if pdf_key not in pdfs:
            if len(pdfs) > 4:
                pdfs.clear()
            pdfs[pdf_key] = build_scan_pdf(result, template, about=about)
        cols[2 * i + 1].download_button(f"{short} report (PDF)", pdfs[pdf_key], file_name=f"fairaudit-scan-"
                                        f"{template}.pdf", mime="application/pdf", key=f"groups_pdf_{template}")
