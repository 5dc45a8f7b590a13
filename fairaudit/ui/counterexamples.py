"""Under a selected ``Fair[...]`` node of the Audit page: the individuals whose decision changes when only the
protected attribute changes (``result.counterexamples``, drawn by ``fairaudit.core.counterexamples_view``) — how many
were found and where, and a table of the first ones. Drawn from the counterexamples alone, whichever engine found
them."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from fairaudit.core import counterexamples_view as cv


def counterexample_table(result, node_id: str, container=None) -> bool:
    """Draw the node's counterexamples when the run has an entry for its leaf; returns whether it drew them."""
    found_all = getattr(result, "counterexamples", None)
    if not found_all:
        return False
    text = next((n.text for n in result.node_info if n.id == node_id), None)
    found = found_all.get(text) if text is not None else None
    if found is None:
        return False
    box = container or st
    with box.container(key=f"counterexamples_{node_id}"):
        st.markdown(f"**Counterexamples to {found.leaf}** — {cv.headline(found)}")
        rows = cv.table(found)
        if rows:
            st.dataframe(pd.DataFrame(rows), width="stretch", hide_index=True, height=min(38 + 35 * len(rows), 300))
            st.caption(cv.caption(found))
    return True
