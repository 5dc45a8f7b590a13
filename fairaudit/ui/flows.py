"""Multi-step actions of the dashboard (load the demo, read an upload, run an audit with live updates).

They call the library and put what it returns into the session; drawing is left to the pages.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import streamlit as st

from fairaudit import data as fa_data
from fairaudit.errors import FairauditError
from fairaudit.ui import logic, state


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


def parse_upload(content: bytes, filename: str):
    """``fairaudit.data.from_csv`` on uploaded bytes (not cached: the session keeps the Dataset, not the bytes).
    The dataset is named after the file (without ``.csv`` / ``.gz``); its source is the file's name."""
    return fa_data.from_csv(content, name=filename.replace("\\", "/").rsplit("/", 1)[-1] or "upload.csv")


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


def read_data_upload(upload, limit_mb: int):
    """The Dataset of an uploaded CSV (``DataError`` and friends for a bad file; ``ValueError`` with the message
    for one over the limit). The session keeps it under ``UPLOADED``; the bytes are dropped once parsed."""
    problem = logic.upload_problem(upload.name, int(upload.size), limit_mb, "data")
    if problem:
        raise ValueError(problem)
    content = upload.getvalue()
    try:
        dataset = parse_upload(content, upload.name)
    finally:
        del content
    state.put(UPLOADED, dataset)
    return dataset


def load_model_bytes(data: bytes, filename: str):
    """A model from the bytes of a model file, through ``fairaudit.models.load_bytes`` only (safe formats, never
    a pickle, no type beyond fairaudit's trusted list). ``FairauditError`` when it cannot be loaded."""
    from fairaudit import models as fa_models

    return fa_models.load_bytes(data, filename)


def train_model(dataset, kind: str, seed: int, test_size: float):
    model = state.trained_model(dataset, state.dataset_key(dataset), kind, int(seed), float(test_size))
    state.set_model(model, {"source": "trained", "kind": kind, "seed": int(seed), "test_size": float(test_size)})
    return model


def load_demo(log: Callable[[str], Any] = lambda _m: None, run: bool = True) -> None:
    """Adult + logistic regression + a sex/race parity spec; then run the audit."""
    log("Dataset: Adult (UCI census, 32,561 rows); protected: sex, race")
    dataset = state.builtin_dataset(logic.DEMO_DATASET)
    state.set_dataset(dataset)
    log(f"Model: logistic regression, {logic.DEMO_HELD_OUT:.0%} of the rows held out (the audit streams those), seed 0")
    train_model(dataset, logic.DEMO_MODEL, 0, logic.DEMO_HELD_OUT)
    # the editors are seeded from SPEC_TEXT when their page opens (never by writing a widget key from here,
    # which Streamlit would resurrect over the analyst's later edits)
    state.put(state.SPEC_TEXT, logic.DEMO_SPEC)
    state.put(state.SPEC_HISTORY, logic.record_version(state.get(state.SPEC_HISTORY), logic.DEMO_SPEC))
    state.put(state.SELECTED, [])
    state.put(state.LAST_EVENT, [])
    state.put(state.SELECTION_TREE, None)
    if run:
        log("Audit: monitor engine, Δ = 0.05, a check every 5 observations")
        run_audit(default_options())


def default_options() -> dict:
    return {"engine": "monitor", "delta": logic.DEFAULT_DELTA, "batch": 5, "bound": "hoeffding", "split": "equal",
            "order": logic.DEFAULT_ORDER, "seed": 0, "stop": False, "time_budget": 60.0}


def audit_accepts(name: str) -> bool:
    """Whether the library's ``audit()`` takes the keyword ``name`` (the dashboard passes only what it takes)."""
    import inspect

    from fairaudit.api import audit

    try:
        params = inspect.signature(audit).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def audit_iterator(options: dict):
    """Partial ``AuditResult``s of an audit of the session's dataset, model and spec (the last one is complete;
    closing the generator stops the run): ``fairaudit.api.audit(..., iterate=True)``."""
    from fairaudit.api import audit

    dataset = state.get(state.DATASET)
    model = state.get(state.MODEL)
    spec_text = state.get(state.SPEC_TEXT)
    if dataset is None or model is None or not spec_text.strip():
        raise FairauditError("choose a dataset and a model and write a specification first")
    kwargs = {k: options[k] for k in ("delta", "batch", "split", "bound", "order", "seed", "stop") if k in options}
    if options.get("rows") and audit_accepts("rows"):
        kwargs["rows"] = options["rows"]
    if (options.get("where") or "").strip():
        kwargs["where"] = options["where"].strip()
    budget = options.get("time_budget")
    return audit(dataset, spec_text, engine=options.get("engine", "monitor"), model=model, iterate=True,
                 time_budget=float(budget) if budget else None, **kwargs)


def engines_available() -> list[str]:
    from fairaudit.api import ENGINES

    return list(ENGINES)


def bound_choices() -> list[str]:
    from fairaudit.bounds.concentration import BOUNDS

    return list(BOUNDS)


def split_choices() -> list[str]:
    from fairaudit.bounds.allocation import SPLITS

    return list(SPLITS)


def run_audit(options: dict, on_update: Callable[[Any, float, str], None] | None = None) -> Any:
    """Run the audit to the end (or its time budget); store every partial result in the session as it comes,
    so a Stop (which interrupts the script) keeps the evidence so far. ``on_update(partial, fraction, text)`` is
    called about twice a second (the engine yields at least every 0.5 s), and once at the end."""
    dataset = state.get(state.DATASET)
    spec_text = state.get(state.SPEC_TEXT)
    meta = {"engine": options.get("engine", "monitor"), "options": dict(options),
            "dataset": getattr(dataset, "name", None), "model": (state.get(state.MODEL_INFO) or {}).get("describe"),
            "audited_on": audited_on(), "status": "running", "started": time.time(), "spec": spec_text}
    throttle = logic.Throttle(0.5)
    t0 = time.monotonic()
    result = None
    for result in audit_iterator(options):  # a run that fails before its first result leaves the last one as is
        state.put(state.RESULT, result)
        state.put(state.RESULT_META, meta)
        complete = bool(result.info.get("complete", False))
        if on_update is not None and (throttle.ready() or complete):
            total = int(result.info.get("stream_length") or len(dataset) or 1)
            text = (f"{result.steps:,} of {total:,} observations · {time.monotonic() - t0:.1f} s · "
                    f"verdict so far: {logic.verdict_sentence(result.verdict)}")
            on_update(result, result.steps / max(total, 1), text)
    if result is None:
        raise FairauditError("the engine returned no result")
    # the time budget limits the optimised split's search only: the run still reads every row
    meta["status"] = "finished" if result.info.get("complete", True) else "stopped"
    if result.info.get("timed_out"):
        meta["reason"] = (f"the optimised split's time budget of {options.get('time_budget'):g} s was reached; "
                          "later decisions used the equal split")
    _store(result, meta)
    return result


def audited_on() -> str:
    """What the current audit runs on, for the version history: ``adult · logreg`` / ``compas · income == 1``."""
    dataset = state.get(state.DATASET)
    info = state.get(state.MODEL_INFO) or {}
    decisions = info.get("expression") or info.get("kind") or "no model"
    return f"{getattr(dataset, 'name', '—')} · {decisions}"


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
    """The ``# key: value`` headers at the top of a spec text (``where``, ``delta``, ...), lower-case keys."""
    from fairaudit.spec import read_headers

    return {k: h.value for k, h in read_headers(text).items()}


def check_spec(text: str, dataset=None) -> tuple[Any, list[tuple[str, str]]]:
    """Parse ``text`` and validate it against the dataset: ``(spec or None, [(severity, message), ...])``.
    Messages name line and column; the spec is None when there is an error (warnings keep it)."""
    from fairaudit.spec import parse, validate

    try:
        spec = parse(text)
    except FairauditError as err:
        where = f"line {err.line}, column {err.column}: " if getattr(err, "line", None) else ""
        pretty = err.pretty() if hasattr(err, "pretty") else ""
        return None, [("error", f"{where}{getattr(err, 'message', str(err))}" + (f"\n\n```\n{pretty}\n```"
                                                                                if pretty else ""))]
    if dataset is None:
        return spec, []
    try:
        problems = validate(spec, dataset.schema, dataset.frame) or []
    except FairauditError as err:
        problems = [err]
    out = []
    for problem in problems:
        severity = getattr(problem, "severity", "error")
        line, col = getattr(problem, "line", None), getattr(problem, "column", None)
        where = f"line {line}, column {col}: " if line else ""
        out.append((severity, f"{where}{getattr(problem, 'message', str(problem))}"))
        if severity != "warning":
            spec = None
    return spec, out


def use_spec(text: str) -> None:
    """Make ``text`` the current specification (a new version in the history) and hand it to the Specification
    page's editor. The caller has parsed it."""
    if text.strip() == state.get(state.SPEC_TEXT).strip():
        return
    state.put(state.SPEC_TEXT, text)
    state.put(state.SPEC_HISTORY, logic.record_version(state.get(state.SPEC_HISTORY), text))
    st.session_state["spec_pending"] = text


def _store(result, meta: dict) -> None:
    state.put(state.RESULT, result)
    state.put(state.RESULT_META, meta)
    state.put(state.SPEC_HISTORY, logic.record_version(state.get(state.SPEC_HISTORY), meta["spec"],
                                                       result.verdict, result.stop_step,
                                                       audited_on=meta.get("audited_on")))
