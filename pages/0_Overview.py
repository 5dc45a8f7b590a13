"""Overview: the current audit at a glance, "Load demo audit", and what to do next.

Before anything is loaded the page introduces fairaudit and leads with the demo. Once the session has a result or
a dataset of the user's, it leads with that audit (its summary and the next step) and the demo becomes a small
secondary button (it would replace the user's dataset, model and specification)."""
import streamlit as st

from fairaudit.base.errors import FairauditError
from fairaudit.ui import flows, state, widgets
from fairaudit.ui import options as ui_options
from fairaudit.ui.progress import progress_bar

widgets.page_setup("Overview")

INTRO = ("fairaudit checks a model's decisions against a **fairness specification** written in a small language, "
         "for example *the favourable-decision rate of men and women differs by less than 0.1*. For every part of "
         "the specification it computes an interval that contains the true value, and a verdict — **certified**, "
         "**violated** or **undecided** — that comes with the guarantee of the engine that computed it:")


def intro() -> None:
    st.write(INTRO)
    st.markdown("\n".join(f"- **{e.title}**: {e.summary}." for e in ui_options.loaded_engines()))


def demo_button(primary: bool) -> None:
    """"Load demo audit": the page's first action before anything is loaded, a small secondary one after."""
    clicked = st.button("Load demo audit", type="primary" if primary else "secondary", key="load_demo",
                        icon=":material/play_arrow:",
                        help=None if primary else "Replaces the current dataset, model and specification with the "
                                                  "demo's (Adult census data, logistic regression, sex/race parity).")
    if clicked:
        try:
            with st.status("Loading the demo…", expanded=True) as status:
                with progress_bar("Loading the demo", status) as bar:
                    flows.load_demo(log=st.write, on_progress=bar)
                status.update(label="Demo loaded and audited", state="complete")
            st.session_state["demo_just_loaded"] = True
        except FairauditError as err:
            st.error(str(err))
        st.rerun()


def next_steps() -> None:
    if state.get(state.RESULT) is not None:
        st.success("**Next:** open the Audit page and click a node of the tree to see how its bounds narrowed as "
                   "decisions arrived. Then change a threshold on the Specification page and run it again; the "
                   "Report page gives the PDF to file.", icon=":material/arrow_forward:")
        st.page_link("pages/4_Audit.py", label="Open the Audit page", icon=":material/account_tree:")
        st.page_link("pages/3_Specification.py", label="Refine the specification", icon=":material/edit_note:")
        st.page_link("pages/5_Report.py", label="Download the report", icon=":material/picture_as_pdf:")
    else:
        st.info("**Next:** train or choose the model whose decisions you audit, write the specification, then run "
                "the audit.", icon=":material/arrow_forward:")
        st.page_link("pages/2_Model.py", label="Choose the model", icon=":material/model_training:")
        st.page_link("pages/3_Specification.py", label="Write the specification", icon=":material/edit_note:")
        st.page_link("pages/4_Audit.py", label="Run the audit", icon=":material/account_tree:")


st.title("fairaudit")
own = state.get(state.RESULT) is not None or state.get(state.DATASET) is not None
if own:  # the session's own audit first; the introduction and the demo are secondary
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.subheader("Current audit" if state.get(state.RESULT) is not None else "Current data")
        widgets.summary()
    with right:
        next_steps()
        st.divider()
        with st.expander("What fairaudit does"):
            intro()
        st.caption("A worked example instead: the demo replaces the current dataset, model and specification.")
        demo_button(primary=False)
else:
    intro()
    left, right = st.columns([3, 2], gap="large")
    with right:
        st.subheader("Start here")
        st.write("Load the demo — Adult census data, a logistic-regression model and a sex/race demographic-parity "
                 "specification — and audit it in one click, or set up your own audit step by step: "
                 "**Data → Model → Specification → Audit → Report** (sidebar).")
        demo_button(primary=True)
    with left:
        st.subheader("Current audit")
        widgets.summary()
widgets.sidebar_status()
