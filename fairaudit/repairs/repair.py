"""``repair()``: what would make it pass — decision thresholds on the model's score, chosen on one part of the audited
rows and certified on the other by one look at them (re-exported as ``fairaudit.repair``; ``docs/methods/repair.md``).

1. Everything is checked before any work: the options, the specification (it must read ``pred``; ``Fair[...]``
   leaves are not supported), the group columns, labels for the accuracy objective, and (once the model is loaded
   or trained, as an audit would) that the model has scores.
2. The audited rows (held-out rows of a model fairaudit trained: ``fairaudit.core.inputs.audited_rows``) are split at
   random (``seed``) into the search part (``split`` of them) and the certification part
   (``fairaudit.core.inputs.split_audited``, the splitter ``fairaudit.confirm`` uses).
3. On the search part only: candidate thresholds (``fairaudit.repairs.candidates``) — one threshold for everyone by
   default; one per group only when asked (``thresholds="group"`` or ``"both"``: ``wording.PER_GROUP_CAVEAT``) —
   their values (``fairaudit.repairs.search``), and the plan (``fairaudit.repairs.select``): the useful candidates
   (not everyone / no one favourable, at most ``max_loss`` of the objective given up) and, among them, the few to
   certify together, chosen for the best expected objective of the certified repair.
4. On the certification part only: each planned candidate audited at Δ/k by one look at those rows — the
   ``dataset`` engine's exact binomial intervals (``interval="one-look"``), a claim about the population the rows
   were drawn from; the number of rows is fixed before any is looked at, so no anytime validity is paid for —
   on the normal audit road (``fairaudit.resolve``, the driver); the certified one with the best objective is adopted. All k certificates hold
   together with probability ≥ 1 − Δ. When none is certified the repair is refused (verdict "undecided", or
   "violated"), with the number of rows that would make a useful repair certifiable.
"""
from __future__ import annotations

import math

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.repairs.candidates import candidates, own_threshold
from fairaudit.repairs.result import Candidate, Point, RepairResult, Rows
from fairaudit.repairs.search import Found, Search, concat, pick
from fairaudit.repairs.select import DEFAULT_MAX_LOSS

OBJECTIVES = ("accuracy", "favourable")
MODES = ("global", "both", "group")  # the first is the default: one threshold for everyone
DEFAULT_SPLIT = 0.3  # the certificate needs more rows than the search (bench/repair_harness.py)
DEFAULT_DELTA = 0.05
ENGINE = "monitor"
# the certificate: one look at the certification rows, whose number is fixed before they are looked at — the
# ``dataset`` engine's exact binomial intervals (a population claim at Δ), not the monitor's anytime-valid ones
# (which pay for looking at every row as it arrives: about 1.7 times as wide at a few thousand rows)
CERTIFY_ENGINE = "dataset"
CERTIFY_OPTIONS = {"interval": "one-look"}
ALL_ROWS = "(all rows)"  # the name of the one cell of a global threshold
MAX_GROUPS = 64  # groups with a threshold of their own, at most


def repair(data, spec, model=None, *, pred: str | None = None, group_by=None, objective: str = "accuracy",
           thresholds: str = "global", split: float = DEFAULT_SPLIT, seed: int = 0, delta: float = DEFAULT_DELTA,
           rows: str | None = None, margin="auto", max_loss: float = DEFAULT_MAX_LOSS, trust_pickle: bool = False,
           trusted_types=(), include_protected: bool = False) -> RepairResult:
    """Choose decision thresholds on ``model``'s score that make ``spec`` hold on ``data`` with the least loss of
    ``objective``, and certify them on rows that did not choose them (module doc).

    ``model``: a ``Model`` with scores, a saved-model path or a training kind (as ``fairaudit.audit``); ``pred`` (a
    decision expression) is refused: it has no score. ``group_by``: the column(s) whose groups get their own
    threshold when per-group thresholds are asked for (default: the protected — else categorical — columns the
    specification's conditions compare). ``objective``: ``accuracy`` (needs labels) or ``favourable`` (keep the share
    of favourable decisions as close to the original's as possible). ``thresholds``: ``global`` (default: one
    threshold for everyone), ``group`` or ``both`` (per-group thresholds, an explicit choice: unlawful in US
    employment decisions, restricted in credit, ``wording.PER_GROUP_CAVEAT``; with ``both`` a single threshold is
    preferred when it does as well). ``split``: the share of the audited rows that chooses; ``delta``: the
    certificate's failure probability (shared by the candidates certified together); ``margin``: ``"auto"`` (the
    plan of ``fairaudit.repairs.select``) or a number: the one best useful candidate at least that far inside the
    specification on the search rows is certified at Δ. ``max_loss``: the most of the objective a repair may give up
    on the search rows (accuracy points, or how far the favourable share may move); beyond it, and a repair deciding
    everyone or no one favourably, is refused. ``FairauditError`` (one line) on bad input, before any work."""
    from fairaudit.resolve import resolve

    objective, thresholds = check_choices(objective, thresholds)
    if not 0 < float(split) < 1:
        raise FairauditError(f"split must be in (0, 1): the share of the rows that chooses the thresholds, got "
                             f"{split!r}")
    margin = check_margin(margin)
    max_loss = check_max_loss(max_loss)
    if pred is not None:
        raise FairauditError("a decision expression (pred) has no scores: a threshold repair needs a model with "
                             "scores (a model file or a training kind, --model)")
    if model is None:
        raise FairauditError("a threshold repair needs a model with scores: give model=... (--model)")
    base_path = str(model) if isinstance(model, str) and _is_file(model) else None
    plan_ = resolve(ENGINE, data, spec, model=model, rows=rows, trust_pickle=trust_pickle, trusted_types=trusted_types,
                    include_protected=include_protected, delta=delta, seed=seed)
    dataset, parsed = plan_.dataset, plan_.spec
    from fairaudit.spec.quantities import refuse_amounts

    refuse_amounts(parsed, "repair")  # thresholds move yes/no decisions; an averaged amount is not one
    group_by, thresholds, early_notes = check_request(dataset, parsed, group_by, objective, thresholds)
    inputs = plan_.inputs(plan_.preflight())  # the model is loaded or trained here, as for an audit
    base = inputs.model
    check_scores(base, inputs)

    from fairaudit.core.inputs import split_audited
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
    groups = group_labels(frame, group_by) if thresholds != "global" else np.full(len(frame), None, dtype=object)
    own, exact = own_threshold(scores, decisions)
    from fairaudit.repairs.margin import Fixed

    search = Search(parsed, frame, scores, labels, groups, requirement=Fixed(0.0 if margin == "auto" else margin))
    original_values = search.decided(decisions)
    search.target = float(original_values.favourable[0])  # the "favourable" objective keeps the original's share
    notes = list(early_notes)
    if not exact:
        notes.append("the model's decisions are not a threshold of its score on these rows: the original point is "
                     "its own decisions, the repaired model decides every row by a threshold")
    unseen = int(sum(1 for g in groups if g is None)) if thresholds != "global" else 0
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

    # ---------------------------------------------------------------- the plan, on the search rows only
    from fairaudit.repairs import select

    searches = [(k, f) for k, f in (("global", glob), ("group", grouped)) if f is not None]
    values = concat([f.values for _, f in searches])
    where = [(k, f, r) for k, f in searches for r in range(len(f.idx))]  # combined row → (kind, search, row)
    ok = select.useful(values, original_values, objective, max_loss)
    worth = select.goal(values, original_values, objective)
    worth = worth + np.where([k == "global" for k, _, _ in where], 1e-12, 0.0)  # a tie: one threshold for everyone
    ratio = len(second) / max(len(first), 1)
    useful = np.flatnonzero(ok)
    if margin == "auto":
        planned, k, expected, chances = select.plan(search, values, useful, worth, ratio, delta, seed)
    else:
        inside = useful[np.asarray(values.margin)[useful] >= margin]
        if len(inside):
            planned = [int(inside[np.argmax(worth[inside])])]
        else:  # none reaches the margin: the useful one with the largest margin, and its certificate says
            planned = [int(useful[np.argmax(np.asarray(values.margin)[useful])])] if len(useful) else []
        k, expected, chances = 1, None, {}

    # ---------------------------------------------------------------- the certificates, on the other rows only
    from fairaudit.repairs.model import repaired_model

    def decode(row: int):
        kind, found, r = where[row]
        if kind == "global":
            return kind, {}, found.thresholds(r)[ALL_ROWS]
        return kind, found.thresholds(r), own

    tried = []
    for row in planned:
        kind, chosen_thresholds, default = decode(row)
        wrapper = repaired_model(base, group_by if kind == "group" else [], chosen_thresholds, default,
                                 base_path=base_path)
        cert, measured = _certify(dataset, parsed, wrapper, rows, delta / k, seed, inputs, second, cert_rows.text)
        tried.append(Candidate(_point(values, row, kind, chosen_thresholds, default), cert, float(delta) / k,
                               chances.get(row), measured))
    certified = [c for c in tried if c.verdict == "certified"]
    if certified:
        adopted = max(certified, key=lambda c: worth[planned[tried.index(c)]])
    elif tried:
        adopted = max(tried, key=lambda c: (c.odds or 0.0, c.point.margin))  # the safest: the most telling verdict
    else:
        adopted = None
    refusal, needed = None, None
    if adopted is None or adopted.verdict != "certified":
        cert_needed, at = select.rows_needed(search, values, useful, len(second), delta)
        needed = cert_needed
        satisfying = int(np.sum(np.asarray(values.margin, float)[useful] > 0)) if len(useful) else 0
        refusal = _refusal(objective, max_loss, len(useful), satisfying, tried, cert_needed, len(second),
                           float(split), None if at is None else _point(values, at, *decode(at)))

    original_point = Point(float(original_values.margin[0]),
                           None if original_values.accuracy is None else float(original_values.accuracy[0]),
                           float(original_values.favourable[0]), {}, own, "original")
    if adopted is None:  # nothing useful to certify: the original thresholds stand, nothing is certified
        chosen_point, chosen_thresholds, default, kind = original_point, {}, own, "global"
    else:
        chosen_point = adopted.point
        kind, chosen_thresholds, default = chosen_point.kind, dict(chosen_point.thresholds), chosen_point.default
    curve = [p for f, kd in ((grouped, "group"), (glob, "global")) if f is not None
             for p in (_found_point(f, r, kd, own if kd == "group" else None) for r in f.front(objective))]
    curve = sorted(curve, key=lambda p: -p.margin) + [original_point]
    sizes = {"per_group": {g: int(len(c)) for g, c in (grouped.candidates.items() if grouped else ())},
             "global": int(len(glob.candidates[ALL_ROWS])) if glob is not None else 0,
             "tried": int(len(values.margin)), "useful": int(len(useful)), "certified_together": len(tried)}
    method = "; ".join(f"{k_}: {f.method}" for f, k_ in ((grouped, "group thresholds"), (glob, "global threshold"))
                       if f is not None)
    required = _required(search, values, planned[tried.index(adopted)] if adopted is not None else None, ratio,
                         delta / k, len({t.text for t in parsed.leaves}))
    model_out = repaired_model(base, group_by if kind == "group" else [], chosen_thresholds, default,
                               base_path=base_path, chosen_on={
                                   "content_hash": dataset.content_hash, "rows": len(dataset), "share": float(split),
                                   "seed": int(seed), "base_rows": "all" if inputs.positions is None else "held-out"})
    if adopted is not None and adopted.accuracy is not None:  # the repaired model's own accuracy, on the rows said
        model_out.metrics = {"accuracy": adopted.accuracy, "n_test": len(second), "rows": cert_rows.text}
    return RepairResult(
        spec=parsed.text, group_by=list(group_by) if thresholds != "global" else [], objective=objective, thresholds=chosen_thresholds,
        global_threshold=(glob.thresholds(glob.best)[ALL_ROWS] if glob is not None else None),
        original_threshold=own, kind=kind, chosen=chosen_point, original=original_point, curve=curve,
        search=search_rows, certification=cert_rows,
        certificate=None if adopted is None else adopted.certificate, delta=float(delta),
        model=model_out, required_margin=required,
        margin_rule=("auto: the candidates certified together were planned for the best expected objective"
                     if margin == "auto" else f"{margin:g} (given)"),
        method=method, feasible=bool(adopted is not None and adopted.verdict == "certified"), candidates=sizes,
        notes=notes, thresholds_mode=thresholds, max_loss=float(max_loss), tried=tried, together=k,
        expected=expected, refused=refusal, rows_needed=needed)


def _certify(dataset, parsed, wrapper, rows, delta: float, seed: int, inputs, second, text: str):
    """The one-look audit (``CERTIFY_ENGINE``) of ``wrapper`` on the certification rows ``second`` at ``delta`` (the certificate) and the
    repaired model's accuracy on those rows (None without labels)."""
    from fairaudit.core.driver import last, start
    from fairaudit.core.inputs import part
    from fairaudit.resolve import resolve

    plan2 = resolve(CERTIFY_ENGINE, dataset, parsed, model=wrapper, rows=rows, delta=delta, **CERTIFY_OPTIONS)
    inputs2 = plan2.inputs(plan2.preflight())
    if not _same_rows(inputs, inputs2):
        raise FairauditError("internal: the repaired model's audited rows differ from the original's")
    certifying = part(inputs2, second, text)
    certificate = last(start(plan2.engine, parsed, certifying, plan2.options))
    accuracy = None
    if inputs2.labels is not None:
        d = np.asarray(inputs2.decisions)[second]
        accuracy = float((d == np.asarray(inputs2.labels)[second]).mean()) if len(second) else None
    return certificate, accuracy


def _refusal(objective: str, max_loss: float, useful: int, satisfying: int, tried: list, cert_needed,
             cert_rows: int, split: float, best):
    """Why no useful repair is certified, and the sample size that would make one certifiable
    (``wording.Refusal``: each surface says it with its own name of the loss bound)."""
    from fairaudit.repairs.wording import Refusal

    what = None
    if best is not None:
        what = (f"accuracy {best.accuracy:.3f}" if objective == "accuracy" and best.accuracy is not None
                else f"favourable share {best.favourable:.3f}")
    return Refusal(objective=objective, max_loss=float(max_loss), useful=int(useful), satisfying=int(satisfying),
                   tried=len(tried), cert_rows=int(cert_rows), split=float(split),
                   rows_needed=None if cert_needed is None else int(cert_needed), best=what)


def _required(search, values, row, ratio: float, delta: float, leaves: int) -> dict:
    """The margin interval arithmetic would need of each comparison of candidate ``row`` on the certification rows
    at ``delta`` (``fairaudit.repairs.margin.Certifiable``); the certificate may need a little less. Empty without
    a candidate."""
    if row is None:
        return {}
    from fairaudit.repairs.margin import Certifiable

    rates = {k: np.asarray(values.rates[k])[[row]] for k in search.keys}
    counts = {k: np.asarray(values.counts[k])[[row]] for k in search.keys}
    need = Certifiable(ratio, float(delta) / max(leaves, 1)).need(search, rates, counts)
    return {nid: float(np.asarray(v).ravel()[0]) for nid, v in need.items()}


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


def check_max_loss(max_loss) -> float:
    """A number in [0, 1]: the most of the objective a repair may give up."""
    try:
        value = float(max_loss)
    except (TypeError, ValueError):
        raise FairauditError(f"max_loss must be a number in [0, 1], got {max_loss!r}") from None
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise FairauditError(f"max_loss must be a number in [0, 1], got {max_loss!r}")
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
    if not group_by and thresholds in ("both", "global"):
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
    """Every single threshold for every search row (the rows of no group included), and the best by ``pick``."""
    cands = candidates(scores, own)
    values = search.values(search.everyone.counts(cands))
    idx = np.arange(len(cands))[:, None]
    return Found([ALL_ROWS], {ALL_ROWS: cands}, idx, values, pick(values, objective), "exhaustive", own)


def _point(values, row: int, kind: str, thresholds: dict, default: float) -> Point:
    """Candidate ``row`` of the combined ``values`` as a ``Point``."""
    return Point(float(values.margin[row]), None if values.accuracy is None else float(values.accuracy[row]),
                 float(values.favourable[row]), dict(thresholds), float(default), kind)


def _found_point(found: Found, row: int, kind: str, default) -> Point:
    chosen = found.thresholds(row)
    if kind == "global":
        default, chosen = chosen[ALL_ROWS], {}
    return _point(found.values, row, kind, chosen, default)
