"""The Audit page's live decision log: attach an audit to a log that keeps growing, watch its tree and plot update
as rows arrive, Stop.

A log is a CSV file a service appends to, or a folder it adds Parquet files to, inside the workspace's ``logs/``
folder (``fairaudit.ui.workspace``): it is chosen by its bare name, never by a path, and symbolic links (the log
itself, or a file in a Parquet folder) are refused, so the dashboard reads nothing outside its workspace. The audit
runs in a background thread (``fairaudit.engines.monitor.livelog.LiveRun``: the same engine, drift checks and guarantee as
``fairaudit audit --follow --watch``); a fragment redraws it every ``REFRESH`` seconds. When it ends (Stop, or an
error) its final result becomes the page's result, to explore node by node like any other.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from fairaudit.ui import workspace
from fairaudit.ui.audit_form import keep, seed

RUN = "live_run"          # session key: the LiveRun of this session
KEPT = "live_kept"        # session key: id of the LiveRun whose final result is stored as the page's result
REFRESH = 1.0             # seconds between redraws while a log is followed
UNWATCHED = 60.0          # a run whose browser session is gone (and nobody drew it) this long stops following its log
LOG_SUFFIXES = (".csv",)


def list_logs(directory: Path) -> list[str]:
    """The logs in ``directory``: CSV files and folders (of Parquet files), by bare name; no links, no hidden
    entries; sorted."""
    if not directory.is_dir():
        return []
    out = []
    for p in directory.iterdir():
        if p.is_symlink() or not workspace._FILE.match(p.name):
            continue
        if p.is_dir() or (p.is_file() and p.suffix.lower() in LOG_SUFFIXES):
            out.append(p.name)
    return sorted(out)


def log_path(directory: Path, name: str) -> Path:
    """The log ``name`` inside ``directory`` (``WorkspaceError`` for a path, a link, a missing log or another kind
    of file)."""
    path = workspace.path_in(directory, name)
    if path.is_dir() or (path.is_file() and path.suffix.lower() in LOG_SUFFIXES):
        return path
    if not path.exists():
        raise workspace.WorkspaceError(f"{name} is not in {directory.name}/ (any more)")
    raise workspace.WorkspaceError(f"{name} is neither a CSV log nor a folder of Parquet files")


def start(spec_text: str, name: str, pred: str | None, options: dict, where: str | None = None, model=None):
    """A ``LiveRun`` on the workspace log ``name`` (the spec's text as on the Specification page; the decisions from
    ``pred``, a condition over the log's columns, or ``model``, the session's model; ``options``: the live engine's,
    order and stop are set for a live log)."""
    from fairaudit.engines.monitor.livelog import LiveRun, live_engine
    from fairaudit.spec.files import parse_file_text

    directory = workspace.folder("logs")
    path = log_path(directory, name)
    spec = parse_file_text(spec_text).spec
    engine = live_engine()
    known = {o.name for o in engine.all_options()}
    opts = engine.resolve_options({**{k: v for k, v in (options or {}).items() if k in known},
                                    "order": "given", "stop": False})
    return LiveRun(spec, path, pred=pred if model is None else None, model=model, options=opts, where=where or None,
                   name=name, links=False, unwatched=UNWATCHED, alive=_session_alive())


def _session_alive():
    """A callable telling whether this browser session is still connected (the run keeps following its log while
    the user is on another page), or None outside a Streamlit server (then only the Audit page's redraws count)."""
    try:
        from streamlit.runtime import exists, get_instance
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        if not exists() or ctx is None:
            return None
        runtime, session = get_instance(), ctx.session_id
        return lambda: runtime.is_active_session(session)
    except Exception:  # noqa: BLE001 - a Streamlit without these: the redraws only
        return None


def result_meta(run, spec_text: str | None = None) -> dict:
    """What the page records beside ``run``'s result (``state.RESULT_META``): the log and its decisions, the
    options, and the specification the run audits (the text it was attached with, not the editor's now)."""
    from fairaudit.engines.monitor.livelog import LIVE_ENGINE
    from fairaudit.ui.flows import LIVE

    # the condition as typed, in code (markdown would print "<=" as "≤", an expression the log does not hold)
    pred = f"`{run.pred}`" if run.pred and "`" not in run.pred else run.pred
    decided_by = f"decision {pred}" if run.model is None else run.model.describe()
    on = f"live log {run.name} · {run.pred if run.model is None else run.model.kind}"
    return {"engine": LIVE_ENGINE, "choice": {"engine": LIVE_ENGINE, "options": dict(run.options), "source": LIVE},
            "data": f"live log {run.name}", "model": decided_by, "audited_on": on,
            "session_model": run.model is not None, "status": "stopped" if run.done else "running",
            "started": run.started, "spec": getattr(run, "spec_text", None) or spec_text or "", "source": LIVE}


def keep_result(run, spec_text: str) -> None:
    """The final result of ``run`` as the page's result (and a version in the history), once."""
    from fairaudit.ui import history, state

    if st.session_state.get(KEPT) == id(run) or run.latest is None:
        return
    st.session_state[KEPT] = id(run)
    result = run.latest
    meta = {**result_meta(run, spec_text), "status": "stopped"}
    state.put(state.RESULT, result)
    state.put(state.RESULT_META, meta)
    state.put(state.SPEC_HISTORY, history.record_result(state.get(state.SPEC_HISTORY), meta["spec"], result,
                                                        audited_on=meta["audited_on"]))


def watched():
    """The live run this session is watching now, once it has a result (None otherwise): the Report page offers
    its result so far."""
    run = st.session_state.get(RUN)
    return run if run is not None and not run.done and run.latest is not None else None


def snapshot(run):
    """``run``'s result so far as a result of its own, marked a snapshot (``info["snapshot"]``: it says it was
    taken while the log is still watched, not that the run was stopped); the run goes on."""
    import copy

    result = copy.copy(run.latest)
    result.info = {**(result.info or {}), "snapshot": True}
    return result


LIVE_SO_FAR, PAGE_RESULT = "live", "page"  # what the Report page reports while a log is watched


def report_choice(has_result: bool):
    """On the Report page while this session watches a live log: a choice between that log's audit so far (the
    default: it is what the user is watching) and the page's result (``has_result``: there is one); the chosen
    run, or None for the page's result (also when no log is watched)."""
    run = watched()
    if run is None:
        return None
    labels = {LIVE_SO_FAR: f"the live log {run.name} so far ({run.rows:,} rows; still watched)",
              PAGE_RESULT: "the page's result (the verdict and tree on the Audit page)"}
    if has_result:  # a choice only when there are two things to report
        seed("report_which", LIVE_SO_FAR)
        which = st.radio("Report on", list(labels), key="report_which", format_func=labels.get, horizontal=True,
                         help="While a live log is watched the Audit page keeps the last Run's result at its top; "
                              "Stop there makes the live audit the page's result.")
        keep("report_which", which)
        if which != LIVE_SO_FAR:
            return None
    else:
        st.markdown(f"Reporting {labels[LIVE_SO_FAR]}.")
    st.caption(f"A snapshot of the live audit at {run.rows:,} rows: the watch goes on, and this page is rebuilt "
               "with the rows read by then when you open it again or change anything on it.")
    return run


MODEL_CHOICE = "the session's model"
CONDITION_CHOICE = "a condition over the log's columns"


def live_section(spec_text: str, options: dict, default_pred: str | None = None, where: str | None = None,
                 model=None) -> None:
    """The page's "Live decision log" block: choose a log and the decisions (a condition over its columns, or the
    session's ``model`` when there is one that is not itself a condition), Attach, watch, Stop."""
    if getattr(model, "kind", None) == "expression":
        model = None  # a decision expression is offered as the condition
    run = st.session_state.get(RUN)
    running = run is not None and not run.done
    directory = workspace.folder("logs")
    with st.expander("Live decision log — audit the rows of a growing log as they arrive", expanded=running,
                     icon=":material/sensors:"):
        names = list_logs(directory)
        st.caption(f"A CSV file your service appends decisions to, or a folder it adds Parquet files to, inside "
                   f"**{workspace.display(directory)}/** (the dashboard reads nothing outside its workspace). The "
                   "rows are audited in the order they arrive, every one of them, with the options chosen above "
                   "that a live log takes (row order, rows and stop-when-decided do not apply: the watch goes on "
                   "after a decision); the tree and the plot update as they come.")
        use_model = False
        if model is not None:
            seed("live_decisions", CONDITION_CHOICE)
            use_model = st.radio("Decisions", [CONDITION_CHOICE, MODEL_CHOICE], key="live_decisions",
                                 horizontal=True, disabled=running,
                                 help=f"The session's model ({model.describe()}) scores each arriving row from its "
                                      "feature columns; or a condition over a logged decision column.") == MODEL_CHOICE
            keep("live_decisions", MODEL_CHOICE if use_model else CONDITION_CHOICE)
        c1, c2 = st.columns([3, 5])
        if running and run.name in names:  # the form shows what is being watched
            st.session_state["live_log"] = run.name
        elif seed("live_log", names[0] if names else None) not in names:  # a log that appeared (or went) since
            st.session_state["live_log"] = names[0] if names else None
        name = c1.selectbox("Log", names, key="live_log", disabled=running,
                            placeholder=f"no log in {workspace.display(directory)}/ yet")
        keep("live_log", name)
        seed("live_pred", default_pred or "")
        if running and run.pred:
            st.session_state["live_pred"] = run.pred
        pred = "" if use_model else c2.text_input("Decision (a condition over the log's columns; true = favourable)",
                                                  key="live_pred", disabled=running,
                                                  placeholder="e.g. decile_score <= 4")
        if not use_model:
            keep("live_pred", pred)
        b1, b2, _ = st.columns([1.4, 1.2, 8], vertical_alignment="center")
        ready = bool(names and name and (use_model or (pred or "").strip()) and spec_text.strip())
        attach = b1.button("Attach", key="live_attach", type="primary", disabled=running or not ready,
                           icon=":material/sensors:", width="stretch")
        stop = b2.button("Stop", key="live_stop", disabled=not running, icon=":material/stop:", width="stretch",
                         help="Stops watching the log; the result so far becomes the page's result.")
    if attach and ready:
        try:
            run = start(spec_text, name, pred.strip() or None, options, where, model=model if use_model else None)
        except Exception as err:  # noqa: BLE001 - a message, never a traceback
            from fairaudit.ui.logic import error_text

            st.error(f"The live log could not be attached: {error_text(err)[0]}", icon=":material/error:")
            return
        run.spec_text = spec_text  # what it audits, whatever the editor holds when it is stopped
        st.session_state[RUN] = run
        st.rerun()  # the block again, with the log being watched: Stop enabled, the choices locked
    if stop and run is not None:
        run.stop()
        keep_result(run, spec_text)
        st.rerun()
    if run is not None and not run.done:
        _watch(spec_text)
    elif run is not None:
        _ended(run, spec_text, chosen=(name, None if use_model else (pred or "").strip() or None))


def stop_watching(spec_text: str) -> bool:
    """Stop the live log this session watches, if one is being watched, and make its result the page's (the
    page's own Stop button, as the block's Stop does); whether there was one."""
    run = st.session_state.get(RUN)
    if run is None or run.done:
        return False
    run.stop()
    keep_result(run, spec_text)
    return True


def _ended(run, spec_text: str, chosen=None) -> None:
    """The end of ``run``: its error (while the form still holds the choices it failed on: ``chosen``, the log
    and the condition), or its result made the page's (once) and a line saying so while it is the page's."""
    from fairaudit.ui import state

    if run.error:
        if chosen is None or chosen == (run.name, run.pred):
            st.error(f"The live log {run.name} could not be audited: {run.error}", icon=":material/error:")
        if run.latest is None:
            return
    keep_result(run, spec_text)  # the evidence so far is kept, also when the log failed later (truncated, …)
    if run.latest is not None and state.get(state.RESULT) is run.latest:
        st.caption(f"Live log {run.name}: {run.rows:,} rows audited; {run.ended() or 'stopped'}. The tree, the "
                   "plots and the verdict on this page are this run's.")


def _watch(spec_text: str) -> None:
    @st.fragment(run_every=REFRESH)
    def view() -> None:
        run = st.session_state.get(RUN)
        if run is None:
            return
        if run.done:  # ended by itself (an error, the input's end): the page shows the final result
            st.rerun()
        draw(run)

    view()


def draw(run) -> None:
    """The live view of ``run``: rows so far, the verdict and its guarantee, the drift warnings, the tree, the most
    critical node's plot."""
    from fairaudit import viz
    from fairaudit.ui import selection
    from fairaudit.ui.widgets import not_backed_suffix, verdict_badge

    run.touch()
    result = run.latest
    with st.container(border=True, key="live_view"):
        if result is None:
            st.info(f"Watching {run.name}: waiting for its first rows…", icon=":material/hourglass_top:")
            return
        st.markdown(f"**Live** · {run.name} · **{run.rows:,} rows so far** &nbsp; {verdict_badge(result.claim.status)} "
                    f"&nbsp; {result.headline}{not_backed_suffix(result)}", unsafe_allow_html=True)
        if result.assumption:
            st.caption(result.assumption[:1].upper() + result.assumption[1:] + ".")
        st.caption("While the log is watched, the verdict and tree at the top of the page are the last Run's; Stop "
                   "makes this live audit the page's result (then click any node of its tree to plot it). The Report "
                   "page reports it as it is so far.")
        for warning in dict.fromkeys(str(w) for w in result.warnings):
            st.warning(warning, icon=":material/warning:")
        if result.counterexamples:  # Fair[...] leaves: how many individuals the flip test caught so far
            from fairaudit.core import counterexamples_view as cv

            st.caption(" · ".join(f"**{found.leaf}**: {cv.found_text(found)}" for found in result.counterexamples.leaves)
                       + " — the table is under the node once the run is stopped")
        left, right = st.columns([11, 10], gap="large")
        # a short heading above each chart (the chart's hover toolbar sits at its right end, above the chart): the
        # toolbar then covers neither the last warning nor a line of text
        left.markdown("**Specification tree**")
        right.markdown("**Most critical comparison**")
        nodes = result.nodes
        left.altair_chart(viz.tree_chart(nodes, width=560, guarantee=result.guarantee), width="content")
        frame = result.to_frame()
        chosen = selection.default_selection(result)  # the headline's comparison (``fairaudit.core.focus``)
        if chosen and len(frame):
            right.altair_chart(viz.convergence_chart(frame, chosen, nodes, stop_step=result.stop_step, width=350,
                                                     height=230, unit=result.unit, guarantee=result.guarantee),
                               width="content")
