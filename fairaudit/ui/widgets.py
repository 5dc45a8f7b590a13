"""Blocks drawn by several pages: the audit summary and the verdict badge."""
from __future__ import annotations

import streamlit as st

from fairaudit.ui import state
from fairaudit.ui.logic import guarantee_hint, verdict_sentence, verdict_summary
from fairaudit.viz.palette import VERDICTS, normalise_verdict


def verdict_badge(verdict: str | None) -> str:
    """Markdown/HTML for a coloured verdict label (colour-blind-safe palette, text always spelled out)."""
    key = normalise_verdict(verdict) if verdict is not None else "term"
    label, colour = VERDICTS[key]
    if verdict is None:
        label = "not run"
    ink = "#000000" if key in ("unknown", "term") else "#ffffff"  # contrast ≥ 4.5:1 on each background
    return (f"<span style='background:{colour};color:{ink};padding:2px 10px;border-radius:10px;"
            f"font-weight:600;white-space:nowrap'>{label}</span>")


def verdict_line(result, stopped: bool = False, shown_ids=None) -> None:
    """The verdict badge, its guarantee sentence and what Δ means, on their own lines (no overlap with charts);
    then which rows were audited, what the guarantee assumes, and every warning of the result as a banner.
    ``shown_ids``: the nodes whose panels are on this page (None: no panels here)."""
    asked = float(result.options.get("delta", 0.05) or 0.0)
    delta = float(getattr(result, "guarantee_delta", asked))
    worst = result.worst_node() if result.verdict not in ("true", "false") else None
    worst_name = None
    if worst is not None:
        worst_name = next((n.get("name") for n in result.nodes if n["id"] == worst["id"]), None) or worst["text"]
    shown = shown_ids is not None and worst is not None and worst["id"] in set(shown_ids)
    sentence = verdict_summary(result.verdict, delta, result.stop_step, result.steps,
                               result.info.get("unit", "observations"), worst_name, part_shown=shown)
    st.markdown(f"**Verdict:** {verdict_badge(result.verdict)} &nbsp; {sentence}"
                + (" — *stopped before the end (partial evidence)*" if stopped else ""), unsafe_allow_html=True)
    note = getattr(result, "guarantee_note", None)
    if note:
        st.caption(f"Δ = {asked:g} was asked for, but with the {note}. So the chance that this verdict is wrong "
                   f"is at most {min(delta, 1.0):g}.")
    else:
        st.caption(guarantee_hint(asked))
    audit_context(result)


def audit_context(result) -> None:
    """Which rows were audited, what the guarantee assumes, and each warning as a visible banner."""
    from fairaudit.report.content import audit_context as context_lines, result_warnings

    lines = context_lines(result)
    if lines:
        st.markdown("  \n".join(f"**{label}:** {text}" for label, text in lines))
    for warning in result_warnings(result):
        st.warning(warning, icon=":material/warning:")


def summary(compact: bool = False) -> None:
    """The current audit at a glance: dataset, model, spec, engine, verdict."""
    ds = state.get(state.DATASET)
    model_info = state.get(state.MODEL_INFO)
    spec = state.get(state.SPEC_TEXT)
    result = state.get(state.RESULT)
    meta = state.get(state.RESULT_META) or {}
    rows = [
        ("Dataset", f"{ds.name} — {len(ds):,} rows; label `{ds.schema.label}` = {ds.schema.favourable!r}; "
                    f"protected {', '.join(ds.schema.protected) or 'none'}" if ds is not None else "none chosen (Data page)"),
        ("Model", model_info["describe"] if model_info else "none (Model page)"),
        ("Engine", meta.get("engine", "—")),
    ]
    for name, value in rows:
        st.markdown(f"**{name}:** {value}")
    if spec.strip():
        st.markdown("**Specification:**")
        st.code(spec.strip(), language=None, wrap_lines=True)
    else:
        st.markdown("**Specification:** none (Specification page)")
    if result is not None:
        verdict_line(result, stopped=meta.get("status") == "stopped")
    else:
        st.markdown(f"**Verdict:** {verdict_badge(None)}", unsafe_allow_html=True)


def node_panel(node_id: str, nodes) -> None:
    """The selected node: its name and full text, estimate, interval, δ, verdict and why."""
    from fairaudit.ui.logic import explain_node, node_facts
    from fairaudit.viz.tree import short_labels

    node = next(n for n in nodes if n["id"] == node_id)
    facts = node_facts(node_id, nodes)
    verdict = (node.get("final") or {}).get("verdict")
    title = node.get("name") or short_labels(nodes).get(node_id, node_id)
    badge = verdict_badge(verdict) if verdict else ""
    st.markdown(f"**{title}** &nbsp; {badge}", unsafe_allow_html=True)
    st.code(node.get("text", ""), language=None, wrap_lines=True)
    shown = {k: v for k, v in facts.items() if k != "verdict"}
    st.markdown(" &nbsp;·&nbsp; ".join(f"{k} **{v}**" for k, v in shown.items()))
    st.markdown(explain_node(node_id, nodes))


def sidebar_status() -> None:
    ds = state.get(state.DATASET)
    model_info = state.get(state.MODEL_INFO)
    result = state.get(state.RESULT)
    with st.sidebar:
        st.caption("Current audit")
        st.markdown(f"Data: **{ds.name if ds is not None else '—'}**  \n"
                    f"Model: **{model_info['kind'] if model_info else '—'}**  \n"
                    f"Verdict: **{verdict_sentence(result.verdict) if result is not None else 'not run'}**")


_CSS = """
<style>
/* more room for the charts: narrower side padding of the main block */
.block-container, [data-testid="stMainBlockContainer"] {padding-top: 2.2rem; padding-left: 2.2rem;
                                                         padding-right: 2.2rem; max-width: 100%;}
h1 {padding-top: 0.2rem;}
/* shift-click on a tree node must not select the chart's text */
[data-testid="stVegaLiteChart"] svg text {user-select: none; -webkit-user-select: none;}
</style>
"""


def app_setup() -> None:
    """What ``app.py`` does before the navigation runs the page: wide layout, shared CSS, session defaults."""
    st.set_page_config(page_title="fairaudit", layout="wide")
    st.markdown(_CSS, unsafe_allow_html=True)
    state.init()


def page_setup(title: str) -> bool:
    """The first call of every page: its browser-tab title, and (when the page runs on its own, as in tests) the
    wide layout, CSS and session defaults that ``app.py`` otherwise sets. Returns True when the page has just
    been opened (the previous run showed another page)."""
    from fairaudit.ui.logic import entered_page

    st.set_page_config(page_title=f"{title} · fairaudit", layout="wide")
    st.markdown(_CSS, unsafe_allow_html=True)
    state.init()
    return entered_page(st.session_state, title)


def decision_offer(expression: str, key: str) -> None:
    """A spec file's ``# decision:`` header, offered visibly: what the file was written for, what the audit uses
    now, and one click to use the file's decisions."""
    from fairaudit.errors import FairauditError
    from fairaudit.ui import flows

    info = state.get(state.MODEL_INFO)
    now = f"the current model ({info['describe']})" if info else "no decisions yet"
    st.warning(f"This specification was written for the decisions `{expression}` (its `# decision:` header), "
               f"but the audit uses {now}: its verdict may differ from the file's.", icon=":material/info:")
    if st.button(f"Use the decisions `{expression}`", key=key, icon=":material/rule:",
                 help="The decision becomes this condition over the rows (true = favourable), as on the Model "
                      "page's 'Decisions from a column or expression'."):
        try:
            flows.use_decisions(expression)
            st.session_state["decision_applied"] = expression
            st.rerun()
        except FairauditError as err:
            st.error(f"These decisions do not fit the dataset: {err}")


def decision_applied_note() -> None:
    """Once, after ``decision_offer`` was clicked: say what the audit now uses."""
    expression = st.session_state.pop("decision_applied", None)
    if expression:
        st.success(f"The audit now uses the decisions `{expression}` (true = favourable). Press **Run** to audit.",
                   icon=":material/check:")
