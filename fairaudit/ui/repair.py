"""The dashboard's "Repair" page (issue 32): what would make the specification pass — decision thresholds on the
current model's score, chosen on one part of the audited rows and certified on the other (``fairaudit.repair``: ``fairaudit.repairs``).

``page()`` draws it: the repair's choices (one threshold for everyone by default; per-group thresholds only when the
"Per-group thresholds" toggle is on, shown with ``fairaudit.repairs.wording.PER_GROUP_CAVEAT``; the objective; the
most of it a repair may give up; the share of rows that chooses, the failure probability, the seed), a run on the
session's dataset, model
and specification, then the certificate's verdict and headline, which rows chose and which certified, the chosen
thresholds beside the original, the fairness–accuracy curve (``fairaudit.viz.repair``), "Compare with the original"
(``fairaudit.comparison`` of the original and the repaired model on the certification rows only, drawn by
``fairaudit.ui.compare.show``) and "Save repaired model" (the JSON wrapper over the base model, in the workspace).
A refused repair leads with one line, "No repair adopted: …" (``RepairResult.refusal_for("dashboard")``: the loss
bound named by its slider), then the candidates tried — never "repaired", "chosen" or "adopted" — and offers neither
button (``actions_offered``).

Pure helpers (no Streamlit, unit-tested): ``repair_key`` (every input of a repair) and ``certification_rows`` (the
dataset positions that certified: the comparison reads only those, so the repaired model is never compared on the rows
that chose its thresholds). Repairs are cached in the session by ``repair_key`` (``RESULTS``).
"""
from __future__ import annotations

from typing import Any

RESULTS = "repair_results"     # {repair_key: RepairResult}: this session's repairs, oldest first
CURRENT = "repair_current"     # the repair_key of the repair shown
COMPARED = "repair_compared"   # {repair_key: CompareResult}: "Compare with the original"
SAVED = "repair_saved"         # the last save's message
CACHE_SIZE = 6
DELTAS = (0.01, 0.05, 0.1)
VERDICT_WORDS = {"certified": "Certified", "violated": "Violated", "undecided": "Not certified"}
PER_GROUP_KEY = "repair_per_group"  # the toggle: off by default (one threshold for everyone)


# ------------------------------------------------------------------------------------------------ pure helpers
def repair_key(dataset_key: Any, model_key: Any, spec_text: str, group_by, objective: str, thresholds: str,
               split: float, delta: float, seed: int, max_loss: float = 0.05) -> tuple:
    """Every input of a repair, hashable."""
    return (dataset_key, model_key, spec_text, tuple(group_by), objective, thresholds, float(split), float(delta),
            int(seed), float(max_loss))


def status_box(result) -> tuple[str, str]:
    """``(box kind, icon)`` of a repair's verdict: success / error / warning, and an icon that matches the verdict
    (``fairaudit.repairs.wording.status``: "Not certified" never wears the certified icon)."""
    _, kind, icon = result.status
    return kind, icon


def certification_rows(dataset, model, result):
    """The dataset positions that certified ``result`` (the audited rows of ``model`` split as the repair split
    them: ``fairaudit.core.inputs.split_audited`` with the search share and seed)."""
    from fairaudit.core.inputs import Inputs, split_audited

    inputs = Inputs.build(dataset, model=model)
    _, second = split_audited(inputs, result.search.share, result.search.seed)
    return second


def threshold_rows(result) -> list[dict]:
    """The thresholds as a table: one row per group (or one for every row), the original beside the candidate shown
    (its column "repaired" only when a repair was adopted, else "best candidate tried"; none when none was tried)."""
    shown = result.shown_name if result.tried else None

    def row(name, value):
        out = {"rows": name, "original": result.original_threshold}
        if shown:
            out[shown] = value
        return out

    if not result.chosen.thresholds:
        return [row("every row", result.chosen.default)]
    rows = [row(f"{'/'.join(result.group_by)} = {g}", t) for g, t in sorted(result.chosen.thresholds.items())]
    rows.append(row("rows of no group above", result.chosen.default))
    return rows


def point_rows(result) -> list[dict]:
    """The original and the candidate shown (``result.shown_name``) on the search rows: margin, accuracy, favourable
    share."""
    points = [("original", result.original)] + ([(result.shown_name, result.chosen)] if result.tried else [])
    return [{"model": name, "margin of the specification": p.margin, "accuracy": p.accuracy,
             "favourable decisions": p.favourable} for name, p in points]


def tried_rows(result) -> list[dict]:
    """The candidates certified together: thresholds, accuracy and favourable share on the search rows, the
    certificate's failure probability (the total shared by the k candidates) and verdict, and the accuracy on the
    certification rows; "adopted" only when a repair was adopted."""
    def text(p):
        if not p.thresholds:
            return f"≥ {p.default:.3g} for everyone"
        return "; ".join(f"{g} ≥ {t:.3g}" for g, t in sorted(p.thresholds.items()))

    rows = []
    for c in result.tried:
        row = {"thresholds": text(c.point), "accuracy (search rows)": c.point.accuracy,
               "favourable (search rows)": c.point.favourable, "margin (search rows)": c.point.margin,
               "failure probability": c.delta, "verdict": VERDICT_WORDS.get(c.verdict, c.verdict),
               "accuracy (certification rows)": c.accuracy}
        if result.is_adopted:
            row["adopted"] = c is result.adopted
        rows.append(row)
    return rows


def actions_offered(result) -> bool:
    """Whether "Compare with the original" and "Save repaired model" are offered: only when a repair was adopted."""
    return bool(result.is_adopted)


# ------------------------------------------------------------------------------------------------ the page
def _model_key() -> Any:
    from fairaudit.ui import state

    info = state.get(state.MODEL_INFO) or {}
    return (info.get("describe"), id(state.get(state.MODEL)))


def cached(store: str, key: tuple, run) -> Any:
    """``store``'s result for ``key`` from this session's cache, or ``run()`` once and kept (the last ``CACHE_SIZE``)."""
    from fairaudit.ui.state import session_cached

    return session_cached(store, key, run, CACHE_SIZE)


def page() -> None:
    import streamlit as st

    from fairaudit.base.errors import FairauditError
    from fairaudit.ui import state, widgets

    widgets.page_setup("Repair")
    st.title("Repair")
    st.caption("What would make the specification pass: one decision threshold on the model's score for everyone (or, "
               "as an explicit choice, one per group), chosen on one part of the audited rows for the best accuracy "
               "(or the closest share of favourable decisions) among repairs worth adopting, then certified on the "
               "other part — so the certificate is honest. A repair that decides everyone or no one favourably, or "
               "gives up more than the bound below, is refused.")
    widgets.sidebar_status()
    dataset, model = state.get(state.DATASET), state.get(state.MODEL)
    spec_text = (state.get(state.SPEC_TEXT) or "").strip()
    if dataset is None or model is None:
        st.info("To repair, choose a dataset (Data page) and train or load a model with scores (Model page) — or "
                "load the demo on the Overview page.")
        st.stop()
    if getattr(model, "kind", None) == "expression":
        st.info("The current decisions come from an expression over the columns: they have no score to put a "
                "threshold on. Train or load a model (Model page) to repair.")
        st.stop()
    if not spec_text:
        st.info("To repair, write a specification first (Specification page): the repair makes it pass.")
        st.stop()
    spec, default_groups, problem = _spec_and_groups(dataset, spec_text)
    if spec is None:
        st.error(f"The specification cannot be repaired: {problem}")
        st.stop()

    from fairaudit.repairs.repair import DEFAULT_SPLIT
    from fairaudit.repairs.select import DEFAULT_MAX_LOSS
    from fairaudit.repairs.wording import MAX_LOSS_LABEL, PER_GROUP_CAVEAT

    columns = [c for c in dataset.frame.columns if c != dataset.schema.label]
    with st.container(border=True):
        state.seed(PER_GROUP_KEY, False)
        per_group = st.toggle("Per-group thresholds (off: one threshold for everyone)", key=PER_GROUP_KEY,
                              help=PER_GROUP_CAVEAT)
        state.keep(PER_GROUP_KEY, per_group)
        if per_group:
            st.warning(PER_GROUP_CAVEAT, icon=":material/gavel:")
        c1, c2, c3 = st.columns([3, 2, 2])
        state.seed("repair_group_by", default_groups)
        group_by = c1.multiselect("Groups that get their own threshold (per-group thresholds only)", columns,
                                  key="repair_group_by", disabled=not per_group,
                                  help="Default: the protected columns the specification compares.")
        state.keep("repair_group_by", group_by)
        label_ok = dataset.schema.label is not None
        state.seed("repair_objective", "accuracy" if label_ok else "favourable")
        objective = c2.radio("Keep as much as possible of", ["accuracy", "favourable"], key="repair_objective",
                             format_func={"accuracy": "accuracy", "favourable": "favourable decisions"}.get,
                             horizontal=True, help=None if label_ok else "Accuracy needs a label (Data page).")
        state.keep("repair_objective", objective)
        state.seed("repair_thresholds", "both")
        mode = c3.selectbox("Per-group thresholds", ["both", "group"], key="repair_thresholds",
                            disabled=not per_group,
                            format_func={"both": "per group, or one if it does as well", "group": "per group"}.get)
        state.keep("repair_thresholds", mode)
        thresholds = mode if per_group else "global"
        c4, c5, c6 = st.columns([3, 2, 1])
        state.seed("repair_split", DEFAULT_SPLIT)
        split = c4.slider("Share of the audited rows that chooses the thresholds", 0.2, 0.8, key="repair_split",
                          step=0.05, help="The other rows certify the chosen thresholds; they play no part in "
                                          "choosing them.")
        state.keep("repair_split", split)
        state.seed("repair_delta", 0.05)
        delta = c5.selectbox("Failure probability of the certificate", DELTAS, key="repair_delta")
        state.keep("repair_delta", delta)
        state.seed("repair_seed", 0)
        seed = c6.number_input("Seed", 0, 10_000, key="repair_seed", help="seed of the split into the two parts")
        state.keep("repair_seed", seed)
        state.seed("repair_max_loss", DEFAULT_MAX_LOSS)
        max_loss = st.slider(MAX_LOSS_LABEL, 0.0, 0.5, key="repair_max_loss", step=0.01,
                             help="A repair that gives up more than this is refused: accuracy points, or how far the "
                                  "share of favourable decisions moves, measured on the search rows against the "
                                  "original model. A repair deciding everyone or no one favourably is always "
                                  "refused.")
        state.keep("repair_max_loss", max_loss)
        key = repair_key(state.get(state.DATASET_KEY), _model_key(), spec_text,
                         group_by if per_group else [], objective, thresholds, split, delta, seed, max_loss)
        run = st.button("Repair", type="primary", key="repair_run", icon=":material/build:",
                        disabled=(per_group and not group_by) or (objective == "accuracy" and not label_ok))
    if run or key in st.session_state.get(RESULTS, {}):
        try:
            with st.spinner("Searching thresholds on the search rows, certifying on the others…"):
                result = cached(RESULTS, key, lambda: _run(dataset, spec_text, model,
                                                           group_by if per_group else None, objective, thresholds,
                                                           float(split), float(delta), int(seed), float(max_loss)))
        except FairauditError as err:
            st.error(f"The repair cannot run: {err}")
            st.stop()
        st.session_state[CURRENT] = key
    elif st.session_state.get(CURRENT) in st.session_state.get(RESULTS, {}):
        key = st.session_state[CURRENT]
        result = st.session_state[RESULTS][key]
        st.caption("Showing the last repair (its choices, model or specification differ from those above: press "
                   "**Repair** for theirs).")
    else:
        st.info("Choose the groups and the objective and press **Repair**.")
        st.stop()
    show(result, key, dataset, model)


def _spec_and_groups(dataset, spec_text: str):
    """``(spec, default group columns, None)`` or ``(None, [], why)``: the checks the repair makes before work."""
    from fairaudit.base.errors import FairauditError
    from fairaudit.repairs.repair import check_spec, default_group_by
    from fairaudit.resolve import parse_spec

    try:
        spec = parse_spec(spec_text)
        check_spec(spec)
    except FairauditError as err:
        return None, [], str(err)
    return spec, default_group_by(spec, dataset), None


def _run(dataset, spec_text, model, group_by, objective, thresholds, split, delta, seed, max_loss):
    from fairaudit.repairs import repair

    return repair(dataset, spec_text, model, group_by=None if group_by is None else list(group_by),
                  objective=objective, thresholds=thresholds, split=split, delta=delta, seed=seed, max_loss=max_loss)


def show(result, key: tuple, dataset, model) -> None:
    """A repair's result. Adopted: the certificate's verdict and headline, the rows that chose and certified, the
    thresholds, the curve, and the two buttons. Refused: one line first ("No repair adopted: …", the loss bound
    named by its slider), then the candidates tried and their certificates, never called "repaired" or "adopted",
    and no buttons."""
    import pandas as pd
    import streamlit as st

    from fairaudit.repairs.wording import plural
    from fairaudit.ui import charts
    from fairaudit.viz.repair import repair_curve

    kind, icon = status_box(result)
    adopted = result.is_adopted
    getattr(st, kind)(result.headline if adopted else result.refusal_for("dashboard"), icon=icon)
    if result.caveat:
        st.warning(result.caveat, icon=":material/gavel:")
    if adopted:
        st.markdown(f"- **Chose the thresholds:** {result.search.text}.\n"
                    f"- **Certified them:** {result.certification.text}.")
    else:
        st.markdown(f"- **Searched the thresholds:** {result.search.text}.\n"
                    f"- **Tried to certify them:** {result.certification.text}.")
    cert = result.certificate
    if adopted and cert is not None:
        decided = f"decided after {cert.stop_step:,} of them" if cert.stop_step else "not decided on them"
        st.caption(f"The certificate is the audit of the repaired model on the {result.certification.count:,} "
                   f"certification rows ({decided}); its verdict holds {cert.guarantee.phrase} "
                   f"({cert.guarantee.assumes or 'assuming the rows are an independent sample, looked at once'}).")
    if result.tried:
        count = len(result.tried)
        if adopted:
            st.markdown(f"**Candidates certified together** ({count}, each at failure probability "
                        f"{result.delta:g}/{result.together}: all certificates hold together with probability ≥ "
                        f"{1 - result.delta:.0%}; the certified one with the best {result.objective} was adopted)")
        else:
            each = (f"at failure probability {result.delta:g}" if count == 1 else
                    f"together, each at failure probability {result.delta:g}/{result.together}")
            st.markdown(f"**Candidates tried** ({plural(count, 'candidate')}, certified {each} on the "
                        f"{result.certification.count:,} certification rows; none was certified)")
            for c in result.tried:
                st.markdown("- " + result.candidate_sentence(c))
        st.dataframe(pd.DataFrame(tried_rows(result)), hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f") for c in (
                         "accuracy (search rows)", "favourable (search rows)", "margin (search rows)",
                         "failure probability", "accuracy (certification rows)")})
    for note in result.notes:
        st.warning(note[:1].upper() + note[1:] + ".", icon=":material/info:")

    shown = result.shown_name
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Thresholds on the score**")
        st.dataframe(pd.DataFrame(threshold_rows(result)), hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("original", shown)})
    with right:
        st.markdown("**On the search rows**")
        st.dataframe(pd.DataFrame(point_rows(result)), hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in ("margin of the specification", "accuracy", "favourable decisions")})
        change = result.accuracy_change() if result.tried else None
        if change is not None:
            whose = "" if adopted else f" (the {shown})"
            st.caption(f"{change[:1].upper() + change[1:]}{whose}. The margin is how far inside the specification "
                       "the decisions are (negative: it is violated there).")
        if result.certified_accuracy is not None:
            st.caption(f"The {'repaired model' if adopted else shown}'s accuracy on the "
                       f"{result.certification.count:,} certification rows: {result.certified_accuracy:.4f}.")
    charts.show(st, ("repair_curve", key), lambda: repair_curve(result, width=720, height=320),
                owners=(result,), width="content")

    if not actions_offered(result):
        st.caption("Nothing to compare with the original or to save until a candidate is certified.")
        return
    c1, c2 = st.columns(2)
    with c1:
        compare_now = st.button("Compare with the original", key="repair_compare", icon=":material/compare_arrows:",
                                help="The original and the repaired model side by side on the certification rows "
                                     "(never on the rows that chose the thresholds).")
    with c2:
        _save(result)
    compared = st.session_state.get(COMPARED, {})
    if compare_now or key in compared:
        from fairaudit.base.errors import FairauditError

        try:
            with st.spinner("Comparing the original and the repaired model…"):
                comparison = cached(COMPARED, key, lambda: _compare(dataset, model, result))
        except FairauditError as err:
            st.error(f"The comparison cannot run: {err}")
            return
        from fairaudit.ui.compare import show as show_comparison

        st.subheader("The original and the repaired model")
        show_comparison(comparison, key_prefix="repair_cmp")


def _compare(dataset, model, result):
    from fairaudit.comparison import compare
    from fairaudit.viz.repair import ORIGINAL, REPAIRED

    among = certification_rows(dataset, model, result)
    return compare(dataset, result.spec, models=[model, result.model], names=[ORIGINAL, REPAIRED], among=among,
                   among_text=result.certification.text)


def _save(result) -> None:
    import streamlit as st

    from fairaudit.base.errors import FairauditError
    from fairaudit.ui import workspace

    models_dir = workspace.folder("models")
    name = st.text_input("File name (in the workspace's models folder)", value="repaired.json",
                         key="repair_save_name")
    overwrite = st.checkbox("overwrite", key="repair_save_overwrite")
    if st.button("Save repaired model", key="repair_save", icon=":material/save:",
                 help="A JSON file naming the base model's file and its thresholds (no code); a model trained here is "
                      "saved beside it first, in its own safe format."):
        try:
            stem = (name or "").strip()
            stem = stem if stem.endswith(".json") else stem + ".json"
            path = workspace.path_in(models_dir, stem)
            from fairaudit.repairs.model import base_destination

            base = base_destination(path, result.model.base_path, getattr(result.model.base, "kind", ""))
            targets = [path] + ([base] if base is not None else [])
            existing = [p.name for p in targets if p.exists()]
            if existing and not overwrite:
                raise workspace.WorkspaceError(f"{', '.join(existing)} exists already; tick 'overwrite' to replace it")
            written = result.save_model(path, force=overwrite)
            st.session_state[SAVED] = ("ok", "Saved " + ", ".join(workspace.display(p) for p in written) + ".")
        except (FairauditError, workspace.WorkspaceError, OSError) as err:
            st.session_state[SAVED] = ("error", f"Not saved: {err}")
    saved = st.session_state.get(SAVED)
    if saved:
        (st.success if saved[0] == "ok" else st.error)(saved[1])
