"""Under a selected ``Fair[...]`` node of the Audit page: where its undecided individuals are
(``fairaudit.core.undecided_view``), drawn when the run recorded it, whichever engine did — the ranges of the
features where they are spread most unevenly, beside where all individuals are, and one plain sentence."""
from __future__ import annotations

import streamlit as st

from fairaudit import viz
from fairaudit.core import undecided_view as uv
from fairaudit.ui import charts
from fairaudit.viz.undecided import TITLE

PANEL_W = 250


def undecided_where(result, node_id: str, container=None) -> bool:
    """Draw the chart and its caption when the run recorded where the node's undecided individuals are; returns
    whether it drew them."""
    record = uv.for_node(result, node_id)
    if record is None:
        return False
    box = container or st
    with box.container(key=f"undecided_where_{node_id}"):
        text = next((n.text for n in result.node_info if n.id == node_id), node_id)
        st.markdown(f"**{TITLE} — {text}**")
        if float(record.get("undecided") or 0) > 0:
            charts.show(st, ("undecided_where", node_id, PANEL_W),
                        lambda: viz.undecided_where_chart(record, panel_width=PANEL_W, title=None),
                        owners=(result,), width="content")
        st.caption(uv.caption(record))
    return True
