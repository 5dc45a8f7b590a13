"""One road from what the user gave to what the engine audits: ``resolve`` turns ``fairaudit.audit``'s arguments into
a ``Plan`` — the engine and its options, the parsed specification, the dataset, and which ``Inputs`` the engine is
given — checked against what the chosen engine ``requires`` / ``accepts`` (``fairaudit.core.engine.Engine``), with
every refusal said before any work. ``fairaudit.api`` then runs the same three steps for every kind of input:

    plan = resolve(engine, data, spec, model=..., ...)   # what was given, refused early, one line each
    found = plan.preflight()                             # fairaudit.core.preflight, once (nothing without a dataset)
    inputs = plan.inputs(found)                          # a model trained / loaded / a program generated here
    start(plan.engine, plan.audited_spec(inputs), inputs, plan.options, **plan.run_args(...))   # the driver, once

The inputs (``Plan.kind``):

* ``rows`` — a dataset's rows, decided by a model or a decision expression (``Inputs.build``);
* ``population`` — individuals of a population program the user gave (``Inputs.build_population``);
* ``domain`` — a model over its input domain, for an engine that requires a model and no dataset (fairquant);
* ``generated`` — a model over a population program generated from a dataset, for an engine that requires a
  population (fairsquare).

The last two are derived by the engine itself (``Engine.derive_inputs``): this module names no engine, and
``fairaudit.core`` keeps only the data structure.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fairaudit.base.errors import FairauditError
from fairaudit.core.preflight import check_options

#: the option (of an engine that requires a population) choosing how a population is generated from a dataset
GENERATED_OPTION = "population_model"

KINDS = ("rows", "population", "domain", "generated")


def load_dataset(data):
    """``data`` as a ``Dataset``: one already, else a built-in name or a CSV path (``fairaudit.data``)."""
    if hasattr(data, "frame") and hasattr(data, "schema"):
        return data
    from fairaudit import data as data_module

    return data_module.resolve(data) if hasattr(data_module, "resolve") else data_module.load(data)


def with_protected(data, protected, label: str | None = None):
    """``data`` (a ``Dataset``, a built-in name or a file; ``label``: its label column when read here) as a
    ``Dataset`` whose protected attributes are ``protected`` (names, or ``"sex, race"``; None keeps its own). What a
    route that names the attributes itself (a scan's) hands to a model trained here, so that it leaves them out of
    its features as every route does (``fairaudit.models.recipe``)."""
    from fairaudit import data as data_module

    dataset = (data_module.resolve(data, label=label) if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__")
               else data)
    if protected is None:
        return dataset
    names = [n.strip() for n in protected.split(",") if n.strip()] if isinstance(protected, str) else list(protected)
    return data_module.with_roles(dataset, protected=names)


def parse_spec(spec, ranges=None):
    """``spec`` as a parsed ``Spec``: one already, else its text parsed (``fairaudit.spec.parse``), with the declared
    ranges of what it averages attached (``fairaudit.spec.files.parsed_with_ranges``): ``ranges`` and a spec
    text's ``# range:`` header (``NAME=LOW:HIGH``, several joined by commas)."""
    from fairaudit.spec.files import parsed_with_ranges

    return parsed_with_ranges(spec, ranges)


@dataclass
class Plan:
    """What an audit will read, resolved and checked (module doc); ``inputs`` builds it."""

    engine: Any
    options: dict  # every option's value (``Engine.resolve_options``)
    kind: str  # one of ``KINDS``
    spec: Any  # the parsed specification (for ``generated``: over the dataset's columns)
    dataset: Any = None
    model: Any = None
    pred: str | None = None
    where: str | None = None
    rows: str | None = None
    population: Any = None
    samples: int | None = None  # ``population``: how many individuals the engine samples (None: it reads the program)
    warnings: list[str] = field(default_factory=list)  # the spec text's headers this call does not apply
    trust_pickle: bool = False
    trusted_types: tuple = ()
    include_protected: bool = False

    def preflight(self) -> list:
        """``fairaudit.core.preflight.preflight`` — the only one on this road: the specification against the
        dataset's schema and rows, the decision expression, the row filter (``ValidationError`` with every problem
        positioned). The warnings it returns; nothing to check (``[]``) for inputs with no dataset to check against
        (a population program, a model's input domain)."""
        if self.kind not in ("rows", "generated"):
            return []
        from fairaudit.core.preflight import Source, preflight

        return preflight(self.dataset, self.spec,
                         decision=Source(self.pred, "pred") if self.pred is not None else None,
                         where=Source(self.where, "where") if self.where else None,
                         uses_model=self.model is not None)

    def inputs(self, found=()):
        """The engine's ``Inputs`` (after ``preflight``; ``found``: its warnings): a model is trained or loaded, a
        program read or generated, the audited rows chosen."""
        from fairaudit.core.inputs import Inputs

        warnings = self.warnings + [str(w) for w in found]
        if self.kind == "population":
            return Inputs.build_population(self.population, samples=self.samples, warnings=warnings)
        if self.kind == "rows":
            refuse_spec(self.engine, self.spec)  # after preflight: a typo in the spec is reported first
            inputs = Inputs.build(self.dataset, model=self.model, pred=self.pred, where=self.where, rows=self.rows,
                                  seed=self.options["seed"], trust_pickle=self.trust_pickle,
                                  trusted_types=self.trusted_types, warnings=warnings,
                                  include_protected=self.include_protected)
            from fairaudit.models.features import unread_warnings

            inputs.warnings.extend(w for w in unread_warnings(self.spec, inputs.reprediction_model)
                                   if w not in inputs.warnings)
            return inputs
        dataset = self.dataset if self.kind == "generated" else (
            load_dataset(self.dataset) if self.dataset is not None else None)
        return self.engine.derive_inputs(dataset, self.model, self.options, seed=self.options["seed"],
                                         trust_pickle=self.trust_pickle, trusted_types=self.trusted_types,
                                         warnings=warnings, include_protected=self.include_protected)

    def audited_spec(self, inputs):
        """The specification the engine runs: a generated population's reads the program's variables
        (``fairaudit.programs.translate``); every other, the one given."""
        if self.kind != "generated":
            return self.spec
        from fairaudit.programs.translate import translate_spec

        return translate_spec(self.spec, self.dataset, inputs.population, inputs.generated["variables"])

    def run_args(self, *, on_progress=None, trace_points="auto", full_trace=None) -> dict:
        """The driver's keyword arguments (``fairaudit.core.driver.start``) besides the engine, spec, inputs and
        options. A population program's run keeps the default display trace (as it always has)."""
        if self.kind == "generated":
            return {"on_progress": on_progress, "rows_spec": self.spec}
        if self.kind == "population":
            return {"on_progress": on_progress}
        return {"on_progress": on_progress, "trace_points": trace_points, "full_trace": full_trace}


def refuse_spec(engine, spec) -> None:
    """``FairauditError`` when ``engine`` cannot audit ``spec`` whatever its inputs (e.g. a leaf kind it cannot
    bound)."""
    reasons = engine.check(spec, None)
    if reasons:
        raise FairauditError(f"the {engine.name} engine cannot audit this specification: " + "; ".join(reasons))


def check_rows_policy(rows) -> None:
    from fairaudit.core.inputs import ROWS

    if rows is not None and rows not in ROWS:
        raise FairauditError(f"unknown rows policy {rows!r}; choose one of: {', '.join(ROWS)}")


def kind_of(engine, *, population=None, model=None) -> str:
    """Which inputs ``engine`` audits (``KINDS``), from what it ``requires`` and what was given: a population
    program given; a model, to an engine that requires a model and no dataset (its input domain); anything, to
    an engine that requires a population (one generated from the dataset and the model); else rows."""
    if population is not None:
        return "population"
    if model is not None and "model" in engine.requires and "dataset" not in engine.requires:
        return "domain"
    if "population" in engine.requires:
        return "generated"
    return "rows"


def resolve(engine: str | None, data, spec, *, model=None, pred: str | None = None, where: str | None = None,
            rows: str | None = None, population=None, epsilon: float | None = None, full_trace=None,
            trust_pickle: bool = False, trusted_types=(), include_protected: bool = False, ranges=None,
            **options) -> Plan:
    """The ``Plan`` of an audit (module doc; the arguments are ``fairaudit.audit``'s): the engine and its options
    validated, what does not apply to its inputs refused (``FairauditError``, one line), the spec parsed, the
    dataset loaded. Nothing is trained, generated or audited yet."""
    chosen, resolved = check_options(engine, **options)
    kind = kind_of(chosen, population=population, model=model)
    if kind in ("population", "generated") and full_trace is not None:
        raise FairauditError("full_trace is written for an audit of a dataset's rows or a model's domain, not "
                             "of a population program")
    common = {"engine": chosen, "options": resolved, "kind": kind, "trust_pickle": trust_pickle,
              "trusted_types": tuple(trusted_types), "include_protected": include_protected}
    if kind == "population":
        from fairaudit.programs.population import DEFAULT_EPSILON, ratio_spec

        given = [name for name, value in (("data", data), ("model", model), ("pred", pred), ("where", where),
                                          ("rows", rows)) if value is not None]
        if given:
            raise FairauditError(f"a population program is audited on the individuals it samples: {given[0]} does "
                                 "not apply (the decision is the program's fairnessTarget)")
        if spec is not None and epsilon is not None:
            raise FairauditError("give either a specification or epsilon (the ratio property's ε), not both")
        ignored = ignored_headers(spec)
        spec = parse_spec(ratio_spec(DEFAULT_EPSILON if epsilon is None else epsilon) if spec is None else spec, ranges)
        sampled = any(o.name == "samples" for o in chosen.all_options())
        return Plan(**common, spec=spec, population=population, warnings=ignored,
                    samples=(resolved.get("samples") or 1_000_000) if sampled else None)
    if kind == "domain":
        # no rows: a rows policy has nothing to choose from (ignored); a row filter or a decision expression would
        # be silently dropped, so they are refused
        if pred is not None or where is not None or epsilon is not None:
            raise FairauditError(f"the {chosen.name} engine audits the model over its input domain, not rows: "
                                 "pred, where and epsilon do not apply")
        check_rows_policy(rows)
        if spec is None:
            raise FairauditError("no specification: give spec=...")
        ignored = ignored_headers(spec)
        spec = parse_spec(spec, ranges)
        refuse_spec(chosen, spec)
        return Plan(**common, spec=spec, dataset=data, model=model, warnings=ignored)  # data loaded in inputs()
    if kind == "generated":
        if data is None:
            raise FairauditError(f"the {chosen.name} engine needs a population program: give one (population=..., "
                                 "--population FILE.fr), or a dataset and a model to generate it from")
        if epsilon is not None:
            raise FairauditError("epsilon is the ratio property of a population program file: give population=..., "
                                 "or a specification")
        if spec is None:
            raise FairauditError("no specification: give spec=...")
        ignored = ignored_headers(spec)
        dataset, spec = load_dataset(data), parse_spec(spec, ranges)
        check_generated(chosen, spec, model=model, pred=pred, where=where, rows=rows)
        return Plan(**common, spec=spec, dataset=dataset, model=model, warnings=ignored)
    if epsilon is not None:
        raise FairauditError("epsilon is the ratio property of a population program: give population=...")
    if spec is None:
        raise FairauditError("no specification: give spec=...")
    if model is not None and pred is not None:
        raise FairauditError("give either a model or a decision expression (pred), not both")
    check_rows_policy(rows)
    ignored = ignored_headers(spec)
    dataset, spec = load_dataset(data), parse_spec(spec, ranges)
    return Plan(**common, spec=spec, dataset=dataset, model=model, pred=pred, where=where, rows=rows,
                warnings=ignored)


def check_generated(engine, spec=None, *, model=None, pred=None, where=None, rows=None) -> None:
    """For an engine that requires a population, audited on a dataset and a model instead (the population is
    generated from them): refuse, before any work, what cannot be turned into a program (a decision expression,
    no model) and what a program does not have (``label``, ``score``, ``Fair[...]``). ``FairauditError``, one line.
    Nothing for an engine that does not require a population."""
    from fairaudit.core import registry
    from fairaudit.programs.translate import check_spec

    chosen = registry.get(engine) if isinstance(engine, str) else engine
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
        refuse_spec(chosen, spec)
        check_spec(spec)


def ignored_headers(spec) -> list[str]:
    """A spec text's headers (``# where:``, ``# decision:``, an engine option's ``# delta:`` ...) are applied by the
    command line, not by ``fairaudit.audit()`` (its keyword arguments are the options): say so rather than audit
    silently without them. A ``# dataset:`` header is not read here either, but one that names a file outside its
    folder is refused as everywhere (``SpecError``, ``SpecFile.dataset_ref``)."""
    if not isinstance(spec, str):
        return []
    from fairaudit.core.registry import header_names
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
