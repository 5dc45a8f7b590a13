"""The dashboard's live view shows the halves order test of a live log as it fires (``fairaudit.ui.live.draw``
draws the warnings the live run raises, ``fairaudit.engines.monitor.halves``)."""
from __future__ import annotations

import time

from fairaudit import data
from tests.app.test_live_log import PRED, SPEC, _attached, _ok

GROWS = "tested as the log grows"


def test_the_live_view_shows_the_halves_warning(workspace_folder):
    frame = data.load("compas").frame.sort_values("decile_score", kind="stable")
    logs = workspace_folder / "logs"
    logs.mkdir(parents=True)
    frame.to_csv(logs / "sorted.csv", index=False)
    at, run = _attached(SPEC, pred=PRED)
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
