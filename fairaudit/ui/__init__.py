"""Helpers of the Streamlit pages. ``logic`` is pure (unit-tested, no Streamlit); ``state`` wraps
``st.session_state`` and the caches; ``widgets`` draws the few blocks shared by several pages."""
