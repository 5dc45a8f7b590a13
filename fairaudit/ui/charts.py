"""The pages' charts, each built once per what it shows: Streamlit reruns a page on every click, and building an
Altair chart (``fairaudit.viz``) and converting it to Vega-Lite (Altair validates it against the schema) takes
0.2–0.8 s a chart on two shared cores — most of a node click or a page switch (issue 30).

``show`` keeps the converted chart in this session (``st.session_state``, never shared with another browser
session) under a key saying what it shows — the chart's kind and arguments — and the objects it is drawn from (a
result, a dataset, a model), which are compared by identity: a new run, dataset or model is a new object, so an
old chart is never shown for it. The library (``fairaudit.viz``) knows nothing of this cache.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

import streamlit as st

CACHE = "chart_specs"  # session key: {key: (owners, Vega-Lite spec)}, oldest first
SIZE = 40              # charts kept per session (a tree, its node plots, the Data and Model pages' charts)


def _to_vega_lite() -> Callable[[Any], dict] | None:
    """Streamlit's own conversion of an Altair chart (what ``st.altair_chart`` draws), so that a cached chart is
    the same as one drawn directly; None if this Streamlit version has no such function (then nothing is cached)."""
    try:
        from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec
    except ImportError:  # pragma: no cover - another Streamlit version: draw without the cache
        return None
    return _convert_altair_to_vega_lite_spec


def cached_spec(what: Hashable, owners: tuple, build: Callable[[], Any]) -> dict | None:
    """The Vega-Lite spec of the chart ``build()`` returns, converted once per ``what`` (the chart's kind and
    arguments) and ``owners`` (the objects it is drawn from, by identity); None when charts cannot be cached here."""
    convert = _to_vega_lite()
    if convert is None:
        return None
    cache = st.session_state.setdefault(CACHE, {})
    entry = cache.pop(what, None)
    if entry is None or len(entry[0]) != len(owners) or any(a is not b for a, b in zip(entry[0], owners)):
        entry = (owners, convert(build()))
    cache[what] = entry  # (re)inserted: the most recently used is kept longest
    while len(cache) > SIZE:
        cache.pop(next(iter(cache)))
    return entry[1]


def show(box, what: Hashable, build: Callable[[], Any], owners: tuple = (), **kwargs):
    """Draw ``build()`` (an Altair chart) in ``box`` (``st`` or a container) as ``box.altair_chart(chart,
    **kwargs)`` would, from the cache when the same chart of the same ``owners`` was drawn before; returns what
    Streamlit returns (a selection event with ``on_select``)."""
    spec = cached_spec(what, owners, build)
    if spec is None:
        return box.altair_chart(build(), **kwargs)
    return box.vega_lite_chart(spec=dict(spec), **kwargs)  # (Streamlit takes the datasets out of its copy)
