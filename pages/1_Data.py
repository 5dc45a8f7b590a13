"""Data: a built-in dataset or a CSV upload; roles (label, favourable value, protected); per-group counts."""
import streamlit as st

from fairaudit import data as fa_data
from fairaudit import viz
from fairaudit.data.roles import default_favourable, distinct_values, guess_roles
from fairaudit.base.errors import FairauditError
from fairaudit.core.group_metrics import SMALL_GROUP, group_base_rates
from fairaudit.ui import charts, flows, state, widgets
from fairaudit.ui import logic
from fairaudit.ui.logic import small_group_warning
from fairaudit.spec.quantities import out_of_range, parse_ranges, range_text

entered = widgets.page_setup("Data")
st.title("Data")

current = state.get(state.DATASET)
if entered and current is not None:  # opened again: show the data in use (widgets forget their state when hidden)
    st.session_state["data_source"] = ("Built-in dataset" if current.source in ("", "built-in")
                                       else "Upload a CSV file")
    for name, choice in (st.session_state.get("data_missing_choices") or {}).items():
        st.session_state[f"missing_{name}"] = choice
if st.session_state.pop("data_revert", False) and current is not None:
    # "Keep" was pressed: the widgets go back to the current dataset and its roles
    st.session_state["data_source"] = "Built-in dataset" if current.source in ("", "built-in") else "Upload a CSV file"
    st.session_state["data_builtin"] = current.name
    for key in [k for k in st.session_state if str(k).startswith(("label_", "fav_", "protected_"))]:
        del st.session_state[key]
source = st.radio("Source", ["Built-in dataset", "Upload a CSV file"], horizontal=True, key="data_source")
base = None
if source == "Built-in dataset":
    infos = {i.name: i for i in fa_data.info()}
    names = list(infos)
    default = names.index(current.name) if current is not None and current.name in infos else 0
    name = st.selectbox("Dataset", names, index=default, key="data_builtin",
                        format_func=lambda n: f"{n} ({infos[n].rows:,} rows)")
    st.caption(f"{infos[name].description} Licence: {infos[name].licence}.")
    base = state.builtin_dataset(name)
else:
    limit_mb, widget_mb = flows.upload_limits("data")
    with st.expander("How the file is read"):
        na_text = st.text_input("Text that means a missing value, besides an empty cell (comma-separated)",
                                key="data_na_values", placeholder="NA, null",
                                help="By default only an empty cell is missing: NA, None and null are values "
                                     "(NA is Namibia's country code).")
        types_text = st.text_input("Declared column types (NAME=integer, float, boolean or text; comma-separated)",
                                   key="data_column_types", placeholder="zip=text, score=float",
                                   help="Otherwise a column's type is fixed by the file's first 10,000 rows, and a "
                                        "later value that does not fit is refused with its row.")
        st.caption("These apply to the next file you upload.")
    generation = st.session_state.get("data_upload_gen", 0)
    # the widget itself states the limit ("Limit 200MB per file": logic.widget_limit_mb gives it our limit)
    upload = st.file_uploader("CSV file (comma, semicolon or tab separated; header row required)",
                              type=["csv", "gz"], key=f"data_upload_{generation}", max_upload_size=widget_mb)
    if upload is not None:
        failed = st.session_state.get("data_upload_failed")
        if failed and failed[0] == upload.file_id:  # the same bad file: its message, without reading it again
            st.error(failed[1])
        else:
            try:
                flows.read_data_upload(upload, limit_mb, na_text, types_text)
                st.session_state.pop("data_upload_failed", None)
                flows.forget_upload(upload)  # parsed: the bytes go, the uploader is emptied
                st.session_state["data_upload_gen"] = generation + 1
                st.rerun()
            except ValueError as err:  # over the size limit (before reading a byte of it)
                message = str(err)
            except FairauditError as err:
                message = f"This file cannot be used: {err}"
            except Exception as err:  # a parser bug must not show a traceback to the user
                message = f"This file cannot be read ({type(err).__name__}: {err})."
            st.session_state["data_upload_failed"] = (upload.file_id, message)
            st.error(message)
    uploaded = state.get(flows.UPLOADED)
    if uploaded is not None:
        base = uploaded
        st.caption(f"Using **{uploaded.source}** ({len(uploaded):,} rows × {len(uploaded.frame.columns)} columns). "
                   "Upload another file to replace it.")

if base is None:
    st.info("Choose a dataset or upload a CSV file.")
    widgets.sidebar_status()
    st.stop()

# ------------------------------------------------------------------------------------------------ roles
schema = base.schema
columns = schema.names
st.subheader("Roles")
c1, c2, c3 = st.columns([1, 1, 2])
# a built-in dataset always has its label; "(none)" is offered only for files without one
label_options = columns if schema.label is not None else ["(none)"] + columns
same = current is not None and current.name == base.name
cur = current.schema if same else schema
# a file that names no roles (an upload): start from the guesses (a 0/1 column named like an outcome, the columns
# named like protected attributes), for the user to check; a built-in dataset or an earlier choice keeps its own
guessed_label, guessed_protected = (guess_roles(base.frame) if cur.label is None and not cur.protected
                                    else (cur.label, tuple(cur.protected)))
label = c1.selectbox("Label (true outcome)", label_options,
                     index=label_options.index(guessed_label) if guessed_label in label_options else 0,
                     key=f"label_{base.name}",
                     help=None if guessed_label == cur.label else "Guessed from the column's name and values: check it.")
label = None if label == "(none)" else label
favourable = None
if label is not None:
    values = sorted(distinct_values(base.frame[label]), key=str)
    # the earlier choice for this label, else the positive word (yes, true, 1): the command line's default too
    fav_default = default_favourable(values, cur.favourable if cur.label == label else None)
    favourable = c2.selectbox("Favourable value", values, index=values.index(fav_default) if values else 0,
                              key=f"fav_{base.name}_{label}", format_func=str,
                              help="The label value that counts as the favourable outcome (pred = 1). A yes/no, "
                                   "true/false or 1/0 label starts at yes, true or 1.")
protected = c3.multiselect("Protected attributes", [c for c in columns if c != label],
                           default=[p for p in guessed_protected if p != label and p in columns],
                           key=f"protected_{base.name}")
try:
    dataset = fa_data.with_roles(base, label, list(protected), favourable)
    if label is None:
        st.info("Without a label the model cannot be trained; audit a decision column instead (Model page).")
except FairauditError as err:
    st.error(str(err))
    st.stop()

# a protected attribute with one group, or with missing values (a group "?" of their own): said, and chosen
for message in dataset.protected_warnings(how_to_drop="choose below whether to keep them as that group or drop "
                                                      "those rows"):
    st.warning(message, icon=":material/warning:")
missing_rows = int(dataset.missing_protected().sum()) if dataset.schema.protected else 0
if missing_rows:
    choice = st.radio(f"Rows with a missing protected attribute ({missing_rows:,})", logic.MISSING_CHOICES,
                      format_func=logic.missing_choice_label, horizontal=True, key=f"missing_{base.name}")
    dataset = logic.apply_missing_choice(dataset, choice)
    st.session_state["data_missing_choices"] = {**(st.session_state.get("data_missing_choices") or {}),
                                                base.name: choice}
    if choice == "drop":
        st.caption(f"{missing_rows:,} rows dropped; {len(dataset):,} remain (the audit and the model use these).")

change = logic.dataset_change(state.get(state.DATASET_KEY), state.dataset_key(dataset),
                              state.get(state.MODEL) is not None, state.get(state.RESULT) is not None)
if change == "confirm":  # the model and the result were made for the current dataset: ask before discarding them
    result = state.get(state.RESULT)
    info = state.get(state.MODEL_INFO) or {}
    same_rows = current is not None and current.name == dataset.name
    name = f"{dataset.name} with these roles" if same_rows else dataset.name
    st.warning(logic.discard_message(name, current.name if current is not None else "—", info.get("describe"),
                                     result.claim.key if result is not None else None), icon=":material/warning:")
    k1, k2, _ = st.columns([1.3, 1.3, 3])
    if k1.button(f"Switch to {dataset.name}", key="data_confirm_switch", type="primary"):
        state.set_dataset(dataset)
        st.rerun()
    if k2.button(f"Keep {current.name if current is not None else 'the current data'}", key="data_keep"):
        st.session_state["data_revert"] = True
        st.rerun()
    widgets.sidebar_status()
    st.stop()
elif change == "apply":
    state.set_dataset(dataset)

st.subheader("Amounts")
numeric = [c for c in dataset.frame.columns if c != dataset.schema.label
           and dataset.schema.column(c).kind == "numeric" and not logic.is_binary(dataset.frame[c])]
if numeric:
    declared = state.declared_ranges(dataset)
    shown = ", ".join(f"{c}={declared[c][0]:g}:{declared[c][1]:g}" for c in declared)
    ranges_text = st.text_input(
        "Ranges of the amounts to average (NAME=LOW:HIGH, comma-separated)", value=shown, key="data_ranges",
        placeholder=f"{numeric[0]}=LOW:HIGH",
        help="A specification may average a numeric column, E[amount | sex == \"Female\"], once its range is "
             "declared: the mean's guarantee rests on it, and a value outside it is an error naming the row. "
             "Give the range the values can take, not only the ones seen.")
    try:
        ranges = parse_ranges(ranges_text)
        unknown = [name for name in ranges if name not in numeric]
        if unknown:
            st.error(f"'{unknown[0]}' is not a numeric column of this dataset (numeric: {', '.join(numeric)})")
        else:
            state.put(state.RANGES, ranges)
            for name, (low, high) in ranges.items():  # the rows already here, checked as the audit will
                values = dataset.frame[name]
                message = out_of_range(name, values.to_numpy(dtype=float, na_value=float("nan")),
                                       values.notna().to_numpy(), low, high)
                if message:
                    st.warning(message, icon=":material/warning:")
            if ranges:
                st.caption("Declared: " + ", ".join(f"{n} in {range_text(*r)}" for n, r in ranges.items())
                           + " — what the guarantee of a mean rests on; the audit checks every row against it.")
    except FairauditError as err:
        st.error(str(err))
    seen = ", ".join(f"{c} {logic.observed_range(dataset.frame[c])}" for c in numeric[:8])
    st.caption(f"Numeric columns and the values seen in these rows: {seen}{', …' if len(numeric) > 8 else ''}.")

st.subheader("Preview")
st.caption(f"{len(dataset):,} rows × {len(dataset.frame.columns)} columns")
st.dataframe(dataset.frame.head(200), height=260, width="stretch")

# ------------------------------------------------------------------------------------------------ groups
st.subheader("Groups")
if not dataset.schema.protected:
    st.info("Choose at least one protected attribute to see per-group counts and base rates.")
else:
    inter = st.checkbox("Also show intersectional groups (every combination)", value=False,
                        disabled=len(dataset.schema.protected) < 2, key="data_intersectional")
    stats = group_base_rates(dataset.frame, dataset.schema.protected, dataset.schema.label,
                             dataset.schema.favourable, intersectional=inter)
    warning = small_group_warning(stats.to_dict("records"), SMALL_GROUP)
    if warning:
        st.warning(warning)
    st.caption("Bars: rows per group and the share with the favourable label, with a 95% Wilson interval; "
               "the dashed line is the overall rate." if dataset.schema.label else "Rows per group.")
    # keyed by the dataset's content (its rows in order and roles): this page makes a new Dataset on every rerun
    charts.show(st, ("group_bars", state.dataset_key(dataset), inter, 320), lambda: viz.group_bars(stats, width=320),
                width="content")
    with st.expander("Table"):
        st.dataframe(stats, width="stretch", hide_index=True)
widgets.discarded_note()
widgets.sidebar_status()
