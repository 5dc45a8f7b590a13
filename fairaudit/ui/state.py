"""Session state and caches of the dashboard (the only Streamlit-aware helpers besides ``widgets``).

Everything the user has chosen lives in ``st.session_state`` under the keys below, so it persists across
pages. Expensive work is cached: built-in datasets by name (``st.cache_resource``: one shared read-only copy),
trained models by (dataset rows in order, roles, kind, seed, split) in the session itself (``trained_model``: a
model never passes from one browser session to another).
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from fairaudit import data as fa_data
from fairaudit import models as fa_models

# session keys
DATASET = "current_dataset"    # fairaudit.data.Dataset
DATASET_KEY = "dataset_key"    # hashable identity of the dataset + roles (for caches)
MODEL = "model"                # fairaudit.models.Model
MODEL_INFO = "model_info"      # dict: how the model was obtained
SPEC_TEXT = "spec_text"        # the spec currently being edited
SPEC_HISTORY = "spec_history"  # list of versions (fairaudit.ui.history.record_version)
RESULT = "result"              # the last AuditResult
RESULT_META = "result_meta"    # dict: data, model, choice (engine, options, where, rows), status, started, spec
ALSO = "result_also"           # {"started", "engine", "result"}: the same audit by a second engine, beside RESULT
SELECTED = "selected_nodes"    # node ids selected in the tree
SELECTION_TREE = "selection_tree"  # the tree (selection.tree_signature) those ids belong to
LAST_EVENT = "tree_last_event"
SPEC_STARTER = "spec_starter"  # the starting spec last made for a dataset (``logic.starting_spec``), while untouched
SPEC_DRAFT = "spec_draft"      # {"base": SPEC_TEXT it was typed against, "text": the editor's text}
UPLOADED = "uploaded_dataset"  # this session's parsed CSV upload (per session; the bytes are not kept)
DISCARDED = "result_discarded"  # the verdict of a result a new dataset or model set aside (said once)
PROGRAM = "population_program"  # {"text", "name", "loaded"}: the Audit page's population program (this session only)
RANGES = "declared_ranges"     # {column: (low, high)}: the Data page's ranges of the amounts a spec may average
TRAINED = "trained_models"     # {(dataset_key, kind, seed, split): Model}: this session's trained models, oldest first

DEFAULTS: dict[str, Any] = {DATASET: None, DATASET_KEY: None, MODEL: None, MODEL_INFO: None, SPEC_TEXT: "",
                            SPEC_HISTORY: [], RESULT: None, RESULT_META: None, SELECTED: [], LAST_EVENT: [],
                            SELECTION_TREE: None, SPEC_DRAFT: None, UPLOADED: None, ALSO: None,
                            PROGRAM: None, RANGES: {}}


def init() -> None:
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = list(value) if isinstance(value, list) else dict(value) if isinstance(
                value, dict) else value


def declared_ranges(dataset=None) -> dict:
    """The Data page's ranges of the amounts a spec may average (``RANGES``), those of ``dataset``'s columns only (a
    range declared for another dataset's column is not this one's)."""
    ranges = get(RANGES) or {}
    if dataset is None:
        return dict(ranges)
    return {name: pair for name, pair in ranges.items() if name in dataset.frame.columns}


def get(key: str) -> Any:
    init()
    return st.session_state[key]


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


# ------------------------------------------------------------------------------------------- caches


@st.cache_resource(show_spinner="Loading dataset…")
def builtin_dataset(name: str):
    return fa_data.load(name)


def dataset_with_roles(name: str, label: str | None, protected: tuple[str, ...], favourable: Any):
    return fa_data.with_roles(builtin_dataset(name), label, list(protected), favourable)


MODEL_CACHE_SIZE = 16  # trained models kept per session


def session_cached(store: str, key, run, size: int):
    """``run()``'s result for ``key`` from this session's cache ``store`` (``st.session_state``), computed once; the
    last ``size`` keys are kept (the oldest goes first). What a page's run button keeps across page switches."""
    cache = st.session_state.setdefault(store, {})
    if key not in cache:
        cache[key] = run()
        while len(cache) > size:
            cache.pop(next(iter(cache)))
    return cache[key]


def _model_cache() -> dict:
    """This session's trained models (``st.session_state``: never shared with another browser session)."""
    if st.session_state.get(TRAINED) is None:
        st.session_state[TRAINED] = {}
    return st.session_state[TRAINED]


def trained_model(dataset, dataset_key: tuple, kind: str, seed: int, test_size: float, features=None,
                  on_progress=None):
    """The model every route trains (``fairaudit.models.recipe``: ``features`` None, the default features), once per
    (dataset identity, recipe) in this session; ``on_progress`` (a ``ProgressBar``) is told how far a training that
    is not cached yet is. Not ``st.cache_resource``: that is shared by every session (one user's upload would hand
    its model to another's), and it would record the bar drawn during the training and replay it, on a later page,
    into a bar that no longer exists."""
    from fairaudit.models.recipe import recipe

    chosen = recipe(dataset, kind, seed=seed, held_out_share=test_size, features=features)
    cache = _model_cache()
    key = (dataset_key, chosen)
    if key in cache:
        return cache[key]
    model = fa_models.train_model(dataset, chosen.kind, seed=chosen.seed, held_out_share=chosen.held_out_share,
                                  features=chosen.features, on_progress=on_progress)
    cache[key] = model
    while len(cache) > MODEL_CACHE_SIZE:
        cache.pop(next(iter(cache)))
    return model


def dataset_key(dataset) -> tuple:
    """Identity of a dataset and its roles: its rows in order (``Dataset.rows_hash``, SHA-256 over pandas' row
    hashes: the same rows permuted are another dataset, whose held-out rows are other rows) and its roles."""
    s = dataset.schema
    return (dataset.name, len(dataset.frame), dataset.rows_hash, s.label, str(s.favourable), tuple(s.protected))


def role_groups(dataset) -> dict[str, list]:
    """Each protected attribute's values, the largest group first (ties by value): what a starting specification
    and the editor's example are written from."""
    out: dict[str, list] = {}
    for attribute in dataset.schema.protected:
        counts = dataset.frame[attribute].dropna().value_counts()
        out[attribute] = [v.item() if hasattr(v, "item") else v
                          for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))]
    return out


def set_dataset(dataset) -> None:
    """A new dataset: the model and result made for the old one no longer apply; a specification that is not the
    analyst's own (the demo's, or the starting one of the previous dataset) becomes the new dataset's starting
    specification (``logic.starting_spec``), so Adult's columns never stay on another dataset."""
    from fairaudit.ui import logic

    key = dataset_key(dataset)
    if st.session_state.get(DATASET_KEY) != key:
        st.session_state[DATASET] = dataset
        st.session_state[DATASET_KEY] = key
        if logic.replaceable_spec(st.session_state.get(SPEC_TEXT), st.session_state.get(SPEC_STARTER)):
            starter = logic.starting_spec(dataset.name, role_groups(dataset))
            st.session_state[SPEC_TEXT] = starter
            st.session_state[SPEC_STARTER] = starter
        if st.session_state.get(MODEL_INFO) and st.session_state[MODEL_INFO].get("dataset_key") != key:
            st.session_state[MODEL] = None
            st.session_state[MODEL_INFO] = None
        _forget_result()


def set_model(model, info: dict) -> None:
    st.session_state[MODEL] = model
    st.session_state[MODEL_INFO] = {**info, "dataset_key": st.session_state.get(DATASET_KEY),
                                    "describe": model.describe()}
    dataset = st.session_state.get(DATASET)
    if dataset is not None:  # a starting specification follows the decisions: a class's rate for several classes
        from fairaudit.ui import logic

        if logic.replaceable_spec(st.session_state.get(SPEC_TEXT), st.session_state.get(SPEC_STARTER)):
            starter = logic.starting_spec(dataset.name, role_groups(dataset), getattr(model, "classes", None))
            st.session_state[SPEC_TEXT] = starter
            st.session_state[SPEC_STARTER] = starter
    _forget_result()


def _forget_result() -> None:
    """A new dataset or model: the result computed on the old ones no longer applies (a population program's
    result read neither, and stays)."""
    if (st.session_state.get(RESULT_META) or {}).get("program_sha"):
        return
    if st.session_state.get(RESULT) is not None:  # said once where it happened (``widgets.discarded_note``)
        st.session_state[DISCARDED] = st.session_state[RESULT].claim.key
    st.session_state[RESULT] = None
    st.session_state[RESULT_META] = None
    st.session_state[ALSO] = None


# ---------------------------------------------------------------- widget values kept across pages
STORE = "audit_values"  # widget key -> value, kept across pages (Streamlit forgets a widget's value off its page)


def _store() -> dict:
    return st.session_state.setdefault(STORE, {})


def seed(key: str, default: Any) -> Any:
    """Give widget ``key`` its kept value (or ``default``) before it is drawn; the value it will show."""
    if key not in st.session_state:
        st.session_state[key] = _store().get(key, default)
    return st.session_state[key]


def keep(key: str, value: Any) -> None:
    _store()[key] = value


def set_value(key: str, value: Any) -> None:
    """Set a widget's value from outside the widget (before it is drawn in this run)."""
    st.session_state[key] = value
    keep(key, value)


def remembered_checkbox(label: str, key: str, **kwargs) -> bool:
    """A checkbox whose value is kept across pages (like the option widgets)."""
    seed(key, False)
    value = st.checkbox(label, key=key, **kwargs)
    keep(key, value)
    return value
