"""Specification: editor with live parse/validation feedback, templates, the spec library, the version history."""
import streamlit as st

from fairaudit import viz
from fairaudit.base.errors import FairauditError
from fairaudit.spec.templates import TEMPLATES
from fairaudit.ui import charts, flows, history, logic, speclib, state, widgets, workspace

entered = widgets.page_setup("Specification")
st.title("Specification")
st.caption("Write what fair means for this model; every `E[...]` gets an interval from the decisions and every "
           "comparison a verdict. Header comments at the top (`# where:`, `# engine:`, an engine's options) set the "
           "Audit page's choices. Change a threshold and press **Run the audit** to compare versions.")

dataset = state.get(state.DATASET)

if "spec_pending" in st.session_state:  # a template / file / version chosen below replaces the editor text
    st.session_state["spec_editor"] = st.session_state.pop("spec_pending")
elif entered or "spec_editor" not in st.session_state:  # opened: the analyst's own last text, or the current spec
    st.session_state["spec_editor"] = logic.editor_text(state.get(state.SPEC_TEXT), state.get(state.SPEC_DRAFT))

edit_col, side_col = st.columns([3, 2], gap="large")

with side_col:
    st.subheader("Templates")
    templates = TEMPLATES
    if not templates:
        st.caption("No templates available yet.")
    else:
        keys = list(templates)
        has_classes = getattr(state.get(state.MODEL), "classes", None) is not None  # decisions among classes
        key = st.selectbox("Metric", keys, key="spec_template", format_func=lambda k: templates[k].title,
                           index=keys.index("class_rate_gap") if has_classes else 0)
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
                    # one widget per attribute; the 80 % rule starts from every group of it (each against the
                    # most-selected one), the pairwise metrics from its first two
                    every = key == "disparate_impact"
                    picked = st.multiselect("Groups (each against the most-selected)" if every else
                                            "Groups (every pair is compared)", values,
                                            default=values if every else values[:2],
                                            key=f"{wkey}_{params['attribute']}", help=p.description)
                    params["groups"] = tuple(picked) if picked else None
            elif p.name == "reference":
                from fairaudit.ui.groups import most_selected_group

                params["reference"] = most_selected_group(dataset, params.get("attribute"), params.get("groups"),
                                                          wkey, p.description)
            elif p.name in ("amount", "target") and dataset is not None:
                numeric = [c for c in columns if dataset.schema.column(c).kind == "numeric"]
                declared = state.declared_ranges(dataset)
                numeric = sorted(numeric, key=lambda c: c not in declared)  # the declared ones first
                params[p.name] = st.selectbox("Amount" if p.name == "amount" else "True value", numeric,
                                              key=wkey, help=p.description) if numeric else None
                if params[p.name] is not None and params[p.name] not in declared:
                    st.caption(f"Declare the range of `{params[p.name]}` on the Data page before the audit.")
            elif p.name == "classes":
                classes = list(getattr(state.get(state.MODEL), "classes", None) or ())
                if classes:
                    picked = st.multiselect("Classes (their rate is compared)", classes, default=classes[:1],
                                            key=wkey, help=p.description)
                    params["classes"] = tuple(picked) if picked else None
                else:
                    st.caption("The decisions have no classes yet: on the Model page, name a column of logged "
                               "classes as the decision, or load a classifier fitted on several classes.")
                    params["classes"] = st.text_input("Class", key=wkey, help=p.description) or None
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
            st.code(rendered, language=None, wrap_lines=True)
            if st.button("Use this template", key="spec_use_template"):
                st.session_state["spec_pending"] = f"# {tpl.title}: {tpl.explanation}\n{rendered}\n"
                st.rerun()
        except (TypeError, ValueError, FairauditError) as err:
            st.info(f"Fill in the parameters: {err}")

    st.subheader("Library")
    entries = speclib.library()
    if st.session_state.get("spec_lib_pending") in entries:  # just saved: the list shows it selected
        st.session_state["spec_lib_pick"] = st.session_state.pop("spec_lib_pending")
    if entries:
        lib_pick = st.selectbox("Saved specifications and bundled examples", entries, key="spec_lib_pick",
                                format_func=speclib.entry_label)
        if st.button("Load into the editor", key="spec_lib_load"):
            try:
                st.session_state["spec_pending"] = speclib.read_entry(lib_pick)
                st.rerun()
            except (ValueError, OSError) as err:
                st.error(str(err))
    else:
        st.caption("No saved specifications yet.")

with edit_col:
    st.subheader("Editor")
    text = st.text_area("Specification (press Ctrl+Enter or click outside to check it)", key="spec_editor",
                        height=220,
                        help=f"Example: {logic.example_condition(state.role_groups(dataset) if dataset else {})} "
                             "— comments start with #, name a part with `name: ...`")
    spec = None
    if not text.strip():
        st.info("Write a specification or pick a template.")
    else:
        spec, problems = flows.check_spec(text, dataset)
        for severity, message in problems:
            (st.warning if severity == "warning" else st.error)(message)
        if spec is not None:
            leaves = len(spec.leaves)
            st.success(f"OK — {len(spec.nodes)} nodes, {leaves} estimated {'leaf' if leaves == 1 else 'leaves'}.")
            if text.strip() != state.get(state.SPEC_TEXT).strip():
                state.put(state.SPEC_TEXT, text)
                state.put(state.SPEC_HISTORY, history.record_version(state.get(state.SPEC_HISTORY), text))
            decision = logic.header_decision(flows.spec_headers(text),
                                             getattr(state.get(state.MODEL), "expression", None))
            if decision and dataset is not None:
                widgets.decision_offer(decision, key="spec_use_decision")
            widgets.decision_applied_note()
    state.put(state.SPEC_DRAFT, {"base": state.get(state.SPEC_TEXT), "text": text})
    ready = spec is not None and dataset is not None and state.get(state.MODEL) is not None
    if st.button("Run the audit on this version", type="primary", key="spec_run", disabled=not ready,
                 icon=":material/play_arrow:",
                 help="Audits the text above (Audit page, with its current parameters)." if ready else
                 "Needs a valid specification, a dataset and a model."):
        st.session_state["audit_autorun"] = True
        st.switch_page("pages/4_Audit.py")
    if spec is not None:
        result, meta = state.get(state.RESULT), state.get(state.RESULT_META) or {}
        audited = result is not None and (meta.get("spec") or "").strip() == text.strip()
        if audited:  # this very text was audited: its verdicts' colours
            st.caption("Coloured by the verdicts of the last audit of this text (Audit page for the details).")

        def spec_tree():
            nodes, guarantee = (result.nodes, result.guarantee) if audited else (viz.spec_nodes(spec), None)
            return viz.tree_chart(nodes, width=540, height=min(420, viz.tree.default_height(nodes)),
                                  guarantee=guarantee)

        charts.show(st, ("spec_tree", text, audited), spec_tree, owners=(result,) if audited else (),
                    width="content")

    with st.expander("Save to the library", expanded="spec_saved" in st.session_state):
        st.caption(f"Saved in the workspace folder (`{workspace.display(speclib.workspace_dir())}/`); the bundled "
                   "examples stay as they are. Only a specification that parses is saved.")
        c1, c2 = st.columns([3, 1])
        save_name = c1.text_input("Name (letters, digits, _ and -)", key="spec_save_name")
        overwrite = c2.checkbox("overwrite", key="spec_save_overwrite")
        if st.button("Save", key="spec_save", disabled=not (save_name.strip() and text.strip())):
            try:
                path = speclib.save_spec(save_name, text, overwrite=overwrite)
                st.session_state["spec_saved"] = (f"Saved `{workspace.display(path)}`; it is in the Library "
                                                  "list now.")
                st.session_state["spec_lib_pending"] = (speclib.WORKSPACE, path.stem)
                st.rerun()  # the Library (drawn above) lists it
            except (ValueError, FileExistsError, OSError) as err:
                st.error(str(err))
        if "spec_saved" in st.session_state:
            st.success(st.session_state.pop("spec_saved"))

# ------------------------------------------------------------------------------------------------ history
st.subheader("History")
versions_kept = state.get(state.SPEC_HISTORY)
if not versions_kept:
    st.caption("Every version you check or audit is listed here with the verdict it got and the step at which "
               "it was decided.")
else:
    st.dataframe(history.history_rows(versions_kept), width="stretch", hide_index=True,
                 column_config={"specification": st.column_config.TextColumn(width="large")})
    versions = [h["version"] for h in versions_kept]
    c1, c2, c3 = st.columns([1, 1, 2])
    a = c1.selectbox("Compare version", versions, index=max(0, len(versions) - 2), key="spec_cmp_a")
    b = c2.selectbox("with version", versions, index=len(versions) - 1, key="spec_cmp_b")
    ha = next(h for h in versions_kept if h["version"] == a)
    hb = next(h for h in versions_kept if h["version"] == b)
    diff = history.diff_lines(ha["text"], hb["text"])
    with c3:
        st.markdown(f"v{a}: {widgets.verdict_badge(ha['verdict'])} &nbsp;→&nbsp; v{b}: "
                    f"{widgets.verdict_badge(hb['verdict'])}", unsafe_allow_html=True)
        st.code("\n".join(diff) if diff else "(same text)", language="diff", wrap_lines=True)
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
