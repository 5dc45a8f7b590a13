"""The dashboard's "Compare" page (issue 32): the current model beside other models or logged decisions, on the same
rows in the same order, against the current specification (``fairaudit.compare``: ``fairaudit.comparison``).

``page()`` draws it: what to compare — the current model (Model page), model kinds trained now on the same split, saved
model files of the workspace, decision expressions (one per line) — the comparison's choices (engine, failure
probability, stop, seed), a run, then ``show(result)``: the headline, the guarantee, the models with their colours, the
node table, a chosen node's intervals for every model over the rows read and the pair's difference against 0, every
node's final interval, the sentences, and the PDF (``fairaudit.report.compare``).

Pure helpers (no Streamlit, unit-tested): ``expressions`` (the decision expressions typed, one per line), ``side_names``
(short distinct names for the table columns) and ``compare_key`` (the cache key: every input of the comparison).
Comparisons are cached in the session by ``compare_key`` (``RESULTS``: never passed from one browser session to
another).
"""
from __future__ import annotations

from typing import Any

RESULTS = "compare_results"     # {compare_key: CompareResult}: this session's comparisons, oldest first
CURRENT = "compare_current"     # the compare_key of the comparison shown
PDFS = "compare_pdfs"           # {compare_key: PDF bytes}
CACHE_SIZE = 6
DELTAS = (0.01, 0.05, 0.1)
MAX_SIDES = 6
NAME_LIMIT = 28


# ------------------------------------------------------------------------------------------------ pure helpers
def expressions(text: str) -> list[str]:
    """The decision expressions typed in the box: one per line; blank lines and ``#`` comments are skipped."""
    out = []
    for line in (text or "").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and line not in out:
            out.append(line)
    return out


def _short(text: str, limit: int = NAME_LIMIT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def side_names(labels: list[str]) -> list[str]:
    """Short, distinct, non-empty names for the compared sides (``tree``, ``tree (2)``, ...), in order."""
    out: list[str] = []
    for label in labels:
        base = _short(label) or "model"
        name, k = base, 2
        while name in out:
            name, k = f"{base} ({k})", k + 1
        out.append(name)
    return out


def compare_key(dataset_key: Any, sides: list[tuple], spec_text: str, engine: str, delta: float, stop: str,
                seed: int) -> tuple:
    """Every input of a comparison, hashable: the dataset (rows and roles), each side's identity (in order), the
    specification's text and every choice."""
    return (dataset_key, tuple(sides), spec_text, engine, float(delta), stop, int(seed))


def same_question(comparison, result) -> bool:
    """Whether ``comparison`` asks the specification ``result`` audited, of the same data (so it can be a section of
    that result's report)."""
    same_spec = " ".join(comparison.spec.split()) == " ".join(str(result.spec).split())
    data = (getattr(result, "options", None) or {}).get("data")
    return same_spec and (data is None or comparison.data is None or data == comparison.data)


# ------------------------------------------------------------------------------------------------ the page
def shown_comparison(result):
    """The comparison the Compare page shows now, when it asks what ``result`` audited; else None."""
    import streamlit as st

    comparison = st.session_state.get(RESULTS, {}).get(st.session_state.get(CURRENT))
    return comparison if comparison is not None and same_question(comparison, result) else None


def _current_side(model, info: dict | None) -> tuple[tuple, str, Any] | None:
    """``(identity, label, ("model", m) | ("pred", text))`` of the session's current decisions, or None."""
    if model is None:
        return None
    info = info or {}
    expression = getattr(model, "expression", None) if getattr(model, "kind", None) == "expression" else None
    if expression is not None:
        return ("pred", expression), expression, ("pred", expression)
    label = info.get("file") or getattr(model, "kind", "model")
    return ("current", info.get("describe"), id(model)), f"{label} (current)", ("model", model)


def side_phrase(ident: tuple, label: str) -> str:
    """How the sentences name a compared side (plain words, never a table's "(current)" tag): "the current model
    (logreg)", "the decision tree" (a kind trained here), "the model in m.skops", "the logged decisions (dec_b == 1)"."""
    from fairaudit.models.training import KIND_HELP

    kind = ident[0] if ident else None
    if kind == "current":
        return f"the current model ({label.removesuffix(' (current)')})"
    if kind == "kind":
        words = KIND_HELP.get(ident[1], "").split(",")[0].split(" (")[0].strip()
        return f"the {words}" if words else f"the {ident[1]} model"
    if kind == "file":
        return f"the model in {ident[1]}"
    if kind == "pred":
        return f"the logged decisions ({ident[1]})"
    return label


def side_phrases(idents: list[tuple], labels: list[str], names: list[str]) -> list[str]:
    """:func:`side_phrase` of every side, made distinct by adding the side's table name where two would read alike."""
    phrases = [side_phrase(i, label) for i, label in zip(idents, labels)]
    return [p if phrases.count(p) == 1 else f"{p} ({n})" for p, n in zip(phrases, names)]


def _training_choice(dataset, info: dict | None) -> tuple[int, float, list[str]]:
    """The seed, held-out share and features of a model trained here for the comparison: the current model's when it
    was trained here (so every model is audited on the same held-out rows), else the defaults."""
    from fairaudit.models.features import default_features
    from fairaudit.models.training import HELD_OUT_SHARE

    info = info or {}
    if info.get("source") == "trained":
        return int(info.get("seed", 0)), float(info.get("test_size", HELD_OUT_SHARE)), list(
            info.get("features") or default_features(dataset))
    return 0, HELD_OUT_SHARE, list(default_features(dataset))


def cached(key: tuple, run) -> Any:
    """The comparison of ``key`` from this session's cache, or ``run()`` once and kept (the last ``CACHE_SIZE``)."""
    from fairaudit.ui.state import session_cached

    return session_cached(RESULTS, key, run, CACHE_SIZE)


def page() -> None:
    import streamlit as st

    from fairaudit.base.errors import FairauditError
    from fairaudit.comparison.options import DEFAULTS, ENGINE_TITLES, HELP, STOP_TITLES, STOPS, is_sequential
    from fairaudit.models import KINDS
    from fairaudit.models.training import KIND_HELP
    from fairaudit.ui import state, widgets, workspace

    widgets.page_setup("Compare")
    st.title("Compare")
    st.caption("Two or more models (or logged decisions) on the same rows, in the same order: each model's value of "
               "every part of the specification, and an interval on the difference between models computed on the "
               "same individuals (paired), with a verdict — which model is lower, or not established yet.")
    widgets.sidebar_status()
    dataset, model = state.get(state.DATASET), state.get(state.MODEL)
    spec_text = (state.get(state.SPEC_TEXT) or "").strip()
    if dataset is None:
        st.info("To compare models, choose a dataset first (Data page) — or load the demo on the Overview page.")
        st.page_link("pages/1_Data.py", label="Go to Data")
        st.stop()
    if not spec_text:
        st.info("To compare models, write a specification first (Specification page): the comparison asks its "
                "questions of every model.")
        st.page_link("pages/3_Specification.py", label="Go to Specification")
        st.stop()
    info = state.get(state.MODEL_INFO)
    current = _current_side(model, info)
    with st.expander("The specification every model is asked (edit it on the Specification page)"):
        st.code(spec_text, language=None, wrap_lines=True)

    with st.container(border=True):
        st.markdown("**What to compare** (two or more)")
        sides: list[tuple[tuple, str, Any]] = []  # (identity, label, (kind, value) or a callable that makes one)
        if current is None:
            st.caption("No current model (Model page): choose two or more below.")
            use_current = False
        else:
            state.seed("compare_use_current", True)
            described = info.get("describe") if info else current[1]
            use_current = state.remembered_checkbox(f"The current model: {described}", "compare_use_current")
        if use_current and current is not None:
            sides.append(current)
        c1, c2 = st.columns(2)
        state.seed("compare_kinds", ["tree"] if (info or {}).get("kind") != "tree" else ["logreg"])
        label_ok = dataset.schema.label is not None
        kinds = c1.multiselect("Model kinds to train now (the current model's split and features)", list(KINDS),
                               key="compare_kinds", format_func=lambda k: f"{k} — {KIND_HELP.get(k, '')}",
                               disabled=not label_ok,
                               help=None if label_ok else "Training needs a label: choose one on the Data page.")
        state.keep("compare_kinds", kinds)
        models_dir = workspace.folder("models")
        files = workspace.list_files(models_dir)
        state.seed("compare_files", [])
        picked = c2.multiselect(f"Saved model files ({workspace.display(models_dir)}/)", files,
                                key="compare_files", placeholder="none in the workspace yet" if not files else
                                "choose files", disabled=not files)
        state.keep("compare_files", [p for p in picked if p in files])
        state.seed("compare_preds", "")
        typed = st.text_area("Logged decisions: one condition per line, true where the decision is favourable "
                             "(e.g. `dec_b == 1`)", key="compare_preds", height=68)
        state.keep("compare_preds", typed)
        seed_train, test_size, features = _training_choice(dataset, info)
        if label_ok:
            for kind in kinds:
                sides.append((("kind", kind, seed_train, test_size, tuple(features)), kind, ("train", kind)))
        for name in picked:
            sides.append((("file", name), name, ("file", name)))
        for text in expressions(typed):
            sides.append((("pred", text), text, ("pred", text)))
        c3, c4, c5, c6 = st.columns([2, 1, 2, 1])
        state.seed("compare_engine", DEFAULTS["engine"])
        engine = c3.selectbox("Engine", list(ENGINE_TITLES), key="compare_engine", help=HELP["engine"],
                              format_func=ENGINE_TITLES.get)
        state.keep("compare_engine", engine)
        state.seed("compare_delta", DEFAULTS["delta"])
        delta = c4.selectbox("Failure probability", DELTAS, key="compare_delta", help=HELP["delta"],
                             disabled=not is_sequential(engine))
        state.keep("compare_delta", delta)
        state.seed("compare_stop", DEFAULTS["stop"])
        stop = c5.selectbox("Stop", list(STOPS), key="compare_stop", help=HELP["stop"],
                            format_func=STOP_TITLES.get, disabled=not is_sequential(engine))
        state.keep("compare_stop", stop)
        state.seed("compare_seed", DEFAULTS["seed"])
        seed = c6.number_input("Seed", 0, 10_000, key="compare_seed", help=HELP["seed"])
        state.keep("compare_seed", seed)
        names = side_names([label for _, label, _ in sides])
        key = compare_key(state.get(state.DATASET_KEY), [ident for ident, _, _ in sides], spec_text, engine, delta,
                          stop, seed)
        too_many = len(sides) > MAX_SIDES
        if len(sides) < 2:
            st.caption(f"{len(sides)} chosen: choose at least two to compare.")
        elif too_many:
            st.caption(f"{len(sides)} chosen: compare at most {MAX_SIDES} at once.")
        else:
            st.caption("Compared as: " + " · ".join(f"**{n}**" for n in names))
        run = st.button("Compare", type="primary", key="compare_run", icon=":material/compare_arrows:",
                        disabled=len(sides) < 2 or too_many)
    have = key in st.session_state.get(RESULTS, {})
    if run or have:
        try:
            with st.spinner("Comparing (training the models that are not trained yet)…"):
                said = side_phrases([ident for ident, _, _ in sides], [label for _, label, _ in sides], names)
                result = cached(key, lambda: _run(dataset, spec_text, sides, names, engine, float(delta), stop,
                                                  int(seed), seed_train, test_size, features, said))
        except FairauditError as err:
            st.error(f"The comparison cannot run: {err}")
            st.stop()
        st.session_state[CURRENT] = key
    elif st.session_state.get(CURRENT) in st.session_state.get(RESULTS, {}):
        result = st.session_state[RESULTS][st.session_state[CURRENT]]
        st.caption("Showing the last comparison (its choices, data or specification differ from those above: press "
                   "**Compare** for theirs).")
    else:
        st.info("Choose what to compare and press **Compare**.")
        st.stop()
    show(result, key_prefix="compare")


def _run(dataset, spec_text, sides, names, engine, delta, stop, seed, seed_train, test_size, features, said=None):
    from fairaudit.comparison import compare
    from fairaudit.ui import state

    given = []
    for _, _, (kind, value) in sides:
        if kind == "train":
            given.append(("model", state.trained_model(dataset, state.dataset_key(dataset), value, seed_train,
                                                       test_size, features)))
        elif kind == "file":
            given.append(("model", workspace_model(value)))
        else:
            given.append((kind, value))
    return compare(dataset, spec_text, sides=given, names=names, engine=engine, delta=delta, seed=seed, stop=stop,
                   said=said)


def workspace_model(name: str):
    """The model saved as ``name`` in the workspace's models folder, read through the safe loaders only: a model file
    (skops, torch state_dict, .nnet), or a threshold repair (JSON) whose base model file lies beside it in the same
    folder (named by a bare file name: a repair naming a file elsewhere is refused)."""
    from fairaudit.base.errors import FairauditError
    from fairaudit.models.thresholds import from_payload, read_payload
    from fairaudit.ui import flows, workspace
    from fairaudit.ui.logic import MB

    models_dir = workspace.folder("models")
    limit_mb, _ = flows.upload_limits("model")

    def read(file_name: str) -> bytes:
        try:
            return workspace.read_bytes(models_dir, file_name, limit_mb * MB)
        except (workspace.WorkspaceError, OSError) as err:
            raise FairauditError(str(err)) from None

    data = read(name)
    payload = read_payload(data)
    if payload is None:
        return flows.load_model_bytes(data, name)
    base = str((payload.get("base") or {}).get("path") or "")
    try:
        workspace.path_in(models_dir, base)  # a bare name in this folder, or refused
    except workspace.WorkspaceError:
        raise FairauditError(f"{name} is a threshold repair whose base model {base!r} is not a file beside it in "
                             f"{workspace.display(models_dir)}/: the dashboard reads only its workspace") from None
    return from_payload(payload, workspace.path_in(models_dir, name),
                        lambda path: flows.load_model_bytes(read(path.name), path.name))


# ------------------------------------------------------------------------------------------------ the result
def show(result, key_prefix: str = "compare") -> None:
    """A comparison's result: headline, guarantee, models, node table, plots, sentences and its PDF."""
    import html

    import streamlit as st

    from fairaudit.report.compare import model_rows, sentences
    from fairaudit.ui import charts
    from fairaudit.viz.compare import (chart_nodes, difference_convergence, final_values_chart, models_convergence,
                                       node_label, node_table, spec_verdicts)
    from fairaudit.viz.palette import model_colours

    decided = any(d.verdict in ("a_lower", "b_lower") for d in result.differences if d.kind == "cmp")
    st.markdown(f"**The specification, per model** — {spec_verdicts(result)}")
    (st.success if decided else st.warning)(f"**{result.headline}**", icon=":material/compare_arrows:")
    st.info(f"**Guarantee.** {result.guarantee}", icon=":material/verified:")
    if result.share_note:
        st.caption(result.share_note)
    read = f" · read {result.rows_read:,}" if result.sequential and result.rows_read else ""
    st.caption(f"Rows: {result.rows.get('text')}{read}.")
    for warning in result.warnings:
        st.warning(warning, icon=":material/warning:")
    colours = model_colours(result.names)
    st.markdown("  \n".join(
        f"<span style='color:{colours[name]}; font-weight:700'>■ {name}</span> — {html.escape(what)}"
        + (f" <span style='color:#777'>(sha256 {digest[:12]})</span>" if digest != "—" and digest[:12] not in what
           else "")
        for name, what, digest in model_rows(result)), unsafe_allow_html=True)

    st.subheader("Every node, per model")
    table = node_table(result)
    verdicts = [c for c in table.columns if " vs " in c]  # the verdicts first: what a reader looks for
    order = ["node"] + verdicts + [c for c in table.columns if c not in verdicts + ["id", "node", "kind"]]
    st.dataframe(table[order], hide_index=True, width="stretch",  # node ids stay internal: the words are shown
                 column_config={"node": st.column_config.TextColumn(width="large")})
    st.caption("Each model's value is its estimate and interval (a comparison l op r: its margin l − r and its "
               "verdict). A difference is the first model's value minus the second's: \"A lower\" means the whole "
               "interval is below 0, \"undecided\" that it still contains 0.")

    labels: dict[str, str] = {}  # one entry per quantity: the same words twice (a rate in two clauses) shown once
    for nid in chart_nodes(result):
        labels.setdefault(node_label(result, nid), nid)
    nodes = list(labels.values())
    pairs = list(result.diff_series)
    st.subheader("A node over the rows read")
    c1, c2, c3 = st.columns([4, 2, 1])
    box = f"{key_prefix}_node"
    if st.session_state.get(box) not in nodes:
        st.session_state[box] = nodes[0]
    node = c1.selectbox("Node", nodes, key=box, format_func=lambda n: node_label(result, n))
    pair_box = f"{key_prefix}_pair"
    if st.session_state.get(pair_box) not in pairs:
        st.session_state[pair_box] = pairs[0]
    pair = c2.selectbox("Difference", pairs, key=pair_box, format_func=lambda p: f"{p[0]} − {p[1]}",
                        disabled=len(pairs) == 1)
    side_by_side = c3.toggle("Side by side", key=f"{key_prefix}_columns",
                             help="One panel per model (shared axes) instead of one panel for all")
    layout = "columns" if side_by_side else "overlay"
    charts.show(st, ("compare_models", node, layout), lambda: models_convergence(
        result, node, width=760, height=260, layout=layout), owners=(result,), width="content")
    if node in result.diff_series[pair]:
        charts.show(st, ("compare_difference", node, pair), lambda: difference_convergence(
            result, node, *pair, width=760, height=200), owners=(result,), width="content")
    charts.show(st, ("compare_final",), lambda: final_values_chart(result, width=560), owners=(result,),
                width="content")

    st.subheader("What the comparison says")
    for text in sentences(result):
        st.markdown(f"- {_plain(text)}")
    st.caption("The specification as written is in the box at the top of this page.")
    _download(result, key_prefix)


def _plain(text: str) -> str:
    """A sentence shown as it is in Markdown (its comparison signs and quotes are not Markdown syntax)."""
    return "".join("\\" + c if c in "\\`*_[]<>#|~$" else c for c in text)


def _download(result, key_prefix: str) -> None:
    import streamlit as st

    from fairaudit.report.compare import build_compare_pdf

    pdfs = st.session_state.setdefault(PDFS, {})
    ident = (key_prefix, id(result))
    if ident not in pdfs:
        if len(pdfs) > 4:
            pdfs.clear()
        with st.spinner("Building the PDF…"):
            pdfs[ident] = build_compare_pdf(result)
    st.download_button("Download PDF", pdfs[ident], file_name="fairaudit-comparison.pdf", mime="application/pdf",
                       key=f"{key_prefix}_pdf", icon=":material/picture_as_pdf:", type="primary")
