"""Audit: choose the engine and its options, run with live plots, explore the tree node by node, refine."""
import streamlit as st

from fairaudit import engines, viz
from fairaudit.core.explain import NOT_BACKED, compare_rows, verdict_word
from fairaudit.core.undecided_view import SHRINK
from fairaudit.engines.monitor.livelog import runs_live
from fairaudit.programs.population import ratio_spec
from fairaudit.ui import audit_form, charts, dask_run, flows, history, live, logic, selection, state, threshold, widgets
from fairaudit.ui.counterexamples import counterexample_table
from fairaudit.ui.findings import findings_section
from fairaudit.ui.undecided import undecided_where
from fairaudit.ui import options as ui_options
from fairaudit.ui.progress import progress_bar

entered = widgets.page_setup("Audit")
st.title("Audit")

dataset = state.get(state.DATASET)
model = state.get(state.MODEL)
spec_text = state.get(state.SPEC_TEXT)
meta = state.get(state.RESULT_META)
if meta and meta.get("status") == "running":  # the previous run was interrupted by Stop (or a page change)
    meta["status"] = "stopped"

have_result = state.get(state.RESULT) is not None
source = audit_form.source_picker()
population_mode = source == flows.POPULATION
program = None
if population_mode:  # a population program (.fr) instead of the dataset and model
    with st.expander("Population program", expanded=not have_result, icon=":material/groups:"):
        program = audit_form.program_form(dataset, model)
        property_kind, epsilon = audit_form.property_form()
    audited_text = ratio_spec(epsilon) if property_kind == "ratio" else spec_text
    missing = []  # the ratio is written from ε; an own specification is checked in its editor below
else:
    audited_text = spec_text
    missing = [what for what, ok in (("a dataset (Data page)", dataset is not None),
                                     ("a model (Model page)", model is not None),
                                     ("a specification (Specification page)", bool(spec_text.strip()))) if not ok]
unchecked = not population_mode and logic.unchecked_edit(spec_text, state.get(state.SPEC_DRAFT))
if unchecked:  # the analyst's text is on the Specification page, with its errors: not "no specification"
    st.warning(logic.unchecked_note(spec_text), icon=":material/edit_note:")
    missing = [m for m in missing if not m.startswith("a specification")]
if missing:
    st.info("To run an audit, choose " + ", ".join(missing) + " — or load the demo on the Overview page"
            + ("" if population_mode else ", or audit a population program (choose it above)") + ".")

# a spec file's headers ('# engine:', '# where:', an engine's options) set the widgets below, once per change of
# the headers; a header with an error is shown and applies nothing
from_headers, header_errors = audit_form.sync_headers(spec_text)
headers = flows.spec_headers(spec_text)

# ------------------------------------------------------------------------------------------------ engine
if population_mode:
    where_now, rows_now, where_problem, inputs_error = "", None, None, None
    if program.population is not None:
        st.session_state["audit_program_inputs"] = flows.population_inputs(program.population)
    inputs = st.session_state.get("audit_program_inputs")  # the last program that parsed: which engines fit
else:
    where_now, rows_now = audit_form.current_where_rows()
    where_problem = flows.check_where(where_now, dataset)
    inputs, inputs_error = (None, None) if where_problem else flows.current_inputs(where_now, rows_now)
parsed, _ = flows.check_spec(audited_text, None) if audited_text.strip() else (None, [])
choices = ui_options.engine_choices(parsed, inputs if (model is not None or population_mode) else None)
switched = audit_form.engine_switch_note(choices)
if switched:
    st.warning(switched, icon=":material/swap_horiz:")
with st.expander("Engine and options", expanded=not have_result, icon=":material/tune:"):
    chosen = audit_form.engine_picker(choices)
    engine = engines.get(chosen.name)
    form = audit_form.engine_form(engine, where_problem, inputs_error, rows_widgets=not population_mode)
    dask_choice = None if population_mode else dask_run.dask_picker(engine)  # a Parquet log on a local cluster
    note = ui_options.header_note(from_headers, engine)
    if note:
        st.caption(note)
    beside_engines = ui_options.companions(engine, choices, inputs)
    also = [other for other in beside_engines
            if audit_form.remembered_checkbox(f"Also compute with {other.title}", key=f"audit_also_{other.name}",
                           help=f"{other.summary[:1].upper() + other.summary[1:]}. Shown beside the run's values, "
                                "part by part, on the same rows.")]
for message in header_errors:
    st.error(f"The specification's headers: {message}")
if not chosen.available:
    st.warning(f"{chosen.title} cannot run: " + "; ".join(chosen.reasons) + ".", icon=":material/block:")

# ------------------------------------------------------------------------------------------------ refine
# the spec can be edited right here: change a threshold, press Run (the Specification page sees the same text)
if entered or "audit_spec_editor" not in st.session_state or st.session_state.get("audit_spec_synced") != spec_text:
    st.session_state["audit_spec_editor"] = spec_text
    st.session_state["audit_spec_synced"] = spec_text
edited, edited_spec, changed = spec_text, None, False
if not population_mode or property_kind == "spec":  # (the ratio property is written from ε above)
    with st.expander("Specification — edit a threshold here, then press Run",
                     expanded=not have_result and not missing, icon=":material/edit_note:"):
        edited = st.text_area("Specification", key="audit_spec_editor", height=130, label_visibility="collapsed")
        against = None if population_mode else dataset  # over a program: its variables (the engines check them)
        edited_spec, problems = flows.check_spec(edited, against) if edited.strip() else (None, [])
        for severity, message in problems:
            (st.warning if severity == "warning" else st.error)(message)
        changed = edited.strip() != spec_text.strip()
        if changed and edited_spec is not None:
            st.caption("Edited: **Run** audits this new version; it is added to the version history below.")

# the specification Run would audit must be valid for the current dataset (it may have changed since)
spec_errors = []
if not changed and spec_text.strip() and dataset is not None and not population_mode:
    spec_errors = [m for sev, m in flows.check_spec(spec_text, dataset)[1] if sev != "warning"]
    for message in spec_errors:
        if message not in header_errors:  # those are shown above, as header errors
            st.error(f"The specification does not fit the dataset **{dataset.name}**: {message}")
edit_broken = changed and edited.strip() and edited_spec is None
if edit_broken:
    st.error("The edited specification has errors (see above); fix them or undo the edit to run.")

decision = logic.header_decision(headers, getattr(model, "expression", None))
if decision and dataset is not None and not population_mode:
    widgets.decision_offer(decision, key="audit_use_decision")
widgets.decision_applied_note()

b1, b2, status_col = st.columns([1.1, 1.1, 9], vertical_alignment="center")
can_run = (chosen.available and not missing and not form.errors and not spec_errors and not header_errors
           and not edit_broken and (program is None or program.population is not None)
           and bool(audited_text.strip() or edited.strip()))
choice = form.choice if not dask_choice else {**form.choice, "dask": dask_choice}
if population_mode:  # what Run audits: the program's text (this session's) and the property
    choice = {**form.choice, "source": flows.POPULATION, "program": program.text, "program_name": program.name,
              "spec": audited_text}
run = b1.button("Run", type="primary", key="audit_run", disabled=not can_run, width="stretch",
                icon=":material/play_arrow:")
if b2.button("Stop", key="audit_stop_button", help="Interrupts the run (or the live log being watched); the evidence "
             "so far is kept.", width="stretch"):
    live.stop_watching(spec_text)  # a click while no Run is going: the live log's watch, if any, ends

if run and changed:
    if edited_spec is None:
        st.error("The edited specification has errors (see above); fix them or undo the edit before running.")
    else:  # the new version's headers set the options first (next run of the page), then it is audited
        flows.use_spec(edited)
        st.session_state["audit_spec_synced"] = edited
        st.session_state["audit_autorun"] = True
        st.rerun()
    run = False
run = run or (st.session_state.pop("audit_autorun", False) and can_run)

status_box = status_col.empty()
verdict_box = st.container()
left, right = st.columns([11, 10], gap="large")
# a heading above the tree: it also keeps the chart's hover toolbar clear of the verdict line
left.markdown("**Specification tree** — click a node to plot it; shift-click a second node to compare the two; "
              "double-click to clear.")
tree_box = left.empty()
plot_box = right.empty()

TREE_W, PLOT_W = 560, 400


class LiveDrawing:
    """Draws the tree and the default node's plot from the partial results of a run, at most about twice a second
    (the tree only when a verdict changes: drawing it costs ~0.15 s); the progress bar says the verdict so far."""

    def __init__(self, bar):
        self.bar = bar
        self.throttle = logic.Throttle(0.5)
        self.verdicts = None

    def __call__(self, result) -> None:
        self.bar.note = f"verdict so far: {verdict_word(result.claim.key)}"
        if not self.throttle.ready(force=result.complete):
            return
        nodes = result.nodes
        verdicts = tuple((n.get("final") or {}).get("verdict") for n in nodes)
        if verdicts != self.verdicts:
            tree_box.altair_chart(viz.tree_chart(result.shown_nodes, width=TREE_W, guarantee=result.guarantee), width="content")
            self.verdicts = verdicts
        sel = selection.rebase_selection(state.get(state.SELECTED), state.get(state.SELECTION_TREE), nodes)
        sel = sel or selection.default_selection(result)
        frame = result.to_frame()
        if sel and len(frame):
            plot_box.altair_chart(viz.convergence_chart(frame, sel, nodes, stop_step=result.stop_step,
                                                        width=PLOT_W, height=230, unit=result.unit,
                                                        guarantee=result.guarantee), width="content")


if run:
    try:
        with progress_bar(f"Auditing with {engine.title}", status_box) as bar:
            flows.run_audit(choice, on_progress=bar, on_result=LiveDrawing(bar))
    except Exception as err:  # noqa: BLE001 - shown as a message after the rerun, never as a traceback
        st.session_state["audit_error"] = logic.error_text(err)
    st.rerun()

failure = st.session_state.pop("audit_error", None)
if failure:
    message, caret = failure
    with verdict_box:
        st.error(f"The audit could not run: {message}" + (f"\n\n```\n{caret}\n```" if caret else ""),
                 icon=":material/error:")

# ------------------------------------------------------------------------------------------------ live log
# attach an audit to a growing decision log in the workspace (fairaudit.ui.live): its own tree and plot update
# as rows arrive; Stop makes its result the page's result
live.live_section(spec_text, form.choice.get("options") if runs_live(engine) else {},
                  default_pred=decision or getattr(model, "expression", None), where=where_now or None, model=model)

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
signature = selection.tree_signature(nodes)
if state.get(state.SELECTION_TREE) != signature:  # a new tree: the same nodes by name/text, never by id
    state.put(state.SELECTED, selection.rebase_selection(state.get(state.SELECTED), state.get(state.SELECTION_TREE),
                                                         nodes))
    state.put(state.LAST_EVENT, [])
    state.put(state.SELECTION_TREE, signature)

with left:
    # no initial ``value`` in the spec: the spec stays the same across reruns, so the browser keeps the
    # selection it shows, and the chart's event is the one source of truth; a new tree is a new widget (its
    # key names the tree), so a click on the old tree is never replayed on the new one
    event = charts.show(tree_box, ("tree", TREE_W), lambda: viz.tree_chart(result.shown_nodes, width=TREE_W,
                                                                            guarantee=result.guarantee),
                        owners=(result,), on_select="rerun", selection_mode=[viz.SELECTION],
                        key=f"audit_tree_{selection.tree_key(signature)}", width="content")
    # back from another page the chart is a fresh widget with no click yet: the selection made before is kept
    clicked = [] if entered else state.get(state.LAST_EVENT)
    selected, last = selection.next_selection(state.get(state.SELECTED), clicked,
                                              selection.event_ids(event, viz.SELECTION), ids)
    state.put(state.SELECTED, selected)
    state.put(state.LAST_EVENT, last)

frame = result.to_frame()
shown = selected or selection.default_selection(result)
with verdict_box:
    widgets.verdict_line(result, shown_ids=shown)
    same_source = (meta.get("source") == flows.POPULATION) == population_mode
    if same_source and meta.get("spec") is not None and meta["spec"].strip() != audited_text.strip():
        st.warning("The specification has changed since this result was computed: press **Run** to audit the "
                   "current version.", icon=":material/update:")
    widgets.post_hoc_warning()
    if result.engine != engine.name:
        st.warning(f"This result was computed by {widgets.engine_title(result.engine)}; the engine chosen now is "
                   f"{engine.title or engine.name}: press **Run** to audit with it.", icon=":material/update:")
    if (program is not None and meta.get("program_sha") and program.error is None
            and meta["program_sha"] != flows.program_sha(program.text)):
        st.warning("The population program has changed since this result was computed: press **Run** to audit "
                   "the current version.", icon=":material/update:")
    for other in also:  # the same audit by a second engine, part by part
        beside = flows.beside(other.name)
        if beside is None and result.complete:
            try:
                with progress_bar(f"Computing with {other.title}"):
                    beside = flows.run_beside(other.name)
            except Exception as err:  # noqa: BLE001 - the run's own result stays on screen
                st.error(f"{other.title} could not run: {logic.error_text(err)[0]}")
        if beside is not None:
            with st.expander(f"Beside this run: {other.title}", expanded=True, icon=":material/compare_arrows:"):
                st.markdown(f"{widgets.verdict_badge(beside.claim.status)} &nbsp; {beside.headline}",
                            unsafe_allow_html=True)
                st.dataframe(compare_rows(result, beside), width="stretch", hide_index=True)
                if beside.rows_text:
                    st.caption(f"Rows: {beside.rows_text}.")
fair_of = selection.fair_nodes(shown, nodes)  # a Fair node, or a comparison of one: its rates and counterexamples
fair_shown = list(dict.fromkeys(fair_of.values()))
panels = selection.panels_for(shown, kinds, {i: viz.has_rates(frame, i) for i in fair_shown}, fair_of)
with right:
    plot_box.empty()
    with st.container(border=True, key="node_panel"):
        if not selected:
            st.caption("Showing the most critical comparison; click any node of the tree to change.")
        for i in shown:
            widgets.node_panel(i, result)
    for panel in panels:
        if panel.kind == "convergence":
            height = 200 if len(panel.nodes) == 1 else 150
            charts.show(st, ("convergence", tuple(panel.nodes), PLOT_W, height),
                        lambda: viz.convergence_chart(frame, list(panel.nodes), nodes,
                                                      stop_step=result.stop_step, width=PLOT_W, height=height,
                                                      unit=result.unit, guarantee=result.guarantee),
                        owners=(result,), width="content")
            if any(result.node(i).kind == "cmp" and result.has_evalue(i) for i in panel.nodes):
                from fairaudit.core.explain import JOINT_TEST_HELP

                st.caption(JOINT_TEST_HELP)
        else:
            node_text = next((n["text"] for n in nodes if n["id"] == panel.nodes[0]), panel.nodes[0])
            charts.show(st, ("rates", panel.nodes[0], PLOT_W),
                        lambda: viz.rates_chart(frame, panel.nodes[0], width=PLOT_W, height=160,
                                                stop_step=result.stop_step, title=f"{node_text}: individuals",
                                                unit=result.unit),
                        owners=(result,), width="content")
            st.caption("Certified: at least this share of individuals keep their decision when only the attribute "
                       "changes (the lower bound); unfair: at least this share change it (1 − the upper bound); "
                       "undecided: the rest, the interval's width. " + SHRINK + " "
                       + result.guarantee.interval_meaning[:1].upper() + result.guarantee.interval_meaning[1:] + ".")
    for i in fair_shown:
        if not viz.has_rates(frame, i):
            st.caption(f"{i}: this engine reports no certified / unfair / undecided rates for Fair nodes.")

for i in fair_shown:  # full width, right under the rates: where what is left undecided lies
    undecided_where(result, i)

# ------------------------------------------------------------------------------------------------ threshold
# a scored model's decision threshold: re-audited at once from its cached scores (fairaudit.ui.threshold)
if not population_mode and not dask_choice and not spec_errors:
    threshold.threshold_section(dataset, model, spec_text, where_now or None, rows_now, inputs)

# ------------------------------------------------------------------------------------------------ counterexamples
for i in fair_shown:  # full width: a row is an individual with every feature
    counterexample_table(result, i)

# ------------------------------------------------------------------------------------------------ groups
findings_section(result)  # only when the run's engine found per-group rates, metrics, influences or a graph

# ------------------------------------------------------------------------------------------------ versions
st.subheader("Versions of the specification")
versions = state.get(state.SPEC_HISTORY)
if versions:
    st.dataframe(history.history_rows(versions), width="stretch", hide_index=True,
                 column_config={"specification": st.column_config.TextColumn(width="large")})
    st.caption("Every version you audit is kept with its verdict, the step at which it was decided and what it was "
               f"audited on (a verdict its own run found evidence against says \"{NOT_BACKED}\": see that run's "
               "warnings). Edit the specification above (or on the Specification page) and press Run to add one.")
widgets.sidebar_status()
