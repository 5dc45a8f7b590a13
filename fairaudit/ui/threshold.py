"""The Audit page's decision-threshold slider: re-audit the specification at another threshold from the model's
scores, computed once per model and dataset (``fairaudit.models.threshold.CachedScores``: no re-prediction when the
slider moves), with the exact ``dataset`` engine on the audited rows, so that a move answers at once.

A move shows the specification's verdict at that threshold, the share of favourable decisions, the accuracy and,
per group of the specification's protected attributes, the selection rate and the TPR
(``fairaudit.core.group_metrics.decision_summary``); "Compare with the original" puts the model's own threshold
beside it. A threshold chosen by looking at these rows is exploratory: the section says so, and that certifying it
needs rows it was not chosen on.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from fairaudit.models.threshold import OWN_THRESHOLD, CachedScores, has_scores
from fairaudit.ui import state
from fairaudit.viz.palette import EXPLORATORY

SCORES = "threshold_scores"      # {"key": model + dataset identity, "cache": CachedScores}
RESULTS = "threshold_results"    # {(model + dataset, spec, where, rows, threshold): ThresholdAudit}: done
SLIDER_KEY = "threshold_slider"
COMPARE_KEY = "threshold_compare"
RESULTS_KEPT = 64                # audits at a threshold kept per session (a drag revisits the same values)
STEP = 0.01
TABLE_ROW_PX = 35                # st.dataframe's row height: the table is drawn whole, without a scroll bar
PLAIN_VERDICTS = {"true": "holds", "false": "violated", "unknown": "undecided"}
MOVED_WORDS = {"true": "**holds**", "false": "is **violated**", "unknown": "is **undecided**"}

EXPLORATORY_NOTE = ("Exploratory: a threshold chosen by looking at these rows is a hypothesis about them, not a "
                    "certified result. Certifying it needs rows it was not chosen on (fresh or held-back rows), "
                    "which the repair feature will do; the verdict here is exact for these rows only.")
INTRO = ("What if the model decided at another threshold? Move the slider: the specification is audited again, "
         "exactly, on the same audited rows (the dataset engine), from the model's scores computed once — nothing is "
         "predicted again, and the audit above is not changed.")
ONE_THRESHOLD_CAPTION = ("The slider moves one threshold for everyone. The Repair page can also offer a threshold per "
                         "group, as an explicit choice only: ")  # + the caveat (``fairaudit.repairs.wording``)
NO_SCORES_NOTE = ("No threshold slider: the decisions are logged (a condition over the rows, or a column of classes) "
                  "or a model's classes, with no score to move a threshold on (a trained or uploaded yes/no model "
                  "has one).")


class ThresholdAudit:
    """The specification audited at one threshold (``result``: an ``AuditResult`` of the dataset engine) and what its
    decisions do on the audited rows (``summary``: ``decision_summary``)."""

    def __init__(self, threshold: float, result, summary: pd.DataFrame):
        self.threshold, self.result, self.summary = threshold, result, summary


def model_key(dataset, model) -> tuple:
    return (state.dataset_key(dataset), id(model), model.describe())


def cached_scores(dataset, model, inputs=None) -> CachedScores:
    """The scores and own decisions of ``model`` on every row of ``dataset``, computed once per model and dataset in
    this session (taken from ``inputs``, the Audit page's current ``Inputs``, when they hold them: no prediction)."""
    key = model_key(dataset, model)
    held = st.session_state.get(SCORES)
    if held is not None and held["key"] == key:
        return held["cache"]
    reuse = (inputs is not None and inputs.model is model and inputs.dataset is dataset and inputs.scores is not None
             and inputs.decisions is not None)
    cache = (CachedScores(model, dataset.frame, scores=inputs.scores, decisions=inputs.decisions) if reuse
             else CachedScores(model, dataset.frame))
    st.session_state[SCORES] = {"key": key, "cache": cache}
    return cache


def protected_of(dataset, spec_text: str) -> list[str]:
    """The protected attributes the specification reads (all the dataset's when it reads none)."""
    from fairaudit.spec import parse
    from fairaudit.spec.events import spec_columns

    protected = list(dataset.schema.protected)
    try:
        named = [c for c in spec_columns(parse(spec_text)) if c in protected]
    except Exception:  # noqa: BLE001 - a spec that does not parse is reported by the page; show every attribute
        named = []
    return named or protected


def audit_at_threshold(dataset, spec_text: str, cache: CachedScores, threshold: float, where: str | None = None,
                       rows: str | None = None) -> ThresholdAudit:
    """The specification audited exactly (the dataset engine) on the audited rows with the decisions at
    ``threshold`` from ``cache`` (nothing predicted again), and those decisions' summary on the same rows
    (``decision_summary`` over the specification's protected attributes). No session: ``bench/threshold_slider.py``
    times it."""
    from fairaudit.api import audit
    from fairaudit.core.group_metrics import decision_summary
    from fairaudit.core.registry import EXACT
    from fairaudit.core.inputs import Inputs

    model = cache.at(threshold)
    result = audit(dataset, spec_text, engine=EXACT, model=model, where=where, rows=rows)
    inputs = Inputs.build(dataset, model=model, where=where, rows=rows)  # the same rows; decisions from the cache
    frame = dataset.frame if inputs.positions is None else dataset.frame.iloc[inputs.positions]
    summary = decision_summary(frame, protected_of(dataset, spec_text), inputs.audited(inputs.decisions),
                               inputs.audited(inputs.labels))
    return ThresholdAudit(float(threshold), result, summary)


def audit_at(dataset, spec_text: str, cache: CachedScores, threshold: float, where: str | None,
             rows: str | None) -> ThresholdAudit:
    """``audit_at_threshold``, kept in the session per (model, dataset, spec, rows, threshold): a drag back to a
    threshold already seen answers without auditing again."""
    key = (model_key(dataset, cache.model), spec_text, where, rows, round(float(threshold), 6))
    kept = st.session_state.setdefault(RESULTS, {})
    if key not in kept:
        kept[key] = audit_at_threshold(dataset, spec_text, cache, threshold, where, rows)
        while len(kept) > RESULTS_KEPT:
            kept.pop(next(iter(kept)))
    return kept[key]


def column_name(threshold: float) -> str:
    """The table's column of the slider's threshold."""
    own = " (the model's own)" if threshold == OWN_THRESHOLD else ""
    return f"slider threshold {threshold:.2f}{own}"


def comparison_table(moved: ThresholdAudit, original: ThresholdAudit | None) -> pd.DataFrame:
    """One row per measure: the verdict, then ``decision_summary``'s measures, at the slider's threshold (and at the
    model's own, first, when ``original`` is given)."""
    def column(m: ThresholdAudit) -> list[Any]:
        verdict = PLAIN_VERDICTS.get(m.result.claim.key, "undecided")
        return ([verdict if m.threshold == OWN_THRESHOLD else f"{verdict} (exploratory)"]
                + [f"{v:.3f}  ({k:,}/{n:,})" if n else "no rows"
                   for v, k, n in zip(m.summary["value"], m.summary["k"], m.summary["n"])])

    table = {"measure": ["verdict of the specification"] + list(moved.summary["measure"])}
    if original is not None:
        table[f"original threshold {original.threshold:.2f}"] = column(original)
    table[column_name(moved.threshold)] = column(moved)
    return pd.DataFrame(table)


def threshold_section(dataset, model, spec_text: str, where: str | None, rows: str | None, inputs=None) -> None:
    """The section: a caption for decisions without scores; else the slider, the verdict and rates at its
    threshold, and "Compare with the original"."""
    from fairaudit.ui import logic, widgets

    if dataset is None or model is None or not spec_text.strip():
        return
    st.subheader("Decision threshold")
    if not has_scores(model):
        st.caption(NO_SCORES_NOTE)
        return
    try:
        cache = cached_scores(dataset, model, inputs)
    except Exception as err:  # noqa: BLE001 - a model that cannot score these rows: one sentence, no slider
        st.caption(f"No threshold slider: the model's scores could not be computed ({logic.error_text(err)[0]}).")
        return
    from fairaudit.repairs.wording import PER_GROUP_CAVEAT

    st.caption(INTRO)
    st.caption(ONE_THRESHOLD_CAPTION + PER_GROUP_CAVEAT)
    state.seed(SLIDER_KEY, OWN_THRESHOLD)
    threshold = st.slider("Decision threshold: favourable when the model's score is above", 0.0, 1.0, step=STEP,
                          key=SLIDER_KEY, format="%.2f",
                          help=f"The model's own threshold is {OWN_THRESHOLD:g}. Moving it re-audits the "
                               "specification exactly on the audited rows (the dataset engine) from the model's "
                               "scores, computed once: nothing is predicted again.")
    state.keep(SLIDER_KEY, threshold)
    verdict_box = st.container()
    compare = st.toggle("Compare with the original threshold", key=COMPARE_KEY,
                        help=f"Shows the model's own threshold ({OWN_THRESHOLD:g}) beside the slider's: its verdict "
                             "and the same rates on the same rows.")
    try:
        moved = audit_at(dataset, spec_text, cache, threshold, where, rows)
        original = (audit_at(dataset, spec_text, cache, OWN_THRESHOLD, where, rows)
                    if compare and threshold != OWN_THRESHOLD else None)
    except Exception as err:  # noqa: BLE001 - shown as one sentence, never a traceback
        verdict_box.error(f"The audit at threshold {threshold:.2f} could not run: {logic.error_text(err)[0]}")
        return
    from fairaudit.engines.dataset.engine import scope

    own = threshold == OWN_THRESHOLD  # else a threshold chosen here: the exploratory badge, never the certified colour
    where_at = f"At the model's own threshold **{threshold:.2f}**" if own else f"At threshold **{threshold:.2f}**"
    badge = widgets.verdict_badge(moved.result.claim.status if own else EXPLORATORY)
    verdict_box.markdown(f"{where_at}: {badge} &nbsp; the specification "
                         f"{MOVED_WORDS.get(moved.result.claim.key, 'is **undecided**')} exactly "
                         f"{scope(int(moved.summary['n'].iloc[0]))}", unsafe_allow_html=True)
    if threshold != OWN_THRESHOLD:
        verdict_box.caption(EXPLORATORY_NOTE)
    if compare and threshold == OWN_THRESHOLD:
        st.caption("The slider is at the model's own threshold: move it to compare the two.")
    table = comparison_table(moved, original)
    st.dataframe(table, width="stretch", hide_index=True, height=TABLE_ROW_PX * (len(table) + 1) + 3)
    rows_text = moved.result.rows_text
    st.caption("Exact values on " + (rows_text or "the audited rows") + ". Selection rate: the share of favourable "
               "decisions in the group; TPR: the share of favourable decisions among the group's rows whose label "
               "is favourable.")
