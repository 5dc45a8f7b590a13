"""The dashboard around a live log (walkthrough findings): the Report page reports the live audit being watched
(it showed only the last Run's), the version history records the step the live verdict was reached at and marks
a verdict its own run found evidence against (drift), and the kept result audits the text the log was attached
with, whatever the editor holds when it is stopped."""
from __future__ import annotations

import time

from fairaudit import data
from fairaudit.core.explain import NOT_BACKED
from fairaudit.ui import live
from tests.app.test_live_log import PRED, SPEC, _attached, _ok, _wait


def _attach(workspace_folder, frame, spec=SPEC):
    """``(app, run)``: ``frame`` as the workspace's only log, attached on the Audit page and read to its end."""
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    (logs / "decisions.csv").write_text(frame.to_csv(index=False))
    at, run = _attached(spec, PRED)
    _wait(run, len(frame))
    assert run.rows == len(frame), run.error
    return at, run


def test_the_report_page_reports_the_live_audit_being_watched(workspace_folder):
    at, run = _attach(workspace_folder, data.load("compas").frame.iloc[:1500])
    _ok(at.switch_page("pages/5_Report.py").run())
    assert at.session_state["result"] is None  # the page's result is still none: nothing was Run or stopped
    assert not at.radio  # nothing else to report: no choice, a line says what is reported
    assert any("Reporting the live log decisions.csv so far (1,500 rows; still watched)" in m.value for m in at.markdown)
    shown = " ".join(m.value for m in at.markdown)
    assert "the first 1,500 rows of the live log decisions.csv" in shown, shown
    assert "Decisions:** decision `decile_score <= 4`" in shown  # in code: not typeset as "≤"
    assert "last" not in at.session_state["report_pdf"]  # the PDF is built only when asked (issue 30)
    at.session_state["report_preview"] = True  # the preview opened: the PDF of the live audit so far
    _ok(at.run())
    assert at.session_state["report_pdf"]["last"][1][:4] == b"%PDF"
    said = " ".join(c.value for c in at.caption)
    assert "snapshot after 1,500 observations while the log is still watched" in said and "stopped on" not in said
    assert not run.done and "snapshot" not in run.latest.info  # reporting it neither stopped nor marked the run
    run.stop()


def test_the_history_marks_a_live_verdict_its_run_found_evidence_against(workspace_folder):
    # COMPAS appended in decile_score order: the decisions drift along the log (the halves test warns)
    frame = data.load("compas").frame.sort_values("decile_score", kind="stable").iloc[:6000]
    at, run = _attach(workspace_folder, frame)
    at.session_state["spec_text"] = SPEC.replace("0.3", "0.35")  # edited on the Specification page meanwhile
    at.button(key="live_stop").click()
    _ok(at.run())
    result = at.session_state["result"]
    assert result is run.latest and result.assumption_broken and result.verdict in ("true", "false")
    assert at.session_state["result_meta"]["spec"] == SPEC  # what the run audited, not the editor's text
    kept = [v for v in at.session_state["spec_history"] if "live log" in (v.get("audited_on") or "")]
    assert [v["text"] for v in kept] == [SPEC] and kept[0]["stop_step"] == result.verdict_step
    table = at.dataframe[-1].value
    row = table[table["audited on"].str.contains("live log")].iloc[0]
    assert row["verdict"].endswith(f"— {NOT_BACKED}")
    assert row["decided at step"] == f"{result.verdict_step:,}"
    assert any(NOT_BACKED in m.value for m in at.markdown if m.value.startswith("**Verdict:**"))


def test_with_a_page_result_the_report_page_offers_both(workspace_folder):
    at, run = _attach(workspace_folder, data.load("compas").frame.iloc[:1500])
    run.stop()
    at.button(key="live_stop").click()
    _ok(at.run())  # the first run's result is the page's now
    at.button(key="live_attach").click()
    _ok(at.run())
    second = at.session_state[live.RUN]
    deadline = time.monotonic() + 60
    while second.latest is None and time.monotonic() < deadline:
        time.sleep(0.1)
    _ok(at.switch_page("pages/5_Report.py").run())
    assert at.radio(key="report_which").value == live.LIVE_SO_FAR  # the watched log, by default
    at.radio(key="report_which").set_value(live.PAGE_RESULT)
    _ok(at.run())
    said = " ".join(c.value for c in at.caption)
    assert "still watched" not in said  # the page's result: the first run, stopped
    second.stop()
