"""The Audit page attaches to a live decision log in the workspace (``fairaudit.ui.live``): the view updates as a
writer appends rows, Stop makes the final result the page's result; logs outside the workspace (paths, links) are
neither listed nor read."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import fairaudit
from fairaudit import data
from fairaudit.ui import live, workspace

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180
SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] >= -0.1 and '
        'E[pred | sex == "Female"] >= 0.3')
PRED = "decile_score <= 4"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _live_line(at) -> str:
    return next((m.value for m in at.markdown if m.value.startswith("**Live**")), "")


def _rows(at) -> int:
    line = _live_line(at)
    return int(line.split("**")[3].split()[0].replace(",", "")) if line else 0


def _attached(spec: str, pred: str | None = None, model=None):
    """``(app, run)``: the Audit page with ``spec``, attached to the workspace's only log, decided by the condition
    ``pred`` or the session's ``model``."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.session_state["spec_text"] = spec
    if model is not None:
        at.session_state["model"] = model
    _ok(at.switch_page("pages/4_Audit.py").run())
    if model is not None:
        at.radio(key="live_decisions").set_value(live.MODEL_CHOICE)
    else:
        at.text_input(key="live_pred").input(pred)
    _ok(at.run())
    at.button(key="live_attach").click()
    _ok(at.run())
    return at, at.session_state[live.RUN]


def _wait(run, rows: int | None = None, seconds: float = 90) -> None:
    """Until ``run`` has read ``rows`` rows (or, without ``rows``, ended), it ended, or ``seconds`` passed."""
    deadline = time.monotonic() + seconds
    while (rows is None or run.rows < rows) and not run.done and time.monotonic() < deadline:
        time.sleep(0.1)


def test_attach_watch_and_stop(workspace_folder):
    lines = data.load("compas").frame.to_csv(index=False).splitlines(keepends=True)
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    log = logs / "decisions.csv"
    log.write_text("".join(lines[:201]))  # the header and 200 rows
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.session_state["spec_text"] = SPEC
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert at.selectbox(key="live_log").options == ["decisions.csv"]
    at.text_input(key="live_pred").input(PRED)
    _ok(at.run())
    at.button(key="live_attach").click()
    _ok(at.run())
    run = at.session_state[live.RUN]
    deadline = time.monotonic() + 60
    while run.rows < 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    _ok(at.run())
    first = _rows(at)
    assert first == 200

    stop = threading.Event()

    def append():
        with open(log, "a") as fh:
            for i in range(201, len(lines), 100):
                if stop.is_set():
                    return
                fh.write("".join(lines[i:i + 100]))
                fh.flush()
                time.sleep(0.05)
    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    deadline = time.monotonic() + 60
    while run.rows < 1500 and time.monotonic() < deadline:
        time.sleep(0.1)
    _ok(at.run())
    assert _rows(at) >= 1500 > first  # the view follows the log
    at_rest = fairaudit.audit("compas", SPEC, pred=PRED, order="given")  # the same rows, the file at rest
    assert at_rest.verdict == "false" and at_rest.stop_step < 1500
    assert "violated" in _live_line(at)  # decided where the file at rest in given order is
    at.button(key="live_stop").click()
    _ok(at.run())
    stop.set()
    writer.join(5)
    result = at.session_state["result"]
    assert run.done and result is run.latest
    assert result.verdict == "false" and result.stop_step == at_rest.stop_step
    assert at.session_state["result_meta"]["source"] == "live"
    assert any("live log decisions.csv" in (v.get("audited_on") or "") for v in at.session_state["spec_history"])
    assert any("rows audited" in c.value for c in at.caption)


def test_a_bad_decision_is_one_message(workspace_folder):
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    (logs / "d.csv").write_text("decile_score,race,sex\n3,Caucasian,Male\n")
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.session_state["spec_text"] = SPEC
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.text_input(key="live_pred").input("decile_scor <= 4")
    _ok(at.run())
    at.button(key="live_attach").click()
    _ok(at.run())
    run = at.session_state[live.RUN]
    run.thread.join(30)
    _ok(at.run())
    assert any("has no column 'decile_scor'" in e.value for e in at.error)


def test_only_logs_inside_the_workspace(workspace_folder, tmp_path):
    logs = workspace.folder("logs")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("a\n1\n")
    (logs / "ok.csv").write_text("a\n1\n")
    (logs / "parts").mkdir()
    (logs / "notes.txt").write_text("x")
    os.symlink(outside / "secret.csv", logs / "link.csv")
    os.symlink(outside, logs / "linkdir")
    assert live.list_logs(logs) == ["ok.csv", "parts"]
    for name in ("link.csv", "linkdir", "../outside/secret.csv", str(outside / "secret.csv"), "notes.txt", "none.csv"):
        with pytest.raises(workspace.WorkspaceError):
            live.log_path(logs, name)
    # a link among a Parquet folder's files is not read by the dashboard
    import pandas as pd

    from fairaudit.sources.live import open_log

    pd.DataFrame({"a": [1]}).to_parquet(outside / "x.parquet")
    os.symlink(outside / "x.parquet", logs / "parts" / "x.parquet")
    assert open_log(logs / "parts", links=False).poll() is None
    assert len(open_log(logs / "parts").poll()) == 1


def test_the_sessions_model_decides_on_the_live_log(workspace_folder):
    from fairaudit import api, models

    compas = data.load("compas")
    model = models.train(compas, "logreg", seed=0)
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    (logs / "scored.csv").write_text(compas.frame.to_csv(index=False))
    at, run = _attached(SPEC, model=model)
    _wait(run, len(compas))
    at.button(key="live_stop").click()
    _ok(at.run())
    result = at.session_state["result"]
    rest = api.audit(compas, SPEC, model=model, rows="all", order="given")
    assert run.error is None and result is run.latest
    assert (result.verdict, result.stop_step, result.steps) == (rest.verdict, rest.stop_step, rest.steps)
    assert at.session_state["result_meta"]["model"] == model.describe()


def test_fair_on_the_live_log_shows_its_counterexamples(workspace_folder):
    """``Fair[...]`` with the session's model on a live log: the live view counts the counterexamples as rows
    arrive, and the kept result holds those of the file at rest in given order."""
    from fairaudit import api, models

    compas = data.load("compas")
    model = models.train(compas, "logreg", seed=0)
    lines = compas.frame.to_csv(index=False).splitlines(keepends=True)
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    log = logs / "scored.csv"
    log.write_text("".join(lines[:3001]))
    spec = "Fair[race] >= 0.99"
    at, run = _attached(spec, model=model)
    _wait(run, 3000)
    _ok(at.run())
    shown = [c.value for c in at.caption if "Fair[race]" in c.value]
    assert shown and "counterexamples found among the audited rows" in shown[0], [c.value for c in at.caption]
    with open(log, "a") as f:
        f.write("".join(lines[3001:]))
    _wait(run, len(compas))
    at.button(key="live_stop").click()
    _ok(at.run())
    result = at.session_state["result"]
    rest = api.audit(compas, spec, model=model, rows="all", order="given")
    assert run.error is None and result.steps == rest.steps
    assert result.counterexamples.to_dict() == rest.counterexamples.to_dict()


def test_a_log_that_fails_later_keeps_the_evidence_so_far(workspace_folder):
    """A log truncated while it is watched: one error line naming the log (not the server's path), and the rows
    audited before it become the page's result — marked incomplete, not as the log's final answer (it read
    "stopped on request")."""
    lines = data.load("compas").frame.to_csv(index=False).splitlines(keepends=True)
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    log = logs / "decisions.csv"
    log.write_text("".join(lines[:1001]))
    at, run = _attached(SPEC, pred=PRED)
    _wait(run, 1000)
    log.write_text("".join(lines[:11]))  # truncated
    _wait(run)
    _ok(at.run())
    errors = [e.value for e in at.error]
    assert any("truncated" in e and "decisions.csv" in e for e in errors), errors
    assert not any(str(workspace_folder) in e for e in errors)
    assert at.session_state["result"] is run.latest and run.rows == 1000
    assert not run.latest.complete and "not the log's final answer" in run.latest.stopped_reason
    assert any("not the log's final answer" in c.value for c in at.caption), [c.value for c in at.caption]


def test_the_pages_stop_button_ends_the_watch_too(workspace_folder):
    lines = data.load("compas").frame.to_csv(index=False).splitlines(keepends=True)
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    (logs / "decisions.csv").write_text("".join(lines[:501]))
    at, run = _attached(SPEC, pred=PRED)
    _wait(run, 500)
    at.button(key="audit_stop_button").click()
    _ok(at.run())
    assert run.done and at.session_state["result"] is run.latest and run.rows == 500
    side = " ".join(m.value for m in at.sidebar.markdown)
    assert "Data: **live log decisions.csv**" in side and f"Decisions: **decision `{PRED}`**" in side, side
