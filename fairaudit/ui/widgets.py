"""Blocks drawn by several pages: the audit summary and the verdict badge."""
from __future__ import annotations

import streamlit as st

from fairaudit.ui import state
from fairaudit.ui.logic import verdict_sentence
from fairaudit.viz.palette import VERDICTS, normalise_verdict


def verdict_badge(verdict: str | None) -> str:
    """Markdown/HTML for a coloured verdict label (colour-blind-safe palette, text always spelled out)."""
    key = normalise_verdict(verdict) if verdict is not None else "term"
    label, colour = VERDICTS[key]
    if verdict is None:
        label = "not run"
    return (f"<span style='background:{colour};color:white;padding:2px 10px;border-radius:10px;"
            f"font-weight:600'>{label}</span>")


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
        st.code(spec.strip(), language=None)
    else:
        st.markdown("**Specification:** none (Specification page)")
    if result is not None:
        status = meta.get("status", "finished")
        st.markdown(f"**Verdict:** {verdict_badge(result.verdict)} &nbsp; {result.guarantee}"
                    + (" — *stopped before the end*" if status == "stopped" else ""), unsafe_allow_html=True)
    else:
        st.markdown(f"**Verdict:** {verdict_badge(None)}", unsafe_allow_html=True)


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


def page_setup(title: str) -> None:
    """``st.set_page_config`` (wide), the shared CSS and the session defaults: the first call of every page."""
    st.set_page_config(page_title=f"{title} · fairaudit" if title != "fairaudit" else title, layout="wide")
    st.markdown(_CSS, unsafe_allow_html=True)
    state.init()
