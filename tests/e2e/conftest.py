"""Shared by the browser tests: a workspace folder of their own (never ./workspace of the checkout), one dashboard
server for them all, and the check that Debian's chromium and Playwright are there (a skip outside CI, a failure in
CI)."""
from __future__ import annotations

import os

import pytest

from tests.e2e.server import SHOTS, chromium, serve


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


@pytest.fixture(scope="module")
def browser_ready():
    if chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install -y chromium); required in CI")
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else __import__("playwright.sync_api")
    SHOTS.mkdir(exist_ok=True)


@pytest.fixture(scope="session")
def app_url(workspace_folder):
    """The URL of one ``streamlit run app.py`` for every browser test. Each test opens its own browser, hence its own
    Streamlit session (its own ``st.session_state``); what sessions share is read-only (the built-in datasets of
    ``st.cache_resource``) and the workspace folder, which was shared already. One server instead of one per test
    saves its start, its stop and the first run's imports, about 2 s a test. A test that needs a server started
    with other settings (``test_workspace_browser``: the upload limits in its environment) starts its own with
    ``serve()``."""
    with serve() as url:
        yield url
