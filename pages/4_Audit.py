"""Audit: choose the engine and its parameters, run with live plots, explore the tree node by node, refine."""
import streamlit as st

from fairaudit import viz
from fairaudit.report.content import OPTION_HELP
from fairaudit.ui import flows, logic, state, widgets

entered = widgets.page_setup("Audit")
st.title("Audit")

dataset = state.get(state.DATASET)
model = state.get(state.MODEL)
spec_text = state.get(state.SPEC_TEXT)
implemented = flows.engines_available()
meta = state.get(state.RESULT_META)
if meta and meta.get("status") == "running":  # the previous run was interrupted by Stop (or a page change)
    meta["status"] = "stopped"

missing = [what for what, ok in (("a dataset (Data page)", dataset is not None), ("a model (Model page)", model is not None),
                                 ("a specification (Specification page)", bool(spec_text.strip()))) if not ok]
if missing:
    st.info("To run an audit, choose " + ", ".join(missing) + " — or load the demo on the Overview page.")

# a spec file's '# where:', '# delta:' and '# order:' headers set the row filter, Δ and the row order (only
# when those headers change)
headers = flows.spec_headers(spec_text)
logic.apply_spec_headers(st.session_state, headers, getattr(model, "expression", None))

# ------------------------------------------------------------------------------------------------ engine
choices = logic.engine_choices(implemented, has_model=model is not None)
usable = [c.name for c in choices if c.available]
have_result = state.get(state.RESULT) is not None
with st.expander("Engine and parameters", expanded=not have_result, icon=":material/tune:"):
    p0, p1, p2, p3, p4 = st.columns([1.3, 1, 1, 1, 1])
    engine = p0.selectbox("Engine", usable or ["(none available)"], key="audit_engine", disabled=not usable,
                          help="\n\n".join(f"**{c.name}**: {c.description}" for c in choices))
    delta = p1.number_input("Δ (failure probability)", 0.001, 0.5, step=0.01, format="%.3f", key="audit_delta",
                            help="The verdict is wrong with probability at most Δ. Smaller Δ: wider intervals, "
                                 "later decisions.")
    batch = p2.number_input("Check every … observations", 1, 10_000, 5, key="audit_batch",
                            help="The bounds are recomputed and the verdict checked after every batch of this "
                                 "many decisions.")
    bound = p3.selectbox("Bound", flows.bound_choices(), key="audit_bound",
                         help="The concentration inequality (an anytime-valid confidence sequence) behind every "
                              "E[...] interval: hoeffding is the classic one, betting is usually tighter.")
    splits = flows.split_choices()
    split = p4.selectbox("Δ split", splits, index=splits.index("equal") if "equal" in splits else 0,
                         key="audit_split",
                         help="How Δ is shared among the estimated probabilities. equal: Δ/k each, the verdict is "
                              "wrong with probability ≤ Δ. optimized (AVOIR-OB): chooses the shares from the data "
                              "and may decide earlier, but then only guarantees k·Δ.")
    q0, q1, q2, q3, q4 = st.columns([1.3, 1, 1, 1, 1])
    unavailable = {}
    for c in choices:
        if not c.available:
            unavailable.setdefault(c.reason, []).append(c.name)
    q0.caption("  \n".join(f"{', '.join(names)}: {reason}" for reason, names in unavailable.items()))
    order = q1.selectbox("Row order", list(logic.ORDERS), key="audit_order",
                         help="shuffle (default): the rows arrive in a random order drawn with the seed, which the "
                              "guarantee assumes; given: in file order (a sorted file can mislead the monitor). "
                              "A spec file's '# order: given' header chooses the file order.")
    seed = q2.number_input("Seed", 0, 1_000_000, 0, key="audit_seed", disabled=order == "given")
    budget = q3.number_input("Time budget (s)", 1.0, 3600.0, 60.0, 5.0, key="audit_budget",
                             disabled=split == "equal",
                             help=OPTION_HELP["time_budget"][:1].upper() + OPTION_HELP["time_budget"][1:] + ".")
    stop_when = q4.checkbox("Stop when decided", value=False, key="audit_stop",
                            help="Stop at the first step at which the whole specification is decided.")
    where = st.text_input("Only rows where (optional)", key="audit_where",
                          placeholder='e.g. workclass == "Federal-gov"',
                          help="Audit only the rows matching this condition (AVOIR's materialised view); the "
                               "others never enter the stream, so steps count matching rows only. A spec file's "
                               "'# where:' header fills this in.")
    where_problem = flows.check_where(where, dataset)
    if where_problem:
        st.error(f"Row filter: {where_problem}")
    if st.session_state.get("audit_header_note"):
        st.caption(st.session_state["audit_header_note"])
    rows = None
    if flows.audit_accepts("rows"):  # the library decides which rows by default (held-out for its own model)
        rows = st.radio("Rows", ["default", "held-out", "all"], horizontal=True, key="audit_rows",
                        format_func=lambda r: {"default": "default (held-out when the model was trained here)"}.get(
                            r, r),
                        help=OPTION_HELP["rows"][:1].upper() + OPTION_HELP["rows"][1:] + ".")
        rows = None if rows == "default" else rows
options = {"engine": engine, "delta": float(delta), "batch": int(batch), "bound": bound, "split": split,
           "order": order, "seed": int(seed), "stop": bool(stop_when), "time_budget": float(budget),
           "where": where.strip(), **({"rows": rows} if rows else {})}

# ------------------------------------------------------------------------------------------------ refine
# the spec can be edited right here: change a threshold, press Run (the Specification page sees the same text)
if entered or "audit_spec_editor" not in st.session_state or st.session_state.get("audit_spec_synced") != spec_text:
    st.session_state["audit_spec_editor"] = spec_text
    st.session_state["audit_spec_synced"] = spec_text
with st.expander("Specification — edit a threshold here, then press Run", expanded=not have_result and not missing,
                 icon=":material/edit_note:"):
    edited = st.text_area("Specification", key="audit_spec_editor", height=130, label_visibility="collapsed")
    edited_spec, problems = flows.check_spec(edited, dataset) if edited.strip() else (None, [])
    for severity, message in problems:
        (st.warning if severity == "warning" else st.error)(message)
    changed = edited.strip() != spec_text.strip()
    if changed and edited_spec is not None:
        st.caption("Edited: **Run** audits this new version; it is added to the version history below.")

# the specification Run would audit must be valid for the current dataset (it may have changed since)
spec_errors = []
if not changed and spec_text.strip() and dataset is not None:
    spec_errors = [m for sev, m in flows.check_spec(spec_text, dataset)[1] if sev != "warning"]
    for message in spec_errors:
        st.error(f"The specification does not fit the dataset **{dataset.name}**: {message}")
edit_broken = changed and edited.strip() and edited_spec is None
if edit_broken:
    st.error("The edited specification has errors (see above); fix them or undo the edit to run.")

decision = logic.header_decision(headers, getattr(model, "expression", None))
if decision and dataset is not None:
    widgets.decision_offer(decision, key="audit_use_decision")
widgets.decision_applied_note()

b1, b2, status_col = st.columns([1.1, 1.1, 9], vertical_alignment="center")
can_run = bool(usable) and not missing and not where_problem and not spec_errors and not edit_broken
run = b1.button("Run", type="primary", key="audit_run", disabled=not can_run, width="stretch",
                icon=":material/play_arrow:")
b2.button("Stop", key="audit_stop_button", help="Interrupts the run; the evidence so far is kept.", width="stretch")

run = run or (st.session_state.pop("audit_autorun", False) and can_run)
if run and changed:
    if edited_spec is None:
        st.error("The edited specification has errors (see above); fix them or undo the edit before running.")
        run = False
    else:
        flows.use_spec(edited)
        st.session_state["audit_spec_synced"] = edited
        spec_text = edited

status_box = status_col.empty()
verdict_box = st.container()
left, right = st.columns([11, 10], gap="large")
# a heading above the tree: it also keeps the chart's hover toolbar clear of the verdict line
left.markdown("**Specification tree** — click a node to plot it; shift-click a second node to compare the two; "
              "double-click to clear.")
tree_box = left.empty()
plot_box = right.empty()

TREE_W, PLOT_W = 560, 400


_drawn_verdicts: list = [None]


def draw_live(result, done: bool) -> None:
    nodes = result.nodes
    frame = result.to_frame()
    verdicts = tuple((n.get("final") or {}).get("verdict") for n in nodes)
    if verdicts != _drawn_verdicts[0]:  # the tree changes only when a verdict does (drawing it costs ~0.15 s)
        tree_box.altair_chart(viz.tree_chart(nodes, width=TREE_W), width="content")
        _drawn_verdicts[0] = verdicts
    sel = logic.rebase_selection(state.get(state.SELECTED), state.get(state.SELECTION_TREE), nodes)
    sel = sel or logic.default_selection(nodes)
    if sel and len(frame):
        plot_box.altair_chart(viz.convergence_chart(frame, sel, nodes, stop_step=result.stop_step,
                                                    width=PLOT_W, height=230), width="content")


if run:
    progress = status_box.progress(0.0, text="Starting…")

    def on_update(partial, fraction: float, text: str) -> None:
        progress.progress(min(1.0, max(0.0, fraction)), text=text)
        draw_live(partial, False)

    try:
        flows.run_audit(options, on_update)
    except Exception as err:  # noqa: BLE001 - shown as a message after the rerun, never as a traceback
        st.session_state["audit_error"] = logic.error_text(err)
    st.rerun()

failure = st.session_state.pop("audit_error", None)
if failure:
    message, caret = failure
    with verdict_box:
        st.error(f"The audit could not run: {message}" + (f"\n\n```\n{caret}\n```" if caret else ""),
                 icon=":material/error:")

# ------------------------------------------------------------------------------------------------ explore
result = state.get(state.RESULT)
meta = state.get(state.RESULT_META) or {}
if result is None:
    tree_box.info("Press **Run** to audit: the specification appears here as a tree whose nodes are coloured by "
                  "their verdict; click a node to see how its bounds narrowed.", icon=":material/account_tree:")
    widgets.sidebar_status()
    st.stop()

nodes = result.nodes
ids = [n["id"] for n in nodes]
kinds = {n["id"]: n["kind"] for n in nodes}
signature = logic.tree_signature(nodes)
if state.get(state.SELECTION_TREE) != signature:  # a new tree: the same nodes by name/text, never by id
    state.put(state.SELECTED, logic.rebase_selection(state.get(state.SELECTED), state.get(state.SELECTION_TREE),
                                                     nodes))
    state.put(state.LAST_EVENT, [])
    state.put(state.SELECTION_TREE, signature)

with left:
    # no initial ``value`` in the spec: the spec stays the same across reruns, so the browser keeps the
    # selection it shows, and the chart's event is the one source of truth; a new tree is a new widget (its
    # key names the tree), so a click on the old tree is never replayed on the new one
    event = tree_box.altair_chart(viz.tree_chart(nodes, width=TREE_W),
                                  on_select="rerun", selection_mode=[viz.SELECTION],
                                  key=f"audit_tree_{logic.tree_key(signature)}", width="content")
    selected, last = logic.next_selection(state.get(state.SELECTED), state.get(state.LAST_EVENT),
                                          logic.event_ids(event, viz.SELECTION), ids)
    state.put(state.SELECTED, selected)
    state.put(state.LAST_EVENT, last)

frame = result.to_frame()
shown = selected or logic.default_selection(nodes)
with verdict_box:
    widgets.verdict_line(result, stopped=meta.get("status") == "stopped", shown_ids=shown)
    if meta.get("reason"):
        st.caption(meta["reason"][:1].upper() + meta["reason"][1:] + ".")
    if meta.get("spec") is not None and meta["spec"].strip() != spec_text.strip():
        st.warning("The specification has changed since this result was computed: press **Run** to audit the "
                   "current version.", icon=":material/update:")
panels = logic.panels_for(shown, kinds, {i: viz.has_rates(frame, i) for i in shown if kinds.get(i) == "fair"})
with right:
    plot_box.empty()
    with st.container(border=True, key="node_panel"):
        if not selected:
            st.caption("Showing the most critical comparison; click any node of the tree to change.")
        for i in shown:
            widgets.node_panel(i, nodes)
    for panel in panels:
        if panel.kind == "convergence":
            st.altair_chart(viz.convergence_chart(frame, list(panel.nodes), nodes, stop_step=result.stop_step,
                                                  width=PLOT_W, height=200 if len(panel.nodes) == 1 else 150),
                            width="content")
        else:
            node_text = next((n["text"] for n in nodes if n["id"] == panel.nodes[0]), panel.nodes[0])
            st.altair_chart(viz.rates_chart(frame, panel.nodes[0], width=PLOT_W, height=160,
                                            stop_step=result.stop_step, title=f"{node_text}: individuals"),
                            width="content")
            st.caption("Certified: at least this share of individuals keep their decision when only the attribute "
                       "changes (the lower bound); unfair: at least this share change it (1 − the upper bound); "
                       "undecided: the rest, the interval's width, which more evidence narrows. Each holds with the "
                       "node's confidence 1 − δ.")
    for i in shown:
        if kinds.get(i) == "fair" and not viz.has_rates(frame, i):
            st.caption(f"{i}: this engine reports no certified / unfair / undecided rates for Fair nodes.")

# ------------------------------------------------------------------------------------------------ versions
st.subheader("Versions of the specification")
history = state.get(state.SPEC_HISTORY)
if history:
    st.dataframe(logic.history_rows(history), width="stretch", hide_index=True,
                 column_config={"specification": st.column_config.TextColumn(width="large")})
    st.caption("Every version you audit is kept with its verdict and the step at which it was decided. Edit the "
               "specification above (or on the Specification page) and press Run to add one.")
widgets.sidebar_status()
