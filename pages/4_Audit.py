"""Audit: choose the engine and its parameters, run with live plots, explore the tree node by node."""
import streamlit as st

from fairaudit import viz
from fairaudit.errors import FairauditError
from fairaudit.ui import flows, logic, state, widgets

widgets.page_setup("Audit")
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
    st.info("To run an audit, choose " + ", ".join(missing) + " — or load the demo on the start page.")

# ------------------------------------------------------------------------------------------------ engine
choices = logic.engine_choices(implemented, has_model=model is not None)
usable = [c.name for c in choices if c.available]
have_result = state.get(state.RESULT) is not None
with st.expander("Engine and parameters", expanded=not have_result):
    p0, p1, p2, p3, p4 = st.columns([1.3, 1, 1, 1, 1])
    engine = p0.selectbox("Engine", usable or ["(none available)"], key="audit_engine", disabled=not usable)
    delta = p1.number_input("Δ (failure probability)", 0.001, 0.5, 0.05, 0.01, format="%.3f", key="audit_delta",
                            help="The verdict holds with probability at least 1 − Δ.")
    batch = p2.number_input("Batch", 1, 10_000, 5, key="audit_batch", help="Observations per check.")
    bound = p3.selectbox("Bound", list(state.optional("fairaudit.bounds.concentration", "BOUNDS") or ["hoeffding"]),
                         key="audit_bound", help="Concentration inequality (confidence sequence) of each E[...].")
    splits = list(state.optional("fairaudit.bounds.allocation", "SPLITS") or ["equal"])
    split = p4.selectbox("δ split", splits, index=splits.index("optimized") if "optimized" in splits else 0,
                         key="audit_split",
                         help="How Δ is divided among the leaves: AVOIR's optimisation or equal shares.")
    q0, q1, q2, q3, q4 = st.columns([1.3, 1, 1, 1, 1])
    unavailable = {}
    for c in choices:
        if not c.available:
            unavailable.setdefault(c.reason, []).append(c.name)
    q0.caption("  \n".join(f"{', '.join('~~' + n + '~~' for n in names)}: {reason}"
                           for reason, names in unavailable.items()))
    order = q1.selectbox("Row order", ["given", "shuffle"], key="audit_order")
    seed = q2.number_input("Seed", 0, 1_000_000, 0, key="audit_seed", disabled=order == "given")
    budget = q3.number_input("Time budget (s)", 1.0, 3600.0, 60.0, 5.0, key="audit_budget")
    stop_when = q4.checkbox("Stop when decided", value=False, key="audit_stop",
                            help="Stop at the first step at which the whole specification is decided.")
options = {"engine": engine, "delta": float(delta), "batch": int(batch), "bound": bound, "split": split,
           "order": order, "seed": int(seed), "stop": bool(stop_when), "time_budget": float(budget)}
b1, b2, status_col = st.columns([1, 1, 10], vertical_alignment="center")
can_run = bool(usable) and not missing
run = b1.button("Run", type="primary", key="audit_run", disabled=not can_run, width="stretch")
b2.button("Stop", key="audit_stop_button", help="Interrupts the run; the evidence so far is kept.", width="stretch")
if not implemented:
    st.warning("The monitor engine is not available yet in this build: nothing can run.")

run = run or (st.session_state.pop("audit_autorun", False) and can_run)

status_box = status_col.empty()
left, right = st.columns([11, 10], gap="medium")
tree_box = left.empty()
plot_box = right.empty()

TREE_W, PLOT_W = 540, 400


def draw_live(result, done: bool) -> None:
    nodes = result.nodes
    frame = result.to_frame()
    tree_box.altair_chart(viz.tree_chart(nodes, width=TREE_W), width="content")
    sel = state.get(state.SELECTED) or logic.default_selection(nodes)
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
    except FairauditError as err:
        st.error(str(err))
    st.rerun()

# ------------------------------------------------------------------------------------------------ explore
result = state.get(state.RESULT)
meta = state.get(state.RESULT_META) or {}
if result is None:
    tree_box.caption("Run an audit to see the specification tree with its verdicts.")
    widgets.sidebar_status()
    st.stop()

nodes = result.nodes
ids = [n["id"] for n in nodes]
kinds = {n["id"]: n["kind"] for n in nodes}
stopped = " — stopped before the end (partial evidence)" if meta.get("status") == "stopped" else ""
status_box.markdown(f"**Verdict:** {widgets.verdict_badge(result.verdict)} &nbsp; {result.guarantee}{stopped}",
                    unsafe_allow_html=True)

with left:
    # no initial ``value`` in the spec: the spec stays the same across reruns, so the browser keeps the
    # selection it shows, and the chart's event is the one source of truth
    event = tree_box.altair_chart(viz.tree_chart(nodes, width=TREE_W),
                                  on_select="rerun", selection_mode=[viz.SELECTION], key="audit_tree",
                                  width="content")
    selected, last = logic.next_selection(state.get(state.SELECTED), state.get(state.LAST_EVENT),
                                          logic.event_ids(event, viz.SELECTION), ids)
    state.put(state.SELECTED, selected)
    state.put(state.LAST_EVENT, last)
    st.caption("Click a node to plot it; shift-click a second node to compare the two; double-click to clear.")

frame = result.to_frame()
shown = selected or logic.default_selection(nodes)
panels = logic.panels_for(shown, kinds, {i: viz.has_rates(frame, i) for i in shown if kinds.get(i) == "fair"})
with right:
    plot_box.empty()
    if not selected:
        st.caption("Showing the most critical comparison; click any node of the tree to change.")
    for panel in panels:
        if panel.kind == "convergence":
            st.altair_chart(viz.convergence_chart(frame, list(panel.nodes), nodes, stop_step=result.stop_step,
                                                  width=PLOT_W, height=230 if len(panel.nodes) == 1 else 170),
                            width="content")
        else:
            st.altair_chart(viz.rates_chart(frame, panel.nodes[0], width=PLOT_W, stop_step=result.stop_step),
                            width="content")
    for i in shown:
        if kinds.get(i) == "fair" and not viz.has_rates(frame, i):
            st.caption(f"{i}: this engine reports no certified / unfair / undecided rates for Fair nodes.")
widgets.sidebar_status()
