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


@st.cache_data(show_spinner="Reading the file…", max_entries=8)
def read_upload(content: bytes, filename: str):
    """``fairaudit.data.from_csv`` on uploaded bytes (cached by content)."""
    name = filename.rsplit("/", 1)[-1]
    for suffix in (".gz", ".csv"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return fa_data.from_csv(content, name=name or "upload")


def train_model(dataset, kind: str, seed: int, test_size: float):
    model = state.trained_model(dataset, state.dataset_key(dataset), kind, int(seed), float(test_size))
    state.set_model(model, {"source": "trained", "kind": kind, "seed": int(seed), "test_size": float(test_size)})
    return model


def load_demo(log: Callable[[str], Any] = lambda _m: None, run: bool = True) -> None:
    """Adult + logistic regression + a sex/race parity spec; then run the audit (when the engine exists)."""
    log("Dataset: Adult (UCI census, 32,561 rows); protected: sex, race")
    dataset = state.builtin_dataset(logic.DEMO_DATASET)
    state.set_dataset(dataset)
    log("Model: logistic regression, 25% held out, seed 0")
    train_model(dataset, logic.DEMO_MODEL, 0, 0.25)
    state.put(state.SPEC_TEXT, logic.DEMO_SPEC)
    state.put("spec_editor", logic.DEMO_SPEC)
    state.put(state.SPEC_HISTORY, logic.record_version(state.get(state.SPEC_HISTORY), logic.DEMO_SPEC))
    state.put(state.SELECTED, [])
    state.put(state.LAST_EVENT, [])
    if run and engines_available():
        log("Audit: monitor engine, Δ = 0.05, batches of 5 observations")
        run_audit(default_options())
    elif run:
        log("The monitor engine is not available yet: the audit was not run.")


def default_options() -> dict:
    return {"engine": "monitor", "delta": 0.05, "batch": 5, "bound": "hoeffding", "split": "optimized",
            "order": "given", "seed": 0, "stop": False, "time_budget": 60.0}


def audit_iterator(options: dict):
    """Partial ``AuditResult``s of an audit of the session's dataset, model and spec (the last one is complete).

    Uses ``fairaudit.api.audit`` when it offers partial results, else the monitor engine directly
    (``fairaudit.engines.monitor.monitor(..., iterate=True)``).
    """
    import inspect

    dataset = state.get(state.DATASET)
    model = state.get(state.MODEL)
    spec_text = state.get(state.SPEC_TEXT)
    if dataset is None or not spec_text.strip():
        raise FairauditError("choose a dataset and write a specification first")
    kwargs = {k: options[k] for k in ("delta", "batch", "split", "bound", "order", "seed", "stop") if k in options}
    if options.get("time_budget"):
        kwargs["time_budget"] = float(options["time_budget"])
    audit = state.audit_function()
    if audit is not None:
        params = inspect.signature(audit).parameters
        if "iterate" in params:
            return audit(dataset, spec_text, engine=options.get("engine", "monitor"), model=model, iterate=True,
                         **{k: v for k, v in kwargs.items() if k in params})
    monitor = state.optional("fairaudit.engines.monitor", "monitor")
    parse = state.spec_parser()
    if monitor is None or parse is None:
        raise FairauditError("the monitor engine is not available yet")
    if options.get("engine", "monitor") != "monitor":
        raise FairauditError(f"engine {options.get('engine')!r} is not available yet")
    return monitor(dataset, parse(spec_text), model=model, iterate=True, **kwargs)


def engines_available() -> list[str]:
    return ["monitor"] if (state.audit_function() is not None or
                           state.optional("fairaudit.engines.monitor", "monitor") is not None) else []


def run_audit(options: dict, on_update: Callable[[Any, float, str], None] | None = None) -> Any:
    """Run the audit to the end (or its time budget); store every partial result in the session as it comes,
    so a Stop (which interrupts the script) keeps the evidence so far. ``on_update(partial, fraction, text)`` is
    called at most about once a second, and once at the end."""
    dataset = state.get(state.DATASET)
    spec_text = state.get(state.SPEC_TEXT)
    meta = {"engine": options.get("engine", "monitor"), "options": dict(options),
            "dataset": getattr(dataset, "name", None), "model": (state.get(state.MODEL_INFO) or {}).get("describe"),
            "status": "running", "started": time.time(), "spec": spec_text}
    state.put(state.RESULT_META, meta)
    throttle = logic.Throttle(0.8)
    t0 = time.monotonic()
    result = None
    for result in audit_iterator(options):
        state.put(state.RESULT, result)
        complete = bool(result.info.get("complete", False))
        if on_update is not None and (throttle.ready() or complete):
            total = int(result.info.get("stream_length") or len(dataset) or 1)
            text = (f"{result.steps:,} of {total:,} observations · {time.monotonic() - t0:.1f} s · "
                    f"verdict so far: {logic.verdict_sentence(result.verdict)}")
            on_update(result, result.steps / max(total, 1), text)
    if result is None:
        raise FairauditError("the engine returned no result")
    meta["status"] = "stopped" if result.info.get("timed_out") else "finished"
    if result.info.get("timed_out"):
        meta["reason"] = f"time budget of {options.get('time_budget'):g} s reached"
    _store(result, meta)
    return result


def _store(result, meta: dict) -> None:
    state.put(state.RESULT, result)
    state.put(state.RESULT_META, meta)
    state.put(state.SPEC_HISTORY, logic.record_version(state.get(state.SPEC_HISTORY), meta["spec"],
                                                       result.verdict, result.stop_step))
