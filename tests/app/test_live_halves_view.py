"""The dashboard's live view shows the halves order test of a live log as it fires (``fairaudit.ui.live.draw``
draws the warnings the live run raises, ``fairaudit.engines.halves``)."""
from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from fairaudit import data
from fairaudit.ui import live

ROOT = Path(__file__).resolve().parents[2]
SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] >= -0.1 and '
        'E[pred | sex == "Female"] >= 0.3')
PRED = "decile_score <= 4"
GROWS = "tested as the log grows"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_live_view_shows_the_halves_warning(workspace_folder):
    frame = data.load("compas").frame.sort_values("decile_score", kind="stable")
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    frame.to_csv(logs / "sorted.csv", index=False)
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run())
    at.session_state["spec_text"] = SPEC
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.text_input(key="live_pred").input(PRED)
    _ok(at.run())
    at.button(key="live_attach").click()
    _ok(at.run())
    run = at.session_state[live.RUN]
    deadline = time.monotonic() + 90
    while (run.rows < len(frame) or run.latest is None or not any(GROWS in w for w in run.latest.warnings)) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    _ok(at.run())
    shown = [w.value for w in at.warning]
    assert any(GROWS in w and "rows 1–2,000 of the log" in w for w in shown), shown
    at.button(key="live_stop").click()
    _ok(at.run())
    assert any(GROWS in w for w in at.session_state["result"].warnings)
