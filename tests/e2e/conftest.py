"""The browser tests' server gets a workspace folder of its own (never ./workspace of the checkout)."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def workspace_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workspace")
    old = os.environ.get("FAIRAUDIT_WORKSPACE")
    os.environ["FAIRAUDIT_WORKSPACE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("FAIRAUDIT_WORKSPACE", None)
    else:
        os.environ["FAIRAUDIT_WORKSPACE"] = old
