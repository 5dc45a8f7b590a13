"""``audit()``: one call from (data, spec, decisions) to an ``AuditResult`` (re-exported as ``fairaudit.audit``).

Every kind of input takes the same road: ``fairaudit.resolve.resolve`` (what was given, checked against what the
engine requires or accepts), ``Plan.preflight`` (``fairaudit.core.preflight``, once), ``Plan.inputs`` (the engine's
``Inputs``), then the driver (``fairaudit.core.driver.start``), once.
"""
from __future__ import annotations

from fairaudit.base.errors import FairauditError
from fairaudit.core.preflight import check_options
from fairaudit.core.trace import AuditResult
from fairaudit.resolve import GENERATED_OPTION, check_generated, resolve

# ``check_options``, ``check_generated`` and ``GENERATED_OPTION`` are imported from here by the command line, the
# report and older code; they live below (``fairaudit.core.preflight``, ``fairaudit.resolve``)
__all__ = ["audit", "scan", "compare", "repair", "confirm", "confirmable", "check_options", "check_generated",
           "GENERATED_OPTION", "CONFIRM_SHARE"]


def audit(data, spec=None, engine: str | None = None, model=None, pred: str | None = None, where: str | None = None,
          rows: str | None = None, *, population=None, epsilon: float | None = None, on_step=None,
          on_progress=None, iterate: bool = False, trust_pickle: bool = False, trusted_types=(),
          trace_points: int | None | str = "auto", full_trace=None, include_protected: bool = False,
          ranges=None, **options) -> AuditResult:
    """Audit ``data`` (a ``Dataset`` or a built-in name / CSV path) against ``spec`` (text or ``Spec``).

    ``engine``: a name from ``fairaudit.engines.REGISTRY`` (default: the registry's first, the monitor);
    ``options``: that engine's options (``fairaudit.engines.get(name).options``, e.g. ``delta=0.05``) and the
    options of every run (``seed``, ``stop``, ``time_budget``). ``model``: a ``Model``, a training kind
    (``logreg`` ...) or a saved-model path; ``pred``: a condition over the rows used as the decision instead
    (``"decile_score <= 4"``, true = favourable). ``rows``: ``"held-out"`` (default when fairaudit trained the
    model on this dataset) or ``"all"``; ``where``: audit only the rows matching this condition. A model path is
    loaded safely (``fairaudit.models.load``): a pickle only with ``trust_pickle=True``, a skops file's extra
    types only when named in ``trusted_types`` — both run or build code chosen by the file's author. A training
    kind is trained as on every route (``fairaudit.models.recipe.train_model``: the default features — no label,
    identifier or logged-decision column, the protected attributes only with ``include_protected=True`` — the
    default held-out share, seeded with ``seed``); the result's ``rows`` cites its held-out rows (``HeldOut``).

    Everything is validated first (``fairaudit.core.preflight``: the spec against the data, the decision, the row
    filter, the options), before a model is trained: an error raises ``FairauditError`` (``ValidationError``
    for the spec, with every problem positioned); warnings are recorded in ``result.warnings``.
    ``on_progress(Progress)`` (``fairaudit.base.progress``) reports progress and stops the run when it returns
    ``False``; ``on_step(step, total)`` is the same with plain numbers. With ``iterate=True`` the call returns a
    generator of partial ``AuditResult``s instead (the last one is final; closing it stops the run), which is
    how the dashboard draws the run live.

    The result's trace is a bounded display subsample of the checks (every verdict change, the stop step, a log
    grid and ``trace_points`` evenly spaced checks; "auto" sizes it so that the JSON stays under about 1 MB; None
    keeps every check: ``fairaudit.core.trace.TraceBuilder``). ``full_trace``: a path to write every check to
    (Parquet, ``fairaudit.core.fulltrace``).

    An engine that requires a model and no dataset (``fairquant``) audits the model over its input domain
    (the engine's ``derive_inputs``): a ``.nnet`` file's input bounds (``data`` None), else the column
    ranges of ``data``; there are no rows (``pred`` and ``where`` are refused, ``rows`` is ignored).

    ``ranges``: the range of each numeric column the spec averages (``E[amount | sex == "F"]``), as
    ``{"amount": (0, 50000)}`` or ``"amount=0:50000"``: the guarantee of a mean rests on it, and a value outside it
    is an error naming the row (``fairaudit.spec.quantities``; a spec text's ``# range:`` header declares it too).

    ``population``: a population program (a ``.fr`` path or a parsed ``fairaudit.programs.Program``) to sample
    individuals from instead of reading a dataset (``data`` None; the monitor engine). ``spec`` None then audits
    the program's group-fairness ratio P[target | min ∧ qual] / P[target | ¬min ∧ qual] > 1 − ``epsilon``
    (default 0.15; ``fairaudit.programs.population.ratio_spec``); a spec may also read the program's variables,
    ``sensitive``, ``qualified`` and ``pred`` (the target).

    An engine that requires a population (``"population" in engine.requires``, e.g. ``fairsquare``) given ``data``
    and ``model`` instead audits the model over a population program generated from the dataset
    (the engine's ``derive_inputs``: ``fairaudit.engines.fairsquare.generate``; its ``population_model`` option:
    ``independent`` or ``bn``); the spec is written over the dataset's columns and read over the program's variables
    (``fairaudit.programs.translate``). A decision expression (``pred``) cannot be turned into a program.
    """
    from fairaudit.core.driver import last, start

    plan = resolve(engine, data, spec, model=model, pred=pred, where=where, rows=rows, population=population,
                   epsilon=epsilon, full_trace=full_trace, trust_pickle=trust_pickle, trusted_types=trusted_types,
                   include_protected=include_protected, ranges=ranges, **options)
    found = plan.preflight()  # everything validated before a model is trained or a program generated
    inputs = plan.inputs(found)
    if on_step is not None and on_progress is None:
        on_progress = (lambda p: on_step(int(p.done), int(p.total or 0)))  # noqa: E731
    results = start(plan.engine, plan.audited_spec(inputs), inputs, plan.options,
                    **plan.run_args(on_progress=on_progress, trace_points=trace_points, full_trace=full_trace))
    return results if iterate else last(results)


def scan(data, protected=None, **options):
    """Every cell of every intersection of the ``protected`` attributes up to ``depth``: its selection rate and its
    impact ratio to its table's most-selected cell, with intervals that all hold at once with probability
    ≥ 1 − ``delta`` (re-exported as ``fairaudit.scan``; the options and the mathematics:
    ``fairaudit.subgroups.scan.scan``, ``docs/methods/scan.md``). Returns a ``fairaudit.subgroups.ScanResult``.
    A ``model`` kind is trained as on every route (``fairaudit.models.recipe``), the scanned attributes being the
    protected ones it does not read."""
    from fairaudit.models.training import KINDS
    from fairaudit.resolve import with_protected
    from fairaudit.subgroups.scan import scan as run_scan

    if protected is not None and isinstance(options.get("model"), str) and options["model"] in KINDS:
        data = with_protected(data, protected, options.get("label"))
    return run_scan(data, protected, **options)


def compare(data, spec, models=None, preds=None, **options):
    """Two or more models (``models``) and/or logged decisions (``preds``) on the same rows, in the same order: each
    one's value of every node of ``spec`` and, for every pair, an interval on the difference with a verdict
    (re-exported as ``fairaudit.compare``; the options and the mathematics: ``fairaudit.comparison.run.compare``,
    ``docs/methods/compare.md``). Returns a ``fairaudit.comparison.CompareResult``."""
    from fairaudit.comparison.run import compare as run_compare

    return run_compare(data, spec, models, preds, **options)


def repair(data, spec, model=None, **options):
    """Decision thresholds on ``model``'s score that make ``spec`` hold with the least loss of accuracy (or of
    favourable decisions), chosen on one part of the audited rows and certified by the monitor on the other
    (re-exported as ``fairaudit.repair``; the options and the method: ``fairaudit.repairs.repair.repair``,
    ``docs/methods/repair.md``). Returns a ``fairaudit.repairs.RepairResult``."""
    from fairaudit.repairs.repair import repair as run_repair

    return run_repair(data, spec, model, **options)


def confirmable(engine) -> bool:
    """Whether ``confirm`` can run ``engine`` (a name or an engine): it must read a dataset's rows."""
    from fairaudit.core import registry

    try:
        chosen = registry.get(engine) if isinstance(engine, str) else engine
    except Exception:  # noqa: BLE001 - an engine this installation lacks
        return False
    return "dataset" in chosen.requires


#: the share of the audited rows a confirmation chooses the threshold on (the rest certifies it)
CONFIRM_SHARE = 0.5


def confirm(data, spec, node: str, which: str = "certify", engine: str | None = None, model=None,
            pred: str | None = None, where: str | None = None, rows: str | None = None, *,
            share: float = CONFIRM_SHARE, trust_pickle: bool = False, trusted_types=(), on_progress=None,
            include_protected: bool = False, ranges=None, **options) -> AuditResult:
    """Choose a threshold from the data and certify it honestly: the audited rows are split at random (``seed``,
    recorded) into a part of ``share`` on which ``spec`` is audited and ``node``'s suggested ``which`` threshold
    ("certify" / "refute", ``fairaudit.core.suggest``) is chosen, and the rest, on which the specification with that
    threshold is audited. The result is that second audit: its verdict is not exploratory (the rows it certifies
    on did not choose the threshold), ``result.info["confirmation"]`` records the split, the chosen threshold and
    the new specification's text (``spec_text``, with its ``# threshold-chosen-from:`` line), and its rows say
    which rows it read. ``FairauditError`` when the first part leaves the comparison decided (nothing to choose) or
    suggests no such threshold."""
    from fairaudit.core import suggest
    from fairaudit.core.driver import last, start
    from fairaudit.core.inputs import part as inputs_part, split_audited

    if not 0 < float(share) < 1:
        raise FairauditError(f"share must be in (0, 1): the part of the rows that chooses the threshold, got {share!r}")
    chosen, resolved = check_options(engine, **options)
    if not confirmable(chosen):
        raise FairauditError(f"the {chosen.name} engine reads no rows: a threshold chosen from its certain bounds "
                             "needs no fresh rows (apply the suggestion and audit it)")
    source = spec if isinstance(spec, str) else getattr(spec, "source", "") or ""
    if not isinstance(spec, str) and getattr(spec, "ranges", ()):  # a parsed spec's declared ranges go along
        from fairaudit.spec.quantities import parse_ranges, ranges_of

        ranges = {**ranges_of(spec), **parse_ranges(ranges)}
    plan = resolve(chosen.name, data, source, model=model, pred=pred, where=where, rows=rows,
                   trust_pickle=trust_pickle, trusted_types=trusted_types, include_protected=include_protected,
                   ranges=ranges, **options)
    known = [n.id for n in plan.spec.nodes]
    if str(node) not in known:  # before the model is loaded or trained
        raise FairauditError(f"unknown node {node!r}: the specification's nodes are {', '.join(known)}")
    parsed, inputs = plan.spec, plan.inputs(plan.preflight())
    seed = int(resolved.get("seed") or 0)
    first, second = split_audited(inputs, share, seed)
    base = inputs.rows.get("text") or f"{len(first) + len(second):,} audited rows"
    split = {"seed": seed, "share": float(share), "chosen_on": int(len(first)), "certified_on": int(len(second)),
             "node": str(node), "which": which}

    def part(positions, text):
        return inputs_part(inputs, positions, text)

    choosing = last(start(chosen, parsed, part(first, f"{len(first):,} of the {base}, chosen at random (seed {seed}) "
                                                      f"to choose the threshold"), resolved))
    found = suggest.suggest_node(choosing, str(node))
    asked = parsed.node(str(node))
    what = asked.name or asked.text  # the comparison as the user knows it (a node id is internal)
    if found is None:
        raise FairauditError(f"{what} is not an undecided comparison on the {len(first):,} rows that choose the "
                             "threshold: there is no threshold to choose (audit it as written)")
    threshold = getattr(found, which, None)
    if threshold is None:
        raise FairauditError(f"{what}: no {which} threshold is decidable on the {len(first):,} rows that choose it")
    text = suggest.apply(source, found, which, result=choosing)
    split.update({"threshold": float(threshold.value), "spec_text": text, "clause": suggest.clause_name(text, found)})
    from fairaudit.spec.files import parsed_with_ranges

    certifying = part(second, f"the other {len(second):,} of the {base} (not used to choose the threshold: "
                              f"{len(first):,} rows chose it, split at random with seed {seed})")
    return last(start(chosen, parsed_with_ranges(text, dict((n, (lo, hi)) for n, lo, hi in parsed.ranges) or None),
                      certifying, resolved, on_progress=on_progress, confirmed=split))
