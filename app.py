"""fairaudit dashboard: the entry point (``streamlit run app.py``). It sets up the page and the navigation;
each page lives in ``pages/``."""
import streamlit as st

from fairaudit.ui import widgets

widgets.app_setup()

PAGES = [
    st.Page("pages/0_Overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("pages/1_Data.py", title="Data", icon=":material/table:"),
    st.Page("pages/2_Model.py", title="Model", icon=":material/model_training:"),
    st.Page("pages/3_Specification.py", title="Specification", icon=":material/edit_note:"),
    st.Page("pages/4_Audit.py", title="Audit", icon=":material/account_tree:"),
    st.Page("pages/5_Report.py", title="Report", icon=":material/picture_as_pdf:"),
    st.Page("pages/6_Groups.py", title="Groups", icon=":material/grid_view:"),
    st.Page("pages/7_Compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/8_Repair.py", title="Repair", icon=":material/build:"),
]
st.navigation(PAGES).run()
