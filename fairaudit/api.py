"""``audit()``: one call from (data, spec, decisions) to an ``AuditResult`` (re-exported as ``fairaudit.audit``)."""
from __future__ import annotations

from dataclasses import replace

from fairaudit.core.errors import FairauditError
from fairaudit.core.trace import AuditResult


def _dataset(data):
    if hasattr(data, "frame") and hasattr(data, "schema"):
        return data
    from fairaudit import data as data_module

    return data_module.resolve(data) if hasattr(data_module, "resolve") else data_module.load(data)


def _spec(spec):
    if hasattr(spec, "nodes") and hasattr(spec, "root"):
        return spec
    from fairaudit.spec import parse

    return parse(str(spec))


def audit(data, spec=None, engine: str | None = None, model=None, pred: str | None = None, where: str | None = None,
          rows: str | None = None, *, population=None, epsilon: float | None = None, on_step=None,
          on_progress=None, iterate: bool = False, trust_pickle: bool = False, trusted_types=(),
          trace_points: int | None | str = "auto", full_trace=None, include_protected: bool = False,
          **options) -> AuditResult:
    """Audit ``data`` (a ``Dataset`` or a built-in name / CSV path) against ``spec`` (text or ``Spec``).

    ``engine``: a name from ``fairaudit.engines.REGISTRY`` (default: the registry's first, the monitor);
    ``options``: that engine's options (``fairaudit.engines.get(name).options``, e.g. ``delta=0.05``) and the
    options of every run (``seed``, ``stop``, ``time_budget``). ``model``: a ``Model``, a training kind
    (``logreg`` ...) or a saved-model path; ``pred``: a condition over the rows used as the decision instead
    (``"decile_score <= 4"``, true = favourable). ``rows``: ``"held-out"`` (default when fairaudit trained the
    model on this dataset) or ``"all"``; ``where``: audit only the rows matching this condition. A model path is
    loaded safely (``fairaudit.models.load``): a pickle only with ``trust_pickle=True``, a skops file's extra
    types only when named in ``trusted_types`` — both run or build code chosen by the file's author. A training
    kind is trained on the default features (``fairaudit.models.features.default_features``: no label, identifier
    or logged-decision column; the protected attributes only with ``include_protected=True``).

    Everything is validated first (``fairaudit.core.preflight``: the spec against the data, the decision, the row
    filter, the options), before a model is trained: an error raises ``FairauditError`` (``ValidationError``
    for the spec, with every problem positioned); warnings are recorded in ``result.warnings``.
    ``on_progress(Progress)`` (``fairaudit.core.progress``) reports progress and stops the run when it returns
    ``False``; ``on_step(step, total)`` is the same with plain numbers. With ``iterate=True`` the call returns a
    generator of partial ``AuditResult``s instead (the last one is final; closing it stops the run), which is
    how the dashboard draws the run live.

    The result's trace is a bounded display subsample of the checks (every verdict change, the stop step, a log
    grid and ``trace_points`` evenly spaced checks; "auto" sizes it so that the JSON stays under about 1 MB; None
    keeps every check: ``fairaudit.core.trace.TraceBuilder``). ``full_trace``: a path to write every check to
    (Parquet, ``fairaudit.core.fulltrace``).

    An engine that requires a model and no dataset (``fairquant``) audits the model over its input domain
    (``fairaudit.core.inputs.Inputs.build_domain``): a ``.nnet`` file's input bounds (``data`` None), else the column
    ranges of ``data``; there are no rows (``pred`` and ``where`` are refused, ``rows`` is ignored).

    ``population``: a population program (a ``.fr`` path or a parsed ``fairaudit.programs.Program``) to sample
    individuals from instead of reading a dataset (``data`` None; the monitor engine). ``spec`` None then audits
    the program's group-fairness ratio P[target | min ∧ qual] / P[target | ¬min ∧ qual] > 1 − ``epsilon``
    (default 0.15; ``fairaudit.programs.population.ratio_spec``); a spec may also read the program's variables,
    ``sensitive``, ``qualified`` and ``pred`` (the target).

    An engine that requires a population (``"population" in engine.requires``, e.g. ``fairsquare``) given ``data``
    and ``model`` instead audits the model over a population program generated from the dataset
    (``fairaudit.engines.fairsquare.generate.population_program``; the engine's ``population_model`` option: ``independent``
    or ``bn``); the spec is written over the dataset's columns and read over the program's variables
    (``fairaudit.programs.translate``). A decision expression (``pred``) cannot be turned into a program.
    """
    from fairaudit.core.inputs import Inputs
    from fairaudit.core.driver import last, start

    chosen, resolved = check_options(engine, **options)
    if population is not None or "population" in chosen.requires:
        if full_trace is not None:
            raise FairauditError("full_trace is written for an audit of a dataset's rows or a model's domain, not "
                                 "of a population program")
    if population is not None:
        results = _audit_population(chosen, resolved, data, spec, population, epsilon,
                                    model=model, pred=pred, where=where, rows=rows, on_step=on_step,
                                    on_progress=on_progress)
        return results if iterate else last(results)
    if model is not None and "model" in chosen.requires and "dataset" not in chosen.requires:
        # a model audited over its input domain (a .nnet file's bounds, or the dataset's column ranges), not rows
        # no rows: a rows policy has nothing to choose from (ignored); a row filter or a decision expression would
        # be silently dropped, so they are refused
        if pred is not None or where is not None or epsilon is not None:
            raise FairauditError(f"the {chosen.name} engine audits the model over its input domain, not rows: "
                                 "pred, where and epsilon do not apply")
        from fairaudit.core.inputs import ROWS

        if rows is not None and rows not in ROWS:
            raise FairauditError(f"unknown rows policy {rows!r}; choose one of: {', '.join(ROWS)}")
        if spec is None:
            raise FairauditError("no specification: give spec=...")
        ignored = _ignored_headers(spec)
        spec = _spec(spec)
        reasons = chosen.check(spec, None)
        if reasons:
            raise FairauditError(f"the {chosen.name} engine cannot audit this specification: " + "; ".join(reasons))
        inputs = Inputs.build_domain(model, _dataset(data) if data is not None else None, trust_pickle=trust_pickle,
                                     trusted_types=tuple(trusted_types), warnings=ignored)
        if on_step is not None and on_progress is None:
            on_progress = (lambda p: on_step(int(p.done), int(p.total or 0)))  # noqa: E731
        results = start(chosen, spec, inputs, resolved, on_progress=on_progress, trace_points=trace_points,
                        full_trace=full_trace)
        return results if iterate else last(results)
    if "population" in chosen.requires:
        results = _audit_generated(chosen, resolved, data, spec, epsilon, model=model, pred=pred, where=where,
                                   rows=rows, on_step=on_step, on_progress=on_progress, trust_pickle=trust_pickle,
                                   trusted_types=trusted_types, include_protected=include_protected)
        return results if iterate else last(results)
    if epsilon is not None:
        raise FairauditError("epsilon is the ratio property of a population program: give population=...")
    if spec is None:
        raise FairauditError("no specification: give spec=...")
    if model is not None and pred is not None:
        raise FairauditError("give either a model or a decision expression (pred), not both")
    if rows is not None:
        from fairaudit.core.inputs import ROWS

        if rows not in ROWS:
            raise FairauditError(f"unknown rows policy {rows!r}; choose one of: {', '.join(ROWS)}")
    spec, inputs = _rows_inputs(chosen, resolved, data, spec, model=model, pred=pred, where=where, rows=rows,
                                trust_pickle=trust_pickle, trusted_types=trusted_types,
                                include_protected=include_protected)
    if on_step is not None and on_progress is None:
        on_progress = (lambda p: on_step(int(p.done), int(p.total or 0)))  # noqa: E731
    results = start(chosen, spec, inputs, resolved, on_progress=on_progress, trace_points=trace_points,
                    full_trace=full_trace)
    return results if iterate else last(results)


def _rows_inputs(chosen, resolved, data, spec, *, model, pred, where, rows, trust_pickle, trusted_types,
                 include_protected=False):
    """The parsed spec and the ``Inputs`` of an audit of a dataset's rows, everything validated first."""
    from fairaudit.core.inputs import Inputs
    from fairaudit.core.preflight import Source, preflight

    ignored = _ignored_headers(spec)
    dataset, spec = _dataset(data), _spec(spec)
    found = ignored + preflight(dataset, spec, decision=Source(pred, "pred") if pred is not None else None,
                                where=Source(where, "where") if where else None, uses_model=model is not None)
    reasons = chosen.check(spec, None)
    if reasons:
        raise FairauditError(f"the {chosen.name} engine cannot audit this specification: " + "; ".join(reasons))
    inputs = Inputs.build(dataset, model=model, pred=pred, where=where, rows=rows, seed=resolved["seed"],
                          trust_pickle=trust_pickle, trusted_types=tuple(trusted_types),
                          warnings=[str(w) for w in found], include_protected=include_protected)
    from fairaudit.models.features import unread_warnings

    inputs.warnings.extend(w for w in unread_warnings(spec, inputs.reprediction_model) if w not in inputs.warnings)
    return spec, inputs


def confirmable(engine) -> bool:
    """Whether ``confirm`` can run ``engine`` (a name or an engine): it must read a dataset's rows."""
    from fairaudit import engines

    try:
        chosen = engines.get(engine) if isinstance(engine, str) else engine
    except Exception:  # noqa: BLE001 - an engine this installation lacks
        return False
    return "dataset" in chosen.requires


#: the share of the audited rows a confirmation chooses the threshold on (the rest certifies it)
CONFIRM_SHARE = 0.5


def confirm(data, spec, node: str, which: str = "certify", engine: str | None = None, model=None,
            pred: str | None = None, where: str | None = None, rows: str | None = None, *,
            share: float = CONFIRM_SHARE, trust_pickle: bool = False, trusted_types=(), on_progress=None,
            include_protected: bool = False, **options) -> AuditResult:
    """Choose a threshold from the data and certify it honestly: the audited rows are split at random (``seed``,
    recorded) into a part of ``share`` on which ``spec`` is audited and ``node``'s suggested ``which`` threshold
    ("certify" / "refute", ``fairaudit.core.suggest``) is chosen, and the rest, on which the specification with that
    threshold is audited. The result is that second audit: its verdict is not exploratory (the rows it certifies
    on did not choose the threshold), ``result.info["confirmation"]`` records the split, the chosen threshold and
    the new specification's text (``spec_text``, with its ``# threshold-chosen-from:`` line), and its rows say
    which rows it read. ``FairauditError`` when the first part leaves the comparison decided (nothing to choose) or
    suggests no such threshold."""
    import numpy as np

    from fairaudit.core import suggest
    from fairaudit.core.driver import last, start

    if not 0 < float(share) < 1:
        raise FairauditError(f"share must be in (0, 1): the part of the rows that chooses the threshold, got {share!r}")
    chosen, resolved = check_options(engine, **options)
    if not confirmable(chosen):
        raise FairauditError(f"the {chosen.name} engine reads no rows: a threshold chosen from its certain bounds "
                             "needs no fresh rows (apply the suggestion and audit it)")
    source = spec if isinstance(spec, str) else getattr(spec, "source", "") or ""
    parsed, inputs = _rows_inputs(chosen, resolved, data, source, model=model, pred=pred, where=where, rows=rows,
                                  trust_pickle=trust_pickle, trusted_types=trusted_types,
                                  include_protected=include_protected)
    audited = np.arange(len(inputs.dataset)) if inputs.positions is None else np.asarray(inputs.positions)
    seed = int(resolved.get("seed") or 0)
    order = np.random.default_rng(seed).permutation(len(audited))
    k = int(round(len(audited) * float(share)))
    if k < 1 or k >= len(audited):
        raise FairauditError(f"{len(audited):,} audited rows cannot be split into two non-empty parts at {share:g}")
    first, second = np.sort(audited[order[:k]]), np.sort(audited[order[k:]])
    base = inputs.rows.get("text") or f"{len(audited):,} audited rows"
    split = {"seed": seed, "share": float(share), "chosen_on": int(len(first)), "certified_on": int(len(second)),
             "node": str(node), "which": which}

    def part(positions, text):
        return replace(inputs, positions=positions, rows={**inputs.rows, "audited": int(len(positions)),
                                                          "text": text})

    choosing = last(start(chosen, parsed, part(first, f"{len(first):,} of the {base}, chosen at random (seed {seed}) "
                                                      f"to choose the threshold"), resolved))
    found = suggest.suggest_node(choosing, str(node))
    if found is None:
        raise FairauditError(f"{node} is not an undecided comparison on the {len(first):,} rows that choose the "
                             "threshold: there is no threshold to choose (audit it as written)")
    threshold = getattr(found, which, None)
    if threshold is None:
        raise FairauditError(f"{node}: no {which} threshold is decidable on the {len(first):,} rows that choose it")
    text = suggest.apply(source, found, which, result=choosing)
    split.update({"threshold": float(threshold.value), "spec_text": text})
    from fairaudit.spec import parse

    certifying = part(second, f"the other {len(second):,} of the {base} (not used to choose the threshold: "
                              f"{len(first):,} rows chose it, split at random with seed {seed})")
    return last(start(chosen, parse(text), certifying, resolved, on_progress=on_progress, confirmed=split))


def _audit_population(chosen, resolved, data, spec, population, epsilon, *, model, pred, where, rows, on_step,
                      on_progress):
    """The generator of partial results of an audit of individuals sampled from ``population``."""
    from fairaudit.core.inputs import Inputs
    from fairaudit.programs.population import DEFAULT_EPSILON, ratio_spec
    from fairaudit.core.driver import start

    given = [name for name, value in (("data", data), ("model", model), ("pred", pred), ("where", where),
                                      ("rows", rows)) if value is not None]
    if given:
        raise FairauditError(f"a population program is audited on the individuals it samples: {given[0]} does not "
                             "apply (the decision is the program's fairnessTarget)")
    if spec is not None and epsilon is not None:
        raise FairauditError("give either a specification or epsilon (the ratio property's ε), not both")
    ignored = _ignored_headers(spec)
    spec = _spec(ratio_spec(DEFAULT_EPSILON if epsilon is None else epsilon) if spec is None else spec)
    sampled = any(o.name == "samples" for o in chosen.all_options())
    inputs = Inputs.build_population(population, samples=(resolved.get("samples") or 1_000_000) if sampled else None,
                                     warnings=ignored)
    reasons = chosen.check(spec, inputs)
    if reasons:
        raise FairauditError(f"the {chosen.name} engine cannot audit this: " + "; ".join(reasons))
    if on_step is not None and on_progress is None:
        on_progress = (lambda p: on_step(int(p.done), int(p.total or 0)))  # noqa: E731
    return start(chosen, spec, inputs, resolved, on_progress=on_progress)


#: the option (of an engine that requires a population) choosing how a population is generated from a dataset
GENERATED_OPTION = "population_model"


def check_generated(engine, spec=None, *, model=None, pred=None, where=None, rows=None) -> None:
    """For an engine that requires a population, audited on a dataset and a model instead (the population is
    generated from them): refuse, before any work, what cannot be turned into a program (a decision expression,
    no model) and what a program does not have (``label``, ``score``, ``Fair[...]``). ``FairauditError``, one line.
    Nothing for an engine that does not require a population."""
    from fairaudit import engines
    from fairaudit.programs.translate import check_spec

    chosen = engines.get(engine) if isinstance(engine, str) else engine
    if "population" not in chosen.requires:
        return
    if pred is not None:
        raise FairauditError(f"the {chosen.name} engine audits a decision program, and a decision expression "
                             "(pred) cannot be turned into one: give a model (a training kind or a saved model) or "
                             "a population program")
    if model is None:
        raise FairauditError(f"the {chosen.name} engine needs a population program: give one (population=..., "
                             "--population FILE.fr), or a model (--model KIND|PATH) to generate it from the dataset")
    for name, value in (("where", where), ("rows", rows)):
        if value is not None:
            raise FairauditError(f"{name} does not apply to a population generated from the dataset: the audit "
                                 "covers every individual of the generated program")
    if spec is not None:
        reasons = chosen.check(spec, None)
        if reasons:
            raise FairauditError(f"the {chosen.name} engine cannot audit this specification: " + "; ".join(reasons))
        check_spec(spec)


def _audit_generated(chosen, resolved, data, spec, epsilon, *, model, pred, where, rows, on_step, on_progress,
                     trust_pickle, trusted_types, include_protected=False):
    """The generator of partial results of an audit of ``model`` over a population program generated from
    ``data`` (for an engine that requires a population, given a dataset and a model instead): the spec, written
    over the dataset's columns, is read over the program's variables (``fairaudit.programs.translate``)."""
    from fairaudit.core.inputs import Inputs
    from fairaudit.core.preflight import preflight
    from fairaudit.programs.translate import translate_spec
    from fairaudit.core.driver import start

    if data is None:
        raise FairauditError(f"the {chosen.name} engine needs a population program: give one (population=..., "
                             "--population FILE.fr), or a dataset and a model to generate it from")
    if epsilon is not None:
        raise FairauditError("epsilon is the ratio property of a population program file: give population=..., or "
                             "a specification")
    if spec is None:
        raise FairauditError("no specification: give spec=...")
    ignored = _ignored_headers(spec)
    dataset, spec = _dataset(data), _spec(spec)
    check_generated(chosen, spec, model=model, pred=pred, where=where, rows=rows)
    found = ignored + preflight(dataset, spec, uses_model=True)  # the spec against the dataset's columns
    inputs = Inputs.build_generated(dataset, model=model, structure=resolved.get(GENERATED_OPTION) or "independent",
                                    seed=resolved["seed"], trust_pickle=trust_pickle,
                                    trusted_types=tuple(trusted_types), warnings=[str(w) for w in found],
                                    include_protected=include_protected)
    over_program = translate_spec(spec, dataset, inputs.population, inputs.generated["variables"])
    if on_step is not None and on_progress is None:
        on_progress = (lambda p: on_step(int(p.done), int(p.total or 0)))  # noqa: E731
    return start(chosen, over_program, inputs, resolved, on_progress=on_progress, rows_spec=spec)


def _ignored_headers(spec) -> list[str]:
    """A spec text's headers (``# where:``, ``# decision:``, an engine option's ``# delta:`` ...) are applied by the
    command line, not by this function (its keyword arguments are the options): say so rather than audit
    silently without them. A ``# dataset:`` header is not read here either, but one that names a file outside its
    folder is refused as everywhere (``SpecError``, ``SpecFile.dataset_ref``)."""
    if not isinstance(spec, str):
        return []
    from fairaudit.engines import header_names
    from fairaudit.spec.files import SpecFile, read_headers

    headers = read_headers(spec)
    if "dataset" in headers:
        SpecFile(text=spec, spec=None, headers=headers).dataset_ref()
    applied = ("where", "decision", "engine") + header_names()
    named = [key for key in headers if key in applied]
    if not named:
        return []
    keywords = ", ".join(f"{'pred' if k == 'decision' else k}=..." for k in named)
    return [f"the specification's {', '.join('# ' + k + ':' for k in named)} header(s) are not applied by "
            f"fairaudit.audit(); pass {keywords} (the command line applies them)"]


def check_options(engine: str | None = None, **options):
    """``(engine, every option's value)``: the engine from the registry and ``options`` validated by its
    declarations (``FairauditError``, one line naming the option and what it takes, before any work)."""
    from fairaudit import engines

    chosen = engines.get(engine or engines.DEFAULT)
    return chosen, chosen.resolve_options({k: v for k, v in options.items()})
