"""Overview: the current audit at a glance, "Load demo audit", and what to do next."""
import streamlit as st

from fairaudit.base.errors import FairauditError
from fairaudit.ui import flows, state, widgets
from fairaudit.ui import options as ui_options
from fairaudit.ui.progress import progress_bar

widgets.page_setup("Overview")

st.title("fairaudit")
st.write(
    "fairaudit checks a model's decisions against a **fairness specification** written in a small language, "
    "for example *the favourable-decision rate of men and women differs by less than 0.1*. For every part of the "
    "specification it computes an interval that contains the true value, and a verdict — **certified**, "
    "**violated** or **undecided** — that comes with the guarantee of the engine that computed it:"
)
st.markdown("\n".join(f"- **{e.title}**: {e.summary}." for e in ui_options.loaded_engines()))

left, right = st.columns([3, 2], gap="large")
with right:
    st.subheader("Start here")
    st.write("Load the demo — Adult census data, a logistic-regression model and a sex/race demographic-parity "
             "specification — and audit it in one click, or set up your own audit step by step: "
             "**Data → Model → Specification → Audit → Report** (sidebar).")
    if st.button("Load demo audit", type="primary", key="load_demo", icon=":material/play_arrow:"):
        try:
            with st.status("Loading the demo…", expanded=True) as status:
                with progress_bar("Loading the demo", status) as bar:
                    flows.load_demo(log=st.write, on_progress=bar)
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
