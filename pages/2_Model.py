"""Model: train one, load a model file (an upload or a file in the workspace folder, safe formats only), or take the
decisions from an expression over the columns."""
import numpy as np
import pandas as pd
import streamlit as st

from fairaudit import models as fa_models
from fairaudit import viz
from fairaudit.base.errors import FairauditError
from fairaudit.core.group_metrics import SMALL_GROUP, group_model_metrics
from fairaudit.models.features import default_features, left_out_text
from fairaudit.models.training import HELD_OUT_SHARE, KIND_HELP
from fairaudit.ui import charts, flows, logic, state, widgets, workspace
from fairaudit.ui.progress import progress_bar

entered = widgets.page_setup("Model")
st.title("Model")

dataset = state.get(state.DATASET)
if dataset is None:
    st.info("Choose a dataset on the Data page first (or load the demo on the Overview page).")
    st.page_link("pages/1_Data.py", label="Go to Data")
    widgets.sidebar_status()
    st.stop()

label_text = f"label `{dataset.schema.label}`" if dataset.schema.label is not None else "no label"
st.caption(f"Dataset: **{dataset.name}** ({len(dataset):,} rows), {label_text}, "
           f"protected {', '.join(dataset.schema.protected) or 'none'}")
MODES = {"trained": "Train a model", "file": "Load a model file", "expression": "Decisions from a column or expression"}
info_now = state.get(state.MODEL_INFO) or {}
if entered and info_now.get("source") in MODES:  # opened: show how the current decisions were obtained
    st.session_state["model_mode"] = MODES[info_now["source"]]
    if info_now.get("expression"):
        st.session_state["model_expr"] = info_now["expression"]
mode = st.radio("Where do the decisions come from?", ["Train a model", "Load a model file",
                                                      "Decisions from a column or expression"],
                horizontal=True, key="model_mode")

if mode == "Train a model":
    c1, c2, c3 = st.columns([2, 1, 1])
    kind = c1.selectbox("Kind", list(fa_models.KINDS), format_func=lambda k: f"{k} — {KIND_HELP.get(k, '')}",
                        key="model_kind")
    test_size = c2.slider("Held-out share", 0.1, 0.5, HELD_OUT_SHARE, 0.05, key="model_test_size",
                          help="The rows held out from training; the audit reads only those. The default is the "
                               "same for the demo and the command line (fairaudit train --test-size).")
    seed = c3.number_input("Seed", 0, 10_000, 0, 1, key="model_seed")
    features = None
    if dataset.schema.label is None:  # say why Train is greyed out, and what to do
        st.info("Training needs a label (the true outcome): choose one under Roles on the Data page — or take the "
                "decisions from a column or expression (above).")
    else:
        include = st.checkbox("Include the protected attributes", key="model_include_protected",
                              disabled=not dataset.schema.protected,
                              help="By default the model does not read them; tick to let it (e.g. to audit Fair[...] "
                                   "of a model that sees the attribute).")
        candidates = [c for c in dataset.schema.names if c != dataset.schema.label]
        features = st.multiselect("Features the model reads", candidates,
                                  default=default_features(dataset, include_protected=include),
                                  key=f"model_features_{abs(hash(state.dataset_key(dataset)))}_{int(include)}")
        skipped = left_out_text(dataset, features, include_protected=include)
        if skipped:
            st.caption(f"Not read: {skipped}.")
        for message in flows.leak_warnings(dataset, features):
            st.warning(message[:1].upper() + message[1:] + ".", icon=":material/warning:")
    if st.button("Train", type="primary", key="model_train", disabled=dataset.schema.label is None or not features):
        try:
            with progress_bar(f"Training {kind}") as bar:
                flows.train_model(dataset, kind, int(seed), float(test_size), features, on_progress=bar)
            st.success("Trained.")
        except FairauditError as err:
            st.error(str(err))
elif mode == "Load a model file":
    st.caption("Safe formats only: scikit-learn models as **skops** (`.skops`), fairaudit's torch models (`.pt`: "
               "weights and a JSON description) and `.nnet` networks. Pickle and joblib files are refused: loading "
               "them could run code.")
    models_dir = workspace.folder("models")
    where = st.radio("From", ["Upload a file", "The workspace folder"], horizontal=True, key="model_from")
    if where == "Upload a file":
        limit_mb, widget_mb = flows.upload_limits("model")
        generation = st.session_state.get("model_upload_gen", 0)
        upload = st.file_uploader("Model file (.skops, .pt or .nnet)",
                                  type=["skops", "pt", "nnet"], key=f"model_upload_{generation}",
                                  max_upload_size=widget_mb)
        if upload is not None:
            problem = logic.upload_problem(upload.name, int(upload.size), limit_mb, "model")
            if problem:
                st.error(problem)
            elif st.session_state.get("model_pending", {}).get("id") != upload.file_id:
                st.session_state["model_pending"] = {"id": upload.file_id, "name": upload.name,
                                                     "data": upload.getvalue(), "from": "upload", "tried": False}
                flows.forget_upload(upload)  # the bytes are in model_pending; the uploader is emptied
                st.session_state["model_upload_gen"] = generation + 1
                st.rerun()
    else:
        files = workspace.list_files(models_dir)
        if not files:
            st.info(f"No model files in `{workspace.display(models_dir)}` yet: copy `.skops`, `.pt` or `.nnet` files "
                    "there, or train a model and save it from this page.")
        else:
            pick = st.selectbox(f"Model file in {workspace.display(models_dir)}/", files, key="model_ws_pick")
            if st.button("Load", key="model_ws_load"):
                try:
                    limit_mb, _ = flows.upload_limits("model")
                    data = workspace.read_bytes(models_dir, pick, limit_mb * logic.MB)
                    st.session_state["model_pending"] = {"id": f"ws:{pick}", "name": pick, "data": data,
                                                         "from": "workspace", "tried": False}
                except (workspace.WorkspaceError, OSError) as err:
                    st.error(str(err))
    pending = st.session_state.get("model_pending")
    if pending is not None:
        if not pending["tried"]:
            pending["tried"] = True
            try:
                model = flows.load_model_bytes(pending["data"], pending["name"])
                lacking = logic.missing_columns(getattr(model, "feature_names", []) or [], dataset.frame.columns)
                if lacking:  # a model for other data (a COMPAS model while Adult is loaded) is refused
                    pending["error"] = logic.model_mismatch_message(lacking, dataset.name)
                else:
                    state.set_model(model, {"source": "file", "kind": model.kind, "file": pending["name"],
                                            "from": pending["from"]})
                    st.session_state.pop("model_pending", None)
                    pending = None
                    st.success(f"Loaded {model.describe()}")
            except FairauditError as err:  # incl. a skops file needing untrusted types: never trusted from here
                pending["error"] = f"{pending['name']} cannot be loaded: {err}"
            except Exception as err:  # a damaged file must not show a traceback
                pending["error"] = f"{pending['name']} cannot be loaded ({type(err).__name__}: {err})"
        if pending is not None:
            if pending.get("error"):
                st.error(pending["error"])
                st.session_state.pop("model_pending", None)
else:
    title, hint = logic.decision_hint(dataset.schema.label, dataset.schema.favourable)
    st.write("The decision is a condition over the rows that is **true where the decision is favourable** "
             "(pred = 1).")
    expr = st.text_input(title, key="model_expr", help=hint, placeholder="e.g. decile_score <= 4")
    st.caption(hint)
    if st.button("Use these decisions", key="model_use_expr", disabled=not expr.strip()):
        try:
            model = fa_models.from_expression(expr.strip(), dataset)
            state.set_model(model, {"source": "expression", "kind": "expression", "expression": expr.strip()})
            if not getattr(model, "warnings", None):  # otherwise the warnings are said under "Current model"
                st.success(f"Using {model.describe()}")
        except FairauditError as err:
            st.error(str(err))

widgets.discarded_note()
model = state.get(state.MODEL)
info = state.get(state.MODEL_INFO)
if model is None:
    st.info("No model yet.")
    widgets.sidebar_status()
    st.stop()

st.subheader("Current model")
st.write(info["describe"])
if info.get("features"):
    st.caption(f"Reads: {', '.join(info['features'])}.")
for message in dict.fromkeys(getattr(model, "warnings", None) or []):  # e.g. an inverted decision
    st.warning(message[:1].upper() + message[1:] + ("" if message.endswith(".") else "."),
               icon=":material/warning:")
if info.get("source") == "trained":
    with st.expander("Save this model in the workspace"):
        models_dir = workspace.folder("models")
        c1, c2 = st.columns([3, 1])
        save_name = c1.text_input("Name (letters, digits, _ and -)", key="model_save_name")
        overwrite = c2.checkbox("overwrite", key="model_save_overwrite")
        if st.button("Save", key="model_save", disabled=not save_name.strip()):
            try:
                path = workspace.save_model(model, save_name, models_dir, overwrite=overwrite)
                st.success(f"Saved `{workspace.display(path)}`; it is listed under Load a model file → "
                           "The workspace folder.")
            except (workspace.WorkspaceError, FileExistsError, FairauditError, OSError) as err:
                st.error(str(err))

# ------------------------------------------------------------------------------------------------ metrics
st.subheader("Per-group metrics")
if not dataset.schema.protected:
    st.info("Choose protected attributes on the Data page to see per-group metrics.")
else:
    record = fa_models.held_out(model, dataset) if info.get("source") == "trained" else None
    if record is not None:  # the record every route cites (fairaudit.models.recipe.HeldOut)
        rows = dataset.frame.iloc[fa_models.held_out_positions(model, dataset)].reset_index(drop=True)
        where = f"the {record.text}"
    else:
        rows = dataset.frame
        where = f"all {len(rows):,} rows"
    try:
        pred = np.asarray(model.predict(rows))
    except FairauditError as err:
        st.error(str(err))
        st.stop()
    if getattr(model, "classes", None) is not None:  # several classes: no favourable share, no TPR / FPR
        st.caption(f"Measured on {where}. The decisions have several classes: the share of each class in each "
                   "group. To audit a gap between groups, use the Class rate gap template on the Specification page.")
        for attribute in dataset.schema.protected:
            shares = pd.crosstab(rows[attribute], pred, normalize="index").round(4)
            st.dataframe(shares.rename_axis(index=attribute, columns="decision"), width="stretch")
        if info.get("source") == "file":  # a classifier of several classes: its favourable classes, as a role
            picked = st.multiselect("Favourable classes (read the model as yes/no: favourable where its class is one "
                                    "of them)", list(model.classes), key="model_favourable_classes",
                                    help="Like the favourable value of a label: every yes/no template, the scan and "
                                         "the group tables then apply. Without them, pred is the class "
                                         "(E[pred == \"approve\" | …]).")
            if st.button("Read as yes/no", key="model_use_favourable", disabled=not picked):
                state.set_model(fa_models.with_favourable(model, picked), {**info, "favourable classes": [str(c) for c in picked]})
                st.rerun()
        widgets.sidebar_status()
        st.stop()
    y_true = None
    if dataset.schema.label is not None:
        y_true = (rows[dataset.schema.label] == dataset.schema.favourable).to_numpy(dtype=int)
    metrics = group_model_metrics(rows, dataset.schema.protected, pred, y_true)
    st.caption(f"Measured on {where}. Points are the metric, bars its 95% Wilson interval; "
               "selection rate = share of favourable decisions; TPR (true-positive rate) = share of truly favourable "
               "rows that get the favourable decision; FPR (false-positive rate) = the same share among truly "
               "unfavourable rows. "
               f"Groups with fewer than {SMALL_GROUP} rows in the denominator are marked.")
    charts.show(st, ("group_metrics", 175), lambda: viz.group_metrics_chart(metrics, width=175),
                owners=(dataset, model), width="content")
    with st.expander("Table"):
        st.dataframe(metrics, width="stretch", hide_index=True)
widgets.sidebar_status()
