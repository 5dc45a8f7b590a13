"""Blocks drawn by several pages: the audit summary and the verdict badge."""
from __future__ import annotations

import streamlit as st

from fairaudit.core.explain import verdict_word
from fairaudit.ui import state
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


def not_backed_suffix(result) -> str:
    """Markdown said right after a verdict its own run found evidence against (``fairaudit.core.explain.not_backed``):
    the badge alone would read as a pass or a proof; empty otherwise."""
    from fairaudit.core.explain import NOT_BACKED, NOT_BACKED_WHY, not_backed

    return f" — **{NOT_BACKED}**: {NOT_BACKED_WHY}" if not_backed(result) else ""


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def verdict_line(result, shown_ids=None) -> None:
    """The headline (``result.claim``): the status badge and the verdict in plain words (``claim.summary``), then
    the verdict with its guarantee (``result.headline``), the engine's own result on its narrower scope when the
    headline is not it (``claim.second``), on their own lines (no overlap with charts); then why the run ended
    early (``stopped_reason``), why the guarantee is weaker than asked (its note), which rows were audited, what
    the guarantee assumes, every warning as a banner, and the mathematics under "How this was decided".
    ``shown_ids``: the nodes whose panels are on this page (None: no panels here), so that an undecided verdict
    can point at its part."""
    from fairaudit.core.claim import how_decided

    claim = result.claim
    worst = result.worst_node() if claim.verdict not in ("true", "false") else None
    pointer = ""
    if worst is not None and shown_ids is not None:
        pointer = (" Its panel is shown below." if worst["id"] in set(shown_ids)
                   else " Click it in the tree to see why.")
    st.markdown(f"**Verdict:** {verdict_badge(claim.status)} &nbsp; {claim.summary}{pointer}"
                f"{not_backed_suffix(result)}", unsafe_allow_html=True)
    st.markdown(_sentence(result.sentence))
    if claim.second:
        st.caption(claim.second)
    if result.stopped_reason:
        st.caption(_sentence(result.stopped_reason))
    guarantee = result.guarantee
    lines = [f"Computed by *{engine_title(result.engine)}*."]
    if guarantee.note:
        lines.append(_sentence(guarantee.note))
    if claim.guarantee is not guarantee:  # the headline holds under its own guarantee (a population check)
        lines.append(_sentence(f"The headline's intervals: {claim.guarantee.interval_meaning}"))
        lines.append(_sentence(f"The engine's own intervals (for what it modelled): {guarantee.interval_meaning}"))
    else:
        lines.append(_sentence(guarantee.interval_meaning))
    st.caption(" ".join(lines))
    audit_context(result)
    with st.expander("How this was decided"):
        for line in how_decided(result):
            st.markdown(f"- {_sentence(line)}")


def post_hoc_warning() -> None:
    """A banner when the current result audits a suggested threshold on the data it was suggested from (unless the
    result already carries it among its warnings: a finished run does, ``flows._store``)."""
    from fairaudit.ui import history

    meta = state.get(state.RESULT_META) or {}
    result = state.get(state.RESULT)
    source = history.post_hoc_source(state.get(state.SPEC_HISTORY) or [], meta.get("spec") or "",
                                     meta.get("audited_on"))
    if meta.get("confirmed") or getattr(result, "exploratory", None):  # the headline already says how it was chosen
        source = None
    if source is not None and history.post_hoc_note(source) not in (getattr(result, "warnings", None) or []):
        st.warning(history.post_hoc_note(source), icon=":material/call_split:")


def audit_context(result) -> None:
    """Which rows were audited, what the guarantee assumes, and each warning as a visible banner."""
    from fairaudit.core.claim import chosen_line

    lines = [(label, text) for label, text in (("The verdict is about", result.claim.about),
                                               ("Threshold chosen from the data", chosen_line(result)),
                                               ("Rows audited", result.rows_text),
                                               ("The guarantee assumes", result.assumption)) if text]
    if lines:
        st.markdown("  \n".join(f"**{label}:** {text}" for label, text in lines))
    for warning in dict.fromkeys(str(w) for w in result.warnings if str(w).strip()):
        st.warning(warning, icon=":material/warning:")


def summary(result=None, meta: dict | None = None, verdict: bool = True) -> None:
    """An audit at a glance: dataset, model, spec, engine, verdict — the page's result (``state.RESULT``) unless
    ``result`` and its ``meta`` are given. The specification shown is the one the result audited; an edit made
    since is said. ``verdict=False``: without the verdict's lines (a page that shows them above already)."""
    ds = state.get(state.DATASET)
    model_info = state.get(state.MODEL_INFO)
    current = state.get(state.SPEC_TEXT)
    if result is None:
        result, meta = state.get(state.RESULT), state.get(state.RESULT_META)
    meta = meta or {}
    audited = meta.get("spec") if result is not None else None
    spec = audited if audited is not None and audited.strip() else current
    if result is not None and meta.get("program_sha"):  # a population program's audit: no dataset or model
        st.markdown(f"**Population program:** {meta.get('data') or '—'} (sha256 {meta['program_sha'][:12]}…)")
        st.markdown(f"**Engine:** {engine_title(meta.get('engine'))}")
        st.markdown("**Specification:**")
        st.code((meta.get("spec") or "").strip(), language=None, wrap_lines=True)
        if verdict:
            verdict_line(result)
        return
    from fairaudit.ui.flows import on_session_rows

    if result is not None and not on_session_rows(meta):  # a log's audit: its own data and decisions
        rows = [("Data", result.rows_text or meta.get("data") or "—"),  # the rows sentence names the log
                ("Decisions", meta.get("model") or "—"), ("Engine", engine_title(meta.get("engine")))]
    else:
        rows = [
            ("Dataset", f"{ds.name} — {len(ds):,} rows; label `{ds.schema.label}` = {ds.schema.favourable!r}; "
                        f"protected {', '.join(ds.schema.protected) or 'none'}" if ds is not None
             else "none chosen (Data page)"),
            ("Model", model_info["describe"] if model_info else "none (Model page)"),
            ("Engine", engine_title(meta.get("engine"))),
        ]
    for name, value in rows:
        st.markdown(f"**{name}:** {value}")
    if spec.strip():
        st.markdown("**Specification:**")
        st.code(spec.strip(), language=None, wrap_lines=True)
        if spec.strip() != current.strip():
            st.caption("The specification has been edited since this audit (Specification page): the one above is "
                       "the audited version; press **Run** on the Audit page to audit the edit.")
    else:
        st.markdown("**Specification:** none (Specification page)")
    if result is not None and verdict:
        verdict_line(result)
    elif result is None:
        st.markdown(f"**Verdict:** {verdict_badge(None)}", unsafe_allow_html=True)


def engine_title(name: str | None) -> str:
    if not name:
        return "—"
    from fairaudit import engines

    try:
        return engines.get(name).title or name
    except Exception:  # noqa: BLE001 - an engine this installation does not have
        return name


def node_panel(node_id: str, result) -> None:
    """The selected node: its name and full text, its numbers (``fairaudit.core.explain.node_facts``) and why its
    verdict is what it is (``explain_node``), worded under the result's guarantee and unit."""
    from fairaudit.core.explain import explain_node, node_facts
    from fairaudit.viz.tree import short_labels

    nodes = result.nodes
    node = next(n for n in nodes if n["id"] == node_id)
    facts = node_facts(node_id, nodes, result.guarantee, result.unit)
    shown = next(n for n in result.shown_nodes if n["id"] == node_id)
    verdict = (shown.get("final") or {}).get("verdict")
    title = node.get("name") or short_labels(nodes).get(node_id, node_id)
    badge = verdict_badge(verdict) if verdict else ""
    st.markdown(f"**{title}** &nbsp; {badge}", unsafe_allow_html=True)
    st.code(node.get("text", ""), language=None, wrap_lines=True)
    shown = {k: v for k, v in facts.items() if k != "verdict"}
    st.markdown(" &nbsp;·&nbsp; ".join(f"{k} **{v}**" for k, v in shown.items()))
    why = explain_node(node_id, nodes, result.guarantee, result.unit, labels=short_labels(nodes))
    population = (result.population or {}).get("nodes", {}) if result.scope == "modelled" else {}
    check = population.get(node_id)
    if check is not None:  # the engine's numbers are about its model; the badge is the population's verdict
        from fairaudit.core.explain import comparison_parts, interval, verdict_word

        parts = comparison_parts(node_id, nodes)  # a comparison: its compared term's interval, not left − right
        term = population.get(str(parts[0]["id"]), check) if parts is not None else check
        span = interval(term.get("lo"), term.get("hi"))
        said = f" ({verdict_word(check['verdict'])})" if check.get("verdict") else ""
        st.markdown(f"**For the population:** {span}{said}, from what the audited rows support (see How this was "
                    f"decided).  \n**For the modelled distribution alone:** {why}")
    else:
        st.markdown(why)
    suggestion_box(node_id, result)


def suggestion_box(node_id: str, result) -> None:
    """For an undecided comparison: the thresholds decidable now, the projection, what was tested
    (``fairaudit.core.suggest``), and buttons that apply a suggested threshold as a new version of the specification."""
    from fairaudit.core import suggest
    from fairaudit.ui import flows

    found = suggest.suggest_node(result, node_id)
    if found is None:
        return
    st.markdown("**Refinement suggestion**")
    st.markdown("\n".join(f"- {line}" for line in suggest.lines(found)))
    st.caption(suggest.POST_HOC)
    buttons = [(which, t) for which, t in (("certify", found.certify), ("refute", found.refute)) if t is not None]
    confirmable = _confirmable(result)
    for column, (which, threshold) in zip(st.columns(max(1, len(buttons))), buttons):
        number = f"{threshold.value:g}"
        label = (f"Use {number} (exploratory)" if which == "certify" else f"Use {number} (exploratory, refutes)")
        if column.button(label, key=f"suggest_{which}_{node_id}", icon=":material/call_split:",
                         help="Adds the specification with this threshold as a new version (a refinement of the "
                              "audited one); press Run to audit it. Its verdict on these data is exploratory: the "
                              "threshold was chosen after looking at them."):
            _act(flows.apply_suggestion, result, node_id, which)
        # the button replaces the specification's threshold (it does not re-audit the one written): it says so
        if confirmable and column.button(
                f"Use a threshold like {number}, certified on fresh rows", key=f"confirm_{which}_{node_id}",
                icon=":material/verified:",
                help="Replaces this comparison's threshold: the audited rows are split at random, a threshold is "
                     "chosen on one half and audited on the other, so its verdict is a certificate, not exploratory "
                     "(it is usually less tight than the suggestion on all the rows). The other comparisons keep "
                     "their thresholds."):
            _act(flows.confirm_suggestion, result, node_id, which)


def _act(action, *args) -> None:
    """Run a button's ``action``: its error as one message (never a traceback), else a rerun to show its effect."""
    try:
        action(*args)
    except Exception as err:  # noqa: BLE001 - a message, never a traceback
        st.error(str(err))
    else:
        st.rerun()


def _confirmable(result) -> bool:
    """Whether the current result's suggestion can be confirmed on fresh rows: an audit of the session's rows by
    an engine that reads them (``fairaudit.confirm``)."""
    from fairaudit.ui import flows

    meta = state.get(state.RESULT_META) or {}
    choice = meta.get("choice") or {}
    if not choice or not flows.on_session_rows(meta) or state.get(state.DATASET) is None:
        return False
    from fairaudit.api import confirmable

    return confirmable(choice["engine"])


def sidebar_status() -> None:
    ds = state.get(state.DATASET)
    model_info = state.get(state.MODEL_INFO)
    result = state.get(state.RESULT)
    meta = state.get(state.RESULT_META) or {}
    with st.sidebar:
        st.caption("Current audit")
        from fairaudit.ui.flows import on_session_rows, used_session_model

        if result is not None and meta.get("program_sha"):  # the result audits a population program
            audited = f"Program: **{meta.get('data') or '—'}**  \n"
        elif result is not None and not on_session_rows(meta):  # a log's audit: its data and decisions
            decided = model_info["kind"] if used_session_model(meta) and model_info else meta.get("model") or "—"
            audited = f"Data: **{meta.get('data') or '—'}**  \nDecisions: **{decided}**  \n"
        else:
            logged = model_info and model_info.get("kind") == "expression"  # decisions read from the rows
            decided = (f"Decisions: **{model_info.get('expression') or 'logged'}**" if logged else
                       f"Model: **{model_info['kind'] if model_info else '—'}**")
            audited = f"Data: **{ds.name if ds is not None else '—'}**  \n{decided}  \n"
        st.markdown(audited + f"Verdict: **{verdict_word(result.claim.key) if result is not None else 'not run'}**")


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


#: the browser tab's icon: an emoji, which Streamlit draws as an inline SVG. Without it the browser tab takes the
#: page's ``:material/…:`` icon, which Streamlit's frontend fetches from fonts.gstatic.com (offline: an error);
#: the navigation's own Material Symbols are drawn with the font bundled in Streamlit's static files.
PAGE_ICON = "⚖️"


def app_setup() -> None:
    """What ``app.py`` does before the navigation runs the page: wide layout, shared CSS, session defaults."""
    st.set_page_config(page_title="fairaudit", page_icon=PAGE_ICON, layout="wide")
    st.markdown(_CSS, unsafe_allow_html=True)
    state.init()


def page_setup(title: str) -> bool:
    """The first call of every page: its browser-tab title, and (when the page runs on its own, as in tests) the
    wide layout, CSS and session defaults that ``app.py`` otherwise sets. Returns True when the page has just
    been opened (the previous run showed another page)."""
    from fairaudit.ui.logic import entered_page

    st.set_page_config(page_title=f"{title} · fairaudit", page_icon=PAGE_ICON, layout="wide")
    st.markdown(_CSS, unsafe_allow_html=True)
    state.init()
    return entered_page(st.session_state, title)


def decision_offer(expression: str, key: str) -> None:
    """A spec file's ``# decision:`` header, offered visibly: what the file was written for, what the audit uses
    now, and one click to use the file's decisions."""
    from fairaudit.base.errors import FairauditError
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


def discarded_note() -> None:
    """Once, after a new dataset or model set the audit result aside: say so, and where its verdict is kept."""
    verdict = st.session_state.pop(state.DISCARDED, None)
    if verdict is not None and state.get(state.RESULT) is None:  # (not once a new result is there: the demo)
        st.info(f"The audit result ({verdict_word(verdict)}) was computed with the previous data or decisions, so "
                "it no longer applies and was set aside; its verdict stays in the version history (Audit page). "
                "Press **Run** on the Audit page to audit these.", icon=":material/info:")


def decision_applied_note() -> None:
    """Once, after ``decision_offer`` was clicked: say what the audit now uses."""
    expression = st.session_state.pop("decision_applied", None)
    if expression:
        st.success(f"The audit now uses the decisions `{expression}` (true = favourable). Press **Run** to audit.",
                   icon=":material/check:")
