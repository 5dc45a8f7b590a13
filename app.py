"""fairaudit dashboard: entry page."""
import streamlit as st

st.set_page_config(page_title="fairaudit", layout="wide")
st.title("fairaudit")
st.write(
    "Audit a model's decisions against a fairness specification and get a verdict that carries its "
    "guarantee: certified true, violated, or undecided."
)
