"""Overview: the current audit at a glance, "Load demo audit", and what to do next."""
import streamlit as st

from fairaudit.errors import FairauditError
from fairaudit.ui import flows, state, widgets

widgets.page_setup("Overview")

st.title("fairaudit")
st.write(
    "fairaudit checks a model's decisions against a **fairness specification** written in a small language, "
    "for example *the favourable-decision rate of men and women differs by less than 0.1*. It reads the decisions "
    "one after another and keeps, for every part of the specification, an interval that contains the true value. "
    "The verdict — **certified**, **violated** or **undecided** — comes with its guarantee: it is wrong with "
    "probability at most Δ (0.05 by default)."
)

left, right = st.columns([3, 2], gap="large")
with right:
    st.subheader("Start here")
    st.write("Load the demo — Adult census data, a logistic-regression model and a sex/race demographic-parity "
             "specification — and audit it in one click, or set up your own audit step by step: "
             "**Data → Model → Specification → Audit → Report** (sidebar).")
    if st.button("Load demo audit", type="primary", key="load_demo", icon=":material/play_arrow:"):
        try:
            with st.status("Loading the demo…", expanded=True) as status:
                flows.load_demo(log=st.write)
                status.update(label="Demo loaded and audited", state="complete")
            st.session_state["demo_just_loaded"] = True
        except FairauditError as err:
            st.error(str(err))
        st.rerun()
    if state.get(state.RESULT) is not None:
        st.success("**Next:** open the Audit page and click a node of the tree to see how its bounds narrowed as "
                   "decisions arrived. Then change a threshold on the Specification page and run it again.",
                   icon=":material/arrow_forward:")
        st.page_link("pages/4_Audit.py", label="Open the Audit page", icon=":material/account_tree:")
        st.page_link("pages/3_Specification.py", label="Refine the specification", icon=":material/edit_note:")
with left:
    st.subheader("Current audit")
    widgets.summary()
widgets.sidebar_status()
