"""Every dashboard test gets its own workspace folder (the only place the dashboard reads and writes files)."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def workspace_folder(tmp_path, monkeypatch):
    folder = tmp_path / "workspace"
    monkeypatch.setenv("FAIRAUDIT_WORKSPACE", str(folder))
    return folder
