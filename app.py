"""fairaudit dashboard: entry page (the current audit at a glance, "Load demo audit")."""
import streamlit as st

from fairaudit.errors import FairauditError
from fairaudit.ui import flows, state, widgets

widgets.page_setup("fairaudit")

st.title("fairaudit")
st.write(
    "fairaudit checks a model's decisions against a fairness specification written in a small language and "
    "shows the specification as a tree whose every node carries a live estimate with its bounds. "
    "Each verdict — certified true, violated or undecided — comes with its guarantee: it holds with "
    "probability at least 1 − Δ, refined step by step as evidence accumulates."
)

left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader("Current audit")
    widgets.summary()
with right:
    st.subheader("Start here")
    st.write("Load the demo — Adult census data, a logistic-regression model and a sex/race demographic-parity "
             "specification — and run it, or walk through the pages in the sidebar: "
             "**Data → Model → Specification → Audit → Report**.")
    if st.button("Load demo audit", type="primary", key="load_demo"):
        try:
            with st.status("Loading the demo…", expanded=True) as status:
                flows.load_demo(log=st.write)
                status.update(label="Demo loaded", state="complete")
        except FairauditError as err:
            st.error(str(err))
        st.rerun()
    if state.get(state.RESULT) is not None:
        st.page_link("pages/4_Audit.py", label="Open the audit: tree and convergence plots", icon="🌳")
widgets.sidebar_status()
