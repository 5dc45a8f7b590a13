"""Multi-step actions of the dashboard (load the demo, read an upload, run an audit with live updates).

They call the library and put what it returns into the session; drawing is left to the pages.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import streamlit as st

from fairaudit.base import limits
from fairaudit import data as fa_data
from fairaudit.base.errors import FairauditError
from fairaudit.models.training import HELD_OUT_SHARE
from fairaudit.spec.errors import SpecError
from fairaudit.ui import history, logic, state
from fairaudit.ui import options as ui_options
from fairaudit.ui.options import CARET_WIDTH, _located, caret_lines, header_problems  # noqa: F401 — messages


UPLOADED = state.UPLOADED  # this session's parsed upload (session state, never a cross-session cache)


def server_max_upload_mb() -> int | None:
    try:
        return int(st.get_option("server.maxUploadSize"))
    except Exception:  # noqa: BLE001 - an option Streamlit does not know: no server cap
        return None


def upload_limits(kind: str) -> tuple[int, int]:
    """``(limit MB, the upload widget's own limit MB)`` for "data" or "model" uploads."""
    import os

    server = server_max_upload_mb()
    limit = logic.upload_limit_mb(kind, os.environ, server)
    return limit, logic.widget_limit_mb(limit, server)


def parse_upload(content: bytes, filename: str, na_values: str = "", column_types: str = ""):
    """``fairaudit.data.from_csv`` on uploaded bytes (not cached: the session keeps the Dataset, not the bytes).
    The dataset is named after the file (without ``.csv`` / ``.gz``); its source is the file's name. ``na_values``
    and ``column_types``: the Data page's "How the file is read" text (``NA, null``; ``zip=text, score=float``),
    read as the command line's ``--na-values`` and ``--column-type``."""
    from fairaudit.sources.schema import parse_declared_text, parse_na_values

    return fa_data.from_csv(content, name=filename.replace("\\", "/").rsplit("/", 1)[-1] or "upload.csv",
                            na_values=parse_na_values(na_values), column_types=parse_declared_text(column_types))


def forget_upload(upload) -> None:
    """Drop Streamlit's copy of an uploaded file's bytes now (best effort; they would otherwise stay until the
    session ends). The widget showing it must get a new key (the page's job)."""
    try:
        from streamlit.runtime import get_instance
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is not None and getattr(upload, "file_id", None):
            get_instance().uploaded_file_mgr.remove_file(ctx.session_id, upload.file_id)
    except Exception:  # noqa: BLE001 - no runtime (AppTest, bare mode): nothing to free
        pass


def read_data_upload(upload, limit_mb: int, na_values: str = "", column_types: str = ""):
    """The Dataset of an uploaded CSV (``DataError`` and friends for a bad file; ``ValueError`` with the message
    for one over the limit). The session keeps it under ``UPLOADED``; the bytes are dropped once parsed."""
    problem = logic.upload_problem(upload.name, int(upload.size), limit_mb, "data")
    if problem:
        raise ValueError(problem)
    content = upload.getvalue()
    try:
        dataset = parse_upload(content, upload.name, na_values, column_types)
    finally:
        del content
    state.put(UPLOADED, dataset)
    return dataset


def load_model_bytes(data: bytes, filename: str):
    """A model from the bytes of a model file, through ``fairaudit.models.load_bytes`` only (safe formats, never
    a pickle, no type beyond fairaudit's trusted list). ``FairauditError`` when it cannot be loaded."""
    from fairaudit import models as fa_models

    return fa_models.load_bytes(data, filename)


def train_model(dataset, kind: str, seed: int, test_size: float = HELD_OUT_SHARE, features=None, on_progress=None):
    """Train (or take from the cache) a model of ``kind`` on ``features`` (None: the default features) as every
    route trains one (``fairaudit.models.recipe``: the same choices give ``fairaudit train``'s and ``--model KIND``'s
    model); ``on_progress`` (a ``ProgressBar``) is told how far the training is."""
    from fairaudit.models.recipe import recipe

    chosen = recipe(dataset, kind, seed=seed, held_out_share=test_size, features=features)
    model = state.trained_model(dataset, state.dataset_key(dataset), kind, chosen.seed, chosen.held_out_share,
                                chosen.features, on_progress=on_progress)
    state.set_model(model, {"source": "trained", "kind": kind, "seed": chosen.seed,
                            "test_size": chosen.held_out_share, "features": list(chosen.features)})
    return model


def leak_warnings(dataset, features) -> list[str]:
    """``fairaudit.models.features.leak_warnings`` for the chosen ``features``: each column is checked once per
    dataset (and roles) in this session, not on every rerun of the Model page."""
    from fairaudit.models.features import leak_warnings as leaks

    key = state.dataset_key(dataset)
    cached = st.session_state.get("model_leaks")
    if cached is None or cached["key"] != key:
        names = [c for c in dataset.schema.names if c != dataset.schema.label]
        cached = {"key": key, "by_column": {name: leaks(dataset, [name]) for name in names}}
        st.session_state["model_leaks"] = cached
    return [w for name in features for w in cached["by_column"].get(name, [])]


def demo_choice() -> dict:
    """What the demo audits with: the registry's default engine with its declared defaults."""
    from fairaudit import engines

    engine = engines.get(engines.DEFAULT)
    return {"engine": engine.name, "options": engine.resolve_options({}), "where": "", "rows": None}


def load_demo(log: Callable[[str], Any] = lambda _m: None, run: bool = True, on_progress=None) -> None:
    """Adult + logistic regression + a sex/race parity spec; then run the audit (``on_progress``: one bar for the
    training and the audit)."""
    from fairaudit import engines

    log("Dataset: Adult (UCI census, 32,561 rows); protected: sex, race")
    dataset = state.builtin_dataset(logic.DEMO_DATASET)
    state.set_dataset(dataset)
    log(f"Model: logistic regression on the default features (not sex or race), {HELD_OUT_SHARE * 100:g}% of the "
        "rows held out (the audit reads those), seed 0")
    train_model(dataset, logic.DEMO_MODEL, 0, HELD_OUT_SHARE, on_progress=on_progress)
    # the editors are seeded from SPEC_TEXT when their page opens (never by writing a widget key from here,
    # which Streamlit would resurrect over the analyst's later edits)
    state.put(state.SPEC_TEXT, logic.DEMO_SPEC)
    state.put(state.SPEC_HISTORY, history.record_version(state.get(state.SPEC_HISTORY), logic.DEMO_SPEC))
    state.put(state.SELECTED, [])
    state.put(state.LAST_EVENT, [])
    state.put(state.SELECTION_TREE, None)
    if run:
        choice = demo_choice()
        log(f"Audit: {ui_options.options_line(engines.get(choice['engine']), choice['options'])}")
        run_audit(choice, on_progress=on_progress)


def _decisions() -> dict:
    """The session's decisions as ``audit()`` takes them: a model, or a decision expression (``pred``)."""
    model = state.get(state.MODEL)
    expression = getattr(model, "expression", None) if getattr(model, "kind", None) == "expression" else None
    return {"pred": expression} if expression is not None else {"model": model}


def current_inputs(where: str = "", rows: str | None = None):
    """``(Inputs or None, error or None)``: what an audit would read now (the session's dataset and decisions,
    the row filter and rows policy), for the engines' ``check`` before Run. Built once per change of those."""
    from fairaudit.core.inputs import Inputs

    dataset, model = state.get(state.DATASET), state.get(state.MODEL)
    if dataset is None:
        return None, None
    where = (where or "").strip()
    key = (state.get(state.DATASET_KEY), id(model), (state.get(state.MODEL_INFO) or {}).get("describe"), where,
           rows)
    cached = st.session_state.get("audit_inputs")
    if cached is not None and cached["key"] == key:
        return cached["inputs"], cached["error"]
    inputs = error = None
    try:
        decisions = _decisions() if model is not None else {}
        inputs = Inputs.build(dataset, where=where or None, rows=rows, **decisions)
    except FairauditError as err:
        error = logic.error_text(err)[0]
    except Exception as err:  # noqa: BLE001 - a broken model is reported when the audit runs
        error = logic.error_text(err)[0]
    st.session_state["audit_inputs"] = {"key": key, "inputs": inputs, "error": error}
    return inputs, error


def audit_iterator(choice: dict, on_progress=None, engine: str | None = None):
    """Partial ``AuditResult``s of an audit of the session's dataset, decisions and spec with ``choice`` (engine,
    options, where, rows); the last one is complete; closing the generator stops the run
    (``fairaudit.api.audit(..., iterate=True)``). ``engine``: another engine than the choice's (its own options
    then take their defaults; the run's seed is kept)."""
    from fairaudit.api import audit

    options = dict(choice.get("options") or {})
    if engine is not None and engine != choice["engine"]:
        options = {k: options[k] for k in ("seed",) if k in options}
    if choice.get("source") == POPULATION:
        population = program_population(choice["program"], choice.get("program_name") or "program")
        return audit(None, choice["spec"], engine=engine or choice["engine"], population=population, iterate=True,
                     on_progress=on_progress, **options)
    dataset = state.get(state.DATASET)
    model = state.get(state.MODEL)
    spec_text = state.get(state.SPEC_TEXT)
    if dataset is None or model is None or not spec_text.strip():
        raise FairauditError("choose a dataset and a model and write a specification first")
    if choice.get("dask"):  # a Parquet log on a Dask cluster (not the dataset's rows)
        from fairaudit.ui.dask_run import log_iterator

        if engine is not None and engine != choice["engine"]:
            raise FairauditError("the Parquet log is audited on Dask by one engine only; untick 'Run on a local Dask "
                                 "cluster' to compare engines on the dataset's rows")
        return log_iterator(choice, spec_text, _decisions(), on_progress)
    where = (choice.get("where") or "").strip() or None
    return audit(dataset, spec_text, engine=engine or choice["engine"], where=where, rows=choice.get("rows"),
                 iterate=True, on_progress=on_progress, ranges=state.declared_ranges(dataset) or None, **_decisions(),
                 **options)


def run_audit(choice: dict, on_progress=None, on_result: Callable[[Any], None] | None = None) -> Any:
    """Run the audit to its end (or its time budget); store every partial result in the session as it comes,
    so a Stop (which interrupts the script) keeps the evidence so far. ``on_progress`` receives the run's
    ``fairaudit.base.progress.Progress`` (a ``ProgressBar``); ``on_result(partial)`` every partial result."""
    dataset = state.get(state.DATASET)
    spec_text = state.get(state.SPEC_TEXT)
    meta = {"engine": choice["engine"], "choice": dict(choice), "data": getattr(dataset, "name", None),
            "model": (state.get(state.MODEL_INFO) or {}).get("describe"), "audited_on": audited_on(choice["engine"]),
            "status": "running", "started": time.time(), "spec": spec_text}
    if choice.get("source") == POPULATION:  # the program and the property audited, not the session's data
        meta.update(source=POPULATION, data=choice.get("program_name"), model=None, spec=choice["spec"],
                    program_sha=program_sha(choice["program"]),
                    audited_on=audited_on(choice["engine"], program=choice.get("program_name")))
    if choice.get("dask"):  # a Parquet log of the workspace on a Dask cluster, not the session's dataset
        log = choice["dask"]["log"]
        decided_by = audited_on(choice["engine"]).split(" · ", 1)[1]  # the decisions and the engine
        meta.update(data=log, audited_on=f"Parquet log {log} (Dask) · {decided_by}")
    state.put(state.ALSO, None)
    result = None
    for result in audit_iterator(choice, on_progress):  # a run that fails before its first result leaves the last
        state.put(state.RESULT, result)
        state.put(state.RESULT_META, meta)
        if on_result is not None:
            on_result(result)
    if result is None:
        raise FairauditError("the engine returned no result")
    meta["status"] = "finished" if result.complete else "stopped"
    _store(result, meta)
    return result


def run_beside(engine_name: str, on_progress=None) -> Any:
    """The current result's audit again with the engine ``engine_name`` (same data, decisions, rows and seed;
    its own options at their defaults), kept beside the result in the session (``state.ALSO``)."""
    from fairaudit.core.driver import last

    meta = state.get(state.RESULT_META) or {}
    choice = meta.get("choice")
    if state.get(state.RESULT) is None or choice is None:
        raise FairauditError("run an audit first")
    other = last(audit_iterator(choice, on_progress, engine=engine_name))
    state.put(state.ALSO, {"started": meta.get("started"), "engine": engine_name, "result": other})
    return other


def beside(engine_name: str):
    """The result of ``engine_name`` kept beside the current result (None when there is none for it)."""
    also = state.get(state.ALSO)
    meta = state.get(state.RESULT_META) or {}
    if not also or also.get("engine") != engine_name or also.get("started") != meta.get("started"):
        return None
    return also["result"]


def audited_on(engine_name: str | None = None, program: str | None = None) -> str:
    """What the current audit runs on, for the version history: ``adult · logreg · <engine title>`` (``program``:
    the population program's name instead of the dataset and model)."""
    from fairaudit import engines

    dataset = state.get(state.DATASET)
    info = state.get(state.MODEL_INFO) or {}
    decisions = info.get("expression") or info.get("kind") or "no model"
    text = f"population program {program}" if program else f"{getattr(dataset, 'name', '—')} · {decisions}"
    if engine_name is not None:
        try:
            text += f" · {engines.get(engine_name).title or engine_name}"
        except (FairauditError, ImportError):
            text += f" · {engine_name}"
    return text


# ------------------------------------------------------------------------------------------------ population programs

POPULATION = "population"  # the Audit page's source: a population program (.fr) instead of the dataset and model
LIVE = "live"  # a result's source: a live decision log of the workspace (``fairaudit.ui.live``)


def on_session_rows(meta: dict | None) -> bool:
    """Whether the result described by ``meta`` audited the session's dataset — not a population program, a live
    log or a Parquet log on Dask (their data is the result's own: ``meta["data"]``)."""
    meta = meta or {}
    return meta.get("source") not in (POPULATION, LIVE) and not (meta.get("choice") or {}).get("dask")


def used_session_model(meta: dict | None) -> bool:
    """Whether the result described by ``meta`` was decided by the session's model (its rows, or a log it scored)."""
    meta = meta or {}
    if meta.get("source") == POPULATION:
        return False
    return on_session_rows(meta) or bool(meta.get("session_model", (meta.get("choice") or {}).get("dask")))
PROGRAM_MAX_KB = limits.PROGRAM_KB  # a population program is a short text; an upload or an edit beyond this is refused


def program_sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def program_population(text: str, name: str = "program"):
    """The ``Population`` of ``.fr`` text (parsed, never run): ``SpecError`` with line:column when it does not
    parse. Parsed once per text and session."""
    from fairaudit.programs.population import from_text

    cached = st.session_state.get("audit_program_parsed")
    key = (program_sha(text), name)
    if cached is not None and cached["key"] == key:
        return cached["population"]
    population = from_text(text, name)
    st.session_state["audit_program_parsed"] = {"key": key, "population": population}
    return population


def audited_program():
    """The last population program parsed on the Audit page (a ``Population``: the PDF prints it when its sha256
    is the one the result recorded), or None."""
    cached = st.session_state.get("audit_program_parsed")
    return cached["population"] if cached else None


def check_program(text: str, name: str = "program") -> tuple[Any, str | None]:
    """``(Population or None, the parse error with its line:column and a caret, or None)``."""
    if len(text.encode("utf-8")) > PROGRAM_MAX_KB * 1024:
        return None, (f"the program is {len(text.encode('utf-8')) / 1024:.0f} KB; population programs are short "
                      f"texts, at most {PROGRAM_MAX_KB} KB here")
    if not text.strip():
        return None, "the program is empty: pick an example, upload a .fr file or write one"
    try:
        return program_population(text, name), None
    except FairauditError as err:
        return None, _located(err, pretty=getattr(err, "line", None) is not None)


def read_program_upload(upload) -> str:
    """The text of an uploaded ``.fr`` file (``ValueError`` with a sentence when it is too large or not text)."""
    size = int(upload.size)
    if size > PROGRAM_MAX_KB * 1024:
        raise ValueError(f"{upload.name} is {size / 1024:.0f} KB: a population program is a short text file, at "
                         f"most {PROGRAM_MAX_KB} KB here.")
    try:
        return upload.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{upload.name} is not a text file (UTF-8): upload a .fr program.") from None


def population_inputs(population):
    """What an engine would read for ``population`` (for the engines' ``check`` before Run)."""
    from fairaudit.core.inputs import Inputs

    return Inputs.build_population(population, samples=None)


def generate_program(structure: str = "independent") -> str:
    """A population program of the session's dataset with the session's model as its decision
    (``fairaudit.engines.fairsquare.generate.population_program``); ``FairauditError`` when it cannot be written."""
    from fairaudit.engines.fairsquare.generate import population_program

    dataset, model = state.get(state.DATASET), state.get(state.MODEL)
    if dataset is None:
        raise FairauditError("choose a dataset first (Data page)")
    return population_program(dataset, model=model, structure=structure)


def use_decisions(expression: str) -> None:
    """Make the decisions ``expression`` (a condition over the rows, true = favourable) the audited decisions;
    ``FairauditError`` when it does not fit the dataset."""
    from fairaudit import models as fa_models

    dataset = state.get(state.DATASET)
    if dataset is None:
        raise FairauditError("choose a dataset first (Data page)")
    model = fa_models.from_expression(expression.strip(), dataset)
    state.set_model(model, {"source": "expression", "kind": "expression", "expression": expression.strip()})


def check_where(text: str, dataset=None) -> str | None:
    """The problem with a row filter (``--where``) as one message, or None when it is empty or fine."""
    from fairaudit.spec import parse_event, validate_event

    if not text.strip():
        return None
    try:
        event = parse_event(text)
    except FairauditError as err:
        return f"column {err.column}: {getattr(err, 'message', str(err))}" if getattr(err, "column", None) else str(err)
    if dataset is None:
        return None
    errors = [d for d in validate_event(event, dataset.schema, dataset.frame) if d.severity == "error"]
    if errors:
        return f"column {errors[0].column}: {errors[0].message}" if errors[0].column else errors[0].message
    return None


def spec_headers(text: str) -> dict[str, str]:
    """The ``# key: value`` headers at the top of a spec text (``where``, ``decision``, ...), lower-case keys."""
    from fairaudit.spec import read_headers

    return {k: h.value for k, h in read_headers(text).items()}


SPEC_CHECKS = "spec_checks"  # session key: {(text, id(dataset)): (dataset, (spec, problems))}, oldest first
SPEC_CHECKS_SIZE = 16


def check_spec(text: str, dataset=None) -> tuple[Any, tuple[tuple[str, str], ...]]:
    """Parse ``text``, check its headers (``fairaudit.core.preflight.check_headers``: a misspelt header or a value its
    option refuses) and validate it against the dataset: ``(spec or None, ((severity, message), ...))``.
    Messages name line and column; the spec is None when there is an error (warnings keep it). Checked once per
    text and dataset (the same object: a new dataset or new roles are a new one) in this session: a page checks
    the same texts on every rerun."""
    cache = st.session_state.setdefault(SPEC_CHECKS, {})
    key = (text, id(dataset), tuple(sorted(state.declared_ranges(dataset).items())),
           getattr(state.get(state.MODEL), "classes", None))  # (the decisions' classes: what pred is compared with)
    entry = cache.pop(key, None)
    if entry is None or entry[0] is not dataset:
        entry = (dataset, _check_spec(text, dataset))
    cache[key] = entry  # (re)inserted: the most recently used is kept longest
    while len(cache) > SPEC_CHECKS_SIZE:
        cache.pop(next(iter(cache)))
    return entry[1]


def _check_spec(text: str, dataset) -> tuple[Any, tuple[tuple[str, str], ...]]:
    from fairaudit.spec import parse, validate
    from fairaudit.spec.files import parsed_with_ranges

    try:
        spec = parsed_with_ranges(text, state.declared_ranges(dataset))  # the Data page's ranges of the amounts
    except FairauditError as err:
        return None, (("error", _located(err, pretty=True)),)
    out = [("error", message) for message in header_problems(text)]
    if out:
        spec = None
    if dataset is None:
        return spec, tuple(out)
    try:
        classes = getattr(state.get(state.MODEL), "classes", None)  # the session's decisions: several classes?
        problems = validate(spec or parsed_with_ranges(text, state.declared_ranges(dataset)), dataset.schema,
                            dataset.frame, classes=classes) or []
    except FairauditError as err:
        problems = [err]
    for problem in problems:
        severity = getattr(problem, "severity", "error")
        if severity != "warning" and getattr(problem, "line", None) and not hasattr(problem, "pretty"):
            # a value or column typo gets its caret under the token, as a syntax error does
            problem = SpecError.at(text, problem.line, problem.column, problem.message,
                                   length=getattr(problem, "length", 1))
        out.append((severity, _located(problem, pretty=severity != "warning")))
        if severity != "warning":
            spec = None
    return spec, tuple(out)


def use_spec(text: str) -> None:
    """Make ``text`` the current specification (a new version in the history) and hand it to the Specification
    page's editor. The caller has parsed it."""
    if text.strip() == state.get(state.SPEC_TEXT).strip():
        return
    state.put(state.SPEC_TEXT, text)
    state.put(state.SPEC_HISTORY, history.record_version(state.get(state.SPEC_HISTORY), text))
    st.session_state["spec_pending"] = text


def apply_suggestion(result, node_id: str, which: str) -> str:
    """Apply the suggested ``which`` ("certify" / "refute") threshold of an undecided comparison of ``result`` to
    the specification it audited (``fairaudit.core.suggest.apply``: rewritten at the comparison's span and re-parsed,
    never evaluated) and make it the current specification: a new version that refines the audited one."""
    from fairaudit.core import suggest

    audited = (state.get(state.RESULT_META) or {}).get("spec") or state.get(state.SPEC_TEXT)
    found = suggest.suggest_node(result, node_id)
    if found is None:
        info = result.node(node_id)
        raise FairauditError(f"{info.name or info.text} is not an undecided comparison")  # never the node id
    text = suggest.apply(audited, found, which, result=result)
    versions = history.record_version(state.get(state.SPEC_HISTORY), audited)  # (already there after an audit)
    versions = history.record_version(versions, text, refines=history.version_of(versions, audited))
    state.put(state.SPEC_TEXT, text)
    state.put(state.SPEC_HISTORY, versions)
    st.session_state["spec_pending"] = text
    return text


def confirm_suggestion(result, node_id: str, which: str, on_progress=None) -> Any:
    """Confirm a suggested threshold on fresh rows (``fairaudit.confirm``): the audited rows of the current result
    are split at random, the threshold is chosen on one part and audited on the other; the new specification (with
    its ``# threshold-chosen-from:`` line) becomes the current one and its result — not exploratory — the page's."""
    from fairaudit.api import confirm

    meta = dict(state.get(state.RESULT_META) or {})
    choice = meta.get("choice")
    dataset = state.get(state.DATASET)
    if choice is None or dataset is None or choice.get("source") == POPULATION or choice.get("dask"):
        raise FairauditError("confirming on fresh rows needs an audit of the session's dataset: run one first")
    audited = meta.get("spec") or state.get(state.SPEC_TEXT)
    where = (choice.get("where") or "").strip() or None
    confirmed = confirm(dataset, audited, node_id, which, engine=choice["engine"], where=where,
                        rows=choice.get("rows"), on_progress=on_progress, **_decisions(),
                        **dict(choice.get("options") or {}))
    text = confirmed.info["confirmation"]["spec_text"]
    versions = history.record_version(state.get(state.SPEC_HISTORY), audited)
    versions = history.record_version(versions, text, refines=history.version_of(versions, audited))
    state.put(state.SPEC_TEXT, text)
    state.put(state.SPEC_HISTORY, versions)
    st.session_state["spec_pending"] = text
    state.put(state.ALSO, None)
    _store(confirmed, {**meta, "spec": text, "status": "finished", "started": time.time(), "confirmed": True})
    return confirmed


def _store(result, meta: dict) -> None:
    source = history.post_hoc_source(state.get(state.SPEC_HISTORY) or [], meta["spec"], meta.get("audited_on"))
    if meta.get("confirmed") or getattr(result, "exploratory", None):  # the result itself says how it was chosen
        source = None
    if source is not None and history.post_hoc_note(source) not in result.warnings:  # with the result: PDF, JSON
        result.warnings.append(history.post_hoc_note(source))
    state.put(state.RESULT, result)
    state.put(state.RESULT_META, meta)
    state.put(state.SPEC_HISTORY, history.record_result(state.get(state.SPEC_HISTORY), meta["spec"], result,
                                                      audited_on=meta.get("audited_on")))
