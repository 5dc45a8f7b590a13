"""The Audit page's Dask option: a Parquet log put in the workspace folder, audited on a local Dask cluster with the
session's model; the progress bar shows the cluster's partitions, and the result is the in-process one on the
same rows."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import fairaudit
from fairaudit.ui import progress as ui_progress

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180

pytestmark = pytest.mark.timeout(240)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_parquet_log_on_a_local_dask_cluster(workspace_folder, monkeypatch):
    drawn = []
    original = ui_progress.ProgressBar.text
    monkeypatch.setattr(ui_progress.ProgressBar, "text", lambda self, p: drawn.append(original(self, p)) or drawn[-1])
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    dataset = at.session_state["current_dataset"]
    rows = dataset.frame.iloc[:6_000]
    folder = workspace_folder / "logs" / "adult_log"
    folder.mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(len(rows)), 3)):
        rows.iloc[part].to_parquet(folder / f"part-{i}.parquet", index=False)
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.checkbox(key="audit_dask").check()
    _ok(at.run())
    assert at.selectbox(key="audit_dask_log").value == "adult_log/"
    at.button(key="audit_run").click()
    _ok(at.run())
    result = at.session_state["result"]
    assert "3 partitions by a Dask cluster" in result.rows_text
    assert any("Dask: 3 of 3 partitions" in text for text in drawn)  # the cluster's progress in the one bar
    options = at.session_state["result_meta"]["choice"]["options"]
    local = fairaudit.audit(dataset.subset(np.arange(len(dataset)) < len(rows)), at.session_state["spec_text"],
                            model=at.session_state["model"], rows="all", **options)
    assert (local.verdict, local.stop_step, local.steps) == (result.verdict, result.stop_step, result.steps)
    pd.testing.assert_frame_equal(local.trace, result.trace, check_exact=True)
    assert "Parquet log adult_log/ (Dask)" in at.session_state["spec_history"][-1]["audited_on"]
