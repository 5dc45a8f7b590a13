"""``repair()``: what would make it pass — decision thresholds on the model's score, chosen on one part of the audited
rows and certified by the monitor on the other (re-exported as ``fairaudit.repair``; ``docs/methods/repair.md``).

1. Everything is checked before any work: the options, the specification (it must read ``pred``; ``Fair[...]``
   leaves are not supported), the group columns, labels for the accuracy objective, and (once the model is loaded
   or trained, as an audit would) that the model has scores.
2. The audited rows (held-out rows of a model fairaudit trained: ``fairaudit.core.inputs.audited_rows``) are split at
   random (``seed``) into the search part (``split`` of them) and the certification part
   (``fairaudit.core.inputs.split_audited``, the splitter ``fairaudit.confirm`` uses).
3. On the search part only: candidate thresholds per group (``fairaudit.repairs.candidates``), the search
   (``fairaudit.repairs.search``) for the thresholds with the best objective among those whose margin reaches the
   required one, a single global threshold likewise, and the curve.
4. On the certification part only: the repaired model (``fairaudit.repairs.model``) audited by the monitor at
   ``delta`` — the normal audit road (``fairaudit.resolve``, the driver) — whose verdict is the certificate.
"""
from __future__ import annotations

import math

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.repairs.candidates import candidates, own_threshold
from fairaudit.repairs.result import Point, RepairResult, Rows
from fairaudit.repairs.search import Found, Search, objective_values, pick

OBJECTIVES = ("accuracy", "favourable")
MODES = ("both", "group", "global")
DEFAULT_SPLIT = 0.5
DEFAULT_DELTA = 0.05
ENGINE = "monitor"
ALL_ROWS = "(all rows)"
MAX_GROUPS = 64  # groups with a threshold of their own, at most  # the name of the one cell of a global threshold


def repair(data, spec, model=None, *, pred: str | None = None, group_by=None, objective: str = "accuracy",
           thresholds: str = "both", split: float = DEFAULT_SPLIT, seed: int = 0, delta: float = DEFAULT_DELTA,
           rows: str | None = None, margin="auto", trust_pickle: bool = False, trusted_types=(),
           include_protected: bool = False) -> RepairResult:
    """Choose decision thresholds on ``model``'s score that make ``spec`` hold on ``data`` with the least loss of
    ``objective``, and certify them on rows that did not choose them (module doc).

    ``model``: a ``Model`` with scores, a saved-model path or a training kind (as ``fairaudit.audit``); ``pred`` (a
    decision expression) is refused: it has no score. ``group_by``: the column(s) whose groups get their own
    threshold (default: the protected — else categorical — columns the specification's conditions compare).
    ``objective``: ``accuracy`` (needs labels) or ``favourable`` (the share of favourable decisions).
    ``thresholds``: ``group``, ``global`` or ``both`` (a single threshold is preferred when it does as well).
    ``split``: the share of the audited rows that chooses; ``delta``: the certificate's failure probability;
    ``margin``: how far inside the specification the chosen thresholds must be on the search rows, a number or
    ``"auto"`` (sized for each set of thresholds from the certification part: ``fairaudit.repairs.margin``).
    ``FairauditError`` (one line) on bad input, before any work."""
    from fairaudit.resolve import resolve

    objective, thresholds = check_choices(objective, thresholds)
    if not 0 < float(split) < 1:
        raise FairauditError(f"split must be in (0, 1): the share of the rows that chooses the thresholds, got "
                             f"{split!r}")
    margin = check_margin(margin)
    if pred is not None:
        raise FairauditError("a decision expression (pred) has no scores: a threshold repair needs a model with "
                             "scores (a model file or a training kind, --model)")
    if model is None:
        raise FairauditError("a threshold repair needs a model with scores: give model=... (--model)")
    base_path = str(model) if isinstance(model, str) and _is_file(model) else None
    plan = resolve(ENGINE, data, spec, model=model, rows=rows, trust_pickle=trust_pickle, trusted_types=trusted_types,
                   include_protected=include_protected, delta=delta, seed=seed)
    dataset, parsed = plan.dataset, plan.spec
    group_by, thresholds, early_notes = check_request(dataset, parsed, group_by, objective, thresholds)
    inputs = plan.inputs(plan.preflight())  # the model is loaded or trained here, as for an audit
    base = inputs.model
    check_scores(base, inputs)

    from fairaudit.core.inputs import part, split_audited
    from fairaudit.models.thresholds import ThresholdModel, group_labels

    if isinstance(base, ThresholdModel):
        raise FairauditError("the model is already a threshold repair: repair its base model instead")
    first, second = split_audited(inputs, split, seed)
    audited = inputs.rows.get("text") or f"{len(first) + len(second):,} audited rows"
    search_rows = Rows(len(first), float(split), int(seed),
                       f"{len(first):,} of the {audited}, drawn at random (seed {seed}) to choose the thresholds")
    cert_rows = Rows(len(second), 1.0 - float(split), int(seed),
                     f"the other {len(second):,} of the {audited} (not used to choose the thresholds: "
                     f"{len(first):,} rows chose them, split at random with seed {seed})")

    # ---------------------------------------------------------------- the search, on the search rows only
    frame = dataset.frame.iloc[first].reset_index(drop=True)
    scores = np.asarray(inputs.scores)[first]
    labels = None if inputs.labels is None else np.asarray(inputs.labels)[first]
    decisions = np.asarray(inputs.decisions)[first]
    groups = group_labels(frame, group_by)
    own, exact = own_threshold(scores, decisions)
    from fairaudit.repairs.margin import requirement

    search = Search(parsed, frame, scores, labels, groups,
                    requirement=requirement(margin, search_rows=len(first), certification_rows=len(second),
                                            delta=delta, leaves=len({t.text for t in parsed.leaves})))
    original_values = search.decided(decisions)
    notes = list(early_notes)
    if not exact:
        notes.append("the model's decisions are not a threshold of its score on these rows: the original point is "
                     "its own decisions, the repaired model decides every row by a threshold")
    unseen = int(sum(1 for g in groups if g is None))
    if unseen:
        notes.append(f"{unseen:,} search row(s) have a missing {'/'.join(group_by)}: they are decided by the "
                     f"model's own threshold {own:.3g} (by the global threshold when it is chosen), as are rows of "
                     "a group the search rows do not have")

    glob = search_global(search, scores, own, objective) if thresholds in ("both", "global") else None
    grouped = None
    if thresholds in ("both", "group"):
        extra = [glob.thresholds(glob.best)[ALL_ROWS]] if glob is not None else []
        cands = {g: np.unique(np.concatenate([candidates(scores[groups == g], own), extra]))
                 for g in search.group_names}
        grouped = search.search(cands, own, objective)
    kind, found = choose(grouped, glob, objective)
    chosen_thresholds = {} if kind == "global" else found.thresholds(found.best)
    default = found.thresholds(found.best)[ALL_ROWS] if kind == "global" else own
    if not found.feasible:
        notes.append("no candidate reached the required margin on the search rows: the thresholds with the largest "
                     "margin were chosen, and the certificate says whether they hold")

    # ---------------------------------------------------------------- the certificate, on the other rows only
    from fairaudit.core.driver import last, start
    from fairaudit.repairs.model import repaired_model

    wrapper = repaired_model(base, group_by, chosen_thresholds, default, base_path=base_path)
    plan2 = resolve(ENGINE, dataset, parsed, model=wrapper, rows=rows, delta=delta, seed=seed)
    inputs2 = plan2.inputs(plan2.preflight())
    if not _same_rows(inputs, inputs2):
        raise FairauditError("internal: the repaired model's audited rows differ from the original's")
    certifying = part(inputs2, second, cert_rows.text)
    certificate = last(start(plan2.engine, parsed, certifying, plan2.options))

    chosen_point = _point(found, found.best, kind, default)
    original_point = Point(float(original_values.margin[0]),
                           None if original_values.accuracy is None else float(original_values.accuracy[0]),
                           float(original_values.favourable[0]), {}, own, "original")
    curve = [p for f, k in ((grouped, "group"), (glob, "global")) if f is not None
             for p in (_point(f, r, k, own if k == "group" else None) for r in f.front(objective))]
    curve = sorted(curve, key=lambda p: -p.margin) + [original_point]
    sizes = {"per_group": {g: int(len(c)) for g, c in (grouped.candidates.items() if grouped else ())},
             "global": int(len(glob.candidates[ALL_ROWS])) if glob is not None else 0,
             "tried": int(sum(len(f.idx) for f in (grouped, glob) if f is not None))}
    method = "; ".join(f"{k}: {f.method}" for f, k in ((grouped, "group thresholds"), (glob, "global threshold"))
                       if f is not None)
    return RepairResult(
        spec=parsed.text, group_by=list(group_by), objective=objective, thresholds=chosen_thresholds,
        global_threshold=(glob.thresholds(glob.best)[ALL_ROWS] if glob is not None else None),
        original_threshold=own, kind=kind, chosen=chosen_point, original=original_point, curve=curve,
        search=search_rows, certification=cert_rows, certificate=certificate, delta=float(delta),
        model=repaired_model(base, group_by, chosen_thresholds, default, base_path=base_path, chosen_on={
            "content_hash": dataset.content_hash, "rows": len(dataset), "share": float(split), "seed": int(seed),
            "base_rows": "all" if inputs.positions is None else "held-out"}),
        required_margin={nid: float(v[found.best]) for nid, v in found.values.need.items()},
        margin_rule=search.requirement.describe(), method=method, feasible=found.feasible, candidates=sizes,
        notes=notes)


# ------------------------------------------------------------------------------------------------ checks
def check_margin(margin):
    """``"auto"`` or a number ≥ 0."""
    if margin is None or (isinstance(margin, str) and margin == "auto"):
        return "auto"
    try:
        value = float(margin)
    except (TypeError, ValueError):
        raise FairauditError(f"margin must be a number ≥ 0 or 'auto', got {margin!r}") from None
    if not math.isfinite(value) or value < 0:
        raise FairauditError(f"margin must be a number ≥ 0 or 'auto', got {margin!r}")
    return value


def check_choices(objective, thresholds) -> tuple[str, str]:
    """``(objective, thresholds)``, each one of its choices (``OBJECTIVES``, ``MODES``); ``FairauditError``
    otherwise."""
    objective, thresholds = str(objective), str(thresholds)
    if objective not in OBJECTIVES:
        raise FairauditError(f"unknown objective {objective!r}; choose one of: {', '.join(OBJECTIVES)}")
    if thresholds not in MODES:
        raise FairauditError(f"unknown thresholds {thresholds!r}; choose one of: {', '.join(MODES)}")
    return objective, thresholds


def check_request(dataset, spec, group_by=None, objective: str = "accuracy", thresholds: str = "both"):
    """``(group_by, thresholds, notes)``: what a repair of ``spec`` on ``dataset`` checks before a model is loaded or
    trained — the specification (``check_spec``), the group columns (``check_group_by``), labels for the accuracy
    objective — with the thresholds searched (``global`` when no group column is found) and a note saying so.
    ``FairauditError`` (one line) otherwise. ``repair`` calls it, and so does ``fairaudit repair`` before it trains
    a ``--model KIND``."""
    objective, thresholds = check_choices(objective, thresholds)
    check_spec(spec)
    group_by = check_group_by(group_by, spec, dataset, thresholds)
    notes = []
    if not group_by and thresholds == "both":
        thresholds = "global"
        notes.append("the specification compares no protected or categorical column: one global threshold was "
                     "searched (name the groups with group_by to search one per group)")
    if objective == "accuracy" and dataset.labels is None:
        raise FairauditError(f"the accuracy objective needs labels, and {dataset.name} has no label column: use "
                             "objective favourable (--objective favourable), or name the label")
    return group_by, thresholds, notes


def check_spec(spec) -> None:
    """The specification must read the decision (``pred``) and have ``E[...]`` leaves only."""
    from fairaudit.spec.ast import event_names

    reads_pred = False
    for tn in spec.leaves:
        if tn.kind == "fair":
            raise FairauditError(f"{tn.text}: a threshold repair supports E[...] leaves only (Fair[...] re-predicts "
                                 "with the model; audit the repaired model for it)")
        for ev in (tn.node.event, tn.node.given):
            if ev is not None and any(n.reserved and n.name == "pred" for n in event_names(ev)):
                reads_pred = True
    if not reads_pred:
        raise FairauditError("the specification does not read the decision (pred): no threshold can change it")


def default_group_by(spec, dataset) -> list[str]:
    """The protected columns the specification's leaves compare (else its categorical columns), in order."""
    from fairaudit.spec.ast import event_names

    names = []
    for tn in spec.leaves:
        for ev in (tn.node.event, tn.node.given):
            if ev is not None:
                names += [n.name for n in event_names(ev) if not n.reserved and n.name in dataset.schema
                          and n.name not in names]
    protected = [n for n in names if n in dataset.schema.protected]
    if protected:
        return protected
    return [n for n in names if dataset.schema.column(n).kind == "categorical" and n != dataset.schema.label]


def check_group_by(group_by, spec, dataset, thresholds: str = "both") -> list[str]:
    """The group columns, each a column of the dataset, with at most ``MAX_GROUPS`` groups (``FairauditError``
    otherwise); none (``[]``) only for a global threshold."""
    if group_by is None:
        found = default_group_by(spec, dataset)
        if not found and thresholds == "group":
            raise FairauditError("the specification compares no protected or categorical column: name the groups "
                                 "that get their own threshold (group_by=..., --group-by COL)")
        names = found
    else:
        names = [group_by] if isinstance(group_by, str) else list(group_by)
        names = [n.strip() for name in names for n in str(name).split(",") if n.strip()]
        if not names:
            raise FairauditError("group_by names no column")
    for name in names:
        if name not in dataset.schema:
            raise FairauditError(f"unknown group column {name!r}: {dataset.name} has "
                                 f"{', '.join(dataset.schema.names[:12])}")
        if name == dataset.schema.label:
            raise FairauditError(f"the group column {name!r} is the label: thresholds cannot depend on the outcome")
    if names:
        count = len(dataset.frame[names].drop_duplicates())
        if count > MAX_GROUPS:
            raise FairauditError(f"{' × '.join(names)} has {count:,} distinct values: at most {MAX_GROUPS} groups get "
                                 "their own threshold (group by a categorical column, or bin a numeric one first)")
    return names


def check_scores(model, inputs) -> None:
    if model is None or inputs.pred is not None or getattr(model, "kind", "") == "expression" \
            or inputs.scores is None:
        what = model.describe() if model is not None else "the decisions"
        raise FairauditError(f"{what} has no scores: a threshold repair needs a model whose score is available")


def _is_file(path: str) -> bool:
    import os

    return os.path.isfile(path)


def _same_rows(a, b) -> bool:
    if a.positions is None or b.positions is None:
        return a.positions is None and b.positions is None
    return np.array_equal(a.positions, b.positions)


# ------------------------------------------------------------------------------------------------ the search
def search_global(search: Search, scores: np.ndarray, own: float, objective: str) -> Found:
    """The best single threshold for every search row (the rows of no group included)."""
    cands = candidates(scores, own)
    values = search.values(search.everyone.counts(cands))
    idx = np.arange(len(cands))[:, None]
    return Found([ALL_ROWS], {ALL_ROWS: cands}, idx, values, pick(values, objective), "exhaustive", own)


def choose(grouped: Found | None, glob: Found | None, objective: str) -> tuple[str, Found]:
    """``("group" | "global", its search)``: the global threshold when it is feasible and does at least as well
    as the group thresholds (it treats every group alike), or when neither is feasible and it has the larger margin."""
    if grouped is None:
        return "global", glob
    if glob is None:
        return "group", grouped
    goal_group = objective_values(grouped.values, objective)[grouped.best]
    goal_global = objective_values(glob.values, objective)[glob.best]
    if glob.feasible and (not grouped.feasible or goal_global >= goal_group):
        return "global", glob
    if grouped.feasible:
        return "group", grouped
    return ("global", glob) if glob.values.slack[glob.best] >= grouped.values.slack[grouped.best] else \
        ("group", grouped)


def _point(found: Found, row: int, kind: str, default) -> Point:
    values = found.values
    chosen = found.thresholds(row)
    if kind == "global":
        default, chosen = chosen[ALL_ROWS], {}
    return Point(float(values.margin[row]), None if values.accuracy is None else float(values.accuracy[row]),
                 float(values.favourable[row]), chosen, float(default), kind)
