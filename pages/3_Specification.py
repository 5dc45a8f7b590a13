"""Specification: editor with live parse/validation feedback, templates, the spec library, the version history."""
import streamlit as st

from fairaudit import viz
from fairaudit.errors import FairauditError
from fairaudit.ui import logic, speclib, state, widgets

widgets.page_setup("Specification")
st.title("Specification")

parse = state.spec_parser()
validate = state.optional("fairaudit.spec", "validate")
dataset = state.get(state.DATASET)

if "spec_editor" not in st.session_state:
    st.session_state["spec_editor"] = state.get(state.SPEC_TEXT)
if "spec_pending" in st.session_state:  # a template / file / version chosen below replaces the editor text
    st.session_state["spec_editor"] = st.session_state.pop("spec_pending")

edit_col, side_col = st.columns([3, 2], gap="large")

with side_col:
    st.subheader("Templates")
    templates = getattr(state.optional("fairaudit.spec.templates"), "TEMPLATES", None) or {}
    if not templates:
        st.caption("No templates available yet.")
    else:
        key = st.selectbox("Metric", list(templates), key="spec_template", format_func=lambda k: templates[k].title)
        tpl = templates[key]
        st.caption(tpl.explanation)
        params: dict = {}
        columns = dataset.schema.names if dataset is not None else []
        protected = list(dataset.schema.protected) if dataset is not None else []
        for p in tpl.parameters:
            wkey = f"tpl_{key}_{p.name}"
            if p.name == "attribute":
                options = protected or columns
                if options:
                    params["attribute"] = st.selectbox("Protected attribute", options, key=wkey, help=p.description)
                else:
                    params["attribute"] = st.text_input("Protected attribute", key=wkey, help=p.description) or None
            elif p.name == "groups" and dataset is not None and params.get("attribute") in columns:
                values = sorted(dataset.frame[params["attribute"]].dropna().unique().tolist(), key=str)
                if len(values) > 20:
                    st.caption(f"`{params['attribute']}` has {len(values)} values: name the groups in the spec.")
                    params["groups"] = None
                else:
                    picked = st.multiselect("Groups (reference first)", values, default=values[:2], key=wkey,
                                            help=p.description)
                    params["groups"] = tuple(picked) if picked else None
            elif p.choices:
                params[p.name] = st.selectbox(p.name.capitalize(), list(p.choices), key=wkey, help=p.description,
                                              index=list(p.choices).index(p.default) if p.default in p.choices else 0)
            elif p.name == "threshold":
                raw = st.text_input("Threshold (blank: the template's default)", key=wkey,
                                    value="" if p.required or p.default is None else str(p.default), help=p.description)
                try:
                    params["threshold"] = float(raw) if raw.strip() else None
                except ValueError:
                    st.error(f"threshold: {raw!r} is not a number")
                    params["threshold"] = None
            else:
                params[p.name] = st.text_input(p.name.capitalize(), key=wkey, help=p.description) or None
        try:
            rendered = tpl.render(**params)
            st.code(rendered, language=None)
            if st.button("Use this template", key="spec_use_template"):
                st.session_state["spec_pending"] = f"# {tpl.title}: {tpl.explanation}\n{rendered}\n"
                st.rerun()
        except (TypeError, ValueError, FairauditError) as err:
            st.info(f"Fill in the parameters: {err}")

    st.subheader("Library")
    saved = speclib.list_specs()
    if saved:
        lib_pick = st.selectbox("Saved specifications (specs/)", saved, key="spec_lib_pick")
        if st.button("Load into the editor", key="spec_lib_load"):
            st.session_state["spec_pending"] = speclib.read_spec(lib_pick)
            st.rerun()
    else:
        st.caption("No saved specifications in specs/ yet.")

with edit_col:
    st.subheader("Editor")
    text = st.text_area("Specification (press Ctrl+Enter or click outside to check it)", key="spec_editor",
                        height=220,
                        help='Example: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1 — '
                             "comments start with #, name a part with `name: ...`")
    spec = None
    if not text.strip():
        st.info("Write a specification or pick a template.")
    elif parse is None:
        st.warning("The specification parser is not available yet; the text is kept as written.")
        state.put(state.SPEC_TEXT, text)
    else:
        try:
            spec = parse(text)
        except FairauditError as err:
            where = f"line {err.line}, column {err.column}: " if getattr(err, "line", None) else ""
            st.error(f"{where}{getattr(err, 'message', str(err))}")
            pretty = err.pretty() if hasattr(err, "pretty") else str(err)
            st.code(pretty, language=None)
        if spec is not None and validate is not None and dataset is not None:
            try:
                problems = validate(spec, dataset.schema, dataset.frame)
            except FairauditError as err:
                problems = [err]
            for problem in problems or []:
                severity = getattr(problem, "severity", "error")
                line, col = getattr(problem, "line", None), getattr(problem, "column", None)
                where = f"line {line}, column {col}: " if line else ""
                message = f"{where}{getattr(problem, 'message', str(problem))}"
                if severity == "warning":
                    st.warning(message)
                else:
                    st.error(message)
                    spec = None
        if spec is not None:
            st.success(f"OK — {len(spec.nodes)} nodes, {len(spec.leaves)} estimated leaves.")
            if text.strip() != state.get(state.SPEC_TEXT).strip():
                state.put(state.SPEC_TEXT, text)
                state.put(state.SPEC_HISTORY, logic.record_version(state.get(state.SPEC_HISTORY), text))
    if spec is not None:
        nodes = [{"id": n.id, "parent": n.parent, "kind": n.kind, "text": n.text, "name": n.name} for n in spec.nodes]
        st.altair_chart(viz.tree_chart(nodes, width=540, height=min(420, viz.tree.default_height(nodes))),
                        width="content")

    with st.expander("Save to the library"):
        c1, c2 = st.columns([3, 1])
        save_name = c1.text_input("File name (letters, digits, _ and -)", key="spec_save_name")
        overwrite = c2.checkbox("overwrite", key="spec_save_overwrite")
        if st.button("Save", key="spec_save", disabled=not (save_name.strip() and text.strip())):
            try:
                path = speclib.save_spec(save_name, text, overwrite=overwrite)
                st.success(f"Saved {path.name}")
            except (ValueError, FileExistsError, OSError) as err:
                st.error(str(err))

# ------------------------------------------------------------------------------------------------ history
st.subheader("History")
history = state.get(state.SPEC_HISTORY)
if not history:
    st.caption("Every version you check or audit is listed here with the verdict it got.")
else:
    rows = [{"version": h["version"], "verdict": logic.verdict_sentence(h["verdict"]),
             "decided at": h["stop_step"], "specification": " ".join(
                 line for line in h["text"].splitlines() if not line.strip().startswith("#"))}
            for h in reversed(history)]
    st.dataframe(rows, width="stretch", hide_index=True)
    versions = [h["version"] for h in history]
    c1, c2, c3 = st.columns([1, 1, 2])
    a = c1.selectbox("Compare version", versions, index=max(0, len(versions) - 2), key="spec_cmp_a")
    b = c2.selectbox("with version", versions, index=len(versions) - 1, key="spec_cmp_b")
    ha = next(h for h in history if h["version"] == a)
    hb = next(h for h in history if h["version"] == b)
    diff = logic.diff_lines(ha["text"], hb["text"])
    with c3:
        st.markdown(f"v{a}: {widgets.verdict_badge(ha['verdict'])} &nbsp;→&nbsp; v{b}: "
                    f"{widgets.verdict_badge(hb['verdict'])}", unsafe_allow_html=True)
        st.code("\n".join(diff) if diff else "(same text)", language="diff")
    c4, c5 = st.columns(2)
    if c4.button(f"Edit version {a}", key="spec_edit_version"):
        st.session_state["spec_pending"] = ha["text"]
        st.rerun()
    if c5.button(f"Audit version {a}", key="spec_audit_version", type="primary"):
        state.put(state.SPEC_TEXT, ha["text"])
        st.session_state["spec_pending"] = ha["text"]
        st.session_state["audit_autorun"] = True
        st.switch_page("pages/4_Audit.py")
widgets.sidebar_status()
