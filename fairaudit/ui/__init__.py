"""Helpers of the Streamlit pages. Pure (no Streamlit, unit-tested): ``selection`` (the tree selection),
``history`` (the spec's versions), ``options`` (the engine picker and option widgets from the declarations),
``logic`` (the rest of the pages' small decisions). Streamlit-aware: ``state`` (session and caches), ``flows``
(multi-step actions: the demo, a run), ``audit_form`` (the generated engine block), ``widgets`` (blocks shared by
pages), ``progress`` (the one progress bar), ``charts`` (each chart converted once per what it shows).
Explanations of a result are the library's (``fairaudit.core.explain``)."""
